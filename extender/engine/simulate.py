"""Simulate: schedule a list of pods onto a cluster one by one, as kube-scheduler's cycle would.

Each pod goes through a scheduling cycle (``engine/cycle.py``): PreFilter/Filter on every node, then
(with more than one feasible node) PreScore/Score, then host selection, and is assumed on the chosen node
so that the next pod sees it. Host selection follows the profile's era: since v1.35 kube-scheduler picks
uniformly among the nodes tied at the top total (a heap ordered by score, ties broken by a random number:
here a seedable RNG); v1.12 walked the tied nodes round-robin (``lastNodeIndex % len(ties)``, the index
kept across pods).

A pod that fits nowhere gets the message its PodScheduled condition would carry: FitError's ("0/N nodes
are available: <sorted histogram>.") followed by the PostFilter plugins' words. What those plugins would
write is applied to the simulation's own cache, as kube-scheduler's writes would change the cluster, and
the pod is tried again, as kube-scheduler retries it once the writes are seen: a claim DynamicResources
deallocates may then be allocated on another node, and after a preemption the victims are gone and the
pod tries its nominated node first. A pod is tried at most ``MAX_ATTEMPTS`` times.

By default every node is filtered and scored (kube-scheduler with ``percentageOfNodesToScore: 100``, or any
cluster under 100 nodes). With ``percentage_of_nodes_to_score`` set, the search stops as upstream's
``findNodesThatPassFilters`` does (schedule_one.go): nodes are taken in the scheduler cache's node-tree
order (zones round-robin, each zone's nodes in the order they entered the cache) from a start index kept
across pods, the first ``numFeasibleNodesToFind`` feasible ones are scored, and the start index moves past
the nodes examined. Upstream filters nodes 16 at a time, so which nodes it examines varies from run to run;
this is its order with ``parallelism: 1``, the one deterministic reading of it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from extender.cluster.cache import CacheError, ClusterCache
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord, RecordError
from extender.engine.cycle import (
    GATED,
    MAX_ATTEMPTS,
    SCHEDULABLE,
    SCHEDULER_ERROR,
    CycleResult,
    Narrowing,
    schedule,
    with_nomination,
)
from extender.engine.fit_error import fit_error_message, prefilter_narrowing
from extender.engine.framework import MAX_NODE_SCORE, CycleState
from extender.engine.plugins.default_preemption import Evict
from extender.engine.plugins.dynamic_resources import claims_to_assume
from extender.engine.runtime import Framework
from extender.kube.priority import PriorityError, admitted

ROUND_ROBIN = "round-robin"
RANDOM = "random"
# schedule_one.go: below this many nodes every node is searched; never fewer feasible nodes than this.
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5

__all__ = ["MAX_ATTEMPTS", "RANDOM", "ROUND_ROBIN", "Placement", "SimulationResult", "Simulator",
           "fit_error_message", "node_tree_order", "num_feasible_nodes_to_find", "prefilter_narrowing", "utilization",
           "zone_key"]


@dataclass
class Placement:
    """Where one pod went (node empty when unschedulable) and why.

    ``message`` is the last failed cycle's PodScheduled message (the pod's final one when it is
    unschedulable); ``attempts`` lists, for each failed cycle before the last, that cycle's message and
    what its PostFilter plugins wrote (a claim deallocated, pods preempted) before the pod was tried again.
    ``fit_error`` is the FitError part of ``message`` alone (its histogram, without the PostFilter's words;
    empty when the last cycle ended in no FitError). A pod placed here and later evicted by a preemption
    of this simulation is no longer placed: its node is cleared and ``preempted_by`` names the preemptor,
    as kube-scheduler's eviction deletes the pod (its controller, if any, would create it anew).
    """

    pod: str
    node: str = ""
    score: int | None = None
    feasible: int = 0
    message: str = ""
    fit_error: str = ""
    preempted_by: str = ""
    attempts: list[dict[str, Any]] = field(default_factory=list)
    nominated: bool = False  # placed on the node its preemption nominated, without scoring


@dataclass
class SimulationResult:
    """Every pod's outcome, and per-node utilisation before and after."""

    placements: list[Placement] = field(default_factory=list)
    before: dict[str, dict[str, Any]] = field(default_factory=dict)
    after: dict[str, dict[str, Any]] = field(default_factory=dict)
    kubernetes: dict[str, Any] = field(default_factory=dict)  # the kube-scheduler release followed (describe())

    @property
    def scheduled(self) -> list[Placement]:
        """The pods that found a node."""
        return [p for p in self.placements if p.node]

    @property
    def unschedulable(self) -> list[Placement]:
        """The pods that fit nowhere."""
        return [p for p in self.placements if not p.node]

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        def attempts(p: Placement) -> dict[str, Any]:
            return {"attempts": p.attempts} if p.attempts else {}

        return {
            "scheduled": [{"pod": p.pod, "node": p.node, "score": p.score, "feasibleNodes": p.feasible,
                           **attempts(p)} for p in self.scheduled],
            "unschedulable": [{"pod": p.pod, "message": p.message, **attempts(p),
                               **({"preemptedBy": p.preempted_by} if p.preempted_by else {})}
                              for p in self.unschedulable],
            "utilization": {"before": self.before, "after": self.after},
            "kubernetes": self.kubernetes,
        }


