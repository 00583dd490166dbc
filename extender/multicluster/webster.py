"""The Webster (Sainte-Laguë) method exactly as Karmada v1.18.2 hands seats out, computed in bulk.

Upstream (``pkg/util/helper/webstermethod.go``, ``AllocateWebsterSeats``) gives seats one at a time from a heap:
each goes to the party with the highest priority ``float64(Votes) / float64(2*Seats+1)``; a tie goes to the
party with fewer seats, then to the smaller name (or the larger one: ``binding.go``'s ``tieBreakerByUID``).
A party only in ``initialAssignments`` has 0 votes. The result lists every party, sorted by name.

Two details of Go's types decide the answer for huge seat counts and are kept here:

* ``Seats`` is an ``int32``, so ``2*Seats+1`` wraps once a party holds 2^30 seats: its priority turns
  negative (for positive votes) and it stops winning while any other party's priority is positive;
* parties with 0 votes have priority 0 (they win only once every other priority is negative), and
  negative votes (a dynamic weight's int32 sum that wrapped) give priorities that *rise* with each seat.

Handing 2,147,483,647 seats out one by one takes minutes; here the same result is computed in bulk. Over
the seats a party could hold, its priority is strictly decreasing (votes > 0), constant (0) or strictly
increasing (< 0). Seats therefore go, in the heap's order:

1. to positive-vote parties, as the best "slots" (a party at a given seat count) among them, for as long as
   each next slot beats the best head of the other parties, which does not move meanwhile;
2. then, if seats are left, to that other party: a negative-vote party keeps winning (its priority only
   rises), and zero-vote parties share the rest in turn (fewest seats first, then by name).

The best M slots of the positive-vote parties are found by a threshold on the priority: each party's count
of slots above a priority is a binary search over its seat counts, the threshold a binary search over the
ordered float64 values, and the slots exactly at the threshold are ordered by the tie-breaker. The work is
``O(parties x 64 x 32)`` array operations however many seats. The differential oracle (``tests/karmada``)
compares the results with Karmada's own code; ``tests/unit/multicluster/webster_reference.py`` keeps the
one-seat-at-a-time loop to compare against.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["INT32_MAX", "Party", "allocate_webster_seats", "priority"]

INT32_MAX: Final = 2**31 - 1
_INT64_SIGN: Final = 1 << 63
_INT64_MAGNITUDE: Final = _INT64_SIGN - 1
#: Below this many candidate slots, the best ones are found by sorting them all.
_SORT_SLOTS: Final = 4096
#: A party's priority turns negative once it holds this many seats (``2*Seats+1`` wraps in int32).
_WRAP_SEATS: Final = 2**30
#: Steps of one seat that settle a boundary estimated from the real-number formula (one or two in practice).
_SETTLE_STEPS: Final = 8

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(slots=True)
class Party:
    """A party of the Webster method: a cluster, its votes (weight) and its seats (replicas)."""

    name: str
    votes: int
    seats: int


def _denominator(seats: int) -> int:
    """Go's ``2*Seats+1`` in int32, which wraps."""
    return (2 * seats + 1 + 2**31) % 2**32 - 2**31


def priority(votes: int, seats: int) -> float:
    """Upstream's priority ``float64(Votes) / float64(2*Seats+1)``, the denominator in int32 as Go computes it."""
    return float(votes) / float(_denominator(seats))


def _priorities(votes: FloatArray, seats: IntArray) -> FloatArray:
    wrapped = (2 * seats + 1 + 2**31) % 2**32 - 2**31
    return votes / wrapped.astype(np.float64)


def _order_key(value: float) -> int:
    """An integer that orders float64 values as ``<`` does (both zeros map to 0)."""
    bits: int = struct.unpack("<q", struct.pack("<d", value))[0]
    return bits if bits >= 0 else -(bits & _INT64_MAGNITUDE)


def _from_order_key(key: int) -> float:
    bits = key if key >= 0 else (-key) | _INT64_SIGN
    value: float = struct.unpack("<d", struct.pack("<Q", bits))[0]
    return value


