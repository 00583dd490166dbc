"""DefaultPreemption: the PostFilter that looks for pods to evict when the pod fits nowhere, as a dry run.

Upstream: ``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go`` and
``framework/preemption/preemption.go`` (``Evaluator.Preempt``), kubernetes v1.36.3 and v1.37.2. Each step is a
function named for the upstream behaviour it models, so that another release's behaviour can be a
branch of that one function:

1. ``eligible_to_preempt`` (PodEligibleToPreemptOthers): not with ``preemptionPolicy: Never``, nor
   while a pod it already preempted on its nominated node is still terminating;
2. ``dry_run`` (findCandidates, DryRunPreemption): on every node whose rejection was Unschedulable (not
   UnschedulableAndUnresolvable), the victims SelectVictimsOnNode would evict (``engine/preemption.py``);
3. ``preemption_not_helpful`` (Preempt, no candidate): a FitError of its own, the nodes examined with
   why each cannot help and every other node "Preemption is not helpful for scheduling";
4. ``select_candidate`` (SelectCandidate, pickOneNodeForPreemption): the node to nominate.

kube-scheduler then evicts the victims and nominates the node (nothing is written here: the eviction is
returned as an action, which a simulation applies to its own cache). Its status carries the words the
pod's PodScheduled condition ends with: "preemption: ..." unless preemption succeeded (v1.36.3); v1.37.2 words
the success too ("preemption: found a potential placement for pod on node N, preempting K victims"). v1.37.2's
victims are single pods here as in v1.36.3 (pod-group victims need GenericWorkload, off by default); its PDB
accounting stops at a pod's first violated budget (``preemption.split_by_pdb_violation``).

Not modelled: other pending pods nominated to a node (kube-scheduler filters a node with the nominated
pods of equal or higher priority on it), and, above 100 potential nodes, upstream's random subset of
them (``minCandidateNodesPercentage`` / ``minCandidateNodesAbsolute``): every potential node is examined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from extender.cluster.records import PodRecord
from extender.engine.fit_error import fit_error_message
from extender.engine.framework import (
    Code,
    CycleState,
    NodeToStatus,
    PostFilterPlugin,
    PostFilterResult,
    Status,
)
from extender.engine.preemption import Victims, budgets, rank_candidates, select_victims_on_node
from extender.engine.profile import ProfileError
from extender.engine.registry import register

NAME = "DefaultPreemption"
MESSAGE_PREFIX = "preemption: "
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING_ON_NOMINATED = "not eligible due to a terminating pod on the nominated node."
NO_CANDIDATE = "no candidate node for preemption"
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100


@dataclass(frozen=True)
class Evict:
    """Preemption's writes: the victims on the chosen node are evicted and the node nominated."""

    victims: Victims
    tied: tuple[Victims, ...] = ()  # other nodes equal on every criterion: upstream picks one at random

    def describe(self) -> dict[str, Any]:
        """The node, its victims (most important first) and the PDB violations among them; the nodes tied
        with it, each with its own victims."""
        out = _victims(self.victims)
        out["action"] = "preempt"
        if self.tied:
            out["orOneOf"] = [c.node for c in self.tied]
            out["alternatives"] = [_victims(c) for c in self.tied]
        return out

    def apply(self, cache: Any) -> None:
        """Remove the victims from a simulation's cache."""
        for pod in self.victims.pods:
            cache.remove_pod(pod.cache_key)


def _victims(chosen: Victims) -> dict[str, Any]:
    return {"node": chosen.node, "numPDBViolations": chosen.num_pdb_violations,
            "victims": [{"pod": p.key, "priority": p.priority} for p in chosen.pods]}


def _int_arg(args: Mapping[str, Any], key: str, default: int) -> int:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProfileError(f"{NAME} args.{key}: expected an integer")
    return value


