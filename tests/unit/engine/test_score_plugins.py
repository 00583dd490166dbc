"""The first score plugins against upstream's test tables (noderesources/*_test.go, tainttoleration,
nodeaffinity), raw and normalised."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from builders import make_node, make_pod
from plugin_harness import scores

from extender.engine.plugins.node_resources_balanced_allocation import balance, balanced_resource_scorer


def node(name: str, milli_cpu: int, memory: int, gpu: int | None = None) -> dict[str, Any]:
    """upstream's makeNode(name, milliCPU, memory, extended)."""
    extra = {"nvidia.com/gpu": gpu} if gpu is not None else None
    return make_node(name, cpu=f"{milli_cpu}m", memory=str(memory), pods=None,  # type: ignore[arg-type]
                     extra=extra)


def pod(*requests: dict[str, str], node_name: str = "") -> dict[str, Any]:
    """upstream's st.MakePod().Req(a).Req(b)... (one container per Req)."""
    return make_pod(node=node_name, requests=list(requests))


def cpu_mem(cpu: str, mem: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": mem}


BALANCED_CASES = [
    ("nothing scheduled, resources requested, differently sized nodes",
     pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000")),
     [node("node1", 4000, 10000), node("node2", 6000, 10000)], [], None, {"node1": 68, "node2": 75}),
    ("resources requested, pods scheduled with resources",
     pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000")),
     [node("node1", 10000, 20000), node("node2", 10000, 20000)],
     [pod({"cpu": "1000m"}, {"cpu": "2000m"}, node_name="node1"),
      pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"), node_name="node2")], None, {"node1": 73, "node2": 74}),
    ("resources requested, pods scheduled with resources, differently sized nodes",
     pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000")),
     [node("node1", 10000, 20000), node("node2", 10000, 50000)],
     [pod({"cpu": "1000m"}, {"cpu": "2000m"}, node_name="node1"),
      pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"), node_name="node2")], None, {"node1": 73, "node2": 70}),
    ("nodes to reach min/max score",
     pod({"memory": "2000"}, {"memory": "3000"}), [node("node1", 3000, 5000), node("node2", 3000, 5000)],
     [pod({"cpu": "1000m"}, {"cpu": "2000m"}, node_name="node1")], None, {"node1": 100, "node2": 50}),
    ("requested resources at node capacity",
     pod({"cpu": "1000m"}, {"cpu": "2000m"}), [node("node1", 6000, 10000), node("node2", 6000, 10000)],
     [pod({"cpu": "1000m"}, {"cpu": "2000m"}, node_name="node1"),
      pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"), node_name="node2")], None, {"node1": 62, "node2": 62}),
    ("scalar resource is included in the score computation if pod requests the scalar resource",
     pod({"cpu": "0", "memory": "0", "nvidia.com/gpu": "1"}),
     [node("node1", 3500, 40000, gpu=8), node("node2", 3500, 40000, gpu=8)],
     [pod(cpu_mem("1000m", "2000"), {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"}, node_name="node1"),
      pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"), node_name="node2")],
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "nvidia.com/gpu",
                                                                                    "weight": 1}]},
     {"node1": 75, "node2": 76}),
]


@pytest.mark.parametrize(("name", "incoming", "nodes", "existing", "args", "expected"), BALANCED_CASES,
                         ids=[c[0] for c in BALANCED_CASES])
def test_balanced_allocation_upstream_table(name: str, incoming: dict[str, Any], nodes: list[dict[str, Any]],
                                            existing: list[dict[str, Any]], args: dict[str, Any] | None,
                                            expected: dict[str, int]) -> None:
    assert scores("NodeResourcesBalancedAllocation", incoming, nodes + existing, args) == expected


def test_balanced_allocation_skips_best_effort_pods() -> None:
    assert scores("NodeResourcesBalancedAllocation", pod(), [node("node1", 4000, 10000)]) is None


LEAST = {"scoringStrategy": {"type": "LeastAllocated"}}


@pytest.mark.parametrize(("incoming", "nodes", "existing", "args", "expected"), [
    (pod(), [node("node1", 4000, 10000), node("node2", 4000, 10000)], [], LEAST, {"node1": 100, "node2": 100}),
    (pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000")), [node("node1", 4000, 10000),
                                                              node("node2", 6000, 10000)], [], LEAST,
     {"node1": 37, "node2": 50}),
    (pod(), [node("node1", 10000, 20000), node("node2", 10000, 20000)],
     [pod(cpu_mem("3000m", "0"), node_name="node1"), pod(cpu_mem("3000m", "0"), node_name="node1"),
      pod(cpu_mem("3000m", "0"), node_name="node2"), pod(cpu_mem("3000m", "5000"), node_name="node2")], LEAST,
     {"node1": 70, "node2": 57}),
    (pod({"cpu": "3000m", "memory": "0"}), [node("node1", 4000, 10000), node("node2", 4000, 10000)],
     [pod(cpu_mem("3000m", "0"), node_name="node1"), pod(cpu_mem("3000m", "5000"), node_name="node2")], LEAST,
     {"node1": 50, "node2": 25}),
    (pod(), [node("node1", 0, 0), node("node2", 0, 0)],
     [pod(cpu_mem("3000m", "0"), node_name="node1"), pod(cpu_mem("3000m", "5000"), node_name="node2")], LEAST,
     {"node1": 0, "node2": 0}),
    (pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000")), [node("node1", 4000, 10000),
                                                              node("node2", 6000, 10000)], [],
     {"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "memory", "weight": 2},
                                                                  {"name": "cpu", "weight": 1}]}},
     {"node1": 41, "node2": 50}),
])
def test_least_allocated_upstream_table(incoming: dict[str, Any], nodes: list[dict[str, Any]],
                                        existing: list[dict[str, Any]], args: dict[str, Any],
                                        expected: dict[str, int]) -> None:
    assert scores("NodeResourcesFit", incoming, nodes + existing, args) == expected


def test_most_allocated() -> None:
    args = {"scoringStrategy": {"type": "MostAllocated"}}
    incoming = pod(cpu_mem("1000m", "2000"), cpu_mem("2000m", "3000"))
    # cpu 3000/4000 -> 75, memory 5000/10000 -> 50 => 62; cpu 3000/6000 -> 50, memory 50 => 50
    assert scores("NodeResourcesFit", incoming, [node("node1", 4000, 10000), node("node2", 6000, 10000)],
                  args) == {"node1": 62, "node2": 50}
    over = pod(cpu_mem("5000m", "2000"))  # requests above capacity count as full
    assert scores("NodeResourcesFit", over, [node("node1", 4000, 10000)], args) == {"node1": 60}


def test_requested_to_capacity_ratio() -> None:
    args = {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 1},
                                                                                   {"name": "memory", "weight": 1}],
                                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10},
                                                                       {"utilization": 100, "score": 0}]}}}
    incoming = pod(cpu_mem("2000m", "4000"))
    # upstream TestRequestedToCapacityRatioScoringStrategy "nothing scheduled, resources requested...":
    # node1 4000m/10000 -> cpu 50% -> 50, mem 40% -> 60 => 55; node2 6000m -> 33% -> 67, 60 => 64 (rounded)
    assert scores("NodeResourcesFit", incoming, [node("node1", 4000, 10000), node("node2", 6000, 10000)],
                  args) == {"node1": 55, "node2": 64}


