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
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from extender.cluster.cache import CacheError, ClusterCache
from extender.cluster.records import PodRecord, RecordError
from extender.engine.cycle import (
    GATED,
    MAX_ATTEMPTS,
    SCHEDULABLE,
    SCHEDULER_ERROR,
    CycleResult,
    schedule,
    with_nomination,
)
from extender.engine.fit_error import fit_error_message, prefilter_narrowing
from extender.engine.framework import MAX_NODE_SCORE
from extender.engine.plugins.dynamic_resources import claims_to_assume
from extender.engine.runtime import Framework
from extender.kube.priority import PriorityError, admitted

ROUND_ROBIN = "round-robin"
RANDOM = "random"

__all__ = ["MAX_ATTEMPTS", "RANDOM", "ROUND_ROBIN", "Placement", "SimulationResult", "Simulator",
           "fit_error_message", "prefilter_narrowing", "utilization"]


@dataclass
class Placement:
    """Where one pod went (node empty when unschedulable) and why.

    ``message`` is the last failed cycle's PodScheduled message (the pod's final one when it is
    unschedulable); ``attempts`` lists, for each failed cycle before the last, that cycle's message and
    what its PostFilter plugins wrote (a claim deallocated, pods preempted) before the pod was tried again.
    """

    pod: str
    node: str = ""
    score: int | None = None
    feasible: int = 0
    message: str = ""
    attempts: list[dict[str, Any]] = field(default_factory=list)
    nominated: bool = False  # placed on the node its preemption nominated, without scoring


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
        def attempts(p: Placement) -> dict[str, Any]:
            return {"attempts": p.attempts} if p.attempts else {}

        return {
            "scheduled": [{"pod": p.pod, "node": p.node, "score": p.score, "feasibleNodes": p.feasible,
                           **attempts(p)} for p in self.scheduled],
            "unschedulable": [{"pod": p.pod, "message": p.message, **attempts(p)} for p in self.unschedulable],
            "utilization": {"before": self.before, "after": self.after},
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


class Simulator:
    """Places pods one by one on a cache it owns (load the cluster into it first)."""

    def __init__(self, framework: Framework, cache: ClusterCache, *, host_selection: str | None = None,
                 seed: int | None = None) -> None:
        self.framework = framework
        self.cache = cache
        legacy = framework.profile.max_score < MAX_NODE_SCORE
        self.host_selection = host_selection or (ROUND_ROBIN if legacy else RANDOM)
        self.rng = random.Random(seed)
        self.last_node_index = 0

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
        """Schedule one pod (retrying after the PostFilter's writes) and assume it on its node."""
        meta = raw_pod.get("metadata") or {}
        label = f"{meta.get('namespace') or 'default'}/{meta.get('name') or '?'}"
        try:
            pod = PodRecord(admitted(raw_pod, self.cache.snapshot().objects.get("PriorityClass", {})))
        except PriorityError as err:
            return Placement(label, message=f"refused by the Priority admission plugin: {err}")
        except RecordError as err:
            return Placement(label, message=f"invalid pod: {err}")
        placement = Placement(label)
        for _ in range(MAX_ATTEMPTS):
            cycle = schedule(self.framework, self.cache.snapshot(), pod)
            if cycle.status == SCHEDULABLE:
                return self._assume(placement, pod, cycle)
            placement.message = (f"error: {cycle.message}" if cycle.status == SCHEDULER_ERROR
                                 else f"not queued by kube-scheduler ({cycle.message})" if cycle.status == GATED
                                 else cycle.message)
            if not cycle.actions:
                return placement
            placement.attempts.append({"message": cycle.message,
                                       "postFilter": [action.describe() for action in cycle.actions]})
            for action in cycle.actions:
                action.apply(self.cache)
            nominated = cycle.post_filter.nominated_node if cycle.post_filter is not None else None
            if nominated is not None:  # the pod's status.nominatedNodeName, as kube-scheduler sets it
                pod = PodRecord(with_nomination(pod.raw, nominated))
        return placement

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
        placement.message, placement.nominated = "", cycle.nominated
        return placement

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
