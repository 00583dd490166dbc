"""Replica assignment: Duplicated, static weights, dynamic weights and Aggregated, steady or fresh.

Upstream (karmada-io/karmada):

* ``pkg/util/helper/webstermethod.go``: ``AllocateWebsterSeats``, the Webster (Sainte-Laguë) method, lives
  in :mod:`extender.multicluster.webster` (computed in bulk, with the same result as upstream's heap);
* ``pkg/util/helper/binding.go`` (``Dispenser.AllocateByWeight``, ``tieBreakerByUID``): the tie-breaker
  of every dispenser keeps "fewer seats first" but orders names ascending or descending by the parity of
  the FNV-32a hash of the workload's UID (odd -> descending, empty UID -> ascending), so ties do not
  always favour the same clusters across workloads yet one workload always gets the same answer; weight
  sums are int64 and wrap (``GetWeightSum``);
* ``pkg/scheduler/core/assignment.go``, ``division_algorithm.go``, ``common.go``, ``util.go`` (v1.18.2):
  only workloads are assigned replicas (``replicas > 0`` or ``replicaRequirements`` set; a workload with
  0 replicas ends up nowhere), anything else goes to every candidate with 0.  Duplicated gives every
  candidate ``spec.replicas``; static weights divide ``spec.replicas`` afresh (weight = the maximum over
  matching rules, every candidate 1 when nothing matches, unmatched clusters get nothing); dynamic
  weights and Aggregated use available replicas as weights.  In ``Steady`` mode the current result is
  ``spec.clusters`` restricted to the candidates.  A scale-up divides only the replicas still to place,
  by each candidate's free replicas and from nothing, then adds the current result onto it
  (``util.MergeTargetClusters``); a scale-down divides ``spec.replicas`` by the current replicas of the
  clusters that are still candidates; a ``rescheduleTriggeredAt`` newer than ``lastScheduledTime``
  switches to ``Fresh`` mode, which divides everything again with each cluster's current replicas added
  back to its capacity.  Aggregated puts the clusters already used first, then keeps the shortest prefix
  of the capacity-sorted list that covers the target.  Clusters left with 0 replicas are dropped
  (``removeZeroReplicasCluster``).  Sums are int32 and wrap as Go's do.
* overflow (``clusterAffinities[].overflowAffinities``, ``assignWorkloadReplicas``): the candidates are
  grouped by tier (0 = the term's own affinity, then each overflow affinity in order); on every schedule
  the tiers are filled in order, each with ``min(replicas still to place, its clusters' free replicas
  plus what they hold)`` divided by the normal steady or fresh assignment over that tier alone; replicas
  left over after the last tier are unschedulable.

Before commit 49dab6358 (September 2025, v1.16) upstream divided by ``floor(w*n/sum)`` and handed the
remainder out by weight, last replicas, then *randomly*; that method is not implemented.

Everything here is checked against Karmada v1.18.2's own code by the differential oracle in
``tests/karmada``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Final

from extender.multicluster.budget import charge
from extender.multicluster.filters import cluster_matches
from extender.multicluster.gosort import go_sort
from extender.multicluster.model import (
    AGGREGATED,
    DIVIDED,
    DUPLICATED,
    WEIGHTED,
    Cluster,
    ClusterAffinity,
    Placement,
    ResourceBinding,
    TargetCluster,
)
from extender.multicluster.webster import allocate_webster_seats

__all__ = [
    "AssignError",
    "AssignmentMode",
    "ClusterWeight",
    "Dispenser",
    "Strategy",
    "UnschedulableError",
    "assign_replicas",
    "fnv32a",
    "names_descending_by_uid",
    "reschedule_required",
    "static_weight_list",
    "strategy_of",
    "weight_sum",
]

_FNV32_OFFSET: Final = 0x811C9DC5
_FNV32_PRIME: Final = 0x01000193


class UnschedulableError(Exception):
    """Not enough capacity (upstream ``framework.UnschedulableError``); ``message`` is upstream's text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AssignError(Exception):
    """Replica assignment failed for a reason other than capacity; the message is upstream's."""