def utilization(cache: ClusterCache) -> dict[str, dict[str, Any]]:
    """Requested/allocatable cpu and memory (percent) and pod count per node."""
    out: dict[str, dict[str, Any]] = {}
    for info in cache.snapshot().node_list:
        assert info.node is not None
        alloc = info.node.allocatable
        out[info.name] = {
            "cpu": round(100 * info.requested.milli_cpu / alloc.milli_cpu, 1) if alloc.milli_cpu else 0.0,
            "memory": round(100 * info.requested.memory / alloc.memory, 1) if alloc.memory else 0.0,
            "pods": len(info.pods),
        }
    return out


def num_feasible_nodes_to_find(percentage: int, num_nodes: int) -> int:
    """How many feasible nodes end the search (numFeasibleNodesToFind): every node under 100; else the
    percentage of them (0: adaptive, 50% less 1% per 125 nodes, at least 5%), never fewer than 100."""
    if num_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_nodes
    if percentage == 0:
        percentage = max(50 - num_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


def zone_key(labels: Mapping[str, str]) -> str:
    """utilnode.GetZoneKey: region and zone (the beta labels first), "" when the node has neither."""
    zone = labels.get("failure-domain.beta.kubernetes.io/zone", labels.get("topology.kubernetes.io/zone", ""))
    region = labels.get("failure-domain.beta.kubernetes.io/region", labels.get("topology.kubernetes.io/region", ""))
    return "" if not region and not zone else f"{region}:\x00:{zone}"


def node_tree_order(nodes: Sequence[NodeInfo]) -> list[NodeInfo]:
    """The scheduler cache's nodeTree.list(): one node of each zone in turn, zones in order of appearance."""
    zones: dict[str, list[NodeInfo]] = {}
    for info in nodes:
        assert info.node is not None
        zones.setdefault(zone_key(info.node.labels), []).append(info)
    columns = list(zones.values())
    return [column[i] for i in range(max(map(len, columns), default=0)) for column in columns if i < len(column)]


class Simulator:
    """Places pods one by one on a cache it owns (load the cluster into it first)."""

    def __init__(self, framework: Framework, cache: ClusterCache, *, host_selection: str | None = None,
                 seed: int | None = None, percentage_of_nodes_to_score: int | None = None) -> None:
        self.framework = framework
        self.cache = cache
        legacy = framework.profile.max_score < MAX_NODE_SCORE
        self.host_selection = host_selection or (ROUND_ROBIN if legacy else RANDOM)
        self.rng = random.Random(seed)
        self.last_node_index = 0
        if percentage_of_nodes_to_score is not None:
            if legacy:
                raise ValueError("percentageOfNodesToScore is modelled for current profiles only, "
                                 f"not the 0-10 era profile {framework.profile.name!r}")
            if not 0 <= percentage_of_nodes_to_score <= 100:
                raise ValueError(f"percentageOfNodesToScore: expected 0..100, got {percentage_of_nodes_to_score}")
        self.percentage = percentage_of_nodes_to_score
        self.next_start_node_index = 0
        self._tree: tuple[list[str], list[int]] | None = None  # (node names, node-tree order as positions)
        self._placed: dict[str, Placement] = {}  # by cache key: the pods this simulation placed, still there

    def _search_order(self, nodes: list[NodeInfo]) -> list[NodeInfo]:
        """The nodes in node-tree order (the order's positions are kept while the nodes are the same)."""
        names = [n.name for n in nodes]
        if self._tree is None or self._tree[0] != names:
            position = {name: i for i, name in enumerate(names)}
            self._tree = (names, [position[n.name] for n in node_tree_order(nodes)])
        return [nodes[i] for i in self._tree[1]]

    def _stop_early(self, order: Sequence[NodeInfo], feasible: Sequence[NodeInfo], allowed: frozenset[str] | None,
                    num_all_nodes: int) -> list[NodeInfo]:
        """The feasible nodes upstream's search keeps, in the order found; moves the start index past the
        nodes it examined (the feasible ones kept and the failed ones seen before the search stopped)."""
        assert self.percentage is not None
        candidates = [n for n in order if allowed is None or n.name in allowed]
        count = len(candidates)
        wanted = num_feasible_nodes_to_find(self.percentage, count)
        if not self.framework.score_plugins:
            wanted = 1  # nothing to score: the first feasible node is the answer
        passing = {n.name for n in feasible}
        start = self.next_start_node_index % count if count else 0
        kept: list[NodeInfo] = []
        failed = 0
        for i in range(count):
            info = candidates[(start + i) % count]
            if info.name not in passing:
                failed += 1
            elif len(kept) < wanted:
                kept.append(info)
            else:
                break  # one feasible node past the count ends the search; it is not counted
        self.next_start_node_index = (self.next_start_node_index + len(kept) + failed) % num_all_nodes
        return kept

    def select_host(self, names: Sequence[str], totals: Sequence[int]) -> str:
        """Pick among the nodes tied at the top total."""
        top = max(totals)
        tied = [n for n, t in zip(names, totals, strict=True) if t == top]
        if self.host_selection == ROUND_ROBIN:
            chosen = tied[self.last_node_index % len(tied)]
            self.last_node_index += 1
            return chosen
        return self.rng.choice(tied)

    def _narrowing(self, nodes: list[NodeInfo]) -> Narrowing | None:
        """With ``percentage_of_nodes_to_score``, the feasible nodes upstream's search keeps (None: all)."""
        if self.percentage is None:
            return None

        def narrow(state: CycleState, feasible: list[NodeInfo]) -> list[NodeInfo]:
            allowed, _ = prefilter_narrowing(state.prefilter_nodes)
            return self._stop_early(self._search_order(nodes), feasible, allowed, len(nodes))
        return narrow

    def place(self, raw_pod: Mapping[str, Any]) -> Placement:
        """Schedule one pod (retrying after the PostFilter's writes) and assume it on its node."""
        meta = raw_pod.get("metadata") or {}
        label = f"{meta.get('namespace') or 'default'}/{meta.get('name') or '?'}"
        try:
            pod = PodRecord(admitted(raw_pod, self.cache.snapshot().objects.get("PriorityClass", {})),
                            minor=self.framework.release.minor)
        except PriorityError as err:
            return Placement(label, message=f"refused by the Priority admission plugin: {err}")
        except RecordError as err:
            return Placement(label, message=f"invalid pod: {err}")
        placement = Placement(label)
        for _ in range(MAX_ATTEMPTS):
            snapshot = self.cache.snapshot()
            cycle = schedule(self.framework, snapshot, pod, narrow=self._narrowing(snapshot.node_list))
            if cycle.status == SCHEDULABLE:
                return self._assume(placement, pod, cycle)
            placement.message = (f"error: {cycle.message}" if cycle.status == SCHEDULER_ERROR
                                 else f"not queued by kube-scheduler ({cycle.message})" if cycle.status == GATED
                                 else cycle.message)
            placement.fit_error = cycle.fit_error
            if not cycle.actions:
                return placement
            placement.attempts.append({"message": cycle.message,
                                       "postFilter": [action.describe() for action in cycle.actions]})
            for action in cycle.actions:
                action.apply(self.cache)
                if isinstance(action, Evict):
                    self._evicted(action, label)
            nominated = cycle.post_filter.nominated_node if cycle.post_filter is not None else None
            if nominated is not None:  # the pod's status.nominatedNodeName, as kube-scheduler sets it
                pod = PodRecord(with_nomination(pod.raw, nominated), minor=self.framework.release.minor)
        return placement

    def _evicted(self, evict: Evict, preemptor: str) -> None:
        """The victims this simulation had placed are placed no more."""
        for victim in evict.victims.pods:
            placement = self._placed.pop(victim.cache_key, None)
            if placement is not None:
                placement.message = f"preempted by {preemptor} on {placement.node}"
                placement.node, placement.score, placement.feasible = "", None, 0
                placement.preempted_by = preemptor

    def _assume(self, placement: Placement, pod: PodRecord, cycle: CycleResult) -> Placement:
        """Choose among the feasible nodes and assume the pod there, with the devices allocated for it."""
        feasible = cycle.feasible
        if cycle.totals is None:
            chosen, score = feasible[0].name, None
        else:
            names = [n.name for n in feasible]
            chosen = self.select_host(names, cycle.totals)
            score = cycle.totals[names.index(chosen)]
        # Devices allocated to the pod's claims on that node count for the pods placed after it.
        claims = claims_to_assume(self.framework.filter_plugins, cycle.state, pod, chosen, include_extended=True)
        try:
            self.cache.assume_pod(pod, chosen, claims)
        except CacheError as err:
            placement.message = f"error: {err}"
            return placement
        placement.node, placement.score, placement.feasible = chosen, score, len(feasible)
        placement.message, placement.fit_error, placement.nominated = "", "", cycle.nominated
        self._placed[pod.cache_key] = placement
        return placement

    def run(self, pods: Sequence[Mapping[str, Any]],
            progress: Callable[[int, int], None] | None = None) -> SimulationResult:
        """Place every pod in order; ``progress(done, total)`` is called after each."""
        result = SimulationResult(before=utilization(self.cache), kubernetes=self.framework.release.describe())
        for i, raw in enumerate(pods):
            result.placements.append(self.place(_identified(raw, i)))
            if progress is not None:
                progress(i + 1, len(pods))
        result.after = utilization(self.cache)
        return result


def _identified(raw: Mapping[str, Any], index: int) -> Mapping[str, Any]:
    """Give a pod without a name or UID one (pods written from a template often have neither)."""
    meta = raw.get("metadata") or {}
    if meta.get("uid") and meta.get("name"):
        return raw
    name = meta.get("name") or f"{meta.get('generateName') or 'pod-'}{index}"
    return {**raw, "metadata": {**meta, "name": name, "uid": meta.get("uid") or f"simulated-{index}-{name}"}}
