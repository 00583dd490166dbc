"""One scheduling cycle for one pod, as kube-scheduler's ``schedule_one.go`` runs it, without its writes.

Upstream: ``schedulingAlgorithm``, ``findNodesThatFitPod`` (with ``evaluateNominatedNode``) and the
PostFilter step, ``framework.FitError``, kubernetes v1.36.3. The steps:

0. a PreEnqueue plugin may keep the pod out of the queue (scheduling gates, claims that cannot be used
   yet): kube-scheduler then tries no cycle and writes no condition (``Gated``);
1. a cluster without nodes fails at once ("no nodes available to schedule pods");
2. a pod nominated to a node (after a preemption) tries that node first, and takes it if it fits;
3. PreFilter and Filter on every node (``Framework.filter``): an Error ends the cycle (SchedulerError);
4. with feasible nodes, PreScore and Score (``score=True``) rank them (a simulation with
   ``percentageOfNodesToScore`` first keeps those its search would have found: ``narrow``);
5. with none, the rejections become FitError's diagnosis (``NodeToStatus``) and the profile's PostFilter
   plugins run on it (DynamicResources may deallocate a claim, DefaultPreemption may evict pods); their
   words end the pod's PodScheduled message, and their writes are returned for the caller to report or,
   in a simulation, to apply before the pod is tried again.

``simulate`` (placing pods) and ``explain``'s outcome both run cycles through :func:`schedule`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from extender.cluster.dra_objects import ClaimEntry, DRAView
from extender.cluster.keys import object_key
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.cluster.snapshot import Snapshot
from extender.dra.records import claim_record
from extender.engine.fit_error import NO_NODES_AVAILABLE, fit_error_message, prefilter_narrowing
from extender.engine.framework import Code, CycleState, NodeToStatus, Status
from extender.engine.runtime import FilterResult, Framework, PluginScoreError, PostFilterRun

SCHEDULABLE, UNSCHEDULABLE, SCHEDULER_ERROR = "Schedulable", "Unschedulable", "SchedulerError"
GATED = "Gated"  # a PreEnqueue plugin keeps the pod out of the queue: no cycle at all
# Cycles per pod in a simulation or an explanation: the first, and a retry after each PostFilter that
# changed the cluster (a claim deallocated, victims preempted); kube-scheduler keeps retrying.
MAX_ATTEMPTS = 8


@dataclass
class CycleResult:
    """What one cycle concludes.

    ``message`` is what the pod's PodScheduled condition would say: FitError's words followed by the
    PostFilter's (Unschedulable), or the error (SchedulerError); empty when the pod fits. ``fit_error`` is
    FitError's part alone and ``reasons`` its histogram.
    """

    status: str
    state: CycleState
    message: str = ""
    fit_error: str = ""
    reasons: dict[str, int] = field(default_factory=dict)
    feasible: list[NodeInfo] = field(default_factory=list)
    totals: list[int] | None = None  # the feasible nodes' totals, when scored
    nominated: bool = False  # the pod's nominated node was tried first and fits
    post_filter: PostFilterRun | None = None

    @property
    def actions(self) -> list[Any]:
        """The writes the PostFilter plugins made (none when they did not run)."""
        return self.post_filter.actions if self.post_filter is not None else []


def nominated_node_name(pod: PodRecord) -> str:
    """status.nominatedNodeName ("" when the pod has none)."""
    status = pod.raw.get("status")
    name = status.get("nominatedNodeName") if isinstance(status, Mapping) else None
    return name if isinstance(name, str) else ""


def with_nomination(raw: Mapping[str, Any], node: str) -> dict[str, Any]:
    """The pod with status.nominatedNodeName as a PostFilter set it ("" clears it)."""
    status = {k: v for k, v in (raw.get("status") or {}).items() if k != "nominatedNodeName"}
    if node:
        status["nominatedNodeName"] = node
    return {**raw, "status": status}


class WhatIf:
    """A snapshot as it would be after a PostFilter's writes, built without changing the snapshot: the
    writes (``PostFilterAction.apply``) see the cache interface they expect (``dra.upsert``, ``dra.remove``,
    ``remove_pod``), and :meth:`snapshot` gives the result."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.base = snapshot
        self.dra = _WhatIfClaims(snapshot.dra)
        self._nodes: dict[str, NodeInfo] = {}  # copies of the nodes a pod was removed from

    def remove_pod(self, key: str) -> None:
        """Take a pod (by cache key) off its node."""
        for info in self.base.node_list:
            for pod in info.pods:
                if pod.cache_key == key:
                    copy = self._nodes.setdefault(info.name, info.clone())
                    copy.remove_pod(pod)
                    return

    def snapshot(self) -> Snapshot:
        """The snapshot with the writes made."""
        nodes = (self._nodes.get(n.name, n) for n in self.base.node_list)
        return Snapshot.from_node_infos(nodes, self.base.objects, self.dra.view())