def validate_args(args: Mapping[str, Any]) -> tuple[int, int]:
    """ValidateDefaultPreemptionArgs: (minCandidateNodesPercentage, minCandidateNodesAbsolute)."""
    unknown = sorted(set(args) - {"minCandidateNodesPercentage", "minCandidateNodesAbsolute"})
    if unknown:
        raise ProfileError(f"{NAME} args: unknown field(s) {', '.join(unknown)}")
    percentage = _int_arg(args, "minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE)
    absolute = _int_arg(args, "minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
    errors: list[str] = []
    if not 0 <= percentage <= 100:
        errors.append(f"minCandidateNodesPercentage: Invalid value: {percentage}: not in valid range [0, 100]")
    if absolute < 0:
        errors.append(f"minCandidateNodesAbsolute: Invalid value: {absolute}: not in valid range [0, inf)")
    if percentage == 0 and absolute == 0:
        errors += ["minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                   "minCandidateNodesAbsolute",
                   "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
                   "minCandidateNodesPercentage"]
    if errors:
        raise ProfileError(f"{NAME} args: " + "; ".join(errors))
    return percentage, absolute


def pod_status(pod: PodRecord) -> Mapping[str, Any]:
    """The pod's status ({} when absent)."""
    status = pod.raw.get("status")
    return status if isinstance(status, Mapping) else {}


def terminating_by_preemption(pod: PodRecord) -> bool:
    """podTerminatingByPreemption: being deleted, with DisruptionTarget True for PreemptionByScheduler."""
    if not pod.terminating:
        return False
    for condition in pod_status(pod).get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type") == "DisruptionTarget":
            return condition.get("status") == "True" and condition.get("reason") == "PreemptionByScheduler"
    return False


def eligible_to_preempt(state: CycleState, pod: PodRecord, statuses: NodeToStatus) -> str | None:
    """PodEligibleToPreemptOthers: None when the pod may preempt, else upstream's reason."""
    if pod.spec.get("preemptionPolicy") == "Never":
        return NEVER
    nominated = pod_status(pod).get("nominatedNodeName")
    if isinstance(nominated, str) and nominated:
        if statuses.get(nominated).code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return None  # its nominated node cannot take it any more: it may preempt again
        node = state.snapshot.get(nominated)
        if node is not None and any(p.priority < pod.priority and terminating_by_preemption(p) for p in node.pods):
            return TERMINATING_ON_NOMINATED
    return None


def found_placement(chosen: Victims) -> str:
    """v1.37.2's words for a preemption under way: the node nominated and how many pods it evicts there."""
    return f"found a potential placement for pod on node {chosen.node}, preempting {len(chosen.pods)} victims"


def preemption_not_helpful(num_nodes: int, examined: Mapping[str, Status]) -> str:
    """The FitError Preempt returns when no node has victims that would let the pod in: each examined
    node's reasons, and "Preemption is not helpful for scheduling" for every other node."""
    absent = num_nodes - len(examined)
    reasons = [status.reasons for status in examined.values()] + [(NOT_HELPFUL,)] * absent
    return fit_error_message(num_nodes, reasons)


@register
class DefaultPreemption(PostFilterPlugin):
    """Preemption as a dry run: the victims kube-scheduler would evict and the node it would nominate."""

    name = NAME

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute = validate_args(self.args)

    def post_filter(self, state: CycleState, pod: PodRecord,
                    statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status]:
        """Preempt, with upstream's statuses, each prefixed "preemption: " when it has words."""
        result, status = self.preempt(state, pod, statuses)
        if status.message:
            return result, Status(status.code, MESSAGE_PREFIX + status.message)
        return result, status

    def preempt(self, state: CycleState, pod: PodRecord,
                statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status]:
        """Evaluator.Preempt without its writes."""
        reason = eligible_to_preempt(state, pod, statuses)
        if reason is not None:
            return None, Status(Code.UNSCHEDULABLE, reason)
        nodes = state.snapshot.node_list
        if not nodes:
            return None, Status(Code.ERROR, "no nodes available")
        candidates, examined, errors = self.dry_run(state, pod, statuses)
        if errors and not candidates:
            return None, Status(Code.ERROR, _aggregate(errors))
        if not candidates:
            # The pod's nomination is cleared (NewPostFilterResultWithNominatedNode("")).
            return PostFilterResult(nominated_node=""), Status(Code.UNSCHEDULABLE,
                                                               preemption_not_helpful(len(nodes), examined))
        chosen, tied = self.select_candidate(candidates)
        if chosen is None:
            return None, Status(Code.UNSCHEDULABLE, NO_CANDIDATE)
        result = PostFilterResult(nominated_node=chosen.node, actions=[Evict(chosen, tied)])
        if self.release.at_least(37):  # v1.37.2 preemption.go Preempt: the success has words (in the message)
            return result, Status(Code.SUCCESS, found_placement(chosen))
        return result, Status(Code.SUCCESS)

    def dry_run(self, state: CycleState, pod: PodRecord,
                statuses: NodeToStatus) -> tuple[list[Victims], dict[str, Status], list[str]]:
        """findCandidates and DryRunPreemption over the nodes preemption may help: the candidates (those
        violating no PodDisruptionBudget first), each other examined node's status, and the errors met."""
        snapshot = state.snapshot
        potential = statuses.nodes_for_code(snapshot.node_list, Code.UNSCHEDULABLE)
        if not potential:
            return [], {}, []
        pdbs = budgets(snapshot.objects)
        framework = self.handle
        non_violating: list[Victims] = []
        violating: list[Victims] = []
        examined: dict[str, Status] = {}
        errors: list[str] = []
        for node in potential:
            victims, status = select_victims_on_node(framework, state, pod, node, pdbs)
            if status is None and not victims.pods:
                status = Status(Code.ERROR, f'expected at least one victim pod on node "{node.name}"')
            if status is None:
                (violating if victims.num_pdb_violations else non_violating).append(victims)
                continue
            if status.code == Code.ERROR:
                errors.append(status.message)
            examined[node.name] = status
        return non_violating + violating, examined, errors

    @staticmethod
    def select_candidate(candidates: Sequence[Victims]) -> tuple[Victims | None, tuple[Victims, ...]]:
        """SelectCandidate: the node to preempt on, and the others tied with it on every criterion."""
        if not candidates:
            return None, ()
        if len(candidates) == 1:
            return candidates[0], ()
        tied = rank_candidates(candidates)
        return tied[0], tuple(tied[1:])


def _aggregate(errors: Sequence[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one error as it is, several once each, as "[a, b]"."""
    if len(errors) == 1:
        return errors[0]
    distinct = list(dict.fromkeys(errors))
    return distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"
