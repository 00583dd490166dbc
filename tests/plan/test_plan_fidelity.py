"""Every variant's placements are what ``extender simulate`` gives for that variant run alone.

Each variant is simulated as a plan worker does (a copy of the base cache, the variant's changes applied,
a fresh framework), then exported with ``extender plan --export`` and run through ``extender simulate``
(the real command, in this process); placements and pending messages must agree pod for pod.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from plan_helpers import DEMO, WEB, context_of, simulate_alone, write, zoned_nodes

from extender.plan.evaluate import BaseCaches, PlanContext, Task, install, run_variant
from extender.plan.results import VariantResult
from extender.plan.variants import BaseIndex

STATEFUL = {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "kv", "namespace": "data"},
            "spec": {"replicas": 4, "serviceName": "kv", "selector": {"matchLabels": {"app": "kv"}},
                     "template": {"metadata": {"labels": {"app": "kv"}}, "spec": {
                         "containers": [{"name": "kv", "image": "kv:1",
                                         "resources": {"requests": {"cpu": "2", "memory": "4Gi"}}}],
                         "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                             {"labelSelector": {"matchLabels": {"app": "kv"}},
                              "topologyKey": "kubernetes.io/hostname"}]}}}}}}
JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "crunch", "namespace": "default"},
       "spec": {"parallelism": 6, "completions": 12, "completionMode": "Indexed", "template": {"spec": {
           "restartPolicy": "Never",
           "containers": [{"name": "c", "image": "crunch:1", "resources": {"requests": {"cpu": "3"}}}]}}}}

VARIANTS: list[dict[str, Any]] = [
    {"name": "today"},
    {"name": "zone b lost", "zonesLost": ["zone-b"]},
    {"name": "zone a cordoned", "cordon": {"matchLabels": {"topology.kubernetes.io/zone": "zone-a"}}},
    {"name": "six web nodes", "addNodes": {"web": 6}},
    {"name": "two nodes gone", "removeNodes": ["zone-c-03", "zone-a-04"]},
    {"name": "taints weigh more", "weights": {"TaintToleration": 9, "NodeResourcesBalancedAllocation": 4}},
    {"name": "bin packing", "profile": {"pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}},
    {"name": "adaptive search", "percentageOfNodesToScore": 0, "addNodes": {"web": 2}},
]


def _plan(tmp_path: Path, variants: list[dict[str, Any]], replicas: int, cluster: Path | None = None) -> Path:
    extra = write(tmp_path, "extra.yaml", {"apiVersion": "v1", "kind": "List", "items": [STATEFUL, JOB]})
    doc: dict[str, Any] = {"seed": 11, "workload": [{"file": str(WEB), "replicas": replicas}, {"file": str(extra)}],
                           "pools": {"web": {"like": "zone-a-07" if cluster is None else "n001"}},
                           "variants": variants}
    if cluster is not None:
        doc["cluster"] = str(cluster)
    return write(tmp_path, "plan.yaml", doc)


def _worker_result(context: PlanContext, name: str) -> VariantResult:
    install(context)
    variant = next(v for v in context.plan.variants if v.name == name)
    return run_variant(context, BaseCaches(context.base), BaseIndex.of(context.base.objects), Task(variant, True))


def _assert_same(result: VariantResult, alone: dict[str, Any]) -> None:
    assert result.placements == [(p["pod"], p["node"]) for p in alone["scheduled"]]
    assert result.pending_pods == [(p["pod"], p["message"]) for p in alone["unschedulable"]]


@pytest.mark.parametrize("name", [v["name"] for v in VARIANTS])
def test_a_variant_places_pods_as_simulate_alone_does(tmp_path: Path, name: str) -> None:
    context = context_of(_plan(tmp_path, VARIANTS, 40))
    result = _worker_result(context, name)
    alone = simulate_alone(context, name, tmp_path / "export")
    _assert_same(result, alone)
    assert result.placed == len(alone["scheduled"]) > 0


def test_the_zone_lost_variant_re_creates_its_pods_first(tmp_path: Path) -> None:
    context = context_of(_plan(tmp_path, VARIANTS, 40))
    result = _worker_result(context, "zone b lost")
    assert result.displaced > 0 and result.nodes == 22
    pods = orjson.loads((tmp_path / "export" / "pods.json").read_bytes()) if (tmp_path / "export").exists() else None
    assert pods is None  # nothing exported yet: the worker did not need the files
    alone = simulate_alone(context, "zone b lost", tmp_path / "export")
    exported = orjson.loads((tmp_path / "export" / "pods.json").read_bytes())["items"]
    assert len(exported) == result.pods == result.displaced + len(context.workload.pods)
    assert all("nodeName" not in p["spec"] for p in exported[: result.displaced])
    _assert_same(result, alone)


def test_percentage_of_nodes_to_score_on_a_large_cluster_matches_simulate_alone(tmp_path: Path) -> None:
    # 150 nodes: above kube-scheduler's 100-node floor, so the search really stops early.
    namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in ("shop", "data")]
    cluster = write(tmp_path, "cluster.yaml", {"kind": "List", "items": namespaces + zoned_nodes(150)})
    variants = [{"name": "every node"}, {"name": "half", "percentageOfNodesToScore": 50},
                {"name": "adaptive", "percentageOfNodesToScore": 0, "zonesLost": ["zone-c"]}]
    context = context_of(_plan(tmp_path, variants, 60, cluster), cluster)
    results = {v["name"]: _worker_result(context, v["name"]) for v in variants}
    for name, result in results.items():
        _assert_same(result, simulate_alone(context, name, tmp_path / name.replace(" ", "-")))
    assert results["half"].placements != results["every node"].placements
    assert DEMO.exists()


def test_each_variant_follows_its_kubernetes_version_as_simulate_alone_does(tmp_path: Path) -> None:
    # A pod of app=web runs on n000 in a namespace labelled team=a. The workload's pods keep off app=web pods in
    # namespaces chosen by a selector (team DoesNotExist): kube-scheduler v1.36.3 keeps that selector in force
    # beside the namespaces it picked and counts the pod on n000 (InterPodAffinity), v1.37.2 does not. The other
    # three nodes hold five of the six replicas (3 CPUs each); the sixth fits on n000 only.
    from builders import make_pod

    namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
                  {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ops", "labels": {"team": "a"}}}]
    web = make_pod("web-0", "ops", node="n000", labels={"app": "web"}, requests=[{"cpu": "100m"}])
    folder = tmp_path / "cluster"
    folder.mkdir()
    write(folder, "objects.yaml", {"kind": "List", "items": namespaces + zoned_nodes(4) + [web]})
    # The dump records the cluster's version, as `kubectl get --raw /version` prints it: auto follows it.
    (folder / "version.json").write_bytes(orjson.dumps({"major": "1", "minor": "36", "gitVersion": "v1.36.3"}))
    apart = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app": "web"}},
        "namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]},
        "topologyKey": "kubernetes.io/hostname"}]}}
    shop = write(tmp_path, "shop.yaml", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "shop", "namespace": "shop"},
        "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "shop"}}, "template": {
            "metadata": {"labels": {"app": "shop"}}, "spec": {"affinity": apart, "containers": [
                {"name": "c", "image": "shop:1", "resources": {"requests": {"cpu": "3"}}}]}}}})
    variants = [{"name": "auto"}, {"name": "1.36", "kubernetesVersion": "1.36"},
                {"name": "1.37", "kubernetesVersion": "1.37"}]
    plan = write(tmp_path, "plan.yaml", {"seed": 3, "cluster": str(folder), "workload": [{"file": str(shop)}],
                                         "variants": variants})
    context = context_of(plan, folder)
    results = {v["name"]: _worker_result(context, v["name"]) for v in variants}
    for name, result in results.items():
        alone = simulate_alone(context, name, tmp_path / f"export-{name}")
        _assert_same(result, alone)
        assert alone["kubernetes"]["version"] == result.kubernetes_version
    assert {name: r.kubernetes_version for name, r in results.items()} == {"auto": "1.36", "1.36": "1.36",
                                                                            "1.37": "1.37"}
    assert results["auto"].placements == results["1.36"].placements
    assert "n000" not in {node for _, node in results["1.36"].placements}
    assert [node for _, node in results["1.37"].placements].count("n000") == 1
    assert (results["1.36"].placed, results["1.37"].placed) == (5, 6)
    # The whole message in v1.36.3's words (its DynamicResources PostFilter speaks for a pod without claims).
    assert results["1.36"].pending_pods[0][1] == (
        "0/4 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 3 Insufficient cpu. "
        "no new claims to deallocate, preemption: 0/4 nodes are available: 4 No preemption victims found for "
        "incoming pod.")
