"""Variants applied to the base cluster: what changes, computed once, then applied to a cache or written out.

A variant's changes to the cluster are worked out from the base's objects (:func:`changes_of`) and then
either applied to a copy of the base cache (what workers do, :func:`apply_changes`) or written as the
objects of a dump (:func:`variant_objects`, for ``extender plan --export``), from the same
:class:`Changes`, so the cluster a worker simulates on is the one ``extender simulate`` reads back:

- **zones lost** and **removed nodes**: the nodes go, with their pods. Pods a controller owns (anything but
  a DaemonSet or a static pod) are re-created as pending pods and placed before the workload, in the order
  they were on those nodes, as the controllers would re-create them; other pods are lost (counted).
- **cordoned nodes**: ``spec.unschedulable`` and the ``node.kubernetes.io/unschedulable:NoSchedule`` taint
  the node lifecycle controller adds.
- **added nodes**: copies of a pool's template with fresh names (``<namePrefix><i>``), hostname label
  set to the name, the pool's labels applied, and what is unique to a machine dropped (uid, provider ID,
  pod CIDRs, addresses, the cordon). They come after the base's nodes. A template's ResourceSlices and
  CSINode are not copied (they belong to that machine's drivers).
- **profile, weights, percentageOfNodesToScore, kubernetesVersion**: the scheduler's side (:func:`profile_spec`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from extender.cluster.cache import ClusterCache
from extender.cluster.records import TERMINAL_PHASES
from extender.plan.planfile import NodeSelector, Plan, PlanError, Pool, Variant
from extender.plan.workload import stable_uid

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
# Owners whose pods are not re-created elsewhere when their node goes (DaemonSet pods belong to a node;
# a mirror pod's owner is its Node).
NODE_BOUND_OWNERS = ("DaemonSet", "Node")


@dataclass(frozen=True)
class BaseIndex:
    """The base cluster's nodes (in order) and each node's pods, built once per worker."""

    nodes: dict[str, Mapping[str, Any]]
    pods_by_node: dict[str, list[Mapping[str, Any]]]

    @classmethod
    def of(cls, objects: Sequence[Mapping[str, Any]]) -> BaseIndex:
        """Index a base cluster's objects."""
        nodes: dict[str, Mapping[str, Any]] = {}
        pods: dict[str, list[Mapping[str, Any]]] = {}
        for obj in objects:
            kind = obj.get("kind")
            if kind == "Node":
                nodes[str((obj.get("metadata") or {}).get("name"))] = obj
            elif kind == "Pod":
                node = (obj.get("spec") or {}).get("nodeName")
                if node and (obj.get("status") or {}).get("phase") not in TERMINAL_PHASES:
                    pods.setdefault(str(node), []).append(obj)
        return cls(nodes, pods)


@dataclass
class Changes:
    """What a variant does to the base cluster."""

    removed: list[str] = field(default_factory=list)
    cordoned: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # name -> the cordoned Node
    added: list[dict[str, Any]] = field(default_factory=list)
    added_by_pool: dict[str, int] = field(default_factory=dict)
    pool_of: dict[str, str] = field(default_factory=dict)  # added node -> its pool
    displaced: list[dict[str, Any]] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # namespace/name of pods gone for good


def _labels(node: Mapping[str, Any]) -> Mapping[str, str]:
    return (node.get("metadata") or {}).get("labels") or {}


def _select(index: BaseIndex, selector: NodeSelector, what: str) -> list[str]:
    if selector.names:
        unknown = [n for n in selector.names if n not in index.nodes]
        if unknown:
            raise PlanError(f"{what}: no node named {', '.join(map(repr, unknown))} in the base cluster")
    chosen = [name for name, node in index.nodes.items() if selector.matches(name, _labels(node))]
    if not chosen:
        raise PlanError(f"{what}: no node of the base cluster matches {selector.as_yaml()}")
    return chosen


def _pending_again(pod: Mapping[str, Any]) -> dict[str, Any]:
    """The pod as its controller re-creates it: unbound and pending."""
    spec = {k: v for k, v in (pod.get("spec") or {}).items() if k != "nodeName"}
    return {**pod, "spec": spec, "status": {"phase": "Pending"}}


def _controller_kind(pod: Mapping[str, Any]) -> str | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, Mapping) and ref.get("controller"):
            return str(ref.get("kind"))
    return None


def pool_template(pool: Pool, index: BaseIndex) -> Mapping[str, Any]:
    """The Node a pool copies."""
    if pool.node is not None:
        return pool.node
    node = index.nodes.get(pool.like)
    if node is None:
        raise PlanError(f"pools.{pool.name}.like: no node named {pool.like!r} in the base cluster")
    return node


