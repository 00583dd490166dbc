"""Multi-cluster placement for the web view: a Karmada ResourceBinding (with, optionally, the
PropagationPolicy whose placement replaces the binding's, and Cluster objects replacing the service's
member clusters) given as YAML, placed by the same pipeline as ``POST /multicluster/schedule`` and
``extender place``; answered with every cluster's part: replicas, score, available replicas, whether it
was selected, or why it was filtered out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from extender.cluster.dump import DumpError, read_text_objects
from extender.multicluster.budget import WorkBudget, bounded
from extender.multicluster.model import Cluster, ModelError, parse_binding, parse_cluster, parse_placement_source
from extender.multicluster.routes import PlacementLimits
from extender.multicluster.scheduler import schedule
from extender.ui.whatif import WhatIfError, yaml_problem

BINDING_KINDS = ("ResourceBinding", "ClusterResourceBinding")
POLICY_KINDS = ("PropagationPolicy", "ClusterPropagationPolicy")
MAX_YAML_BYTES = 4 << 20


def cluster_summary(cluster: Cluster) -> dict[str, Any]:
    """A member cluster as the page lists it."""
    return {"name": cluster.name, "provider": cluster.provider, "region": cluster.region,
            "zones": list(cluster.zones) or ([cluster.zone] if cluster.zone else []),
            "labels": dict(cluster.labels),
            "taints": [f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}" for t in cluster.taints],
            "deleting": cluster.deleting}


def place(text: str, members: Sequence[Cluster], limits: PlacementLimits | None = None) -> dict[str, Any]:
    """Place the binding of a YAML text; WhatIfError for a text that does not hold one readable binding, and
    WorkLimitError past the placement's budget (``limits``, as ``POST /multicluster/schedule``'s)."""
    if len(text.encode()) > MAX_YAML_BYTES:
        raise WhatIfError(f"binding: the YAML is larger than {MAX_YAML_BYTES} bytes")
    try:
        objects = read_text_objects(text, "binding")
    except DumpError as err:
        raise yaml_problem(err, "binding") from err
    bindings = [o for o in objects if o.get("kind") in BINDING_KINDS]
    policies = [o for o in objects if o.get("kind") in POLICY_KINDS]
    cluster_objects = [o for o in objects if o.get("kind") == "Cluster"]
    others = sorted({str(o.get("kind")) for o in objects} - {*BINDING_KINDS, *POLICY_KINDS, "Cluster"})
    if len(bindings) != 1:
        raise WhatIfError(f"binding: expected one ResourceBinding, found {len(bindings)}"
                          + (f" (and objects of kind {', '.join(others)})" if others else ""))
    if len(policies) > 1:
        raise WhatIfError(f"policy: expected at most one PropagationPolicy, found {len(policies)}")
    try:
        binding = parse_binding(bindings[0], path="binding")
        placement = parse_placement_source(policies[0], path="policy") if policies else None
        clusters = ([parse_cluster(c, path=f"clusters[{i}]") for i, c in enumerate(cluster_objects)]
                    if cluster_objects else list(members))
    except ModelError as err:
        raise WhatIfError(str(err)) from err
    if not clusters:
        raise WhatIfError("clusters: no member clusters: start the service with --member-clusters FILE, or add "
                          "Cluster objects to the YAML")
    if limits is not None and len(clusters) > limits.max_clusters:
        raise WhatIfError(f"clusters: {len(clusters)} clusters exceed the limit of {limits.max_clusters} per "
                          "placement (--max-placement-clusters)")
    with bounded(WorkBudget(limits.work_steps, limits.seconds) if limits is not None else None):
        result = schedule(clusters, binding, placement)
    replicas = {t.name: t.replicas for t in result.clusters}
    rows = []
    for cluster in sorted(clusters, key=lambda c: c.name):
        name = cluster.name
        rows.append({**cluster_summary(cluster), "replicas": replicas.get(name, 0),
                     "feasible": name not in result.filtered, "filtered": list(result.filtered.get(name, [])),
                     "score": result.scores.get(name), "available": result.available.get(name),
                     "selected": name in result.selected, "tier": result.tiers.get(name)})
    return {**result.as_dict(), "binding": f"{binding.namespace}/{binding.name}" if binding.namespace
            else binding.name, "replicas": binding.replicas, "affinityName": result.affinity_name,
            "policy": bool(policies), "rows": rows}
