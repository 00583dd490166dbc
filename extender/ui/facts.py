"""What the web view shows beside an explanation: the pending pods, and each node's zone, pool, taints and
usage (for the heat map, the table's zone and pool columns, and the what-if's node and taint pickers).

A node's zone is its ``topology.kubernetes.io/zone`` label (the beta label before it); its pool is the first
node-pool label of the common providers and autoscalers it carries (GKE, EKS, Karpenter, AKS, a plain
``pool``/``nodepool`` label), else its instance type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.cluster.snapshot import Snapshot

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
POOL_LABELS = ("cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "karpenter.sh/nodepool",
               "kubernetes.azure.com/agentpool", "agentpool", "nodepool", "node-pool", "pool",
               "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
MAX_LISTED_PODS = 1000


def _first_label(labels: Mapping[str, str], keys: Iterable[str]) -> str:
    return next((labels[k] for k in keys if labels.get(k)), "")


def node_facts(info: NodeInfo) -> dict[str, Any]:
    """One node as the page shows it: zone, pool, cordoned, taints, and requested/allocatable cpu (millicores),
    memory (bytes) and pods."""
    node = info.node
    assert node is not None
    alloc = node.allocatable
    return {
        "name": info.name,
        "zone": _first_label(node.labels, ZONE_LABELS),
        "pool": _first_label(node.labels, POOL_LABELS),
        "unschedulable": node.unschedulable,
        "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in node.taints],
        "cpu": [info.requested.milli_cpu, alloc.milli_cpu],
        "memory": [info.requested.memory, alloc.memory],
        "pods": [len(info.pods), alloc.allowed_pods],
    }


def nodes_overview(snapshot: Snapshot, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The facts of every node of a snapshot (or of the named ones), in the snapshot's order."""
    if names is None:
        return [node_facts(info) for info in snapshot.node_list]
    return [node_facts(snapshot.node_infos[n]) for n in names if n in snapshot.node_infos]


def pod_summary(pod: PodRecord) -> dict[str, Any]:
    """A pending pod as the list shows it."""
    meta = pod.raw.get("metadata") or {}
    spec = pod.raw.get("spec") or {}
    return {
        "namespace": pod.namespace,
        "name": pod.name,
        "schedulerName": spec.get("schedulerName") or "default-scheduler",
        "created": meta.get("creationTimestamp") or "",
        "cpu": pod.requests.milli_cpu,
        "memory": pod.requests.memory,
        "claims": len(spec.get("resourceClaims") or []),
    }


def pending_list(pods: Iterable[PodRecord], query: str = "", limit: int = MAX_LISTED_PODS) -> dict[str, Any]:
    """The pending pods whose ``namespace/name`` contains every word of ``query`` (any letter case), sorted,
    at most ``limit`` of them; ``total`` counts every match."""
    words = query.casefold().split()
    matches = sorted((p for p in pods if all(w in p.key.casefold() for w in words)), key=lambda p: p.key)
    return {"total": len(matches), "pods": [pod_summary(p) for p in matches[:limit]]}