def test_taint_toleration_score_upstream_table() -> None:
    soft = [{"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}]
    two = [*soft, {"key": "cpu-type", "value": "arm64", "effect": "PreferNoSchedule"}]
    nodes = [make_node("nodeA", taints=soft), make_node("nodeB", taints=two),
             make_node("nodeC", taints=[{"key": "x", "value": "y", "effect": "NoSchedule"}])]
    tolerant = make_pod(tolerations=[{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}])
    assert scores("TaintToleration", tolerant, nodes) == {"nodeA": 100, "nodeB": 0, "nodeC": 100}
    assert scores("TaintToleration", tolerant, nodes, normalized=False) == {"nodeA": 0, "nodeB": 1, "nodeC": 0}
    # A NoSchedule toleration does not count for the score.
    hard = make_pod(tolerations=[{"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}])
    assert scores("TaintToleration", hard, nodes) == {"nodeA": 50, "nodeB": 0, "nodeC": 100}


def test_node_affinity_score_upstream_table() -> None:
    prefs = [{"weight": 2, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}},
             {"weight": 4, "preference": {"matchExpressions": [{"key": "key", "operator": "In", "values": ["value"]}]}},
             {"weight": 5, "preference": {"matchExpressions": [
                 {"key": "foo", "operator": "In", "values": ["bar"]},
                 {"key": "key", "operator": "In", "values": ["value"]},
                 {"key": "az", "operator": "In", "values": ["az1"]}]}}]
    incoming = make_pod(spec={"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": prefs}}})
    nodes = [make_node("machine1", labels={"foo": "bar"}), make_node("machine5", labels={
        "foo": "bar", "key": "value", "az": "az1"}), make_node("machine2", labels={"key": "value"})]
    assert scores("NodeAffinity", incoming, nodes) == {"machine1": 18, "machine5": 100, "machine2": 36}
    assert scores("NodeAffinity", make_pod(), nodes) is None  # no preferences: PreScore skips


def _scalar_balance(requested: list[int], allocatable: list[int]) -> int:
    """balanced_allocation.go's balancedResourceScorer for one node, one resource at a time."""
    fractions = [min(r / a, 1.0) for r, a in zip(requested, allocatable, strict=True) if a != 0]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        total = 0.0
        for fraction in fractions:
            total += fraction
        mean = total / len(fractions)
        squares = 0.0
        for fraction in fractions:
            squares += (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / len(fractions))
    return int((1 - std) * 100)


@pytest.mark.parametrize("rows", [1, 2, 3, 4])
@pytest.mark.parametrize("some_absent", [False, True])
def test_balance_over_nodes_is_the_scalar_score_bit_for_bit(rows: int, some_absent: bool) -> None:
    rng = np.random.default_rng(rows * 2 + some_absent)
    allocatable = rng.integers(1, 1 << 36, (rows, 300), dtype=np.int64)
    if some_absent:
        allocatable[rng.random((rows, 300)) < 0.3] = 0
    requested = (allocatable * rng.random((rows, 300)) * 1.3).astype(np.int64)  # some over the allocatable
    got = balance(requested, allocatable)
    assert got.tolist() == [_scalar_balance(requested[:, i].tolist(), allocatable[:, i].tolist())
                            for i in range(300)]


@pytest.mark.parametrize("rows", [1, 2, 3])
@pytest.mark.parametrize("some_absent", [False, True])
def test_balanced_allocation_score_is_the_scalar_score_bit_for_bit(rows: int, some_absent: bool) -> None:
    # 50 + (50 + balance with the pod - balance without it) / 2, truncated toward zero (balancedResourceScorer),
    # whichever path computes the two balances (two resources every node has: both at once).
    rng = np.random.default_rng(100 + rows * 2 + some_absent)
    allocatable = rng.integers(1, 1 << 36, (rows, 300), dtype=np.int64)
    if some_absent:
        allocatable[rng.random((rows, 300)) < 0.3] = 0
    allocated = (allocatable * rng.random((rows, 300)) * 1.1).astype(np.int64)
    requested = allocated + (allocatable * rng.random((rows, 300)) * 0.4).astype(np.int64)
    got = balanced_resource_scorer(requested, allocated, allocatable)
    want = []
    for i in range(300):
        diff = 50 + _scalar_balance(requested[:, i].tolist(), allocatable[:, i].tolist()) \
            - _scalar_balance(allocated[:, i].tolist(), allocatable[:, i].tolist())
        want.append(50 + int(diff / 2))  # Go's integer division truncates toward zero
    assert got.tolist() == want
