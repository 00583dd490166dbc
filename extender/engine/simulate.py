"""Simulate: schedule a list of pods onto a cluster one by one, as kube-scheduler's cycle would.

Each pod goes through PreFilter/Filter on every node, then (with more than one feasible node)
PreScore/Score, then host selection, and is assumed on the chosen node so that the next pod sees it.
Host selection follows the profile's era: since v1.35 kube-scheduler picks uniformly among the nodes
tied at the top total (a heap ordered by score, ties broken by a random number: here a seedable RNG);
v1.12 walked the tied nodes round-robin (``lastNodeIndex % len(ties)``, the index kept across pods).
A pod that fits nowhere gets upstream's FitError message: "0/N nodes are available: <sorted histogram>."

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from extender.cluster.cache import CacheError, ClusterCache
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord, RecordError
from extender.engine.framework import MAX_NODE_SCORE, CycleState
from extender.engine.plugins.dynamic_resources import claims_to_assume
from extender.engine.runtime import Framework, PluginScoreError

ROUND_ROBIN = "round-robin"
RANDOM = "random"
# schedule_one.go: below this many nodes every node is searched; never fewer feasible nodes than this.
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


@dataclass
class Placement:
    """Where one pod went (node empty when unschedulable) and why."""

    pod: str
    node: str = ""
    score: int | None = None
    feasible: int = 0
    message: str = ""


@dataclass
class SimulationResult:
    """Every pod's outcome, and per-node utilisation before and after."""

    placements: list[Placement] = field(default_factory=list)
    before: dict[str, dict[str, Any]] = field(default_factory=dict)
    after: dict[str, dict[str, Any]] = field(default_factory=dict)

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
        return {
            "scheduled": [{"pod": p.pod, "node": p.node, "score": p.score, "feasibleNodes": p.feasible}
                          for p in self.scheduled],
            "unschedulable": [{"pod": p.pod, "message": p.message} for p in self.unschedulable],
            "utilization": {"before": self.before, "after": self.after},
        }


def fit_error_message(num_nodes: int, reasons_per_node: Iterable[Sequence[str]],
                      prefilter: str | None = None) -> str:
    """Upstream's FitError.Error(): "0/N nodes are available:" then the PreFilter rejection's message, or
    the sorted "<count> <reason>" histogram of each failed node's reasons (Go's byte-order sort)."""
    message = f"0/{num_nodes} nodes are available:"
    if prefilter is not None:
        return message + f" {prefilter}."
    counts: dict[str, int] = {}
    for reasons in reasons_per_node:
        for reason in reasons:
            counts[reason] = counts.get(reason, 0) + 1
    histogram = sorted(f"{count} {reason}" for reason, count in counts.items())
    if histogram:
        message += f" {', '.join(histogram)}."
    return message


def prefilter_narrowing(prefilter_nodes: Mapping[str, frozenset[str]]) -> tuple[frozenset[str] | None, str]:
    """The nodes PreFilter results leave to filter (None: every node) and the reason upstream gives.

    RunPreFilterPlugins intersects the plugins' PreFilterResults: an empty intersection rejects the pod
    ("node(s) didn't satisfy plugin X" / "plugin(s) [X Y] simultaneously", the returned reason); otherwise
    the nodes left out are never filtered and each counts under "node(s) didn't satisfy plugin(s) [X]".
    """
    allowed: frozenset[str] | None = None
    for names in prefilter_nodes.values():
        allowed = names if allowed is None else allowed & names
    plugins = sorted(prefilter_nodes)
    listed = "[" + " ".join(plugins) + "]"  # Go's %v of a []string
    if allowed is not None and not allowed:
        return allowed, (f"node(s) didn't satisfy plugin {plugins[0]}" if len(plugins) == 1
                         else f"node(s) didn't satisfy plugin(s) {listed} simultaneously")
    return allowed, f"node(s) didn't satisfy plugin(s) {listed}"


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

    def place(self, raw_pod: Mapping[str, Any]) -> Placement:
        """Schedule one pod and assume it on its node."""
        meta = raw_pod.get("metadata") or {}
        label = f"{meta.get('namespace') or 'default'}/{meta.get('name') or '?'}"
        try:
            pod = PodRecord(raw_pod)
        except RecordError as err:
            return Placement(label, message=f"invalid pod: {err}")
        snapshot = self.cache.snapshot()
        nodes = snapshot.node_list
        state = CycleState(snapshot)
        result = self.framework.filter(state, pod, nodes)
        if result.error is not None:
            return Placement(label, message=f"error: {result.error.message}")
        if not result.feasible:
            prefilter = result.prefilter_rejection
            allowed, outside = prefilter_narrowing(state.prefilter_nodes)
            if prefilter is None and allowed is not None and not allowed:
                return Placement(label, message=fit_error_message(len(nodes), (), outside))
            reasons = (status.reasons if allowed is None or name in allowed else (outside,)
                       for name, status in result.failed.items())
            message = fit_error_message(len(nodes), reasons, prefilter.message if prefilter is not None else None)
            return Placement(label, message=message)
        feasible = result.feasible
        if self.percentage is not None:
            allowed, _ = prefilter_narrowing(state.prefilter_nodes)
            feasible = self._stop_early(self._search_order(nodes), feasible, allowed, len(nodes))
        if len(feasible) == 1:
            chosen, score = feasible[0].name, None
        else:
            try:
                totals = self.framework.score(state, pod, feasible)
            except PluginScoreError as err:
                return Placement(label, message=f"error: {err}")
            chosen = self.select_host([n.name for n in feasible], totals)
            score = totals[[n.name for n in feasible].index(chosen)]
        # Devices allocated to the pod's claims on that node count for the pods placed after it.
        claims = claims_to_assume(self.framework.filter_plugins, state, pod, chosen, include_extended=True)
        try:
            self.cache.assume_pod(pod, chosen, claims)
        except CacheError as err:
            return Placement(label, message=f"error: {err}")
        return Placement(label, chosen, score, len(feasible))

    def run(self, pods: Sequence[Mapping[str, Any]],
            progress: Callable[[int, int], None] | None = None) -> SimulationResult:
        """Place every pod in order; ``progress(done, total)`` is called after each."""
        result = SimulationResult(before=utilization(self.cache))
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
