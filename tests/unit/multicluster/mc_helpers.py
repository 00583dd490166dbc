"""Builders shared by the multi-cluster tests: clusters, bindings and placements in Karmada's JSON shapes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from extender.multicluster.model import (
    Cluster,
    Placement,
    ResourceBinding,
    TargetCluster,
    parse_binding,
    parse_cluster,
    parse_placement,
)

DEPLOYMENT_API = [{"groupVersion": "apps/v1", "resources": [{"name": "deployments", "kind": "Deployment"}]}]


def cluster_obj(name: str, *, pods: int | str | None = 110, allocatable: Mapping[str, Any] | None = None,
                allocated: Mapping[str, Any] | None = None, allocating: Mapping[str, Any] | None = None,
                labels: Mapping[str, str] | None = None, provider: str = "", region: str = "",
                zones: Sequence[str] = (), taints: Sequence[Mapping[str, str]] = (),
                apis: Sequence[Mapping[str, Any]] | None = None, summary: bool = True,
                extra_spec: Mapping[str, Any] | None = None,
                modelings: Sequence[Mapping[str, int]] | None = None) -> dict[str, Any]:
    """A Cluster object as ``karmadactl get cluster -o json`` shows it."""
    spec: dict[str, Any] = {"provider": provider, "region": region, "zones": list(zones), "taints": list(taints)}
    spec.update(extra_spec or {})
    status: dict[str, Any] = {"apiEnablements": DEPLOYMENT_API if apis is None else list(apis)}
    if summary:
        alloc = dict(allocatable or {})
        if pods is not None:
            alloc.setdefault("pods", str(pods))
        rs: dict[str, Any] = {"allocatable": alloc, "allocated": dict(allocated or {}),
                              "allocating": dict(allocating or {})}
        if modelings is not None:
            rs["allocatableModelings"] = list(modelings)
        status["resourceSummary"] = rs
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": name, "labels": dict(labels or {})}, "spec": spec, "status": status}


def cluster(name: str, **kwargs: Any) -> Cluster:
    """A parsed :class:`Cluster` (see :func:`cluster_obj`)."""
    return parse_cluster(cluster_obj(name, **kwargs))


def pods_cluster(name: str, pods: int) -> Cluster:
    """A cluster whose only capacity is ``pods`` (upstream's ``NewClusterWithResource(name, {pods: n})``)."""
    return cluster(name, pods=pods)


def binding_obj(replicas: int, *, clusters: Sequence[tuple[str, int]] = (), uid: str = "",
                request: Mapping[str, Any] | None = None, requirements: bool = True,
                placement: Mapping[str, Any] | None = None, evictions: Sequence[str] = (),
                reschedule_at: str | None = None, last_scheduled: str | None = None,
                observed_affinity: str = "") -> dict[str, Any]:
    """A ResourceBinding of Deployment default/app."""
    spec: dict[str, Any] = {
        "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "app", "uid": uid},
        "replicas": replicas,
        "clusters": [{"name": n, "replicas": r} for n, r in clusters],
    }
    if requirements:
        spec["replicaRequirements"] = {"resourceRequest": dict(request or {})}
    if placement is not None:
        spec["placement"] = dict(placement)
    if evictions:
        spec["gracefulEvictionTasks"] = [{"fromCluster": c, "reason": "TaintUntolerated"} for c in evictions]
    if reschedule_at:
        spec["rescheduleTriggeredAt"] = reschedule_at
    status: dict[str, Any] = {}
    if last_scheduled:
        status["lastScheduledTime"] = last_scheduled
    if observed_affinity:
        status["schedulerObservingAffinityName"] = observed_affinity
    return {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
            "metadata": {"name": "app-deployment", "namespace": "default"}, "spec": spec, "status": status}


def binding(replicas: int, **kwargs: Any) -> ResourceBinding:
    """A parsed :class:`ResourceBinding` (see :func:`binding_obj`)."""
    return parse_binding(binding_obj(replicas, **kwargs))


DYNAMIC = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
           "weightPreference": {"dynamicWeight": "AvailableReplicas"}}
AGGREGATED = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Aggregated"}
DUPLICATED = {"replicaSchedulingType": "Duplicated"}


def static(weights: Mapping[str, int]) -> dict[str, Any]:
    """A replicaScheduling with static weights by cluster name."""
    return {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
            "weightPreference": {"staticWeightList": [
                {"targetCluster": {"clusterNames": [name]}, "weight": w} for name, w in weights.items()]}}


def placement(scheduling: Mapping[str, Any] | None = None, **fields: Any) -> Placement:
    """A parsed :class:`Placement`: ``replicaScheduling`` plus any other placement fields."""
    raw: dict[str, Any] = dict(fields)
    if scheduling is not None:
        raw["replicaScheduling"] = dict(scheduling)
    return parse_placement(raw)


def pairs(targets: Sequence[TargetCluster]) -> list[tuple[str, int]]:
    """Targets as ``(name, replicas)`` in their order."""
    return [(t.name, t.replicas) for t in targets]


def fixed_capacity(capacity: Mapping[str, int]) -> Any:
    """A calculator giving each cluster a fixed available replica count (instead of the estimator)."""

    def calculator(clusters: Sequence[Cluster], _binding: ResourceBinding) -> list[TargetCluster]:
        return [TargetCluster(c.name, capacity.get(c.name, 0)) for c in clusters]

    return calculator
