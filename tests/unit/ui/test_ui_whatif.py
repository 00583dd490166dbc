"""What-if on a copy: the pod's YAML checked with errors that name the line, cluster edits made on copies of
the nodes, and the snapshot (and the cache behind it) left exactly as it was."""

from __future__ import annotations

import re

import pytest

from extender.cli import DEMO_CLUSTER
from extender.cluster.cache import ClusterCache
from extender.cluster.dump import load_cache
from extender.engine.explain import explain, frozen
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.ui.whatif import (
    WhatIfError,
    apply_changes,
    parse_changes,
    parse_pod_yaml,
    simulate_replicas,
)

INDEXER = """\
apiVersion: v1
kind: Pod
metadata: {name: search-indexer, namespace: shop}
spec:
  nodeSelector: {node.kubernetes.io/instance-type: g.xlarge}
  containers: [{name: c, image: i, resources: {requests: {cpu: '2', memory: 4Gi}}}]
"""
GPU_TAINT = {"key": "example.com/gpu", "value": "present", "effect": "NoSchedule"}


@pytest.fixture(scope="module")
def demo() -> ClusterCache:
    cache, _ = load_cache(DEMO_CLUSTER)
    return cache


def framework() -> Framework:
    return Framework(build_profile(None))


@pytest.mark.parametrize(("text", "message", "line"), [
    ("kind: Pod\nmetadata: {name: x\nspec: [", "invalid YAML at line 3, column 5: did not find expected ','", 3),
    ("kind: Pod\nmetadata:\n  name: x\n   spec: {}", "invalid YAML at line 4, column 8: mapping values are not", 4),
    ("kind: Pod\nmetadata: &m {name: x, labels: *m}\nspec: {}", "refers to a node that contains it", None),
    ("kind: Service\nmetadata: {name: x}\nspec: {}", "kind is 'Service', expected Pod", None),
    ("metadata: {name: x}", "spec: a Pod needs a spec", None),
    ("spec: {containers: []}", "metadata.name: a Pod needs a name", None),
    ("a: 1\n---\nb: 2", "expected one Pod, found 2 YAML documents", None),
    ("- 1", "expected a Pod object, found a list", None),
    ("metadata: {name: x}\nspec: {nodeName: n1, containers: []}", "spec.nodeName is set", None),
    ("metadata: {name: x}\nspec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}", "pod: ", None),
])
def test_a_bad_pod_is_one_clear_error(text: str, message: str, line: int | None) -> None:
    with pytest.raises(WhatIfError) as caught:
        parse_pod_yaml(text)
    assert message in str(caught.value)
    assert caught.value.line == line
    if line is not None:
        assert caught.value.as_dict()["line"] == line


def test_a_pod_gets_a_namespace_and_uid() -> None:
    pod = parse_pod_yaml("metadata: {name: x}\nspec: {containers: [{name: c, image: i}]}")
    assert pod["metadata"] == {"namespace": "default", "name": "x", "uid": "what-if-default-x"}
    assert pod["kind"] == "Pod"


@pytest.mark.parametrize(("changes", "message"), [
    ({"op": "cordon"}, "changes: expected a list"),
    ([{"op": "drain", "node": "n"}], "changes[0].op: expected one of"),
    ([{"op": "cordon"}], "changes[0].node: a node name is required"),
    ([{"op": "copy", "node": "n", "count": 0}], "changes[0].count: expected 1..1000"),
    ([{"op": "copy", "node": "n", "count": True}], "changes[0].count"),
    ([{"op": "untaint", "node": "n"}], "changes[0].taint: expected {key, value, effect}"),
    ([{"op": "cordon", "node": "n"}] * 101, "at most 100 edits"),
])
def test_bad_changes_are_clear_errors(changes: object, message: str) -> None:
    with pytest.raises(WhatIfError, match=re.escape(message)):
        parse_changes(changes)


def test_edits_are_made_on_copies(demo: ClusterCache) -> None:
    snapshot = frozen(demo.snapshot())
    before = {name: (info, info.node, info.node.raw) for name, info in snapshot.node_infos.items()
              if info.node is not None}
    changes = parse_changes([
        {"op": "cordon", "node": "zone-a-01"},
        {"op": "uncordon", "node": "zone-c-05"},
        {"op": "copy", "node": "zone-b-04", "count": 2},
        {"op": "untaint", "node": "zone-a-10", "taint": GPU_TAINT},
    ])
    trial, added = apply_changes(snapshot, changes)
    assert added == ["zone-b-04-copy-1", "zone-b-04-copy-2"]
    a01, c05, a10 = (trial.node_infos[n].node for n in ("zone-a-01", "zone-c-05", "zone-a-10"))
    assert a01 is not None and a01.unschedulable
    assert [t.key for t in a01.taints] == ["node.kubernetes.io/unschedulable"]
    assert c05 is not None and not c05.unschedulable and not c05.taints
    assert a10 is not None and not a10.taints
    copy = trial.node_infos["zone-b-04-copy-1"]
    assert copy.node is not None and not copy.pods and not copy.node.images
    assert copy.node.labels["kubernetes.io/hostname"] == "zone-b-04-copy-1"
    assert copy.node.labels["topology.kubernetes.io/zone"] == "zone-b"
    assert trial.dra is snapshot.dra
    # The snapshot given (and so the cache's) holds the very same, unchanged, objects.
    assert set(snapshot.node_infos) == set(before)
    for name, (info, node, raw) in before.items():
        assert snapshot.node_infos[name] is info and info.node is node and node.raw is raw
    assert snapshot.node_infos["zone-c-05"].node.unschedulable  # type: ignore[union-attr]
    assert len(snapshot.node_infos["zone-a-10"].node.taints) == 1  # type: ignore[union-attr]


