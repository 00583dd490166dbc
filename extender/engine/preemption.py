"""Victim selection, as kube-scheduler's DefaultPreemption does it, and the extender's preempt verb.

Upstream: ``pkg/scheduler/framework/plugins/defaultpreemption`` (``SelectVictimsOnNode``,
``filterPodsWithPDBViolation``, ``util.MoreImportantPod``) and ``framework/preemption/preemption.go``
(``pickOneNodeForPreemption``), kubernetes v1.36.3. The PostFilter that drives them for a whole cluster is
``engine/plugins/default_preemption.py``.

On one node: every pod of lower priority than the preemptor is a potential victim. With all of them
removed the preemptor must pass the profile's filters, else the node cannot help. Then the victims are
given back one by one, most important first (higher priority, then the earlier start), those whose
eviction would break a PodDisruptionBudget before the others, and each one whose return still lets the
preemptor fit is reprieved. The cycle's PreFilter results are reused; upstream updates those that depend
on the nodes' pods with each removal and return (the AddPod/RemovePod extensions of InterPodAffinity,
PodTopologySpread and VolumeRestrictions), and here those plugins' PreFilter runs again on a snapshot in
which the node is the trial copy, which reaches the same state.

The preempt verb (``preemptVerb``) gets kube-scheduler's candidates with their victims and keeps the
nodes where the pod passes our filters once those victims are gone, trimmed the same way; victims stay a
subset of those proposed (every UID answered is one kube-scheduler knows on that node), and a node is
never answered without victims. A node the cache does not know is dropped. The PDB violations answered
are counted against the cache's PodDisruptionBudgets when it holds any, else kube-scheduler's count is
passed on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.cluster.snapshot import Snapshot
from extender.engine.framework import Code, CycleState, Status
from extender.kube.selectors import SelectorError, compile_label_selector

if TYPE_CHECKING:
    from extender.engine.runtime import Framework

PDB_KIND = "PodDisruptionBudget"
NO_VICTIMS = "No preemption victims found for incoming pod"
# Priorities are shifted by MaxInt32+1 before they are summed, so that negative ones add up sensibly.
PRIORITY_SHIFT = 2**31


@dataclass
class Candidate:
    """Victims proposed (or answered) for one node by the preempt verb."""

    victims: list[str]  # UIDs (or namespace/name for pods without one)
    num_pdb_violations: int = 0


@dataclass
class Victims:
    """SelectVictimsOnNode's answer for a node: the pods to evict, most important first."""

    node: str
    pods: list[PodRecord] = field(default_factory=list)
    num_pdb_violations: int = 0


# ---- ordering ------------------------------------------------------------------------------------
def start_time(pod: PodRecord) -> float:
    """GetPodStartTime as a number: status.startTime, or (not started yet) "now", later than any other."""
    status = pod.raw.get("status")
    raw = status.get("startTime") if isinstance(status, Mapping) else None
    if isinstance(raw, str):
        try:
            return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return float("inf")


def importance_order(pods: Iterable[PodRecord]) -> list[PodRecord]:
    """MoreImportantPod's order: higher priority first, then the one that started earlier.

    Upstream sorts with Go's unstable sort.Slice and gives a pod without a start time a fresh time.Now():
    pods equal on both keep their order here (the node's), where upstream's order is arbitrary.
    """
    return sorted(pods, key=lambda p: (-p.priority, start_time(p)))


# ---- PodDisruptionBudgets ------------------------------------------------------------------------
@dataclass
class _Budget:
    namespace: str
    selector: Any  # LabelSelector
    allowed: int
    disrupted: frozenset[str]


