"""The Webster (Sainte-Laguë) method, with upstream's webstermethod_test.go table ported as data."""

from __future__ import annotations

import heapq

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extender.multicluster.division import (
    Party,
    _ascending,
    _descending,
    _Entry,
    allocate_webster_seats,
    fnv32a,
    tie_breaker_by_uid,
)

WIKIPEDIA = {"PartyA": 100000, "PartyB": 80000, "PartyC": 30000, "PartyD": 20000}

# TestAllocateWebsterSeats (pkg/util/helper/webstermethod_test.go): the Wikipedia example round by
# round, then the edge cases.  (name, new seats, votes, initial, tie-breaker, expected (name, votes, seats)).
WEBSTER_TABLE = [
    ("classic example, round 1", 1, WIKIPEDIA, None, None,
     [("PartyA", 100000, 1), ("PartyB", 80000, 0), ("PartyC", 30000, 0), ("PartyD", 20000, 0)]),
    ("classic example, round 2", 2, WIKIPEDIA, None, None,
     [("PartyA", 100000, 1), ("PartyB", 80000, 1), ("PartyC", 30000, 0), ("PartyD", 20000, 0)]),
    ("classic example, round 3", 3, WIKIPEDIA, None, None,
     [("PartyA", 100000, 2), ("PartyB", 80000, 1), ("PartyC", 30000, 0), ("PartyD", 20000, 0)]),
    ("classic example, round 4", 4, WIKIPEDIA, None, None,
     [("PartyA", 100000, 2), ("PartyB", 80000, 1), ("PartyC", 30000, 1), ("PartyD", 20000, 0)]),
    ("classic example, round 5", 5, WIKIPEDIA, None, None,
     [("PartyA", 100000, 2), ("PartyB", 80000, 2), ("PartyC", 30000, 1), ("PartyD", 20000, 0)]),
    ("classic example, round 6", 6, WIKIPEDIA, None, None,
     [("PartyA", 100000, 2), ("PartyB", 80000, 2), ("PartyC", 30000, 1), ("PartyD", 20000, 1)]),
    ("classic example, round 7", 7, WIKIPEDIA, None, None,
     [("PartyA", 100000, 3), ("PartyB", 80000, 2), ("PartyC", 30000, 1), ("PartyD", 20000, 1)]),
    ("classic example, round 8", 8, WIKIPEDIA, None, None,
     [("PartyA", 100000, 3), ("PartyB", 80000, 3), ("PartyC", 30000, 1), ("PartyD", 20000, 1)]),
    ("empty party votes, expect nil result", 1, {}, None, None, []),
    ("party votes not empty, newSeats is 0, expect all seats 0", 0, {"PartyA": 100, "PartyB": 200}, None, None,
     [("PartyA", 100, 0), ("PartyB", 200, 0)]),
    ("both party votes and newSeats are 0, expect nil result", 0, {}, None, None, []),
    ("tie-breaker is nil, expect break tie by seats", 1, {"PartyA": 3, "PartyB": 1}, {"PartyA": 1, "PartyB": 0},
     None, [("PartyA", 3, 1), ("PartyB", 1, 1)]),
    ("tie-breaker is nil, expect break tie by name", 1, {"PartyA": 1, "PartyB": 1}, None, None,
     [("PartyA", 1, 1), ("PartyB", 1, 0)]),
    ("custom tie-breaker returns true, expect custom tie-breaker controls seat", 1, {"PartyA": 1, "PartyB": 1},
     None, lambda a, b: a.name < b.name, [("PartyA", 1, 1), ("PartyB", 1, 0)]),
    ("custom tie-breaker returns false, expect custom tie-breaker controls seat", 1, {"PartyA": 1, "PartyB": 1},
     None, lambda a, b: a.name > b.name, [("PartyA", 1, 0), ("PartyB", 1, 1)]),
    ("non-initial allocation, new party joins, only new party gets new seats", 2,
     {"NewParty1": 1, "NewParty2": 1}, {"OldParty": 0}, None,
     [("NewParty1", 1, 1), ("NewParty2", 1, 1), ("OldParty", 0, 0)]),
    ("non-initial allocation, both new and old parties compete for new seats", 2,
     {"OldParty": 1, "NewParty": 1}, {"OldParty": 1}, None, [("NewParty", 1, 2), ("OldParty", 1, 1)]),
    ("non-initial allocation, initialAssignments party not in partyVotes, expect no new seats for that party", 2,
     {"PartyA": 100}, {"PartyB": 3}, None, [("PartyA", 100, 2), ("PartyB", 0, 3)]),
]


@pytest.mark.parametrize(("name", "seats", "votes", "initial", "breaker", "expected"), WEBSTER_TABLE,
                         ids=[row[0] for row in WEBSTER_TABLE])
def test_allocate_webster_seats_upstream_table(name: str, seats: int, votes: dict[str, int],
                                               initial: dict[str, int] | None, breaker: object,
                                               expected: list[tuple[str, int, int]]) -> None:
    got = allocate_webster_seats(seats, votes, initial, breaker)  # type: ignore[arg-type]
    assert [(p.name, p.votes, p.seats) for p in got] == expected


