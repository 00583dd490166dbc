"""v1.12 node-state predicates against upstream's tables (k8s.io/kubernetes v1.12.10
pkg/scheduler/algorithm/predicates/predicates_test.go: TestPodToleratesTaints,
TestPodSchedulesOnNodeWith{Memory,Disk,PID}PressureCondition, TestNodeConditionPredicate,
TestCheckNodeUnschedulablePredicate)."""

from __future__ import annotations

import pytest
from test_legacy_harness import Obj, container, fits, node, pod, verdicts


def taint(key: str, value: str, effect: str) -> Obj:
    return {"key": key, "value": value, "effect": effect}


def toleration(key: str, value: str = "", effect: str = "", operator: str = "") -> Obj:
    out: Obj = {"key": key}
    if operator:
        out["operator"] = operator
    if value:
        out["value"] = value
    if effect:
        out["effect"] = effect
    return out


def tolerating(*tolerations: Obj) -> Obj:
    return pod(containers=[container(image="pod2:V1")], spec={"tolerations": list(tolerations)})


TAINT_CASES = [
    ("a pod having no tolerations can't be scheduled onto a node with nonempty taints", pod(),
     [taint("dedicated", "user1", "NoSchedule")], False),
    ("a pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
     tolerating(toleration("dedicated", "user1", "NoSchedule")), [taint("dedicated", "user1", "NoSchedule")], True),
    ("a pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
     tolerating(toleration("dedicated", "user2", "NoSchedule", "Equal")), [taint("dedicated", "user1", "NoSchedule")],
     False),
    ("a pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the "
     "node", tolerating(toleration("foo", effect="NoSchedule", operator="Exists")), [taint("foo", "bar", "NoSchedule")],
     True),
    ("a pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be scheduled "
     "onto the node", tolerating(toleration("dedicated", "user2", "NoSchedule", "Equal"),
                                 toleration("foo", effect="NoSchedule", operator="Exists")),
     [taint("dedicated", "user2", "NoSchedule"), taint("foo", "bar", "NoSchedule")], True),
    ("a pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match, "
     "can't be scheduled onto the node", tolerating(toleration("foo", "bar", "PreferNoSchedule", "Equal")),
     [taint("foo", "bar", "NoSchedule")], False),
    ("The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, "
     "and the effect of taint is NoSchedule. Pod can be scheduled onto the node",
     tolerating(toleration("foo", "bar", operator="Equal")), [taint("foo", "bar", "NoSchedule")], True),
    ("The pod has a toleration that key and value don't match the taint on the node, but the effect of taint on node "
     "is PreferNochedule. Pod can be scheduled onto the node",
     tolerating(toleration("dedicated", "user2", "NoSchedule", "Equal")),
     [taint("dedicated", "user1", "PreferNoSchedule")], True),
    ("The pod has no toleration, but the effect of taint on node is PreferNochedule. Pod can be scheduled onto the "
     "node", tolerating(), [taint("dedicated", "user1", "PreferNoSchedule")], True),
]


@pytest.mark.parametrize(("name", "incoming", "taints", "ok"), TAINT_CASES, ids=[c[0] for c in TAINT_CASES])
def test_pod_tolerates_taints(name: str, incoming: Obj, taints: list[Obj], ok: bool) -> None:
    expected = (True, []) if ok else (False, ["node(s) had taints that the pod didn't tolerate"])
    assert fits("PodToleratesNodeTaints", incoming, [node(taints=taints)]) == expected


def test_pod_tolerates_no_execute_taints_only_looks_at_no_execute() -> None:
    objects = [node("a", taints=[taint("k", "v", "NoSchedule")]), node("b", taints=[taint("k", "v", "NoExecute")])]
    assert verdicts("PodToleratesNodeNoExecuteTaints", pod(), objects) == {
        "a": ("Success", []), "b": ("Unschedulable", ["node(s) had taints that the pod didn't tolerate"])}


BEST_EFFORT = pod(containers=[container(image="image")])
BURSTABLE = pod(containers=[container({"cpu": "100m", "memory": "100", "pods": "100"}, image="image")])

MEMORY_CASES = [
    ("best-effort pod schedulable on node without memory pressure condition on", BEST_EFFORT, "Ready", True),
    ("best-effort pod not schedulable on node with memory pressure condition on", BEST_EFFORT, "MemoryPressure",
     False),
    ("non best-effort pod schedulable on node with memory pressure condition on", BURSTABLE, "MemoryPressure", True),
    ("non best-effort pod schedulable on node without memory pressure condition on", BURSTABLE, "Ready", True),
]