def budgets(objects: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[_Budget]:
    """The cluster's PodDisruptionBudgets as the preemption reads them: namespace, selector, what status
    allows, and the pods the apiserver already counted as disrupted. A PDB whose selector is invalid,
    empty or null matches no pod, so it is left out."""
    out: list[_Budget] = []
    for raw in objects.get(PDB_KIND, {}).values():
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        try:
            selector = compile_label_selector(spec.get("selector"))
        except SelectorError:
            continue
        if selector.empty or selector.matches_nothing:
            continue
        allowed = status.get("disruptionsAllowed") or 0
        disrupted = status.get("disruptedPods") or {}
        out.append(_Budget(str(meta.get("namespace") or "default"), selector,
                           allowed if isinstance(allowed, int) else 0,
                           frozenset(disrupted) if isinstance(disrupted, Mapping) else frozenset()))
    return out


def split_by_pdb_violation(pods: Sequence[PodRecord], pdbs: Sequence[_Budget], *,
                           first_violation_ends: bool = False) -> tuple[list[PodRecord], list[PodRecord]]:
    """filterPodsWithPDBViolation: (violating, non-violating), each in the given order.

    Each matching budget not already counting the pod as disrupted loses one allowed disruption; a pod
    whose eviction takes any of them below zero violates. With ``first_violation_ends`` (v1.37.2,
    ``preemption/util.go`` FilterVictimsWithPDBViolation), the first budget the pod takes below zero ends its
    walk: the budgets after it keep their allowance (v1.36.3's default_preemption.go charges every one).
    """
    allowed = [pdb.allowed for pdb in pdbs]
    violating: list[PodRecord] = []
    non_violating: list[PodRecord] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.namespace != pod.namespace or not pdb.selector.matches(pod.labels):
                    continue
                if pod.name in pdb.disrupted:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
                    if first_violation_ends:
                        break
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


# ---- one node ------------------------------------------------------------------------------------
def filter_status(framework: Framework, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
    """The profile's verdict for the pod on a trial copy of a node (None: it fits), as
    RunFilterPluginsWithNominatedPods gives it on the preemption's copy of the cycle state.

    ``state`` holds the cycle's PreFilter results; those that depend on the nodes' pods are computed again
    on a snapshot holding the copy (only when such a plugin is active for the pod), the others are reused.
    """
    trial = state.copy()
    if any(p.prefilter_reads_pods and p.name not in state.skip_filter for p in framework.filter_plugins):
        snapshot = state.snapshot
        trial = state.copy(Snapshot.from_node_infos(
            (node if n.name == node.name else n for n in snapshot.node_list), snapshot.objects, snapshot.dra))
        rejected = framework.refresh_pod_dependent_state(trial, pod)
        if rejected is not None:
            return rejected
    return framework.filter_node(trial, pod, node)


def prefiltered(framework: Framework, snapshot: Snapshot, pod: PodRecord) -> CycleState | Status:
    """A cycle state with the profile's PreFilter run for the pod (or the rejection, for every node)."""
    state = CycleState(snapshot)
    rejected = framework.pre_filter(state, pod, snapshot.node_list)
    return rejected if rejected is not None else state


def select_victims_on_node(framework: Framework, state: CycleState, pod: PodRecord, node: NodeInfo,
                           pdbs: Sequence[_Budget], eligible: Iterable[PodRecord] | None = None
                           ) -> tuple[Victims, Status | None]:
    """SelectVictimsOnNode: the fewest pods to evict for the pod to fit, and the PDB violations among them.

    ``state`` is the cycle's (PreFilter run). ``eligible`` are the potential victims (default: the node's
    pods of lower priority than the pod). The status is None on success, else why the node cannot help: no
    potential victims, or the pod's verdict with all of them gone.
    """
    potential = list(eligible) if eligible is not None else [p for p in node.pods if p.priority < pod.priority]
    if not potential:
        return Victims(node.name), Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, NO_VICTIMS)
    trial = node.clone()
    for victim in potential:
        trial.remove_pod(victim)
    status = filter_status(framework, state, pod, trial)
    if status is not None:
        return Victims(node.name), status
    violating, non_violating = split_by_pdb_violation(importance_order(potential), pdbs,
                                                      first_violation_ends=framework.release.at_least(37))
    victims: list[PodRecord] = []
    violations = 0
    for group, counts in ((violating, True), (non_violating, False)):
        for candidate in group:
            trial.add_pod(candidate)
            if filter_status(framework, state, pod, trial) is not None:
                trial.remove_pod(candidate)
                victims.append(candidate)
                violations += counts
    if violating and non_violating:
        victims = importance_order(victims)
    return Victims(node.name, victims, violations), None


# ---- choosing a node -----------------------------------------------------------------------------
def _earliest_start_of_most_important(victims: Sequence[PodRecord]) -> float:
    """GetEarliestPodStartTime: the earliest start among the victims of the highest priority."""
    top = max(p.priority for p in victims)
    return min(start_time(p) for p in victims if p.priority == top)


def rank_candidates(candidates: Sequence[Victims]) -> list[Victims]:
    """pickOneNodeForPreemption's criteria, applied in turn while nodes tie: the fewest PDB violations,
    the lowest most-important victim, the smallest sum of (priority + 2^31), the fewest victims, the
    latest start among the most important victims. Returns the nodes still tied after all of them, in
    the given order: upstream takes the first of its map's random order."""
    criteria = (
        lambda c: -c.num_pdb_violations,
        lambda c: -c.pods[0].priority,
        lambda c: -sum(p.priority + PRIORITY_SHIFT for p in c.pods),
        lambda c: -len(c.pods),
        lambda c: _earliest_start_of_most_important(c.pods),
    )
    tied = list(candidates)
    for score in criteria:
        if len(tied) <= 1:
            break
        best = max(score(c) for c in tied)
        tied = [c for c in tied if score(c) == best]
    return tied


# ---- the preempt verb ----------------------------------------------------------------------------
def process_preemption(framework: Framework, snapshot: Snapshot, pod: PodRecord,
                       candidates: Mapping[str, Candidate]) -> dict[str, Candidate]:
    """The nodes (with victims) on which the pod passes our filters after eviction."""
    pdbs = budgets(snapshot.objects)
    state = prefiltered(framework, snapshot, pod)
    if isinstance(state, Status):
        return {}  # rejected on every node, victims or not
    answer: dict[str, Candidate] = {}
    for node_name, candidate in candidates.items():
        cached = snapshot.get(node_name)
        if cached is None:
            continue
        wanted = set(candidate.victims)
        proposed = [p for p in cached.pods if p.cache_key in wanted]
        if not proposed:
            continue  # none of the proposed pods is on this node as we see it
        chosen, status = select_victims_on_node(framework, state, pod, cached, pdbs, proposed)
        if status is not None:
            continue
        kept = chosen.pods or proposed  # never answer a node without victims
        keys = {p.cache_key for p in kept}
        # Our count of PDB violations among the victims kept, when we know the cluster's budgets (a dump
        # without PodDisruptionBudgets says nothing of them: kube-scheduler's count stands).
        violations = chosen.num_pdb_violations if pdbs and chosen.pods else candidate.num_pdb_violations
        answer[node_name] = Candidate([uid for uid in candidate.victims if uid in keys], violations)
    return answer