def test_example_allocate_webster_seats() -> None:
    # ExampleAllocateWebsterSeats: Alpha 1200, Beta 900, Gamma 400, 4 seats -> 2/1/1.
    got = allocate_webster_seats(4, {"Alpha": 1200, "Beta": 900, "Gamma": 400})
    assert [(p.name, p.seats) for p in got] == [("Alpha", 2), ("Beta", 1), ("Gamma", 1)]


def test_fnv32a_matches_go_hash_fnv() -> None:
    # Reference values of FNV-1a 32 (offset basis for "", and the published test vector for "a").
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert fnv32a(b"foobar") == 0xBF9CF968


def test_tie_breaker_by_uid_follows_hash_parity() -> None:
    assert tie_breaker_by_uid("") is _ascending
    odd = next(u for u in (f"uid-{i}" for i in range(100)) if fnv32a(u.encode()) & 1)
    even = next(u for u in (f"uid-{i}" for i in range(100)) if not fnv32a(u.encode()) & 1)
    assert tie_breaker_by_uid(odd) is _descending
    assert tie_breaker_by_uid(even) is _ascending
    # Fewer seats still wins before the name, whatever the direction.
    assert _descending(Party("a", 1, 0), Party("b", 1, 1))
    assert _descending(Party("b", 1, 1), Party("a", 1, 1))


def test_uid_direction_decides_a_tie() -> None:
    odd = next(u for u in (f"uid-{i}" for i in range(100)) if fnv32a(u.encode()) & 1)
    even = next(u for u in (f"uid-{i}" for i in range(100)) if not fnv32a(u.encode()) & 1)
    by_even = allocate_webster_seats(1, {"member1": 5, "member2": 5}, None, tie_breaker_by_uid(even))
    by_odd = allocate_webster_seats(1, {"member1": 5, "member2": 5}, None, tie_breaker_by_uid(odd))
    assert [p.seats for p in by_even] == [1, 0]
    assert [p.seats for p in by_odd] == [0, 1]


def _one_at_a_time(seats: int, votes: dict[str, int], initial: dict[str, int]) -> list[tuple[str, int]]:
    """A plain re-statement of the heap loop, to check the bulk step against."""
    parties = {n: Party(n, 0, s) for n, s in initial.items()}
    for n, v in votes.items():
        parties.setdefault(n, Party(n, 0, 0)).votes = v
    heap = [_Entry(p, None) for p in parties.values()]
    heapq.heapify(heap)
    for _ in range(seats):
        top = heapq.heappop(heap)
        top.party.seats += 1
        heapq.heappush(heap, top)
    return sorted((p.name, p.seats) for p in parties.values())


votes_strategy = st.dictionaries(st.sampled_from([f"m{i}" for i in range(6)]), st.integers(0, 60), min_size=1)


@settings(max_examples=150, deadline=None)
@given(votes=votes_strategy, initial=st.dictionaries(st.sampled_from([f"m{i}" for i in range(6)]),
                                                     st.integers(0, 30)), seats=st.integers(0, 400))
def test_bulk_step_gives_the_same_seats_as_the_heap(votes: dict[str, int], initial: dict[str, int],
                                                     seats: int) -> None:
    got = allocate_webster_seats(seats, votes, initial, bulk_threshold=0)
    assert [(p.name, p.seats) for p in got] == _one_at_a_time(seats, votes, initial)


def test_huge_replica_counts_are_fast() -> None:
    got = allocate_webster_seats(2**31 - 1, {"a": 3, "b": 5, "c": 7})
    assert sum(p.seats for p in got) == 2**31 - 1
    # a's 429496730th seat and c's 1002159036th tie exactly (3/858993459 == 7/2004318071): fewer seats wins.
    assert [p.seats for p in got] == [429496730, 715827882, 1002159035]


@settings(max_examples=200, deadline=None)
@given(votes=st.dictionaries(st.sampled_from([f"c{i}" for i in range(5)]), st.integers(1, 1000), min_size=1),
       seats=st.integers(0, 200))
def test_webster_is_a_divisor_method(votes: dict[str, int], seats: int) -> None:
    # Every seat given is worth at least as much as any seat withheld: (2s_i-1)/v_i <= (2s_j+1)/v_j.
    got = {p.name: p.seats for p in allocate_webster_seats(seats, votes)}
    assert sum(got.values()) == seats
    for i, si in got.items():
        for j, sj in got.items():
            if i != j and si > 0:
                assert (2 * si - 1) * votes[j] <= (2 * sj + 1) * votes[i]


@settings(max_examples=100, deadline=None)
@given(votes=st.dictionaries(st.sampled_from([f"c{i}" for i in range(5)]), st.integers(1, 50), min_size=1),
       seats=st.integers(0, 100))
def test_more_seats_never_take_a_seat_away(votes: dict[str, int], seats: int) -> None:
    # No Alabama paradox: the reason upstream moved from largest remainders to Webster (issue #6735).
    before = {p.name: p.seats for p in allocate_webster_seats(seats, votes)}
    after = {p.name: p.seats for p in allocate_webster_seats(seats + 1, votes)}
    assert all(after[n] >= before[n] for n in votes)
