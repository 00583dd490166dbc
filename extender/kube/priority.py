"""A pod's priority as the apiserver's Priority admission plugin sets it on create.

Upstream: ``plugin/pkg/admission/priority/admission.go`` (kubernetes v1.36.3). A pod that went through the
apiserver carries ``spec.priority`` (and ``spec.preemptionPolicy``); a pod written by hand for a simulation
or an explanation may only name a PriorityClass, or nothing. It then gets what admission would give it:
the named class's value and preemption policy, or the global default class's (the lowest value if several
are global defaults), or priority 0 and ``PreemptLowerPriority`` without one. The two system classes exist
in every cluster, so a dump without them still resolves their names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
# Created by the apiserver at start-up (pkg/apis/scheduling: SystemCriticalPriority, +1000 for node-critical).
SYSTEM_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


class PriorityError(ValueError):
    """Admission would refuse the pod; the message is upstream's."""


def _class_of(raw: Mapping[str, Any]) -> tuple[int, str]:
    value = raw.get("value")
    policy = raw.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY
    return (value if isinstance(value, int) and not isinstance(value, bool) else 0), str(policy)


def _default_class(classes: Mapping[str, Mapping[str, Any]]) -> tuple[str, int, str]:
    """getDefaultPriority: the global default class with the lowest value, else no class, 0."""
    found: tuple[str, int, str] | None = None
    for name, raw in classes.items():
        if raw.get("globalDefault") is True:
            value, policy = _class_of(raw)
            if found is None or found[1] > value:
                found = (name, value, policy)
    return found if found is not None else ("", 0, PREEMPT_LOWER_PRIORITY)


def admitted(raw_pod: Mapping[str, Any], classes: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any]:
    """The pod with the priority fields admission would set; unchanged when it already has a priority.

    ``classes`` are the cluster's PriorityClasses by name. Raises :class:`PriorityError` where admission
    would refuse the pod (a class that does not exist, a preemption policy other than the class's).
    """
    spec = raw_pod.get("spec")
    if not isinstance(spec, Mapping) or spec.get("priority") is not None:
        return raw_pod
    name = spec.get("priorityClassName") or ""
    if not isinstance(name, str):
        raise PriorityError("spec.priorityClassName: expected a string")
    if name:
        if name in classes:
            value, policy = _class_of(classes[name])
        elif name in SYSTEM_CLASSES:
            value, policy = SYSTEM_CLASSES[name], PREEMPT_LOWER_PRIORITY
        else:
            raise PriorityError(f"no PriorityClass with name {name} was found")
    else:
        name, value, policy = _default_class(classes)
    given = spec.get("preemptionPolicy")
    if given is not None and given != policy:
        raise PriorityError(f"the string value of PreemptionPolicy ({given}) must not be provided in pod spec; "
                            f"priority admission controller computed {policy} from the given PriorityClass name")
    fields: dict[str, Any] = {"priority": value, "preemptionPolicy": policy}
    if name:
        fields["priorityClassName"] = name
    return {**raw_pod, "spec": {**spec, **fields}}
