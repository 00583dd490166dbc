"""Multi-cluster plans: where Karmada would put each ResourceBinding's replicas under each variant.

The plan's ``multicluster`` block names member clusters (Karmada ``Cluster`` objects) and ResourceBindings,
each with its PropagationPolicy (optional: the binding's own placement otherwise). A variant may lose
member clusters (``clustersLost``) or add copies of one (``addClusters: {member3: 2}`` adds
``member3-copy-0`` and ``member3-copy-1``, same capacity, labels and taints); every binding is then placed
by :func:`extender.multicluster.scheduler.schedule` (karmada-scheduler v1.18.2's pipeline, checked by the
Karmada oracle), which reports the replicas per cluster or upstream's error.

These placements are cheap (no node-level simulation), so they run in the calling process.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from extender.cluster.dump import DumpError, read_dump_objects
from extender.multicluster.dump import load_binding, load_placement
from extender.multicluster.model import Cluster, ModelError, parse_cluster
from extender.multicluster.scheduler import schedule
from extender.plan.planfile import MultiClusterPlan, PlanError, Variant


@dataclass
class BindingPlacement:
    """One binding's placement under one variant."""

    binding: str
    replicas: int
    clusters: dict[str, int] = field(default_factory=dict)
    error: str = ""

    @property
    def placed(self) -> int:
        """Replicas given a cluster."""
        return sum(self.clusters.values())


@dataclass
class MultiClusterResult:
    """Every binding's placement under one variant."""

    variant: str
    clusters: int
    bindings: list[BindingPlacement] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {"variant": self.variant, "clusters": self.clusters,
                "bindings": [{"binding": b.binding, "replicas": b.replicas, "placed": b.placed,
                              "clusters": b.clusters, "error": b.error} for b in self.bindings]}


def _cluster_objects(path: str) -> list[Mapping[str, Any]]:
    try:
        objects: list[Mapping[str, Any]] = [o for o in read_dump_objects(path) if o.get("kind") == "Cluster"]
    except DumpError as err:
        raise PlanError(f"multicluster.clusters: {err}") from err
    if not objects:
        raise PlanError(f"multicluster.clusters: no Cluster objects in {path}")
    return objects


def _parse(obj: Mapping[str, Any]) -> Cluster:
    try:
        return parse_cluster(obj)
    except ModelError as err:
        raise PlanError(f"multicluster.clusters: {err}") from err


def clusters_of(objects: Sequence[Mapping[str, Any]], variant: Variant) -> list[Cluster]:
    """The member clusters under a variant (PlanError when it names a cluster that is not there)."""
    by_name = {str((o.get("metadata") or {}).get("name")): o for o in objects}
    for name in variant.clusters_lost + tuple(n for n, _ in variant.add_clusters):
        if name not in by_name:
            raise PlanError(f"variant {variant.name!r}: no member cluster named {name!r}; "
                            f"clusters: {sorted(by_name)}")
    kept = [obj for name, obj in by_name.items() if name not in variant.clusters_lost]
    for name, count in variant.add_clusters:
        for i in range(count):
            twin = copy.deepcopy(dict(by_name[name]))
            twin["metadata"] = {**twin.get("metadata", {}), "name": f"{name}-copy-{i}"}
            kept.append(twin)
    return [_parse(obj) for obj in kept]


def run_multicluster(spec: MultiClusterPlan, variants: Sequence[Variant]) -> list[MultiClusterResult]:
    """Every binding placed under every variant."""
    objects = _cluster_objects(spec.clusters)
    bindings = []
    for i, (binding_path, policy_path) in enumerate(spec.bindings):
        try:
            binding = load_binding(binding_path)
            placement = load_placement(policy_path) if policy_path else None
        except DumpError as err:
            raise PlanError(f"multicluster.bindings[{i}]: {err}") from err
        bindings.append((binding, placement))
    results = []
    for variant in variants:
        clusters = clusters_of(objects, variant)
        result = MultiClusterResult(variant.name, len(clusters))
        for binding, placement in bindings:
            placed = schedule(clusters, binding, placement)
            name = f"{binding.resource.namespace}/{binding.resource.name}".lstrip("/")
            result.bindings.append(BindingPlacement(name, binding.replicas,
                                                    {t.name: t.replicas for t in placed.clusters}, placed.error))
        results.append(result)
    return results