class Strategy(StrEnum):
    """``assignment.go`` strategy names."""

    DUPLICATED = "Duplicated"
    AGGREGATED = "Aggregated"
    STATIC_WEIGHT = "StaticWeight"
    DYNAMIC_WEIGHT = "DynamicWeight"


class AssignmentMode(StrEnum):
    """How a re-assignment treats the previous result."""

    STEADY = "Steady"
    FRESH = "Fresh"


# --------------------------------------------------------------------------- tie-breaker


def fnv32a(data: bytes) -> int:
    """FNV-1a, 32 bits (Go ``hash/fnv.New32a``)."""
    h = _FNV32_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return h


def names_descending_by_uid(uid: str) -> bool:
    """Upstream ``tieBreakerByUID``: whether a Webster tie (equal priority and seats) goes to the larger
    name: when FNV-32a(uid) is odd; an empty UID breaks ties by ascending names."""
    return bool(uid) and bool(fnv32a(uid.encode()) & 1)


# --------------------------------------------------------------------------- Dispenser


@dataclass(frozen=True, slots=True)
class ClusterWeight:
    """Upstream ``ClusterWeightInfo``: a cluster and its weight (static weight or available replicas)."""

    name: str
    weight: int


@dataclass(slots=True)
class Dispenser:
    """Upstream ``helper.Dispenser``: divides ``num_replicas`` on top of an initial result."""

    num_replicas: int
    result: list[TargetCluster]
    names_descending: bool

    @classmethod
    def new(cls, num_replicas: int, init: Sequence[TargetCluster] | None, uid: str) -> Dispenser:
        """Upstream ``NewDispenser``: the tie-breaker follows the workload's UID."""
        return cls(num_replicas, list(init or ()), names_descending_by_uid(uid))

    def done(self) -> bool:
        """Nothing left to hand out and a result exists."""
        return self.num_replicas == 0 and len(self.result) != 0

    def allocate_by_weight(self, weights: Sequence[ClusterWeight]) -> None:
        """Upstream ``AllocateByWeight``: Webster over ``weights``, current replicas as initial seats."""
        if self.done():
            return
        if weight_sum(weights) == 0:
            return
        charge(len(weights) + len(self.result), "dividing replicas")
        initial = {t.name: t.replicas for t in self.result}
        votes = {w.name: w.weight for w in weights}
        parties = allocate_webster_seats(self.num_replicas, votes, initial, names_descending=self.names_descending)
        self.result = [TargetCluster(p.name, p.seats) for p in parties]
        self.num_replicas = 0


def static_weight_list(candidates: Sequence[Cluster], placement: Placement,
                       matches: Callable[[Cluster, ClusterAffinity], bool]) -> list[ClusterWeight]:
    """Upstream ``getStaticWeightInfoList``: the largest matching rule's weight; all 1 when none match.

    ``matches(cluster, affinity)`` is the placement's cluster matcher (``util.ClusterMatches``).
    A ``weightPreference`` that is absent weights every candidate 1 (``getDefaultWeightPreference``).
    """
    scheduling = placement.replica_scheduling
    rules = scheduling.static_weights if scheduling is not None and scheduling.weight_preference_set else None
    weights: list[ClusterWeight] = []
    if rules is not None:
        for cluster in candidates:
            weight = 0
            for rule in rules:
                if matches(cluster, rule.target):
                    weight = max(weight, rule.weight)
            if weight > 0:
                weights.append(ClusterWeight(cluster.name, weight))
    if weight_sum(weights) == 0:
        # Upstream appends these to the list; a later entry of a name replaces its votes, so this is the same.
        weights = [ClusterWeight(cluster.name, 1) for cluster in candidates]
    return weights