class _WhatIfClaims:
    """The DRA view's claims, replaced or removed by a PostFilter's writes."""

    def __init__(self, view: DRAView) -> None:
        self.base = view
        self.claims = dict(view.claims)

    def upsert(self, kind: str, raw: Mapping[str, Any]) -> None:
        """Replace a claim."""
        self.claims[object_key(raw, kind)] = ClaimEntry(raw, claim_record(raw))

    def remove(self, kind: str, key: str) -> None:
        """Remove a claim."""
        self.claims.pop(key, None)

    def view(self) -> DRAView:
        """The view with those claims (the allocated-device state is computed afresh)."""
        if self.claims == dict(self.base.claims):
            return self.base
        return DRAView(slices=self.base.slices, claims=self.claims, classes=self.base.classes,
                       raw_classes=self.base.raw_classes)


def diagnose(result: FilterResult, state: CycleState) -> tuple[NodeToStatus, str | None]:
    """FitError's diagnosis of a cycle that found no node: each rejected node's status, the status of the
    nodes never filtered, and the PreFilter's message when PreFilter rejected the pod."""
    if result.prefilter_rejection is not None:
        return NodeToStatus(absent=result.prefilter_rejection), result.prefilter_rejection.message
    allowed, outside = prefilter_narrowing(state.prefilter_nodes)
    if allowed is not None and not allowed:  # the PreFilterResults left no node at all
        return NodeToStatus(absent=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, outside)), outside
    if allowed is None:
        return NodeToStatus(result.failed), None
    # Nodes outside a PreFilterResult are never filtered: they carry the absent nodes' status.
    explicit = {name: status for name, status in result.failed.items() if name in allowed}
    return NodeToStatus(explicit, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, outside)), None


def fit_error(num_nodes: int, statuses: NodeToStatus, prefilter: str | None) -> tuple[str, dict[str, int]]:
    """FitError.Error() without the PostFilter's words, and the histogram it counts."""
    if prefilter is not None:
        return fit_error_message(num_nodes, (), prefilter), {prefilter: num_nodes}
    per_node = [status.reasons for status in statuses.explicit.values()]
    if len(statuses) < num_nodes:
        per_node += [statuses.absent.reasons] * (num_nodes - len(statuses))
    histogram: dict[str, int] = {}
    for reasons in per_node:
        for reason in reasons:
            histogram[reason] = histogram.get(reason, 0) + 1
    return fit_error_message(num_nodes, per_node), dict(sorted(histogram.items()))


# The feasible nodes a search that stops early would have found, from the cycle's state and all of them.
Narrowing = Callable[[CycleState, list[NodeInfo]], list[NodeInfo]]


def schedule(framework: Framework, snapshot: Snapshot, pod: PodRecord, nodes: Sequence[NodeInfo] | None = None, *,
             score: bool = True, post_filter: bool = True, narrow: Narrowing | None = None) -> CycleResult:
    """Run one cycle for the pod over ``nodes`` (default: every node of the snapshot).

    ``score=False`` leaves feasible nodes unranked (explain has scored them already); ``post_filter=False``
    stops at FitError (explaining a subset of the nodes, where kube-scheduler's PostFilter would see the
    others too). ``narrow`` keeps the feasible nodes to score (a pod that takes its nominated node skips
    the search, as upstream's does).
    """
    gated = framework.pre_enqueue(snapshot, pod)
    if gated is not None:
        return CycleResult(GATED, CycleState(snapshot), message=f"{gated.plugin}: {gated.message}")
    candidates = list(snapshot.node_list if nodes is None else nodes)
    if not candidates:
        return CycleResult(UNSCHEDULABLE, CycleState(snapshot), message=NO_NODES_AVAILABLE)
    nominated = nominated_node_name(pod)
    if nominated and nodes is None and nominated in snapshot.node_infos:
        state = CycleState(snapshot)
        tried = framework.filter(state, pod, [snapshot.node_infos[nominated]])
        if tried.error is None and tried.feasible:
            return CycleResult(SCHEDULABLE, state, feasible=tried.feasible, nominated=True)
    state = CycleState(snapshot)
    result = framework.filter(state, pod, candidates)
    if result.error is not None:
        return CycleResult(SCHEDULER_ERROR, state, message=result.error.message)
    feasible = result.feasible
    if feasible:
        if narrow is not None:
            feasible = narrow(state, feasible)
        cycle = CycleResult(SCHEDULABLE, state, feasible=feasible)
        if score and len(feasible) > 1:
            try:
                cycle.totals = framework.score(state, pod, feasible)
            except PluginScoreError as err:
                return CycleResult(SCHEDULER_ERROR, state, message=str(err), feasible=feasible)
        return cycle
    statuses, prefilter = diagnose(result, state)
    words, histogram = fit_error(len(candidates), statuses, prefilter)
    cycle = CycleResult(UNSCHEDULABLE, state, message=words, fit_error=words, reasons=histogram)
    if post_filter and framework.post_filter_plugins:
        run = framework.post_filter(state, pod, statuses)
        cycle.post_filter = run
        if run.status.message:
            cycle.message = f"{words} {run.status.message}"
    return cycle