@pytest.mark.parametrize(("name", "incoming", "condition", "ok"), MEMORY_CASES, ids=[c[0] for c in MEMORY_CASES])
def test_memory_pressure(name: str, incoming: Obj, condition: str, ok: bool) -> None:
    expected = (True, []) if ok else (False, ["node(s) had memory pressure"])
    assert fits("CheckNodeMemoryPressure", incoming, [node(conditions=[(condition, "True")])]) == expected


def test_best_effort_ignores_zero_requests_and_init_containers() -> None:
    # GetPodQOS: only positive cpu/memory requests or limits of regular containers make a pod non-BestEffort.
    zero = pod(containers=[container({"cpu": "0", "memory": "0", "example.com/gpu": "1"})],
               init_containers=[container({"cpu": "1"})])
    assert fits("CheckNodeMemoryPressure", zero, [node(conditions=[("MemoryPressure", "True")])])[0] is False
    limited = pod(containers=[container(limits={"memory": "1Gi"})])
    assert fits("CheckNodeMemoryPressure", limited, [node(conditions=[("MemoryPressure", "True")])])[0] is True


@pytest.mark.parametrize(("plugin", "condition", "reason"), [
    ("CheckNodeDiskPressure", "DiskPressure", "node(s) had disk pressure"),
    ("CheckNodePIDPressure", "PIDPressure", "node(s) had pid pressure"),
])
def test_disk_and_pid_pressure(plugin: str, condition: str, reason: str) -> None:
    incoming = pod(containers=[container(image="image")])
    assert fits(plugin, incoming, [node(conditions=[("Ready", "True")])]) == (True, [])
    assert fits(plugin, incoming, [node(conditions=[(condition, "True")])]) == (False, [reason])


NOT_READY = "node(s) were not ready"
OUT_OF_DISK = "node(s) were out of disk space"
CONDITION_CASES: list[tuple[str, list[tuple[str, str]], bool, list[str]]] = [
    ("node1 considered", [("Ready", "True")], False, []),
    ("node2 ignored - node not Ready", [("Ready", "False")], False, [NOT_READY]),
    ("node3 ignored - node out of disk", [("OutOfDisk", "True")], False, [OUT_OF_DISK]),
    ("node4 considered", [("OutOfDisk", "False")], False, []),
    ("node5 ignored - node out of disk", [("Ready", "True"), ("OutOfDisk", "True")], False, [OUT_OF_DISK]),
    ("node6 considered", [("Ready", "True"), ("OutOfDisk", "False")], False, []),
    ("node7 ignored - node out of disk, node not Ready", [("Ready", "False"), ("OutOfDisk", "True")], False,
     [NOT_READY, OUT_OF_DISK]),
    ("node8 ignored - node not Ready", [("Ready", "False"), ("OutOfDisk", "False")], False, [NOT_READY]),
    ("node9 ignored - node unschedulable", [], True, ["node(s) were unschedulable"]),
    ("node10 considered", [], False, []),
    ("node11 considered", [], False, []),
    # beyond upstream's table: every reason collected, conditions in order, unschedulable last
    ("all reasons", [("NetworkUnavailable", "Unknown"), ("Ready", "Unknown")], True,
     ["node(s) had unavailable network", NOT_READY, "node(s) were unschedulable"]),
]


@pytest.mark.parametrize(("name", "conditions", "unschedulable", "reasons"), CONDITION_CASES,
                         ids=[c[0] for c in CONDITION_CASES])
def test_node_condition(name: str, conditions: list[tuple[str, str]], unschedulable: bool, reasons: list[str]
                        ) -> None:
    objects = [node(conditions=conditions, unschedulable=unschedulable)]
    assert fits("CheckNodeCondition", pod(), objects) == (not reasons, reasons)


UNSCHEDULABLE_CASES = [
    ("Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)", pod(), True, False),
    ("Schedule pod to normal node", pod(), False, True),
    ("Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
     pod(spec={"tolerations": [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]}), True, True),
]


@pytest.mark.parametrize(("name", "incoming", "unschedulable", "ok"), UNSCHEDULABLE_CASES,
                         ids=[c[0] for c in UNSCHEDULABLE_CASES])
def test_check_node_unschedulable(name: str, incoming: Obj, unschedulable: bool, ok: bool) -> None:
    expected = (True, []) if ok else (False, ["node(s) were unschedulable"])
    assert fits("CheckNodeUnschedulable", incoming, [node(unschedulable=unschedulable)]) == expected