def weight_sum(weights: Sequence[ClusterWeight]) -> int:
    """Upstream ``ClusterWeightInfoList.GetWeightSum``: an int64 sum, which wraps (static weights go up to
    2^63-1)."""
    return (sum(w.weight for w in weights) + 2**63) % 2**64 - 2**63


# --------------------------------------------------------------------------- assignment


def strategy_of(placement: Placement) -> Strategy | None:
    """Upstream ``newAssignState``'s strategy type; ``None`` for an unsupported combination."""
    if placement.scheduling_type == DUPLICATED:
        return Strategy.DUPLICATED
    scheduling = placement.replica_scheduling
    if scheduling is None or scheduling.scheduling_type != DIVIDED:
        return None
    if scheduling.division_preference == AGGREGATED:
        return Strategy.AGGREGATED
    if scheduling.division_preference == WEIGHTED:
        return Strategy.DYNAMIC_WEIGHT if scheduling.dynamic_weight else Strategy.STATIC_WEIGHT
    return None


def reschedule_required(binding: ResourceBinding) -> bool:
    """Upstream ``util.RescheduleRequired``: a reschedule newer than the last completed schedule."""
    triggered, last = binding.reschedule_triggered_at, binding.last_scheduled_time
    if triggered is None or last is None:
        return False
    return triggered > last


Calculator = Callable[[Sequence[Cluster], ResourceBinding], list[TargetCluster]]


def _int32(number: int) -> int:
    """Go int32 arithmetic wraps around."""
    return (number + 2**31) % 2**32 - 2**31


def _sum(targets: Sequence[TargetCluster]) -> int:
    """Upstream ``util.GetSumOfReplicas``: an int32 sum, which wraps (a non-workload's MaxInt32 capacity
    plus replicas it holds goes negative)."""
    return _int32(sum(t.replicas for t in targets))


def _by_replicas_desc(targets: Sequence[TargetCluster]) -> list[TargetCluster]:
    """``sort.Sort(TargetClustersList)``: replicas descending, equal ones where Go's (unstable) sort leaves them."""
    ordered = list(targets)
    go_sort(ordered, lambda a, b: a.replicas > b.replicas)
    return ordered


@dataclass(slots=True)
class AssignState:
    """Upstream ``assignState``: the input of one assignment and its intermediate results."""

    candidates: list[Cluster]
    binding: ResourceBinding
    placement: Placement
    strategy: Strategy
    mode: AssignmentMode
    #: Each candidate's available replicas for the whole binding (``ClusterDetailInfo.AllocatableReplicas``).
    allocatable: Mapping[str, int]
    scheduled: list[TargetCluster] = field(default_factory=list)
    assigned: int = 0
    available: list[TargetCluster] = field(default_factory=list)
    available_sum: int = 0
    target: int = 0
    #: Which round failed, for the error message (upstream wraps errors with it).
    phase: str = ""

    def build_scheduled(self) -> None:
        """Current clusters that are still candidates; the rest count as replicas to place again."""
        names = {c.name for c in self.candidates}
        self.scheduled = [t for t in self.binding.clusters if t.name in names]
        self.assigned = _sum(self.scheduled)

    def set_available(self, available: list[TargetCluster]) -> None:
        """Record the weights of this round and their total."""
        self.available = available
        self.available_sum = _sum(available)

    def resort_available(self) -> list[TargetCluster]:
        """Clusters already holding replicas first (upstream ``resortAvailableClusters``)."""
        prior = {t.name for t in self.scheduled if t.replicas > 0}
        if not prior:
            return self.available
        return [t for t in self.available if t.name in prior] + [t for t in self.available if t.name not in prior]


def _unschedulable(state: AssignState) -> UnschedulableError:
    return UnschedulableError(f"Clusters available replicas {state.available_sum} are not enough to schedule.")


