"""Replica assignment: Duplicated, static weights, dynamic weights and Aggregated, steady or fresh.

Upstream (karmada-io/karmada):

* ``pkg/util/helper/webstermethod.go`` (2025, commit 1ead5cb): ``AllocateWebsterSeats`` hands seats out
  one at a time from a heap to the party with the highest ``votes / (2*seats + 1)`` (Webster, also
  called Sainte-Laguë).  Priorities are float64 divisions, compared exactly as Go does.  A tie goes to
  the party with fewer seats, then to the smaller name; ``initialAssignments`` give parties seats they
  already hold (they count in their priority), a party only in ``initialAssignments`` has 0 votes.
  The result lists every party, sorted by name;
* ``pkg/util/helper/binding.go`` (``Dispenser.AllocateByWeight``, ``tieBreakerByUID``): the tie-breaker
  of every dispenser keeps "fewer seats first" but orders names ascending or descending by the parity of
  the FNV-32a hash of the workload's UID (odd -> descending, empty UID -> ascending), so ties do not
  always favour the same clusters across workloads yet one workload always gets the same answer;
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

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Final

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

__all__ = [
    "AssignError",
    "AssignmentMode",
    "ClusterWeight",
    "Dispenser",
    "Party",
    "Strategy",
    "UnschedulableError",
    "allocate_webster_seats",
    "assign_replicas",
    "fnv32a",
    "reschedule_required",
    "static_weight_list",
    "strategy_of",
    "tie_breaker_by_uid",
]

_FNV32_OFFSET: Final = 0x811C9DC5
_FNV32_PRIME: Final = 0x01000193
#: Above this many seats the heap is preceded by a bulk step (see :func:`allocate_webster_seats`).
_BULK_THRESHOLD: Final = 4096


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


# --------------------------------------------------------------------------- Webster


@dataclass(slots=True)
class Party:
    """A party of the Webster method: a cluster, its votes (weight) and its seats (replicas)."""

    name: str
    votes: int
    seats: int


TieBreaker = Callable[[Party, Party], bool]


def _ascending(a: Party, b: Party) -> bool:
    if a.seats != b.seats:
        return a.seats < b.seats
    return a.name < b.name


def _descending(a: Party, b: Party) -> bool:
    if a.seats != b.seats:
        return a.seats < b.seats
    return a.name > b.name


def fnv32a(data: bytes) -> int:
    """FNV-1a, 32 bits (Go ``hash/fnv.New32a``)."""
    h = _FNV32_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return h


def tie_breaker_by_uid(uid: str) -> TieBreaker:
    """Upstream ``tieBreakerByUID``: fewer seats first, then names descending when FNV-32a(uid) is odd."""
    if not uid:
        return _ascending
    return _descending if fnv32a(uid.encode()) & 1 else _ascending


def _priority(party: Party) -> float:
    # Go: float64(Votes) / float64(2*Seats+1); Python floats are the same IEEE doubles.
    return float(party.votes) / float(2 * party.seats + 1)


def _wins(a: Party, b: Party, tie_breaker: TieBreaker | None) -> bool:
    """Upstream ``WebsterPriorityQueue.Less``: does ``a`` get the next seat before ``b``."""
    pa, pb = _priority(a), _priority(b)
    if pa == pb:
        if tie_breaker is not None:
            return tie_breaker(a, b)
        return _ascending(a, b)
    return pa > pb


class _Entry:
    """A heap entry ordered by :func:`_wins` (heapq is a min-heap, so "less" means "wins")."""

    __slots__ = ("party", "tie_breaker")

    def __init__(self, party: Party, tie_breaker: TieBreaker | None) -> None:
        self.party = party
        self.tie_breaker = tie_breaker

    def __lt__(self, other: _Entry) -> bool:
        return _wins(self.party, other.party, self.tie_breaker)


def _slots_above(party: Party, threshold: float) -> int:
    """How many more seats ``party`` takes while its next priority stays strictly above ``threshold``."""
    if party.votes <= 0:
        return 0
    votes = float(party.votes)
    # Estimate the last seat index k with votes/(2k+1) > threshold, then settle it with Go's own division.
    k = int((votes / threshold - 1.0) / 2.0) if threshold > 0 else party.seats
    k = max(k, party.seats - 1)
    while votes / float(2 * (k + 1) + 1) > threshold:
        k += 1
    while k >= party.seats and not votes / float(2 * k + 1) > threshold:
        k -= 1
    return max(0, k - party.seats + 1)


def _bulk(parties: list[Party], seats: int) -> int:
    """Give out, at once, every seat whose priority is above a threshold; return how many were given.

    The heap hands seats out in non-increasing priority order, so all seats above a threshold come
    before any seat at or below it, whatever the tie-breaker: assigning them in one go reaches a state
    the one-at-a-time loop passes through.  The remainder (at most about one per party) goes through
    the heap.  This only keeps huge replica counts from costing one heap operation per replica.
    """
    total_votes = sum(p.votes for p in parties if p.votes > 0)
    if total_votes == 0 or seats <= 0:
        return 0
    held = sum(p.seats for p in parties)
    threshold = float(total_votes) / float(2 * (held + seats) + 1)
    while True:
        counts = [_slots_above(p, threshold) for p in parties]
        if sum(counts) <= seats:
            break
        threshold *= 1.5
    for party, count in zip(parties, counts, strict=True):
        party.seats += count
    return sum(counts)


def allocate_webster_seats(new_seats: int, party_votes: Mapping[str, int],
                           initial_assignments: Mapping[str, int] | None = None,
                           tie_breaker: TieBreaker | None = None, *,
                           bulk_threshold: int = _BULK_THRESHOLD) -> list[Party]:
    """Upstream ``AllocateWebsterSeats``: hand ``new_seats`` out one by one; every party, sorted by name.

    ``bulk_threshold``: above this many seats a bulk step goes first (same result, fewer heap
    operations); tests lower it to compare both paths.
    """
    parties: dict[str, Party] = {}
    for name, seats in (initial_assignments or {}).items():
        parties[name] = Party(name, 0, seats)
    for name, votes in party_votes.items():
        if name in parties:
            parties[name].votes = votes
        else:
            parties[name] = Party(name, votes, 0)
    if not parties:
        return []
    remaining = new_seats
    listed = list(parties.values())
    if remaining > bulk_threshold:
        remaining -= _bulk(listed, remaining - 2 * len(listed))
    heap = [_Entry(p, tie_breaker) for p in listed]
    heapq.heapify(heap)
    while remaining > 0:
        top = heap[0]
        top.party.seats += 1
        heapq.heapreplace(heap, top)
        remaining -= 1
    return sorted(listed, key=lambda p: p.name)


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
    tie_breaker: TieBreaker

    @classmethod
    def new(cls, num_replicas: int, init: Sequence[TargetCluster] | None, uid: str) -> Dispenser:
        """Upstream ``NewDispenser``: the tie-breaker follows the workload's UID."""
        return cls(num_replicas, list(init or ()), tie_breaker_by_uid(uid))

    def done(self) -> bool:
        """Nothing left to hand out and a result exists."""
        return self.num_replicas == 0 and len(self.result) != 0

    def allocate_by_weight(self, weights: Sequence[ClusterWeight]) -> None:
        """Upstream ``AllocateByWeight``: Webster over ``weights``, current replicas as initial seats."""
        if self.done():
            return
        if sum(w.weight for w in weights) == 0:
            return
        initial = {t.name: t.replicas for t in self.result}
        votes = {w.name: w.weight for w in weights}
        parties = allocate_webster_seats(self.num_replicas, votes, initial, self.tie_breaker)
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
    if sum(w.weight for w in weights) == 0:
        weights = [ClusterWeight(cluster.name, 1) for cluster in candidates]
    return weights


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
