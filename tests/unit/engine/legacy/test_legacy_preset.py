"""The ``legacy`` presets: v1.12's DefaultProvider, its composition, and whole-profile prioritize totals.

Upstream: k8s.io/kubernetes v1.12.10 pkg/scheduler/algorithmprovider/defaults/defaults.go (the provider and
ApplyFeatureGates), pkg/scheduler/algorithm/predicates/predicates.go (predicatesOrdering) and
pkg/scheduler/core/generic_scheduler_test.go (TestZeroRequest, ported below)."""

from __future__ import annotations

from typing import Any

import pytest
from test_legacy_harness import Obj, as_pod, explain, make_node, node

from extender.engine.mapping import map_scores
from extender.engine.profile import PRESETS, build_profile

PRIORITIES = {"SelectorSpreadPriority": 1, "InterPodAffinityPriority": 1, "LeastRequestedPriority": 1,
              "BalancedResourceAllocation": 1, "NodePreferAvoidPodsPriority": 10000, "NodeAffinityPriority": 1,
              "TaintTolerationPriority": 1, "ImageLocalityPriority": 1}


def test_legacy_preset_is_the_default_provider_under_v1_12_feature_gates() -> None:
    prof = build_profile({"schedulerName": "legacy", "preset": "legacy"})
    # TaintNodesByCondition (beta, on) removed CheckNodeCondition and the pressure predicates and added
    # CheckNodeUnschedulable; the order is predicatesOrdering.
    assert prof.filters == ["CheckNodeUnschedulable", "GeneralPredicates", "NoDiskConflict", "PodToleratesNodeTaints",
                            "MaxEBSVolumeCount", "MaxGCEPDVolumeCount", "MaxCSIVolumeCountPred",
                            "MaxAzureDiskVolumeCount", "CheckVolumeBinding", "NoVolumeZoneConflict",
                            "MatchInterPodAffinity"]
    assert dict(prof.scores) == PRIORITIES
    assert prof.max_score == 10
    assert prof.name == "legacy"


def test_legacy_node_conditions_preset() -> None:
    prof = build_profile({"preset": "legacy-node-conditions"})
    assert prof.filters == ["CheckNodeCondition", "GeneralPredicates", "NoDiskConflict", "PodToleratesNodeTaints",
                            "MaxEBSVolumeCount", "MaxGCEPDVolumeCount", "MaxCSIVolumeCountPred",
                            "MaxAzureDiskVolumeCount", "CheckVolumeBinding", "NoVolumeZoneConflict",
                            "CheckNodeMemoryPressure", "CheckNodePIDPressure", "CheckNodeDiskPressure",
                            "MatchInterPodAffinity"]
    assert dict(prof.scores) == PRIORITIES
    assert set(PRESETS) >= {"default", "legacy", "legacy-node-conditions"}


def test_a_profile_can_swap_a_priority_like_the_cluster_autoscaler_provider() -> None:
    prof = build_profile({"preset": "legacy", "plugins": {
        "score": {"enabled": [{"name": "MostRequestedPriority", "weight": 1}],
                  "disabled": [{"name": "LeastRequestedPriority"}]}}})
    assert "LeastRequestedPriority" not in dict(prof.scores)
    assert dict(prof.scores)["MostRequestedPriority"] == 1


# ---- TestZeroRequest (generic_scheduler_test.go): PrioritizeNodes with LeastRequested, Balanced, SelectorSpread ----

DEFAULT_CPU, DEFAULT_MEMORY = 100, 200 * 1024 * 1024


def spec(cpu: int | None, memory: int | None, node_name: str = "") -> dict[str, Any]:
    container: dict[str, Any] = {}
    if cpu is not None and memory is not None:
        container["resources"] = {"requests": {"cpu": f"{cpu}m", "memory": str(memory)}}
    out: dict[str, Any] = {"containers": [container]}
    if node_name:
        out["nodeName"] = node_name
    return {"spec": out}