def _merge_target_clusters(old: Sequence[TargetCluster], new: Sequence[TargetCluster]) -> list[TargetCluster]:
    """Upstream ``util.MergeTargetClusters``: add the old replicas onto the new result.

    Old clusters missing from the new result are appended; upstream appends them in Go map order,
    here in name order (the order of ``spec.clusters`` carries no meaning).
    """
    if not old:
        return list(new)
    if not new:
        return list(old)
    remaining: dict[str, int] = {}
    for t in old:
        remaining[t.name] = t.replicas  # the last entry of a name wins, as in upstream's map
    merged = []
    for t in new:
        if t.name in remaining:
            merged.append(TargetCluster(t.name, _int32(t.replicas + remaining.pop(t.name))))
        else:
            merged.append(t)
    merged.extend(TargetCluster(name, replicas) for name, replicas in sorted(remaining.items()))
    return merged


def _divide(state: AssignState) -> list[TargetCluster]:
    """Upstream ``dynamicDivideReplicas``: divide the target by the weights, then merge the kept result."""
    if state.available_sum < state.target:
        raise _unschedulable(state)
    available = state.available
    if state.strategy == Strategy.AGGREGATED:
        available = state.resort_available()
        running = 0
        for i, target in enumerate(available):
            running += target.replicas
            if running >= state.target:
                available = available[: i + 1]
                break
    # SpreadReplicasByTargetClusters: available replicas are the weights, nothing is held initially.
    dispenser = Dispenser.new(state.target, None, state.binding.resource.uid)
    dispenser.allocate_by_weight([ClusterWeight(t.name, t.replicas) for t in available])
    return _merge_target_clusters(state.scheduled, dispenser.result)


def _scale_down(state: AssignState) -> list[TargetCluster]:
    # Only the current clusters that are still candidates are weighted, by their current replicas.
    state.phase = "scale down"
    state.target = state.binding.replicas
    state.set_available(_by_replicas_desc(state.scheduled))
    state.scheduled = []
    return _divide(state)


def _allocatable(state: AssignState) -> list[TargetCluster]:
    """Each candidate's available replicas, without the replicas it already holds (``AllocatableReplicas``)."""
    return [TargetCluster(c.name, state.allocatable[c.name]) for c in state.candidates]


def _scale_up(state: AssignState) -> list[TargetCluster]:
    # Only the missing replicas are divided, from nothing, and then added onto the current result.
    state.phase = "scale up"
    state.target = state.binding.replicas - state.assigned
    state.set_available(_by_replicas_desc(_allocatable(state)))
    return _divide(state)


def _fresh(state: AssignState) -> list[TargetCluster]:
    state.phase = "fresh scale"
    state.target = state.binding.replicas
    available = _allocatable(state)
    held: dict[str, int] = {}
    for t in state.scheduled:
        held[t.name] = _int32(held.get(t.name, 0) + t.replicas)
    # A cluster's own replicas come back to its capacity before everything is divided again.
    available = [TargetCluster(t.name, _int32(t.replicas + held.get(t.name, 0))) for t in available]
    state.set_available(_by_replicas_desc(available))
    state.scheduled = []
    return _divide(state)


def _assign_dynamic(state: AssignState) -> list[TargetCluster]:
    """Upstream ``assignByDynamicStrategy`` (dynamic weights and Aggregated)."""
    state.build_scheduled()
    if state.mode == AssignmentMode.FRESH:
        return _fresh(state)
    if state.assigned > state.binding.replicas:
        return _scale_down(state)
    if state.assigned < state.binding.replicas:
        # A first schedule is a scale-up from nothing.
        return _scale_up(state)
    return state.scheduled


_PHASE_WRAP: Final = {"fresh scale": "failed to do fresh scale", "scale down": "failed to scale down",
                      "scale up": "failed to scale up"}


