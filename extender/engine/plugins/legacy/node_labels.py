"""The v1.12 policy-configured label predicates: CheckNodeLabelPresence and CheckServiceAffinity.

Upstream: k8s.io/kubernetes v1.12.10 pkg/scheduler/algorithm/predicates/predicates.go
(``NodeLabelChecker.CheckNodeLabelPresence``, ``ServiceAffinity.checkServiceAffinity`` and its metadata
producer) and utils.go (``FindLabelsInSet``, ``AddUnsetLabelsToMap``, ``CreateSelectorFromLabels``). In
v1.12 these were configured through a Policy's ``labelsPresence`` / ``serviceAffinity`` arguments; here
through plugin args of the same names.

- CheckNodeLabelPresence (args ``labels``, ``presence``): with presence, every label must be on the node;
  without, none may be.
- CheckServiceAffinity (args ``labels``): the node must carry, for each of the labels, the value the pod's
  nodeSelector asks for; labels the nodeSelector does not name take the value of the node running the
  first pod that has all of the incoming pod's labels in its namespace (only when the pod belongs to a
  Service; "first" is in namespace/name order here, v1.12's lister order was a Go map's). Labels neither
  way known are not required.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import CycleState, FilterPlugin, Status
from extender.engine.plugins.legacy.common import (
    ERR_NODE_LABEL_PRESENCE_VIOLATED,
    ERR_SERVICE_AFFINITY_VIOLATED,
    as_mapping,
    error,
    node_of,
    unschedulable,
)
from extender.engine.plugins.legacy.spreading import pod_services, selector_from_set
from extender.engine.profile import ProfileError
from extender.engine.registry import register

_PRESENCE: Final = unschedulable(ERR_NODE_LABEL_PRESENCE_VIOLATED)
_SERVICE_AFFINITY: Final = unschedulable(ERR_SERVICE_AFFINITY_VIOLATED)
_SERVICE_KEY: Final = "legacy/CheckServiceAffinity"


def _labels_arg(args: dict[str, Any], plugin: str) -> tuple[str, ...]:
    labels = args.get("labels")
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        raise ProfileError(f"{plugin} args.labels: expected a list of node label keys")
    return tuple(labels)


@register
class CheckNodeLabelPresence(FilterPlugin):
    """Labels that must all be present (``presence: true``) or all be absent on the node."""

    name = "CheckNodeLabelPresence"
    node_local = True

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        self.labels = _labels_arg(self.args, self.name)
        presence = self.args.get("presence", False)
        if not isinstance(presence, bool):
            raise ProfileError(f"{self.name} args.presence: expected a boolean")
        self.presence = presence

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        node_labels = node_of(node).labels
        for label in self.labels:
            if (label in node_labels) != self.presence:
                return _PRESENCE
        return None


@register
class CheckServiceAffinity(FilterPlugin):
    """Pods of a Service stay on nodes with the same values of the given labels."""

    name = "CheckServiceAffinity"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        self.labels = _labels_arg(self.args, self.name)

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        snapshot = state.snapshot
        node_selector = as_mapping(pod.spec.get("nodeSelector"))
        # FindLabelsInSet: the affinity labels the pod's nodeSelector pins.
        wanted = {label: str(node_selector[label]) for label in self.labels if label in node_selector}
        if len(self.labels) > len(wanted) and pod_services(snapshot, pod):
            same = selector_from_set(pod.labels)
            peers = sorted((p for info in snapshot.node_list for p in info.pods
                            if p.namespace == pod.namespace and same.matches(p.labels)), key=lambda p: p.key)
            if peers:
                host = snapshot.get(peers[0].node_name)
                if host is None or host.node is None:
                    state.data[_SERVICE_KEY] = error(f'node "{peers[0].node_name}" not found')
                    return None
                # AddUnsetLabelsToMap: the first peer's node supplies the labels the selector left open.
                for label in self.labels:
                    if label not in wanted and label in host.node.labels:
                        wanted[label] = host.node.labels[label]
        # CreateSelectorFromLabels: SelectorFromSet, so an invalid pair matches every node.
        state.data[_SERVICE_KEY] = selector_from_set(wanted)
        return None

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        matcher = state.data[_SERVICE_KEY]
        if isinstance(matcher, Status):
            return matcher
        return None if matcher.matches(node_of(node).labels) else _SERVICE_AFFINITY