def pool_node(pool: Pool, template: Mapping[str, Any], i: int) -> dict[str, Any]:
    """The i-th node of a pool: a copy of its template with a fresh identity."""
    node = copy.deepcopy(dict(template))
    name = f"{pool.name_prefix}{i}"
    meta = node.setdefault("metadata", {})
    for gone in ("resourceVersion", "creationTimestamp", "managedFields", "generateName"):
        meta.pop(gone, None)
    meta.update(name=name, uid=stable_uid("Node", "", name))
    meta["labels"] = {**(meta.get("labels") or {}), **dict(pool.labels), "kubernetes.io/hostname": name}
    spec = node.setdefault("spec", {})
    for gone in ("providerID", "podCIDR", "podCIDRs", "unschedulable"):
        spec.pop(gone, None)
    spec["taints"] = [t for t in spec.get("taints") or [] if t.get("key") != UNSCHEDULABLE_TAINT["key"]]
    node.setdefault("status", {}).pop("addresses", None)
    node["kind"] = "Node"
    node.setdefault("apiVersion", "v1")
    return node


def changes_of(plan: Plan, index: BaseIndex, variant: Variant) -> Changes:
    """Work out a variant's changes to the base cluster (PlanError when it names what is not there)."""
    where = f"variant {variant.name!r}"
    out = Changes()
    removed: dict[str, None] = {}
    for zone in variant.zones_lost:
        nodes = [n for n, node in index.nodes.items() if _labels(node).get(plan.zone_label) == zone]
        if not nodes:
            zones = sorted({_labels(node).get(plan.zone_label, "") for node in index.nodes.values()} - {""})
            raise PlanError(f"{where}: zonesLost: no node has {plan.zone_label}={zone}; zones: {zones}")
        removed.update(dict.fromkeys(nodes))
    if variant.remove_nodes is not None:
        removed.update(dict.fromkeys(_select(index, variant.remove_nodes, f"{where}: removeNodes")))
    out.removed = list(removed)
    for name in out.removed:
        for pod in index.pods_by_node.get(name, []):
            meta = pod.get("metadata") or {}
            kind = _controller_kind(pod)
            if kind is None or kind in NODE_BOUND_OWNERS:
                out.lost.append(f"{meta.get('namespace') or 'default'}/{meta.get('name')}")
            else:
                out.displaced.append(_pending_again(pod))
    if variant.cordon is not None:
        for name in _select(index, variant.cordon, f"{where}: cordon"):
            if name in removed:
                continue
            node = index.nodes[name]
            spec = dict(node.get("spec") or {})
            taints = list(spec.get("taints") or [])
            if not any(t.get("key") == UNSCHEDULABLE_TAINT["key"] for t in taints):
                taints.append(dict(UNSCHEDULABLE_TAINT))
            out.cordoned[name] = {**node, "spec": {**spec, "unschedulable": True, "taints": taints}}
    names = set(index.nodes)
    for pool_name, count in variant.add_nodes:
        pool = plan.pools[pool_name]
        template = pool_template(pool, index)
        for i in range(count):
            node = pool_node(pool, template, i)
            name = node["metadata"]["name"]
            if name in names:
                raise PlanError(f"{where}: pool {pool_name!r} would add node {name!r}, which already exists "
                                "(set the pool's namePrefix)")
            names.add(name)
            out.added.append(node)
            out.pool_of[name] = pool_name
        out.added_by_pool[pool_name] = out.added_by_pool.get(pool_name, 0) + count
    return out


def apply_changes(cache: ClusterCache, changes: Changes, extra_objects: Sequence[Mapping[str, Any]]) -> None:
    """Apply a variant's changes (and the workload's controller objects) to a copy of the base cache."""
    for name in changes.removed:
        info = cache.node_info(name)
        if info is not None:
            for pod in list(info.pods):
                cache.remove_pod(pod.cache_key)
        cache.remove_node(name)
    for node in changes.cordoned.values():
        cache.upsert_node(node)
    for node in changes.added:
        cache.upsert_node(node)
    for obj in extra_objects:
        cache.apply(obj)


def variant_objects(base_objects: Sequence[Mapping[str, Any]], changes: Changes,
                    extra_objects: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The variant's cluster as dump objects: the base's, changed in place, then the added nodes and the
    workload's controller objects (the order a cache loads them in is the order a worker's cache has)."""
    removed = set(changes.removed)
    out: list[Mapping[str, Any]] = []
    for obj in base_objects:
        kind = obj.get("kind")
        name = str((obj.get("metadata") or {}).get("name"))
        if kind == "Node" and name in removed:
            continue
        if kind == "Pod" and (obj.get("spec") or {}).get("nodeName") in removed:
            continue
        out.append(changes.cordoned.get(name, obj) if kind == "Node" else obj)
    return out + changes.added + list(extra_objects)


def profile_spec(base: Mapping[str, Any], variant: Variant, what: str) -> dict[str, Any]:
    """The profile a variant runs: its own ``profile`` (or the plan's), with its ``weights`` set under
    ``plugins.score`` (where a weight wins over multiPoint's, as upstream merges them)."""
    spec = copy.deepcopy(dict(variant.profile if variant.profile is not None else base))
    if base.get("schedulerName") and "schedulerName" not in spec:
        spec["schedulerName"] = base["schedulerName"]
    if variant.weights:
        plugins = spec.setdefault("plugins", {})
        score = plugins.setdefault("score", {})
        enabled = [e for e in score.get("enabled") or [] if e.get("name") not in dict(variant.weights)]
        score["enabled"] = enabled + [{"name": name, "weight": weight} for name, weight in variant.weights]
    return spec