def test_edits_of_unknown_nodes_or_taints_name_what_there_is(demo: ClusterCache) -> None:
    snapshot = demo.snapshot()
    with pytest.raises(WhatIfError, match=re.escape("changes[0]: node 'nope' is not in the cluster")):
        apply_changes(snapshot, parse_changes([{"op": "cordon", "node": "nope"}]))
    held = "has no taint gone:NoSchedule (its taints: example.com/gpu=present:NoSchedule)"
    with pytest.raises(WhatIfError, match=re.escape(held)):
        apply_changes(snapshot, parse_changes([{"op": "untaint", "node": "zone-a-10",
                                                "taint": {"key": "gone", "effect": "NoSchedule"}}]))


def test_removing_the_taint_makes_the_indexer_fit(demo: ClusterCache) -> None:
    pod = parse_pod_yaml(INDEXER)
    snapshot = frozen(demo.snapshot())
    assert explain(framework(), snapshot, pod)["outcome"]["status"] == "Unschedulable"
    trial, _ = apply_changes(snapshot, parse_changes([{"op": "untaint", "node": "zone-a-10", "taint": GPU_TAINT}]))
    outcome = explain(framework(), trial, pod)["outcome"]
    assert outcome["status"] == "Schedulable" and outcome["feasibleNodes"] == ["zone-a-10"]
    copies, _ = apply_changes(trial, parse_changes([{"op": "copy", "node": "zone-a-10", "count": 3}]))
    assert len(explain(framework(), copies, pod)["outcome"]["feasibleNodes"]) == 4


def test_simulation_places_replicas_on_a_cache_of_its_own(demo: ClusterCache) -> None:
    counts = demo.counts()
    snapshot = frozen(demo.snapshot())
    generation = demo.snapshot().generation
    requested = {n: (i.requested.milli_cpu, len(i.pods)) for n, i in snapshot.node_infos.items()}
    pod = parse_pod_yaml(INDEXER.replace("cpu: '2'", "cpu: '6'"))
    trial, _ = apply_changes(snapshot, parse_changes([{"op": "untaint", "node": "zone-a-10", "taint": GPU_TAINT}]))
    result = simulate_replicas(framework(), trial, pod, 3, seed=1)
    assert [p["node"] for p in result["scheduled"]] == ["zone-a-10"]  # 16 CPUs, 6 requested: one more fits
    assert [p["pod"] for p in result["unschedulable"]] == ["shop/search-indexer-1", "shop/search-indexer-2"]
    assert "Insufficient cpu" in result["unschedulable"][0]["message"]
    assert set(result["utilization"]["after"]) == {"zone-a-10"}
    assert demo.counts() == counts and demo.snapshot().generation == generation
    assert {n: (i.requested.milli_cpu, len(i.pods)) for n, i in snapshot.node_infos.items()} == requested
    with pytest.raises(WhatIfError, match=re.escape("replicas: expected 1..1000")):
        simulate_replicas(framework(), trial, pod, 0)


def test_a_simulation_counts_the_devices_it_hands_out(demo: ClusterCache) -> None:
    """A copy of the cache's DRA state: GPUs taken by earlier replicas are not handed out again (the demo has
    six free ones), and the cache's claims are as they were."""
    pod = parse_pod_yaml("""\
metadata: {name: gpu-job, namespace: ml}
spec:
  containers: [{name: c, image: i, resources: {requests: {cpu: 500m, dra.example.com/gpu: '1'},
                                               limits: {dra.example.com/gpu: '1'}}}]
""")
    counts = demo.counts()
    view = demo.snapshot().dra
    result = simulate_replicas(framework(), frozen(demo.snapshot()), pod, 8, seed=1)
    assert len(result["scheduled"]) == 6 and len(result["unschedulable"]) == 2
    assert all(p["node"].endswith("-06") for p in result["scheduled"])
    assert all("cannot allocate all claims" in p["message"] for p in result["unschedulable"])
    assert demo.counts() == counts and demo.snapshot().dra is view
