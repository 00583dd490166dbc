"""Replica assignment, with upstream's assignment_test.go tables ported as data.

Upstream's tables were written for the division used before the Webster method (floor of the share,
remainder by weight).  Rows whose answer Webster changes carry the Webster answer, worked out by hand in
the comment, and the old answer after ``legacy``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mc_helpers import (
    AGGREGATED,
    DUPLICATED,
    DYNAMIC,
    binding,
    cluster,
    fixed_capacity,
    pairs,
    placement,
    pods_cluster,
    static,
)

from extender.multicluster.division import (
    AssignError,
    UnschedulableError,
    assign_replicas,
    fnv32a,
    reschedule_required,
    strategy_of,
)
from extender.multicluster.estimator import cal_available_replicas
from extender.multicluster.model import Cluster

M1, M2, M3, M4 = "member1", "member2", "member3", "member4"


def _assign(candidates: list[Cluster], replicas: int, scheduling: dict[str, Any],
            clusters: tuple[tuple[str, int], ...] = (), **kwargs: Any) -> list[tuple[str, int]]:
    b = binding(replicas, clusters=clusters, **kwargs)
    return sorted(pairs(assign_replicas(candidates, b, placement(scheduling), cal_available_replicas)))


# Test_assignByStaticWeightStrategy: (name, clusters, weights or None for the default, replicas, want).
STATIC_TABLE: list[tuple[str, list[str], dict[str, Any] | None, int, list[tuple[str, int]]]] = [
    ("replica 12, weight 3:2:1", [M1, M2, M3], {M1: 3, M2: 2, M3: 1}, 12, [(M1, 6), (M2, 4), (M3, 2)]),
    ("replica 12, default weight", [M1, M2, M3], None, 12, [(M1, 4), (M2, 4), (M3, 4)]),
    # 14 seats at 3:2:1: quotas 7, 4.67, 2.33; Webster rounds them to 7/5/2 (legacy floor-then-weight 8/4/2).
    ("replica 14, weight 3:2:1", [M1, M2, M3], {M1: 3, M2: 2, M3: 1}, 14, [(M1, 7), (M2, 5), (M3, 2)]),
    ("selected cluster without weight should be ignored", [M1, M2], {M1: 1}, 2, [(M1, 2)]),
]


@pytest.mark.parametrize(("name", "names", "weights", "replicas", "want"), STATIC_TABLE,
                         ids=[row[0] for row in STATIC_TABLE])
def test_static_weight_upstream_table(name: str, names: list[str], weights: dict[str, int] | None, replicas: int,
                                      want: list[tuple[str, int]]) -> None:
    scheduling = static(weights) if weights is not None else {
        "replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}
    assert _assign([pods_cluster(n, 100) for n in names], replicas, scheduling) == want


def test_static_weight_cluster_with_multiple_weights_takes_the_largest() -> None:
    # "cluster with multiple weights": member1 matched by weight 1 and weight 2 -> 2; 3 replicas -> 2:1.
    scheduling = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                  "weightPreference": {"staticWeightList": [
                      {"targetCluster": {"clusterNames": [M1]}, "weight": 1},
                      {"targetCluster": {"clusterNames": [M2]}, "weight": 1},
                      {"targetCluster": {"clusterNames": [M1]}, "weight": 2}]}}
    assert _assign([pods_cluster(M1, 1), pods_cluster(M2, 1)], 3, scheduling) == [(M1, 2), (M2, 1)]


def test_static_weight_without_matching_rule_weights_everyone_one() -> None:
    assert _assign([pods_cluster(M1, 1), pods_cluster(M2, 1)], 4, static({"other": 5})) == [(M1, 2), (M2, 2)]


def test_static_weight_ignores_capacity() -> None:
    # Static weights never consult the estimator: a cluster with no room still gets its share.
    assert _assign([pods_cluster(M1, 0), pods_cluster(M2, 0)], 4, static({M1: 1, M2: 1})) == [(M1, 2), (M2, 2)]


# Test_dynamicScale: (name, {cluster: pods}, replicas, current spec.clusters, scheduling, want or None=error).
DYNAMIC_SCALE_TABLE: list[tuple[str, dict[str, int], int, tuple[tuple[str, int], ...], dict[str, Any],
                                list[tuple[str, int]] | None]] = [
    ("replica 12 -> 6, dynamic weighted 1:1:1", {M1: 1, M2: 1, M3: 1}, 6, ((M1, 2), (M2, 4), (M3, 6)), DYNAMIC,
     [(M1, 1), (M2, 2), (M3, 3)]),
    # 12 new replicas on top of 2/4/6 with 10 free each: member1 (2 held, priority 10/5) is served
    # first, and the held replicas count in every priority, so all end at 8 (legacy 6/8/10).
    ("replica 12 -> 24, dynamic weighted 10:10:10", {M1: 10, M2: 10, M3: 10}, 24, ((M1, 2), (M2, 4), (M3, 6)),
     DYNAMIC, [(M1, 8), (M2, 8), (M3, 8)]),
    ("replica 12 -> 24, dynamic weighted 1:1:1", {M1: 1, M2: 1, M3: 1}, 24, ((M1, 2), (M2, 4), (M3, 6)), DYNAMIC,
     None),
    ("replica 12 -> 6, aggregated 1:1:1", {M1: 1, M2: 1, M3: 1}, 6, ((M1, 4), (M2, 8)), AGGREGATED, [(M2, 6)]),
    ("replica 12 -> 8, aggregated 100:100", {M1: 100, M2: 100}, 8, ((M1, 4), (M2, 8)), AGGREGATED, [(M2, 8)]),
    # Used clusters first (member2 6, member1 4), then member3 8: all three needed for 12 more.  Webster
    # with 4 and 8 held: member3 takes 9 seats (8/19 < 4/9), member1 one, member3 two more (legacy 6/12/6).
    ("replica 12 -> 24, aggregated 4:6:8", {M1: 4, M2: 6, M3: 8}, 24, ((M1, 4), (M2, 8)), AGGREGATED,
     [(M1, 5), (M2, 8), (M3, 11)]),
    # member1 and member2 (6 free each) cover 12; member1 (4 held) catches member2 (8 held) then they
    # alternate: 12/12 (legacy 10/14).
    ("replica 12 -> 24, aggregated 6:6:20", {M1: 6, M2: 6, M3: 20}, 24, ((M1, 4), (M2, 8)), AGGREGATED,
     [(M1, 12), (M2, 12)]),
    ("replica 12 -> 24, aggregated 1:1:1", {M1: 1, M2: 1, M3: 1}, 24, ((M1, 4), (M2, 8)), AGGREGATED, None),
    # member2 is gone: its 8 replicas are placed again.  member1 keeps 4; 20 more over member4 12 and
    # member3 8 fill both exactly (legacy 7/6/11).
    ("replica 12 -> 24, aggregated 4:8:12, with cluster2 disappeared and cluster4 appeared",
     {M1: 4, M3: 8, M4: 12}, 24, ((M1, 4), (M2, 8)), AGGREGATED, [(M1, 4), (M3, 8), (M4, 12)]),
]


@pytest.mark.parametrize(("name", "pods", "replicas", "current", "scheduling", "want"), DYNAMIC_SCALE_TABLE,
                         ids=[row[0] for row in DYNAMIC_SCALE_TABLE])
def test_dynamic_scale_upstream_table(name: str, pods: dict[str, int], replicas: int,
                                      current: tuple[tuple[str, int], ...], scheduling: dict[str, Any],
                                      want: list[tuple[str, int]] | None) -> None:
    candidates = [pods_cluster(n, p) for n, p in pods.items()]
    if want is None:
        with pytest.raises(UnschedulableError):
            _assign(candidates, replicas, scheduling, current)
    else:
        assert _assign(candidates, replicas, scheduling, current) == want


# Test_dynamicScaleUp (first schedules and a replaced cluster).
SCALE_UP_TABLE: list[tuple[str, dict[str, int], int, tuple[tuple[str, int], ...], dict[str, Any],
                           list[tuple[str, int]] | None]] = [
    ("replica 12, dynamic weight 6:8:10", {M1: 6, M2: 8, M3: 10}, 12, (), DYNAMIC, [(M1, 3), (M2, 4), (M3, 5)]),
    # Webster on 8:8:10 gives 4/4/4 (quotas 3.69/3.69/4.62); legacy gave 3 or 4 / 4 or 3 / 5 at random.
    ("replica 12, dynamic weight 8:8:10", {M1: 8, M2: 8, M3: 10}, 12, (), DYNAMIC, [(M1, 4), (M2, 4), (M3, 4)]),
    ("replica 12, dynamic weight 3:3:3", {M1: 3, M2: 3, M3: 3}, 12, (), DYNAMIC, None),
    ("replica 12, aggregated 6:8:10", {M1: 6, M2: 8, M3: 10}, 12, (), AGGREGATED, [(M2, 5), (M3, 7)]),
    ("replica 12, aggregated 12:8:10", {M1: 12, M2: 8, M3: 10}, 12, (), AGGREGATED, [(M1, 12)]),
    ("replica 12, aggregated 3:3:3", {M1: 3, M2: 3, M3: 3}, 12, (), AGGREGATED, None),
    # member3 is gone: member1 keeps 6, the 6 others go to member2 (3 free) and member1 (3 free); with
    # member1's 6 held counted, member2 wins all six (legacy 9/3).
    ("replica 12, dynamic weight 3:3, with cluster3 disappeared and cluster2 appeared", {M1: 3, M2: 3}, 12,
     ((M1, 6), (M3, 6)), DYNAMIC, [(M1, 6), (M2, 6)]),
]


@pytest.mark.parametrize(("name", "pods", "replicas", "current", "scheduling", "want"), SCALE_UP_TABLE,
                         ids=[row[0] for row in SCALE_UP_TABLE])
def test_dynamic_scale_up_upstream_table(name: str, pods: dict[str, int], replicas: int,
                                         current: tuple[tuple[str, int], ...], scheduling: dict[str, Any],
                                         want: list[tuple[str, int]] | None) -> None:
    test_dynamic_scale_upstream_table(name, pods, replicas, current, scheduling, want)


def test_duplicated_gives_every_candidate_all_replicas_in_candidate_order() -> None:
    # Test_assignByDuplicatedStrategy.
    got = assign_replicas([pods_cluster("cluster2", 0), pods_cluster("cluster1", 0)], binding(2),
                          placement(DUPLICATED), cal_available_replicas)
    assert pairs(got) == [("cluster2", 2), ("cluster1", 2)]


def test_non_workload_gets_every_candidate_with_zero_replicas() -> None:
    got = assign_replicas([pods_cluster("cluster1", 1), pods_cluster("cluster2", 1)], binding(0),
                          placement(DYNAMIC), cal_available_replicas)
    assert pairs(got) == [("cluster1", 0), ("cluster2", 0)]


def test_no_candidates_is_an_error() -> None:
    with pytest.raises(AssignError, match="no clusters available to schedule"):
        assign_replicas([], binding(3), placement(DYNAMIC), cal_available_replicas)


def test_unsupported_strategy_message() -> None:
    raw = placement(DYNAMIC)
    from dataclasses import replace

    assert raw.replica_scheduling is not None
    broken = replace(raw, replica_scheduling=replace(raw.replica_scheduling, division_preference="Spread"))
    assert strategy_of(broken) is None
    with pytest.raises(AssignError, match="unsupported replica scheduling strategy, replicaSchedulingType: "
                                          "Divided, replicaDivisionPreference: Spread"):
        assign_replicas([pods_cluster(M1, 5)], binding(3), broken, cal_available_replicas)


def test_capacity_error_names_what_each_cluster_can_hold() -> None:
    with pytest.raises(UnschedulableError) as caught:
        _assign([pods_cluster(M1, 4), pods_cluster(M2, 3)], 10, DYNAMIC)
    assert caught.value.detail == "clusters can hold at most 7 of 10 replicas: member1 4, member2 3"
    assert caught.value.message == "failed to scale up: Clusters available replicas 7 are not enough to schedule."


def test_capacity_error_on_scale_up_counts_what_is_placed() -> None:
    with pytest.raises(UnschedulableError) as caught:
        _assign([pods_cluster(M1, 1), pods_cluster(M2, 0)], 10, DYNAMIC, ((M1, 4),))
    assert caught.value.detail == ("clusters can hold at most 1 more of the 6 replicas still to place "
                                   "(4 of 10 already placed): member1 1, member2 0")


def test_steady_unchanged_replicas_keep_the_current_result() -> None:
    assert _assign([pods_cluster(M1, 0), pods_cluster(M2, 0)], 6, DYNAMIC, ((M1, 2), (M2, 4))) == [(M1, 2), (M2, 4)]


def test_scale_down_keeps_non_candidate_clusters_as_weights() -> None:
    # Upstream scales down by spec.clusters as a whole, a cluster that is no longer a candidate included:
    # Webster over 3:3:4 for 4 seats gives member3 two of them.
    got = _assign([pods_cluster(M1, 0), pods_cluster(M2, 0)], 4, DYNAMIC, ((M1, 3), (M2, 3), (M3, 4)))
    assert got == [(M1, 1), (M2, 1), (M3, 2)]


def test_failover_replaces_an_evicted_cluster() -> None:
    # member2 was evicted (not a candidate any more): its 4 replicas are a scale-up onto the others.
    got = _assign([pods_cluster(M1, 10), pods_cluster(M3, 10)], 8, DYNAMIC, ((M1, 4), (M2, 4)))
    assert got == [(M1, 4), (M3, 4)]


def test_fresh_reschedule_divides_everything_again() -> None:
    # rescheduleTriggeredAt after lastScheduledTime: capacity 10 + held 8 for member1, 10 for member2.
    kwargs = {"reschedule_at": "2026-03-02T00:00:00Z", "last_scheduled": "2026-03-01T00:00:00Z"}
    got = _assign([pods_cluster(M1, 10), pods_cluster(M2, 10)], 10, DYNAMIC, ((M1, 8), (M2, 2)), **kwargs)
    # Webster over 18:12 for 10 seats -> 6/4 (steady mode would have kept 8/2).
    assert got == [(M1, 6), (M2, 4)]
    assert _assign([pods_cluster(M1, 10), pods_cluster(M2, 10)], 10, DYNAMIC, ((M1, 8), (M2, 2))) == [(M1, 8), (M2, 2)]


def test_reschedule_required_needs_both_times() -> None:
    assert not reschedule_required(binding(1, reschedule_at="2026-01-02T00:00:00Z"))
    assert not reschedule_required(binding(1, last_scheduled="2026-01-02T00:00:00Z"))
    assert not reschedule_required(binding(1, reschedule_at="2026-01-01T00:00:00Z",
                                           last_scheduled="2026-01-02T00:00:00Z"))
    assert reschedule_required(binding(1, reschedule_at="2026-01-03T00:00:00Z",
                                       last_scheduled="2026-01-02T00:00:00Z"))


def test_aggregated_prefers_clusters_already_used() -> None:
    # member1 already runs the workload: it comes first and covers the 6 new replicas alone, although
    # member2 has more room (without the resort, member2 would take them all).
    assert _assign([pods_cluster(M1, 10), pods_cluster(M2, 50)], 8, AGGREGATED, ((M1, 2),)) == [(M1, 8)]
    assert _assign([pods_cluster(M1, 10), pods_cluster(M2, 50)], 6, AGGREGATED) == [(M2, 6)]


def test_equal_capacity_ties_follow_the_uid() -> None:
    odd = next(u for u in (f"uid-{i}" for i in range(100)) if fnv32a(u.encode()) & 1)
    even = next(u for u in (f"uid-{i}" for i in range(100)) if not fnv32a(u.encode()) & 1)
    candidates = [pods_cluster(M1, 10), pods_cluster(M2, 10)]
    assert _assign(candidates, 3, DYNAMIC, uid=even) == [(M1, 2), (M2, 1)]
    assert _assign(candidates, 3, DYNAMIC, uid=odd) == [(M1, 1), (M2, 2)]


# ----------------------------------------------------------------------------- properties

names = [f"m{i}" for i in range(5)]
capacities = st.dictionaries(st.sampled_from(names), st.integers(0, 40), min_size=1)


def _capacity_clusters(capacity: dict[str, int]) -> list[Cluster]:
    return [cluster(n, pods=None) for n in sorted(capacity)]


@settings(max_examples=150, deadline=None)
@given(capacity=capacities, replicas=st.integers(1, 120), aggregated=st.booleans(),
       uid=st.text(alphabet="abcdef0123456789-", max_size=12))
def test_first_schedule_respects_capacity_and_total(capacity: dict[str, int], replicas: int, aggregated: bool,
                                                    uid: str) -> None:
    b = binding(replicas, uid=uid)
    pl = placement(AGGREGATED if aggregated else DYNAMIC)
    calc = fixed_capacity(capacity)
    if sum(capacity.values()) < replicas:
        with pytest.raises(UnschedulableError):
            assign_replicas(_capacity_clusters(capacity), b, pl, calc)
        return
    got = dict(pairs(assign_replicas(_capacity_clusters(capacity), b, pl, calc)))
    assert sum(got.values()) == replicas
    assert all(0 < r <= capacity[n] for n, r in got.items())
    # The same UID always gives the same answer.
    again = dict(pairs(assign_replicas(_capacity_clusters(capacity), b, pl, calc)))
    assert again == got


@settings(max_examples=150, deadline=None)
@given(weights=st.dictionaries(st.sampled_from(names), st.integers(1, 20), min_size=1),
       replicas=st.integers(1, 200), uid=st.text(alphabet="0123456789abcdef", max_size=8))
def test_static_weights_are_respected(weights: dict[str, int], replicas: int, uid: str) -> None:
    b = binding(replicas, uid=uid)
    pl = placement(static(weights))
    got = dict(pairs(assign_replicas(_capacity_clusters(weights), b, pl, fixed_capacity({}))))
    assert sum(got.values()) == replicas
    share = {n: got.get(n, 0) for n in weights}
    # A divisor method: no replica given is worth less than one withheld, and a lighter cluster never
    # gets more than a heavier one.
    for a in weights:
        for c in weights:
            if a != c and share[a] > 0:
                assert (2 * share[a] - 1) * weights[c] <= (2 * share[c] + 1) * weights[a]
    for a in weights:
        for c in weights:
            if weights[a] > weights[c]:
                assert share[a] >= share[c]
    more = dict(pairs(assign_replicas(_capacity_clusters(weights), binding(replicas + 1, uid=uid), pl,
                                      fixed_capacity({}))))
    assert all(more.get(n, 0) >= share[n] for n in weights)


@settings(max_examples=100, deadline=None)
@given(capacity=capacities, first=st.integers(1, 60), second=st.integers(1, 120))
def test_steady_scaling_sums_to_the_target(capacity: dict[str, int], first: int, second: int) -> None:
    calc = fixed_capacity(capacity)
    pl = placement(DYNAMIC)
    candidates = _capacity_clusters(capacity)
    try:
        start = assign_replicas(candidates, binding(first), pl, calc)
    except UnschedulableError:
        return
    current = tuple(pairs(start))
    try:
        got = assign_replicas(candidates, binding(second, clusters=current), pl, calc)
    except UnschedulableError:
        assert second - first > sum(capacity.values())
        return
    assert sum(t.replicas for t in got) == second
    if second < first:
        held = dict(current)
        assert all(t.replicas <= held[t.name] for t in got)
