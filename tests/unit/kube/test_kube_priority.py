"""A pod's priority as the apiserver's Priority admission plugin sets it (plugin/pkg/admission/priority)."""

from __future__ import annotations

from typing import Any

import pytest

from extender.kube.priority import PriorityError, admitted


def klass(name: str, value: int, *, default: bool = False, policy: str | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                           "metadata": {"name": name}, "value": value}
    if default:
        obj["globalDefault"] = True
    if policy:
        obj["preemptionPolicy"] = policy
    return obj


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], **spec}}


CLASSES = {"batch": klass("batch", 10), "polite": klass("polite", 500, policy="Never"),
           "default-low": klass("default-low", 5, default=True),
           "default-high": klass("default-high", 50, default=True)}


def test_a_named_class_gives_its_value_and_policy() -> None:
    spec = admitted(pod(priorityClassName="polite"), CLASSES)["spec"]
    assert (spec["priority"], spec["preemptionPolicy"], spec["priorityClassName"]) == (500, "Never", "polite")
    assert admitted(pod(priorityClassName="batch"), CLASSES)["spec"]["preemptionPolicy"] == "PreemptLowerPriority"


def test_no_class_takes_the_lowest_global_default_or_zero() -> None:
    spec = admitted(pod(), CLASSES)["spec"]
    assert (spec["priority"], spec["priorityClassName"]) == (5, "default-low")
    assert admitted(pod(), {})["spec"] == {"containers": [{"name": "c"}], "priority": 0,
                                           "preemptionPolicy": "PreemptLowerPriority"}


def test_system_classes_exist_in_every_cluster_and_an_admitted_pod_is_left_alone() -> None:
    assert admitted(pod(priorityClassName="system-node-critical"), {})["spec"]["priority"] == 2_000_001_000
    already = pod(priorityClassName="gone", priority=7)
    assert admitted(already, {}) is already


@pytest.mark.parametrize(("spec", "message"), [
    ({"priorityClassName": "gone"}, "no PriorityClass with name gone was found"),
    ({"priorityClassName": "polite", "preemptionPolicy": "PreemptLowerPriority"},
     "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority "
     "admission controller computed Never from the given PriorityClass name"),
])
def test_what_admission_refuses(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(PriorityError) as err:
        admitted(pod(**spec), CLASSES)
    assert str(err.value) == message
