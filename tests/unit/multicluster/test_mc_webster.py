"""The Webster (Sainte-Laguë) method: upstream's webstermethod_test.go table ported as data, and the bulk
computation checked seat for seat against the one-at-a-time loop (``webster_reference.py``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from webster_reference import allocate_one_at_a_time

from extender.multicluster.division import ClusterWeight, Dispenser, fnv32a, names_descending_by_uid
from extender.multicluster.model import TargetCluster
from extender.multicluster.webster import INT32_MAX, allocate_webster_seats, priority

WIKIPEDIA = {"PartyA": 100000, "PartyB": 80000, "PartyC": 30000, "PartyD": 20000}

# TestAllocateWebsterSeats (pkg/util/helper/webstermethod_test.go): the Wikipedia example round by
# round, then the edge cases.  (name, new seats, votes, initial, names descending, expected (name, votes,
# seats)). Upstream's two "custom tie-breaker" rows compare names only; between equal seats that is the name order.
WEBSTER_TABLE = [
    ("classic example, round 1", 1, WIKIPEDIA, None, False,
     [("PartyA", 100000, 1), ("PartyB", 80000, 0), ("PartyC", 30000, 0), ("PartyD", 20000, 0)]),
    ("classic example, round 2", 2, WIKIPEDIA, None, False,
     [("PartyA", 100000, 1), ("PartyB", 80000, 1), ("PartyC", 30000, 0), ("PartyD", 20000, 0)]),
    ("classic example, round 3", 3, WIKIPEDIA, None, False,
     [("PartyA", 100000, 2), ("PartyB", 80000, 1), ("PartyC", 30000, 0), ("PartyD", 20000, 0)]),
    ("classic example, round 4", 4, WIKIPEDIA, None, False,
     [("PartyA", 100000, 2), ("PartyB", 80000, 1), ("PartyC", 30000, 1), ("PartyD", 20000, 0)]),
    ("classic example, round 5", 5, WIKIPEDIA, None, False,
     [("PartyA", 100000, 2), ("PartyB", 80000, 2), ("PartyC", 30000, 1), ("PartyD", 20000, 0)]),
    ("classic example, round 6", 6, WIKIPEDIA, None, False,
     [("PartyA", 100000, 2), ("PartyB", 80000, 2), ("PartyC", 30000, 1), ("PartyD", 20000, 1)]),
    ("classic example, round 7", 7, WIKIPEDIA, None, False,
     [("PartyA", 100000, 3), ("PartyB", 80000, 2), ("PartyC", 30000, 1), ("PartyD", 20000, 1)]),
    ("classic example, round 8", 8, WIKIPEDIA, None, False,
     [("PartyA", 100000, 3), ("PartyB", 80000, 3), ("PartyC", 30000, 1), ("PartyD", 20000, 1)]),
    ("empty party votes, expect nil result", 1, {}, None, False, []),
    ("party votes not empty, newSeats is 0, expect all seats 0", 0, {"PartyA": 100, "PartyB": 200}, None, False,
     [("PartyA", 100, 0), ("PartyB", 200, 0)]),
    ("both party votes and newSeats are 0, expect nil result", 0, {}, None, False, []),
    ("tie-breaker is nil, expect break tie by seats", 1, {"PartyA": 3, "PartyB": 1}, {"PartyA": 1, "PartyB": 0},
     False, [("PartyA", 3, 1), ("PartyB", 1, 1)]),
    ("tie-breaker is nil, expect break tie by name", 1, {"PartyA": 1, "PartyB": 1}, None, False,
     [("PartyA", 1, 1), ("PartyB", 1, 0)]),
    ("custom tie-breaker returns true, expect custom tie-breaker controls seat", 1, {"PartyA": 1, "PartyB": 1},
     None, False, [("PartyA", 1, 1), ("PartyB", 1, 0)]),
    ("custom tie-breaker returns false, expect custom tie-breaker controls seat", 1, {"PartyA": 1, "PartyB": 1},
     None, True, [("PartyA", 1, 0), ("PartyB", 1, 1)]),
    ("non-initial allocation, new party joins, only new party gets new seats", 2,
     {"NewParty1": 1, "NewParty2": 1}, {"OldParty": 0}, False,
     [("NewParty1", 1, 1), ("NewParty2", 1, 1), ("OldParty", 0, 0)]),
    ("non-initial allocation, both new and old parties compete for new seats", 2,
     {"OldParty": 1, "NewParty": 1}, {"OldParty": 1}, False, [("NewParty", 1, 2), ("OldParty", 1, 1)]),
    ("non-initial allocation, initialAssignments party not in partyVotes, expect no new seats for that party", 2,
     {"PartyA": 100}, {"PartyB": 3}, False, [("PartyA", 100, 2), ("PartyB", 0, 3)]),
]


@pytest.mark.parametrize(("name", "seats", "votes", "initial", "descending", "expected"), WEBSTER_TABLE,
                         ids=[row[0] for row in WEBSTER_TABLE])
def test_allocate_webster_seats_upstream_table(name: str, seats: int, votes: dict[str, int],
                                               initial: dict[str, int] | None, descending: bool,
                                               expected: list[tuple[str, int, int]]) -> None:
    got = allocate_webster_seats(seats, votes, initial, names_descending=descending)
    assert [(p.name, p.votes, p.seats) for p in got] == expected
    assert allocate_one_at_a_time(seats, votes, initial, names_descending=descending) == expected


def test_example_allocate_webster_seats() -> None:
    # ExampleAllocateWebsterSeats: Alpha 1200, Beta 900, Gamma 400, 4 seats -> 2/1/1.
    got = allocate_webster_seats(4, {"Alpha": 1200, "Beta": 900, "Gamma": 400})
    assert [(p.name, p.seats) for p in got] == [("Alpha", 2), ("Beta", 1), ("Gamma", 1)]


def test_fnv32a_matches_go_hash_fnv() -> None:
    # Reference values of FNV-1a 32 (offset basis for "", and the published test vector for "a").
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert fnv32a(b"foobar") == 0xBF9CF968


def _uids() -> tuple[str, str]:
    odd = next(u for u in (f"uid-{i}" for i in range(100)) if fnv32a(u.encode()) & 1)
    even = next(u for u in (f"uid-{i}" for i in range(100)) if not fnv32a(u.encode()) & 1)
    return odd, even


def test_tie_breaker_by_uid_follows_hash_parity() -> None:
    odd, even = _uids()
    assert names_descending_by_uid("") is False
    assert names_descending_by_uid(odd) is True
    assert names_descending_by_uid(even) is False
    # Fewer seats still wins before the name, whatever the direction: "a" (votes 1, no seat) and "b" (votes 3,
    # one seat) have the same priority 1.
    got = allocate_webster_seats(1, {"a": 1, "b": 3}, {"b": 1}, names_descending=True)
    assert [p.seats for p in got] == [1, 1]


def test_uid_direction_decides_a_tie() -> None:
    odd, even = _uids()
    for uid, want in ((even, [1, 0]), (odd, [0, 1])):
        dispenser = Dispenser.new(1, None, uid)
        dispenser.allocate_by_weight([ClusterWeight("member1", 5), ClusterWeight("member2", 5)])
        assert [t.replicas for t in dispenser.result] == want


names_strategy = st.sampled_from([f"m{i}" for i in range(8)])
# Votes as dispensers see them: small and large static weights (up to int64), zero and negative available
# replicas (a dynamic weight whose int32 sum wrapped).
votes_strategy = st.dictionaries(names_strategy, st.one_of(st.integers(-20, 60), st.integers(1, 2**63 - 1),
                                                            st.integers(-(2**31), 2**31 - 1)), min_size=1)


@settings(max_examples=400, deadline=None)
@given(votes=votes_strategy, initial=st.dictionaries(names_strategy, st.integers(0, 40)),
       seats=st.one_of(st.integers(0, 60), st.integers(0, 3000)), descending=st.booleans())
def test_bulk_gives_the_seats_of_the_one_at_a_time_loop(votes: dict[str, int], initial: dict[str, int],
                                                        seats: int, descending: bool) -> None:
    got = allocate_webster_seats(seats, votes, initial, names_descending=descending)
    assert [(p.name, p.votes, p.seats) for p in got] == allocate_one_at_a_time(seats, votes, initial,
                                                                                names_descending=descending)


@settings(max_examples=60, deadline=None)
@given(votes=st.lists(st.integers(1, 40), min_size=100, max_size=400), seats=st.integers(0, 5000),
       descending=st.booleans())
def test_bulk_agrees_over_many_parties_with_many_ties(votes: list[int], seats: int, descending: bool) -> None:
    # Hundreds of parties with a few distinct weights: many seats are decided by the tie-breaker.
    named = {f"member{i:04d}": v for i, v in enumerate(votes)}
    got = allocate_webster_seats(seats, named, names_descending=descending)
    assert [(p.name, p.votes, p.seats) for p in got] == allocate_one_at_a_time(seats, named,
                                                                                names_descending=descending)


def test_priority_wraps_as_go_int32() -> None:
    # 2*Seats+1 in int32: 2^30 seats give -2^31+1, so a positive party's priority turns negative.
    assert priority(5, 2**30 - 1) == 5 / (2**31 - 1)
    assert priority(5, 2**30) == 5 / (-(2**31) + 1)
    assert priority(5, INT32_MAX) == -5.0
    assert priority(-5, 2**30) > 0


def test_huge_replica_counts() -> None:
    got = allocate_webster_seats(INT32_MAX, {"a": 3, "b": 5, "c": 7})
    assert sum(p.seats for p in got) == INT32_MAX
    # a's 429496730th seat and c's 1002159036th tie exactly (3/858993459 == 7/2004318071): fewer seats wins.
    assert [p.seats for p in got] == [429496730, 715827882, 1002159035]


# Answers of Karmada v1.18.2's own AllocateWebsterSeats (Go, nil tie-breaker) for 2^31-1 seats, run once (each
# takes minutes there): once a party holds 2^30 seats its priority is negative, and the others win.
GO_INT32_ANSWERS = [
    ({"a": 1000, "b": 1}, [1073741824, 1073741823]),
    ({"a": 1, "b": 0}, [1073741824, 1073741823]),
    ({"a": 7, "b": 0, "c": -3}, [1073741824, 1073741823, 0]),
    ({"a": 5, "b": 3, "c": -2, "d": -9}, [1073741824, 1073741823, 0, 0]),
]


@pytest.mark.parametrize(("votes", "want"), GO_INT32_ANSWERS, ids=[str(v) for v, _ in GO_INT32_ANSWERS])
def test_int32_wrap_matches_karmada(votes: dict[str, int], want: list[int]) -> None:
    assert [p.seats for p in allocate_webster_seats(INT32_MAX, votes)] == want


def test_seats_beyond_int32_are_refused() -> None:
    with pytest.raises(ValueError, match="int32"):
        allocate_webster_seats(10, {"a": 1}, {"a": INT32_MAX - 5})


def test_dispenser_weight_sum_wraps_as_int64() -> None:
    # Upstream's GetWeightSum is an int64 sum: these weights add up to 2^64, i.e. 0, and nothing is divided.
    dispenser = Dispenser.new(4, None, "")
    dispenser.allocate_by_weight([ClusterWeight("a", 2**63 - 1), ClusterWeight("b", 2**63 - 1),
                                  ClusterWeight("c", 2)])
    assert dispenser.result == [] and dispenser.num_replicas == 4
    dispenser.allocate_by_weight([ClusterWeight("a", 1), ClusterWeight("b", 3)])
    assert dispenser.result == [TargetCluster("a", 1), TargetCluster("b", 3)]


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
