"""Seeded generator of multi-cluster placement cases for the Karmada differential oracle.

A case is what the oracle (``go/``) and :mod:`karmada_harness` read: ``{"clusters": [Cluster...], "placement":
Placement, "binding": ResourceBinding}`` as Karmada's JSON, before webhook defaulting.  ``generate(seed)``
is deterministic; each seed draws one of :data:`CATEGORIES` (``seed % len``) so that any run of
consecutive seeds covers them all, then randomises the rest (taints with and without tolerations,
resource models, spread constraints, previous ``spec.clusters``, eviction tasks, affinity terms...).
The ``huge`` category sends fleets of hundreds to 2,000 clusters, or up to 2 million replicas, with
capacities to match (Karmada's own divider hands seats out one at a time, so a case costs it about a
second per million replicas; ours divides in bulk).

No dependency on ``extender``: ``python tests/karmada/karmada_cases.py --seed 7`` prints one case.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any, Final

CATEGORIES: Final = (
    "duplicated",
    "static_weight",
    "dynamic_weight",
    "aggregated",
    "resource_models",
    "spread_cluster",
    "spread_region",
    "scale_up",
    "scale_down",
    "fresh_reschedule",
    "failover",
    "affinity_terms",
    "zero_replicas",
    "overflow",
    "overflow_aggregated",
    "taints",
    "non_workload",
    "invalid",
    "huge",
)

_REGIONS: Final = ("r-east", "r-west", "r-north")
#: Some fleets spread over many regions, for the region search.
_MANY_REGIONS: Final = ("r-east", "r-west", "r-north", "r-south", "r-central", "r-edge", "r-far")
_PROVIDERS: Final = ("huawei", "aws", "gcp")
_ENVS: Final = ("prod", "dev", "stage")
_TIME_OLD: Final = "2026-01-01T00:00:00Z"
_TIME_NEW: Final = "2026-01-02T00:00:00Z"
_UIDS: Final = ("", "9a3e5b1c-0000-4000-8000-000000000001", "d41d8cd9-8f00-4b20-9e98-00000000abcd",
                "7f1c0000-1111-4222-8333-444455556666")


def _quantity_cpu(rng: random.Random, low: int, high: int) -> str:
    milli = rng.randint(low, high) * rng.choice((100, 250, 500, 1000))
    return f"{milli}m" if milli % 1000 else str(milli // 1000)


def _summary(rng: random.Random) -> dict[str, Any] | None:
    if rng.random() < 0.05:
        return None
    pods = rng.choice((0, 5, 20, 50, 110, 500, 10000))
    allocatable: dict[str, str] = {"cpu": rng.choice((str(rng.randint(0, 64)), f"{rng.randint(0, 640)}00m",
                                                      f"{rng.randint(0, 64)}.5")),
                                   "memory": rng.choice((f"{rng.randint(0, 256)}Gi", f"{rng.randint(0, 256)}e9",
                                                         f"{rng.randint(0, 9000)}M", f"{rng.randint(0, 9)}.5Gi"))}
    if rng.random() < 0.2:
        allocatable["ephemeral-storage"] = f"{rng.randint(0, 500)}Gi"
    if rng.random() < 0.05:
        allocatable["hugepages-2Mi"] = f"{rng.randint(0, 64)}Mi"
    if rng.random() < 0.93:
        allocatable["pods"] = str(pods)
    if rng.random() < 0.3:
        allocatable["nvidia.com/gpu"] = str(rng.randint(0, 8))
    summary: dict[str, Any] = {"allocatable": allocatable}
    if rng.random() < 0.6:
        summary["allocated"] = {"cpu": _quantity_cpu(rng, 0, 20), "memory": f"{rng.randint(0, 64)}Gi",
                                "pods": str(rng.randint(0, max(1, pods // 2)))}
    if rng.random() < 0.3:
        summary["allocating"] = {"cpu": _quantity_cpu(rng, 0, 4), "pods": str(rng.randint(0, 5))}
    return summary


def _huge_summary(rng: random.Random) -> dict[str, Any]:
    """Room for millions of replicas (or for none: a few clusters are full)."""
    pods = rng.choice((0, 110, 10**6, 10**7, 2**31 - 1))
    return {"allocatable": {"cpu": rng.choice(("100000", "10000000", "64")),
                            "memory": rng.choice(("1000Ti", "100Pi", "256Gi")), "pods": str(pods)}}


def _resource_models(rng: random.Random, summary: dict[str, Any]) -> list[dict[str, Any]]:
    grades = rng.randint(1, 4)
    cpu_edges = sorted(rng.sample(range(0, 33), grades + 1))
    mem_edges = sorted(rng.sample(range(0, 129), grades + 1))
    with_gpu = rng.random() < 0.25
    models = []
    for grade in range(grades):
        ranges = [
            {"name": "cpu", "min": str(cpu_edges[grade]), "max": str(cpu_edges[grade + 1])},
            {"name": "memory", "min": f"{mem_edges[grade]}Gi", "max": f"{mem_edges[grade + 1]}Gi"},
        ]
        if with_gpu:
            ranges.append({"name": "nvidia.com/gpu", "min": str(grade), "max": str(grade + 1)})
        if rng.random() < 0.05:
            ranges.append({"name": rng.choice(("pods", "foo", "ephemeral-storage")), "min": "7", "max": "9"})
        if rng.random() < 0.1:
            ranges[0]["min"] = rng.choice(("1500m", "0.5", "2.25"))
        models.append({"grade": grade, "ranges": ranges})
    summary["allocatableModelings"] = [{"grade": g, "count": rng.choice((0, 0, 1, 2, 3, 10))}
                                       for g in range(grades) if rng.random() < 0.9]
    if rng.random() < 0.1:
        # Odd but possible status: a grade listed twice, a grade the models do not define.
        summary["allocatableModelings"].append({"grade": rng.randint(0, grades + 1), "count": rng.randint(0, 3)})
    if rng.random() < 0.1:
        rng.shuffle(models)
    return models


def _cluster(rng: random.Random, name: str, category: str) -> dict[str, Any]:
    labels = {"env": rng.choice(_ENVS)}
    if rng.random() < 0.5:
        labels["tier"] = rng.choice(("gold", "silver"))
    spec: dict[str, Any] = {}
    if rng.random() < 0.85:
        spec["region"] = rng.choice(_MANY_REGIONS if category == "spread_region" and rng.random() < 0.4
                                    else _REGIONS)
    if rng.random() < 0.7:
        spec["provider"] = rng.choice(_PROVIDERS)
    if rng.random() < 0.6:
        spec["zones"] = sorted(rng.sample(("z1", "z2", "z3"), rng.randint(1, 2)))
    if rng.random() < 0.2:
        spec["zone"] = rng.choice(("z1", "z2", "z3"))
    taint_chance = 0.6 if category == "taints" else 0.15
    if rng.random() < taint_chance:
        spec["taints"] = [rng.choice((
            {"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"},
            {"key": "cluster.karmada.io/unreachable", "effect": "NoExecute"},
            {"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"},
            {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
            {"key": "maintenance", "effect": "PreferNoSchedule"},
        ))]
    status: dict[str, Any] = {}
    kinds = [{"name": "deployments", "kind": "Deployment"}]
    if rng.random() < 0.92:
        status["apiEnablements"] = [{"groupVersion": "apps/v1", "resources": kinds},
                                    {"groupVersion": "v1", "resources": [{"name": "configmaps", "kind": "ConfigMap"}]}]
    summary = _summary(rng) if category != "huge" else _huge_summary(rng)
    models_chance = 0.8 if category == "resource_models" else 0.1
    if summary is not None and rng.random() < models_chance:
        spec["resourceModels"] = _resource_models(rng, summary)
    if summary is not None:
        status["resourceSummary"] = summary
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if rng.random() < 0.03:
        meta["deletionTimestamp"] = _TIME_OLD
        meta["finalizers"] = ["karmada.io/cluster-controller"]
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": meta,
            "spec": spec, "status": status}


def _affinity(rng: random.Random, names: list[str], *, nonempty: bool = False) -> dict[str, Any]:
    names = names or ["member1"]  # an empty fleet still gets a policy naming clusters
    kinds = ["labels", "names", "exclude", "fields", "empty", "empty_selectors"]
    if nonempty:
        kinds.remove("empty")
    kind = rng.choice(kinds)
    if kind == "labels":
        if rng.random() < 0.5:
            return {"labelSelector": {"matchLabels": {"env": rng.choice(_ENVS)}}}
        if rng.random() < 0.3:
            return {"labelSelector": {"matchExpressions": [
                {"key": "tier", "operator": rng.choice(("Exists", "DoesNotExist"))}]}}
        return {"labelSelector": {"matchExpressions": [
            {"key": "env", "operator": rng.choice(("In", "NotIn")), "values": rng.sample(_ENVS, 2)}]}}
    if kind == "names":
        body: dict[str, Any] = {"clusterNames": sorted(rng.sample(names, rng.randint(1, len(names))))}
        if rng.random() < 0.3:
            body["labelSelector"] = {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}
        return body
    if kind == "exclude":
        return {"exclude": sorted(rng.sample(names, rng.randint(1, max(1, len(names) // 2))))}
    if kind == "empty_selectors":
        # Present but empty: a label selector matching everything, a field selector with no terms.
        return rng.choice(({"labelSelector": {}}, {"fieldSelector": {}}, {"fieldSelector": {"matchExpressions": []}}))
    if kind == "fields":
        key = rng.choice(("region", "provider", "zone"))
        pool = {"region": _REGIONS, "provider": _PROVIDERS, "zone": ("z1", "z2", "z3")}[key]
        return {"fieldSelector": {"matchExpressions": [
            {"key": key, "operator": rng.choice(("In", "NotIn")), "values": rng.sample(pool, rng.randint(1, 2))}]}}
    return {}


def _tolerations(rng: random.Random, category: str) -> list[dict[str, Any]] | None:
    if rng.random() > (0.6 if category == "taints" else 0.25):
        return None
    options = (
        {"key": "cluster.karmada.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "cluster.karmada.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
        {"key": "cluster.karmada.io/not-ready", "operator": "Exists"},
        {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
        {"operator": "Exists"},
    )
    return rng.sample(options, rng.randint(1, 2))


def _replica_scheduling(rng: random.Random, category: str, names: list[str]) -> dict[str, Any] | None:
    if category == "huge":
        category = rng.choice(("static_weight", "static_weight", "dynamic_weight", "aggregated", "duplicated"))
        if category == "static_weight":
            rules = [{"targetCluster": _affinity(rng, names, nonempty=True),
                      "weight": rng.choice((1, 2, 5, 1000, rng.randint(1, 2**31), rng.randint(1, 2**62)))}
                     for _ in range(rng.randint(1, 4))]
            return {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                    "weightPreference": {"staticWeightList": rules}}
    if category in ("duplicated",):
        return rng.choice((None, {"replicaSchedulingType": "Duplicated"}))
    if category == "static_weight":
        rules = []
        for _ in range(rng.randint(0, 3)):
            rules.append({"targetCluster": _affinity(rng, names, nonempty=True), "weight": rng.randint(1, 5)})
        body: dict[str, Any] = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
        if rules or rng.random() < 0.5:
            body["weightPreference"] = {"staticWeightList": rules}
        if rng.random() < 0.3:
            del body["replicaDivisionPreference"]
        return body
    if category in ("aggregated", "overflow_aggregated"):
        return {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
    if category in ("dynamic_weight", "overflow", "scale_up", "scale_down", "fresh_reschedule", "failover",
                    "resource_models"):
        if category not in ("dynamic_weight", "overflow") and rng.random() < 0.35:
            return {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
        body = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                "weightPreference": {"dynamicWeight": "AvailableReplicas"}}
        if rng.random() < 0.2:
            body.pop("replicaSchedulingType")
        return body
    return rng.choice((
        None,
        {"replicaSchedulingType": "Duplicated"},
        {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"},
        {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
         "weightPreference": {"dynamicWeight": "AvailableReplicas"}},
        {"replicaSchedulingType": "Divided"},
        {},
    ))


def _spread(rng: random.Random, category: str, count: int) -> list[dict[str, Any]] | None:
    if category == "spread_cluster" or (category not in ("spread_region",) and rng.random() < 0.12):
        low = rng.randint(0, 2)
        constraint: dict[str, Any] = {"spreadByField": "cluster", "minGroups": low}
        if rng.random() < 0.8:
            constraint["maxGroups"] = rng.randint(max(low, 1), max(low, 1, count))
        if rng.random() < 0.2:
            constraint.pop("spreadByField")
        return [constraint]
    if category == "spread_cluster" and rng.random() < 0.3:
        # zone / provider constraints filter and group, but select by cluster; a label one alone selects nothing
        other = rng.choice(({"spreadByField": "zone", "minGroups": rng.randint(1, 2)},
                            {"spreadByField": "provider", "minGroups": 1, "maxGroups": 2},
                            {"spreadByLabel": "tier", "minGroups": 1}))
        if "spreadByLabel" in other and rng.random() < 0.5:
            return [other]
        return [other, {"spreadByField": "cluster", "minGroups": rng.randint(1, 2), "maxGroups": rng.randint(2, 4)}]
    if category == "spread_region" or rng.random() < 0.05:
        rmin = rng.randint(1, 3)
        region: dict[str, Any] = {"spreadByField": "region", "minGroups": rmin, "maxGroups": rng.randint(rmin, 5)}
        cmin = rng.randint(1, 3)
        cluster = {"spreadByField": "cluster", "minGroups": cmin, "maxGroups": rng.randint(cmin, max(cmin, count + 1))}
        return [region, cluster] if rng.random() < 0.5 else [cluster, region]
    return None


def _previous(rng: random.Random, names: list[str], total: int) -> list[dict[str, Any]]:
    pool = [*names, "member-gone"] if rng.random() < 0.15 or not names else names
    chosen = rng.sample(pool, rng.randint(1, min(len(pool), 4)))
    if total <= 0:
        return [{"name": n, "replicas": 0} for n in chosen]
    cuts = sorted(rng.randint(0, total) for _ in range(len(chosen) - 1))
    shares = [b - a for a, b in zip([0, *cuts], [*cuts, total], strict=True)]
    previous = [{"name": n, "replicas": r} for n, r in zip(chosen, shares, strict=True)]
    if rng.random() < 0.03:
        previous.append(dict(rng.choice(previous)))  # a name listed twice
    return previous


def _invalidate(rng: random.Random, placement: dict[str, Any]) -> None:
    """Break the placement the way karmada-webhook's ValidatePlacement rejects (one or two ways)."""
    spread = placement.setdefault("spreadConstraints", [])
    terms = placement.get("clusterAffinities")
    for _ in range(rng.choice((1, 1, 2))):
        kind = rng.randrange(14)
        if kind == 0:
            spread.append({"spreadByField": "cluster", "spreadByLabel": "tier"})
        elif kind == 1:
            spread.append({"spreadByField": "cluster", "minGroups": 3, "maxGroups": 2})
        elif kind == 2:
            spread.append({"spreadByField": "cluster", rng.choice(("minGroups", "maxGroups")): -1})
        elif kind == 3:
            placement["spreadConstraints"] = [{"spreadByField": rng.choice(("region", "zone", "provider"))}]
        elif kind == 4:
            spread.extend([{"spreadByField": "cluster"}, {"spreadByField": "cluster", "maxGroups": 2}])
        elif kind == 5:
            placement["clusterAffinity"] = {}
            placement.setdefault("clusterAffinities", rng.choice(([], [{"affinityName": "t"}])))
        elif kind == 6 and terms:
            terms.append(dict(terms[0]))
        elif kind == 7:
            bad = rng.choice(("", "Bad Name", "a/b/c", "-x", "x" * 70, "Ex.com/a", "/a", "a/", "ok.io/x"))
            placement["clusterAffinities"] = [{"affinityName": bad}]
            placement.pop("clusterAffinity", None)
        elif kind == 8:
            placement.pop("clusterAffinity", None)
            placement["clusterAffinities"] = [{"affinityName": "t", "clusterNames": ["member1"],
                                               "overflowAffinities": [{"affinityName": "o"}]}]
            placement["replicaScheduling"] = rng.choice((
                {"replicaSchedulingType": "Duplicated"},
                {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"},
                {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                 "weightPreference": {"staticWeightList": [{"targetCluster": {"clusterNames": ["member1"]},
                                                            "weight": 1}]}}))
        elif kind == 9:
            placement.pop("clusterAffinity", None)
            name = rng.choice(("t", "o"))
            placement["clusterAffinities"] = [{"affinityName": "t", **({} if name == "o" else {"clusterNames": ["m"]}),
                                               "overflowAffinities": [{"affinityName": name}]}]
            placement["replicaScheduling"] = {"replicaSchedulingType": "Divided",
                                              "replicaDivisionPreference": "Aggregated"}
        elif kind == 10:
            expr = rng.choice(({"key": "name", "operator": "In", "values": ["a"]},
                               {"key": "zone", "operator": "Exists"}, {"key": "region", "operator": "Gt",
                                                                       "values": ["1"]}))
            target = rng.choice(terms) if terms and rng.random() < 0.5 else None
            if target is None:
                placement.pop("clusterAffinities", None)
                placement["clusterAffinity"] = {"fieldSelector": {"matchExpressions": [expr]}}
            else:
                target["fieldSelector"] = {"matchExpressions": [expr]}
        elif kind == 11:
            placement.setdefault("clusterTolerations", []).append(
                {"key": "k", "operator": rng.choice(("Lt", "Gt")), "value": "5", "effect": "NoSchedule"})
        elif kind == 12 and terms:
            terms[-1]["overflowAffinities"] = [{"affinityName": "dup"}, {"affinityName": "dup"}]
            placement["replicaScheduling"] = {"replicaSchedulingType": "Divided",
                                              "replicaDivisionPreference": "Aggregated"}
            terms[-1].setdefault("clusterNames", ["member1"])
        else:
            spread.append({"spreadByLabel": "tier", "spreadByField": "region", "minGroups": 2, "maxGroups": 1})
    if not spread:
        placement.pop("spreadConstraints")


def generate(seed: int) -> dict[str, Any]:
    """One case; the same seed always gives the same case."""
    rng = random.Random(seed)
    category = CATEGORIES[seed % len(CATEGORIES)]
    # Beyond 12 clusters Go's sort.Sort leaves equal capacities in pdqsort's order, not a stable one.
    roll = rng.random()
    count = rng.randint(13, 24) if roll < 0.1 else rng.randint(0, 12) if roll < 0.4 else rng.randint(2, 8)
    many = category == "huge" and rng.random() < 0.5
    if many:
        count = rng.randint(100, 2000) if rng.random() < 0.15 else rng.randint(100, 600)
    names = [f"member{i}" for i in range(1, count + 1)]
    rng.shuffle(names)
    clusters = [_cluster(rng, name, category) for name in names]
    placement: dict[str, Any] = {}
    scheduling = _replica_scheduling(rng, category, names)
    overflow = category in ("overflow", "overflow_aggregated")
    if category == "affinity_terms" or overflow or rng.random() < 0.1:
        terms = []
        for i in range(rng.randint(1, 3) if not overflow else rng.randint(1, 2)):
            term: dict[str, Any] = {"affinityName": f"term{i}", **_affinity(rng, names, nonempty=overflow)}
            if overflow and (i == 0 or rng.random() < 0.5):
                # An empty list still switches overflow assignment on (a non-nil slice in Go).
                term["overflowAffinities"] = [{"affinityName": f"term{i}-overflow{j}", **_affinity(rng, names)}
                                              for j in range(rng.choice((0, 1, 1, 1, 2, 2)))]
            terms.append(term)
        placement["clusterAffinities"] = terms
    elif rng.random() < 0.01:
        placement["clusterAffinities"] = []  # the affinity-terms path with no term: nothing is scheduled
    elif rng.random() < 0.7:
        placement["clusterAffinity"] = _affinity(rng, names)
    tolerations = _tolerations(rng, category)
    if tolerations is not None:
        placement["clusterTolerations"] = tolerations
    spread = _spread(rng, category, count)
    if spread is not None:
        placement["spreadConstraints"] = spread
    if scheduling is not None:
        placement["replicaScheduling"] = scheduling
    if rng.random() < 0.05:
        # Valid, but no cluster matches: the webhook does not validate label selectors.
        placement.setdefault("clusterAffinity", {})["labelSelector"] = {"matchExpressions": [
            {"key": "env", "operator": rng.choice(("Near", "In")), "values": []}]}
        placement.pop("clusterAffinities", None)
    if rng.random() < 0.05 and scheduling is not None and "weightPreference" in scheduling:
        # Static weight targets are not validated either: a key other than provider/region/zone.
        scheduling["weightPreference"].setdefault("staticWeightList", []).append(
            {"targetCluster": {"fieldSelector": {"matchExpressions": [
                {"key": "name", "operator": rng.choice(("In", "NotIn")), "values": ["member1"]}]}}, "weight": 3})
    if category == "invalid":
        _invalidate(rng, placement)

    replicas = rng.choice((1, 2, 3, 5, 7, 10, 13, 20, 31, 64, 100, 1000, 5000) if rng.random() < 0.2
                          else (1, 2, 3, 5, 7, 10, 13, 20, 31))
    if category == "huge":
        # Many clusters with up to 100,000 replicas, or a few clusters with up to 2 million.
        replicas = (rng.randint(count, 100_000) if many
                    else rng.randint(10**5, 2 * 10**6) if rng.random() < 0.15 else rng.randint(10**5, 10**6))
    if category in ("zero_replicas", "non_workload"):
        replicas = 0
    resource = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web",
                "uid": rng.choice(_UIDS)}
    if category == "non_workload" and rng.random() < 0.5:
        resource.update(apiVersion="v1", kind="ConfigMap", name="config")
    spec: dict[str, Any] = {"resource": resource, "replicas": replicas}
    requirements_chance = {"resource_models": 0.95, "zero_replicas": 0.6, "non_workload": 0.0}.get(category, 0.5)
    if rng.random() < requirements_chance:
        request: dict[str, str] = {}
        if rng.random() < 0.9:
            request["cpu"] = _quantity_cpu(rng, 1, 8)
        if rng.random() < 0.7:
            request["memory"] = f"{rng.choice((128, 512, 1024, 3000))}Mi"
        if rng.random() < 0.15:
            request["nvidia.com/gpu"] = "1"
        if rng.random() < 0.1:
            request["ephemeral-storage"] = rng.choice(("1Gi", "500M", "0"))
        if rng.random() < 0.03:
            request[rng.choice(("pods", "foo", "hugepages-2Mi", "example.com/bar"))] = rng.choice(("1", "2Mi"))
        if rng.random() < 0.1 and "cpu" in request:
            request["cpu"] = rng.choice(("0.25", "1500m", "2", "100m", "0"))
        spec["replicaRequirements"] = {"resourceRequest": request} if request or rng.random() < 0.5 else {}
    status: dict[str, Any] = {}
    steady = category in ("scale_up", "scale_down", "fresh_reschedule", "failover", "overflow",
                          "overflow_aggregated") or rng.random() < 0.25
    if steady:
        previous_total = {"scale_up": max(0, replicas - rng.randint(1, 6)),
                          "scale_down": replicas + rng.randint(1, 6)}.get(category, rng.randint(0, replicas + 4))
        spec["clusters"] = _previous(rng, names, previous_total)
        status["lastScheduledTime"] = _TIME_OLD
    if category == "fresh_reschedule" or (steady and rng.random() < 0.1):
        spec["rescheduleTriggeredAt"] = _TIME_NEW
        status.setdefault("lastScheduledTime", _TIME_OLD)
        roll = rng.random()
        if roll < 0.1:
            del status["lastScheduledTime"]  # a first schedule still pending: Steady
        elif roll < 0.2:
            status["lastScheduledTime"] = "2026-01-03T00:00:00Z"  # already rescheduled: Steady
    if spec.get("clusters") and (category == "failover" or rng.random() < 0.05):
        victim = rng.choice(spec["clusters"])["name"]
        spec["gracefulEvictionTasks"] = [{"fromCluster": victim, "reason": "TaintUntolerated",
                                          "producer": "TaintManager", "replicas": rng.randint(0, 3)}]
    if "clusterAffinities" in placement and rng.random() < 0.5:
        terms = placement["clusterAffinities"]
        status["schedulerObservingAffinityName"] = rng.choice([t["affinityName"] for t in terms] + ["gone"])
    binding = {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
               "metadata": {"name": "web-deployment", "namespace": "default"}, "spec": spec, "status": status}
    if rng.random() < 0.1:
        # A cluster-scoped workload: ClusterResourceBinding (scheduled the same way).
        binding["kind"] = "ClusterResourceBinding"
        binding["metadata"] = {"name": "web-clusterrole"}
    return {"category": category, "clusters": clusters, "placement": placement, "binding": binding}


def main(argv: list[str] | None = None) -> int:
    """Print the case of ``--seed`` as one JSON line (the oracle's input format)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=1)
    args = parser.parse_args(argv)
    for seed in range(args.seed, args.seed + args.count):
        sys.stdout.write(json.dumps(generate(seed)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