class _Rising:
    """The positive-vote parties: each one's priority falls strictly with every seat it receives."""

    def __init__(self, votes: list[int], seats: list[int], limit: int) -> None:
        self.votes = np.array([float(v) for v in votes], dtype=np.float64)
        self.seats = np.array(seats, dtype=np.int64)
        self.limit = limit  # no party takes more than this many new seats

    def above(self, threshold: float) -> IntArray:
        """How many of each party's next ``limit`` slots have a priority strictly above ``threshold``."""
        start, end = self.seats, self.seats + self.limit
        # Priorities are positive before the wrap and negative after it: a threshold's boundary lies on its side.
        wrap = np.clip(_WRAP_SEATS, start, end)
        # Where the priority drops to the threshold, from the real-number formula; then settled exactly.
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            if threshold > 0:
                boundary = np.clip(np.ceil((self.votes / threshold - 1.0) / 2.0), start, wrap)
            elif threshold == 0:
                boundary = wrap
            else:  # past the wrap: v / (2k+1-2^32) > t  <=>  2k+1 < 2^32 - v/|t|
                boundary = np.clip(np.ceil((2.0**32 - 1.0 - self.votes / -threshold) / 2.0), wrap, end)
        boundary = boundary.astype(np.int64)
        for _ in range(_SETTLE_STEPS):
            back = (boundary > start) & (_priorities(self.votes, np.maximum(boundary - 1, start)) <= threshold)
            forward = (boundary < end) & (_priorities(self.votes, np.minimum(boundary, end - 1)) > threshold)
            if not back.any() and not forward.any():
                return boundary - start
            boundary = boundary - back + forward
        return self._bisect(threshold) - start

    def _bisect(self, threshold: float) -> IntArray:
        """The first seat count whose priority is at or below ``threshold``, by binary search."""
        low = self.seats.copy()
        high = self.seats + self.limit
        while True:
            open_ = low < high
            if not open_.any():
                return low
            middle = (low + high) // 2
            better = _priorities(self.votes, middle) > threshold
            low = np.where(open_ & better, middle + 1, low)
            high = np.where(open_ & ~better, middle, high)


def _best_slots(votes: list[int], seats: list[int], ranks: list[int], count: int, limit: int) -> list[int]:
    """How many of the ``count`` best slots of positive-vote parties each party gets (slots ordered by
    priority descending, then seats ascending, then name rank); no party needs more than ``limit``."""
    if count <= 0:
        return [0] * len(votes)
    if len(votes) * min(count, limit) <= _SORT_SLOTS:
        slots = sorted((-priority(v, s + j), s + j, rank, i)
                       for i, (v, s, rank) in enumerate(zip(votes, seats, ranks, strict=True))
                       for j in range(min(count, limit)))
        won = [0] * len(votes)
        for *_, i in slots[:count]:
            won[i] += 1
        return won
    return [int(g) for g in _best_slots_by_threshold(_Rising(votes, seats, limit), ranks, count)]


def _best_slots_by_threshold(parties: _Rising, ranks: list[int], count: int) -> IntArray:
    """:func:`_best_slots` for many slots: a threshold on the priority, then the slots exactly at it."""
    # The count-th best priority is the smallest threshold with fewer than `count` slots strictly above it.
    heads = _priorities(parties.votes, parties.seats)
    last = _priorities(parties.votes, parties.seats + (min(count, parties.limit) - 1))
    high = _order_key(float(heads.max()))  # nothing is above the best head
    low = _order_key(float(last.min())) - 1  # every slot of the weakest party's first `count` is above this
    while high - low > 1:
        middle = (low + high) // 2
        if int(parties.above(_from_order_key(middle)).sum()) < count:
            high = middle
        else:
            low = middle
    threshold = _from_order_key(high)
    given = parties.above(threshold)
    left = count - int(given.sum())
    if left > 0:
        next_seat = parties.seats + given
        at_threshold = (given < parties.limit) & (_priorities(parties.votes, next_seat) == threshold)
        tied = sorted((int(next_seat[i]), ranks[i], i) for i in np.flatnonzero(at_threshold).tolist())
        for *_, i in tied[:left]:
            given[i] += 1
    return given