def _assign_to_clusters(candidates: Sequence[Cluster], binding: ResourceBinding, placement: Placement,
                        allocatable: Mapping[str, int]) -> list[TargetCluster]:
    """Upstream ``assignReplicasToClusters``: one strategy over ``candidates``, zero-replica clusters removed."""
    strategy = strategy_of(placement)
    if strategy is None:
        scheduling = placement.replica_scheduling
        preference = scheduling.division_preference if scheduling is not None else ""
        raise AssignError(f"unsupported replica scheduling strategy, replicaSchedulingType: "
                          f"{placement.scheduling_type}, replicaDivisionPreference: {preference}, "
                          "please try another scheduling strategy")
    mode = AssignmentMode.FRESH if reschedule_required(binding) else AssignmentMode.STEADY
    state = AssignState(list(candidates), binding, placement, strategy, mode, allocatable)
    if strategy == Strategy.DUPLICATED:
        result = [TargetCluster(c.name, binding.replicas) for c in candidates]
    elif strategy == Strategy.STATIC_WEIGHT:
        weights = static_weight_list(candidates, placement, cluster_matches)
        dispenser = Dispenser.new(binding.replicas, None, binding.resource.uid)
        dispenser.allocate_by_weight(weights)
        result = dispenser.result
    else:
        try:
            result = _assign_dynamic(state)
        except UnschedulableError as err:
            raise UnschedulableError(f"{_PHASE_WRAP.get(state.phase, state.phase)}: {err.message}") from err
    return [t for t in result if t.replicas > 0]


def _assign_tiered(candidates: Sequence[Cluster], binding: ResourceBinding, placement: Placement,
                   allocatable: Mapping[str, int], tiers: Mapping[str, int]) -> list[TargetCluster]:
    """Upstream ``assignWorkloadReplicas`` with overflow: fill the tiers in order, every schedule.

    Each tier gets ``min(replicas still to place, the tier's available replicas including what its
    clusters hold)`` and divides it with the normal (steady or fresh) assignment over its own clusters.
    """
    by_tier: dict[int, list[Cluster]] = {}
    capacity: dict[int, int] = {}
    for cluster in candidates:
        tier = tiers.get(cluster.name, OUTSIDE_TIERS)
        by_tier.setdefault(tier, []).append(cluster)
        capacity[tier] = capacity.get(tier, 0) + allocatable[cluster.name] + binding.assigned_replicas_for(cluster.name)
    remaining = binding.replicas
    result: list[TargetCluster] = []
    for tier in sorted(by_tier):
        share = min(remaining, capacity[tier])
        # The tier's clusters keep the capacity estimated for the whole binding.
        result.extend(_assign_to_clusters(by_tier[tier], replace(binding, replicas=share), placement, allocatable))
        remaining -= share
        if remaining <= 0:
            break
    if remaining > 0:
        raise UnschedulableError("Clusters available replicas are not enough to schedule.")
    return result


#: ``getClusterOverflowOrder`` of a cluster in no tier of the term.
OUTSIDE_TIERS: Final = 1000


def assign_replicas(candidates: Sequence[Cluster], binding: ResourceBinding, placement: Placement,
                    calculator: Calculator, *, tiers: Mapping[str, int] | None = None) -> list[TargetCluster]:
    """Upstream ``AssignReplicas``: target clusters with replicas, zero-replica clusters removed.

    ``calculator`` gives each candidate's available replicas (``calAvailableReplicas``); ``tiers`` maps
    candidates to their overflow tier (0 = primary) when the term being scheduled has overflow affinities.
    Raises :class:`UnschedulableError` when capacity is short and :class:`AssignError` otherwise.
    """
    if not candidates:
        raise AssignError("no clusters available to schedule")
    if not binding.is_workload:
        # Not a workload (no replicas and no replicaRequirements): every selected cluster, without replicas.
        return [TargetCluster(c.name, 0) for c in candidates]
    allocatable = {t.name: t.replicas for t in calculator(candidates, binding)}
    if tiers:
        return _assign_tiered(candidates, binding, placement, allocatable, tiers)
    return _assign_to_clusters(candidates, binding, placement, allocatable)