ZERO_REQUEST_PODS = [spec(DEFAULT_CPU * 3, DEFAULT_MEMORY * 3, "machine1"), spec(None, None, "machine1"),
                     spec(DEFAULT_CPU * 3, DEFAULT_MEMORY * 3, "machine2"),
                     spec(DEFAULT_CPU, DEFAULT_MEMORY, "machine2")]


@pytest.mark.parametrize(("name", "incoming", "score"), [
    ("test priority of zero-request pod with machine with zero-request pod", spec(None, None), 25),
    ("test priority of nonzero-request pod with machine with zero-request pod", spec(DEFAULT_CPU, DEFAULT_MEMORY),
     25),
    ("test priority of larger pod with machine with zero-request pod", spec(DEFAULT_CPU * 3, DEFAULT_MEMORY * 3), 23),
])
def test_zero_request(name: str, incoming: dict[str, Any], score: int) -> None:
    nodes = [make_node(n, 1000, DEFAULT_MEMORY * 10) for n in ("machine1", "machine2")]
    objects = [*nodes, *(as_pod(p) for p in ZERO_REQUEST_PODS)]
    prof = {"plugins": {"multiPoint": {"disabled": [{"name": "*"}]}, "score": {"enabled": [
        {"name": "LeastRequestedPriority", "weight": 1}, {"name": "BalancedResourceAllocation", "weight": 1},
        {"name": "SelectorSpreadPriority", "weight": 1}]}}}
    out = explain(objects, as_pod(incoming), prof)
    assert {n: e["total"] for n, e in out["nodes"].items()} == {"machine1": score, "machine2": score}


# ---- the whole legacy preset on a small cluster -------------------------------------------------------------

GIB = 1024 ** 3
REGION, ZONE = "failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone"
AVOID = ('{"preferAvoidPods": [{"podSignature": {"podController": {"apiVersion": "apps/v1", "kind": "ReplicaSet", '
         '"name": "web", "uid": "rs-uid", "controller": true}}, "reason": "maintenance"}]}')


def cluster() -> list[Obj]:
    allocatable = {"cpu": "4", "memory": "8Gi", "pods": 110}
    nodes = [
        node("n1", labels={REGION: "r", ZONE: "z1", "disk": "ssd"}, allocatable=allocatable,
             images=[(["nginx:1.15"], 500 * 1024 * 1024)]),
        node("n2", labels={REGION: "r", ZONE: "z1"}, allocatable=allocatable,
             taints=[{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]),
        node("n3", labels={REGION: "r", ZONE: "z2"}, allocatable=allocatable,
             annotations={"scheduler.alpha.kubernetes.io/preferAvoidPods": AVOID}),
    ]
    pods = [
        as_pod({"metadata": {"name": "web-0", "labels": {"app": "web"}}, "spec": {"nodeName": "n1", "containers": [
            {"name": "c", "image": "nginx:1.15", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}}),
        as_pod({"metadata": {"name": "other", "labels": {"app": "other"}},
                "spec": {"nodeName": "n2", "containers": [{"name": "c", "image": "busybox"}]}}),
    ]
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": {"app": "web"}}}
    return [*nodes, *pods, service]


INCOMING = as_pod({
    "metadata": {"name": "web-1", "labels": {"app": "web"},
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-uid",
                                      "controller": True}]},
    "spec": {
        "containers": [{"name": "c", "image": "nginx:1.15", "resources": {"requests": {"cpu": "500m",
                                                                                    "memory": "1Gi"}}}],
        "affinity": {
            "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": {"matchExpressions": [{"key": "disk", "operator": "In",
                                                                    "values": ["ssd"]}]}}]},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                                   "topologyKey": ZONE}}]}}}})