def _slots_before(votes: list[int], seats: list[int], ranks: list[int], head: tuple[float, int, int],
                  limit: int) -> int:
    """How many slots of the positive-vote parties come before ``head`` (priority, seats, rank) in the
    heap's order, counting at most ``limit`` per party."""
    value, head_seats, head_rank = head
    parties = _Rising(votes, seats, limit)
    given = parties.above(value)
    total = int(given.sum())
    for i, count in enumerate(given.tolist()):
        seat = seats[i] + count
        if count < limit and priority(votes[i], seat) == value and (seat, ranks[i]) < (head_seats, head_rank):
            total += 1
    return total


def _share_in_turn(seats: list[int], ranks: list[int], count: int) -> list[int]:
    """``count`` seats handed out one at a time to the party with the fewest, ties by name rank."""
    if not seats or count <= 0:
        return [0] * len(seats)
    # The highest level every party can be raised to with the seats available; the rest go one each.
    low, high = min(seats), min(seats) + count
    while low < high:
        level = (low + high + 1) // 2
        if sum(max(0, level - s) for s in seats) <= count:
            low = level
        else:
            high = level - 1
    given = [max(0, low - s) for s in seats]
    left = count - sum(given)
    at_level = sorted((ranks[i], i) for i, s in enumerate(seats) if s + given[i] == low)
    for _, i in at_level[:left]:
        given[i] += 1
    return given


def allocate_webster_seats(new_seats: int, party_votes: Mapping[str, int],
                           initial_assignments: Mapping[str, int] | None = None, *,
                           names_descending: bool = False) -> list[Party]:
    """Upstream ``AllocateWebsterSeats``: ``new_seats`` handed out as the heap would; every party, by name.

    ``names_descending``: a tie between parties with equal priorities and seats goes to the larger name
    (upstream's tie-breaker for a workload UID whose FNV-32a hash is odd); else to the smaller one.
    Seats stay within Go's int32: ``new_seats`` plus any party's initial seats must not exceed 2^31-1.
    """
    parties: dict[str, Party] = {}
    for name, held in (initial_assignments or {}).items():
        parties[name] = Party(name, 0, held)
    for name, count in party_votes.items():
        if name in parties:
            parties[name].votes = count
        else:
            parties[name] = Party(name, count, 0)
    if not parties:
        return []
    ordered = [parties[name] for name in sorted(parties)]
    if new_seats <= 0:
        return ordered
    if any(p.seats < 0 or p.seats > INT32_MAX - new_seats for p in ordered):
        raise ValueError(f"Webster seats out of int32 range: {new_seats} new seats on top of "
                         f"{max(p.seats for p in ordered)}")
    ranks = [-i if names_descending else i for i in range(len(ordered))]
    rising = [i for i, p in enumerate(ordered) if p.votes > 0]
    others = [i for i, p in enumerate(ordered) if p.votes <= 0]
    votes = [ordered[i].votes for i in rising]
    seats = [ordered[i].seats for i in rising]
    rising_ranks = [ranks[i] for i in rising]
    first = new_seats
    best_other = None
    if others:
        # The best head among the parties that are not positive-vote ones: it does not move until it wins.
        best_other = min(others, key=lambda i: (-priority(ordered[i].votes, ordered[i].seats), ordered[i].seats,
                                                ranks[i]))
        head = (priority(ordered[best_other].votes, ordered[best_other].seats), ordered[best_other].seats,
                ranks[best_other])
        first = min(new_seats, _slots_before(votes, seats, rising_ranks, head, new_seats)) if rising else 0
    for i, count in zip(rising, _best_slots(votes, seats, rising_ranks, first, new_seats), strict=True):
        ordered[i].seats += count
    rest = new_seats - first
    if rest > 0 and best_other is not None:
        if ordered[best_other].votes < 0:
            ordered[best_other].seats += rest  # its priority only rises: it wins every remaining seat
        else:
            zero = [i for i in others if ordered[i].votes == 0]
            shares = _share_in_turn([ordered[i].seats for i in zero], [ranks[i] for i in zero], rest)
            for i, count in zip(zero, shares, strict=True):
                ordered[i].seats += count
    return ordered
