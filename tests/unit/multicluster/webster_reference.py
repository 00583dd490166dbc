"""Test-only reference: Karmada's ``AllocateWebsterSeats`` as the loop it is, one seat at a time.

This is the implementation ``extender/multicluster/division.py`` used before the bulk computation of
``extender/multicluster/webster.py``, with Go's int32 arithmetic made explicit (``2*Seats+1`` and
``Seats++`` wrap). It costs one heap operation per seat, so tests give it at most a few thousand seats; the
bulk one must agree with it seat for seat.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping


def _int32(number: int) -> int:
    return (number + 2**31) % 2**32 - 2**31


class _Entry:
    """A heap entry ordered as upstream's ``WebsterPriorityQueue.Less`` (heapq pops the smallest)."""

    __slots__ = ("descending", "name", "seats", "votes")

    def __init__(self, name: str, votes: int, seats: int, descending: bool) -> None:
        self.name = name
        self.votes = votes
        self.seats = seats
        self.descending = descending

    def priority(self) -> float:
        return float(self.votes) / float(_int32(2 * self.seats + 1))

    def __lt__(self, other: _Entry) -> bool:
        mine, theirs = self.priority(), other.priority()
        if mine == theirs:
            if self.seats != other.seats:
                return self.seats < other.seats
            return self.name > other.name if self.descending else self.name < other.name
        return mine > theirs


def allocate_one_at_a_time(new_seats: int, votes: Mapping[str, int], initial: Mapping[str, int] | None = None,
                           *, names_descending: bool = False) -> list[tuple[str, int, int]]:
    """(name, votes, seats) of every party, by name, after handing ``new_seats`` out one by one."""
    parties: dict[str, _Entry] = {}
    for name, seats in (initial or {}).items():
        parties[name] = _Entry(name, 0, seats, names_descending)
    for name, count in votes.items():
        if name in parties:
            parties[name].votes = count
        else:
            parties[name] = _Entry(name, count, 0, names_descending)
    if not parties:
        return []
    heap = list(parties.values())
    heapq.heapify(heap)
    for _ in range(new_seats):
        top = heapq.heappop(heap)
        top.seats = _int32(top.seats + 1)
        heapq.heappush(heap, top)
    return sorted((p.name, p.votes, p.seats) for p in parties.values())