# Worked out with v1.12's formulas (allocatable 4000m / 8Gi everywhere; pod non-zero 500m / 1Gi; n1 holds
# 1000m / 2Gi, n2 a request-less pod counting 100m / 200Mi):
EXPECTED_SCORES = {
    # (cap - req) * 10 / cap per resource, averaged: n1 (6 + 6) / 2, n2 (8 + 8) / 2, n3 (8 + 8) / 2
    "LeastRequestedPriority": {"n1": 6, "n2": 8, "n3": 8},
    # int((1 - |cpu - mem|) * 10): n1 0.375 / 0.375, n2 0.15 / 0.1494140625 -> 9.994, n3 0.125 / 0.125
    "BalancedResourceAllocation": {"n1": 10, "n2": 9, "n3": 10},
    # Service web: counts 1, 0, 0; zones z1 = 1, z2 = 0: n1 0; n2 10 * 1/3 + 0 = 3.33; n3 10 * 1/3 + 2/3 * 10
    "SelectorSpreadPriority": {"n1": 0, "n2": 3, "n3": 10},
    # preferred anti-affinity -50 on zone z1 (web-0 on n1): counts -50, -50, 0 -> (c - min) * 10 / (max - min)
    "InterPodAffinityPriority": {"n1": 0, "n2": 0, "n3": 10},
    # n3 asks to avoid ReplicaSet rs-uid
    "NodePreferAvoidPodsPriority": {"n1": 10, "n2": 10, "n3": 0},
    # weight 10 on disk=ssd, scaled by the max
    "NodeAffinityPriority": {"n1": 10, "n2": 0, "n3": 0},
    # one intolerable PreferNoSchedule taint on n2, reversed
    "TaintTolerationPriority": {"n1": 10, "n2": 0, "n3": 10},
    # nginx:1.15 (500Mi) on 1 of 3 nodes: int(500Mi / 3) = 174762666 -> 10 * (s - 23Mi) / 977Mi = 1
    "ImageLocalityPriority": {"n1": 1, "n2": 0, "n3": 0},
}
EXPECTED_TOTALS = {"n1": 6 + 10 + 0 + 0 + 100000 + 10 + 10 + 1, "n2": 8 + 9 + 3 + 0 + 100000 + 0 + 0 + 0,
                   "n3": 8 + 10 + 10 + 10 + 0 + 0 + 10 + 0}


def test_legacy_preset_prioritize_totals() -> None:
    out = explain(cluster(), INCOMING, {"schedulerName": "legacy", "preset": "legacy"})
    assert all(entry["feasible"] for entry in out["nodes"].values())
    for plugin, want in EXPECTED_SCORES.items():
        assert {n: e["scores"][plugin]["normalized"] for n, e in out["nodes"].items()} == want, plugin
    totals = {n: e["total"] for n, e in out["nodes"].items()}
    assert totals == EXPECTED_TOTALS == {"n1": 100037, "n2": 100020, "n3": 48}
    # the extender's 0..10 answer: the weighted mean on the 0..10 scale (weights sum to 10007)
    assert {n: e["extender_score"] for n, e in out["nodes"].items()} == {"n1": 10, "n2": 10, "n3": 0}
    assert map_scores([100037, 100020, 48], 10007, "absolute", 10) == [10, 10, 0]


def test_legacy_preset_filter_reasons() -> None:
    objects = cluster()
    objects[0]["spec"]["unschedulable"] = True
    objects[1]["spec"]["taints"].append({"key": "dedicated", "value": "x", "effect": "NoSchedule"})
    big = as_pod({"metadata": {"name": "big"}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"cpu": "5"}}}]}})
    out = explain(objects, big, {"preset": "legacy"})
    first_failure = {n: next(((p, v["reasons"]) for p, v in e["filters"].items() if v["code"] != "Success"), None)
                     for n, e in out["nodes"].items()}
    assert first_failure == {
        "n1": ("CheckNodeUnschedulable", ["node(s) were unschedulable"]),
        "n2": ("GeneralPredicates", ["Insufficient cpu"]),
        "n3": ("GeneralPredicates", ["Insufficient cpu"]),
    }
    assert out["nodes"]["n2"]["filters"]["PodToleratesNodeTaints"] == {
        "code": "Unschedulable", "reasons": ["node(s) had taints that the pod didn't tolerate"]}
