"""Replica assignment, with upstream's (v1.18.2) assignment_test.go tables ported as data."""

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


# Test_dynamicScale of v1.18.2's assignment_test.go: (name, {cluster: available replicas}, replicas,
# current spec.clusters, scheduling, want or None=error).  A scale-up divides only the new replicas, by
# available replicas and from nothing, and adds them onto the current result (MergeTargetClusters).
DYNAMIC_SCALE_TABLE: list[tuple[str, dict[str, int], int, tuple[tuple[str, int], ...], dict[str, Any],
                                list[tuple[str, int]] | None]] = [
    ("replica 12 -> 6, dynamic weighted 1:1:1", {M1: 1, M2: 1, M3: 1}, 6, ((M1, 2), (M2, 4), (M3, 6)), DYNAMIC,
     [(M1, 1), (M2, 2), (M3, 3)]),
    ("replica 12 -> 24, dynamic weighted 10:10:10", {M1: 10, M2: 10, M3: 10}, 24, ((M1, 2), (M2, 4), (M3, 6)),
     DYNAMIC, [(M1, 6), (M2, 8), (M3, 10)]),
    ("replica 12 -> 24, dynamic weighted 1:1:1", {M1: 1, M2: 1, M3: 1}, 24, ((M1, 2), (M2, 4), (M3, 6)), DYNAMIC,
     None),
    ("replica 12 -> 6, aggregated 1:1:1", {M1: 1, M2: 1, M3: 1}, 6, ((M1, 4), (M2, 8)), AGGREGATED, [(M2, 6)]),
    ("replica 12 -> 8, aggregated 100:100", {M1: 100, M2: 100}, 8, ((M1, 4), (M2, 8)), AGGREGATED, [(M2, 8)]),
    ("replica 12 -> 24, aggregated 4:6:8", {M1: 4, M2: 6, M3: 8}, 24, ((M1, 4), (M2, 8)), AGGREGATED,
     [(M1, 7), (M2, 12), (M3, 5)]),
    ("replica 12 -> 24, aggregated 6:6:20", {M1: 6, M2: 6, M3: 20}, 24, ((M1, 4), (M2, 8)), AGGREGATED,
     [(M1, 10), (M2, 14)]),
    ("replica 12 -> 24, aggregated 1:1:1", {M1: 1, M2: 1, M3: 1}, 24, ((M1, 4), (M2, 8)), AGGREGATED, None),
    ("replica 12 -> 24, aggregated 4:8:12, with cluster2 disappeared and cluster4 appeared",
     {M1: 4, M3: 8, M4: 12}, 24, ((M1, 4), (M2, 8)), AGGREGATED, [(M1, 7), (M3, 7), (M4, 10)]),
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
    # member3 is gone: member1 keeps 6, the 6 others are divided 3:3 from nothing and merged: 9/3.
    ("replica 12, dynamic weight 3:3, with cluster3 disappeared and cluster2 appeared", {M1: 3, M2: 3}, 12,
     ((M1, 6), (M3, 6)), DYNAMIC, [(M1, 9), (M2, 3)]),
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
    got = assign_replicas([pods_cluster("cluster1", 1), pods_cluster("cluster2", 1)],
                          binding(0, requirements=False), placement(DYNAMIC), cal_available_replicas)
    assert pairs(got) == [("cluster1", 0), ("cluster2", 0)]


def test_zero_replicas_with_requirements_is_a_workload_placed_nowhere() -> None:
    # IsWorkload: replicaRequirements make it a workload even at 0 replicas; every cluster gets 0 and
    # zero-replica clusters are dropped, so the result is empty.
    got = assign_replicas([pods_cluster("cluster1", 1), pods_cluster("cluster2", 1)],
                          binding(0, request={"cpu": "1"}), placement(DYNAMIC), cal_available_replicas)
    assert pairs(got) == []


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


def test_capacity_error_is_upstreams() -> None:
    with pytest.raises(UnschedulableError) as caught:
        _assign([pods_cluster(M1, 4), pods_cluster(M2, 3)], 10, DYNAMIC)
    assert caught.value.message == "failed to scale up: Clusters available replicas 7 are not enough to schedule."


def test_capacity_error_on_scale_up_counts_the_free_replicas_only() -> None:
    with pytest.raises(UnschedulableError) as caught:
        _assign([pods_cluster(M1, 1), pods_cluster(M2, 0)], 10, DYNAMIC, ((M1, 4),))
    assert caught.value.message == "failed to scale up: Clusters available replicas 1 are not enough to schedule."


def test_steady_unchanged_replicas_keep_the_current_result() -> None:
    assert _assign([pods_cluster(M1, 0), pods_cluster(M2, 0)], 6, DYNAMIC, ((M1, 2), (M2, 4))) == [(M1, 2), (M2, 4)]


def test_scale_down_weights_only_clusters_still_candidates() -> None:
    # dynamicScaleDown (v1.17+) weights the current clusters that are still candidates: member3 is no
    # longer one, so its replicas go and 4 seats are divided 3:3 between member1 and member2.
    got = _assign([pods_cluster(M1, 0), pods_cluster(M2, 0)], 4, DYNAMIC, ((M1, 3), (M2, 3), (M3, 4)))
    assert got == [(M1, 2), (M2, 2)]


def test_failover_replaces_an_evicted_cluster() -> None:
    # member2 was evicted (not a candidate any more): its 4 replicas are a scale-up, divided 10:10 from
    # nothing (2/2) and added onto member1's 4.
    got = _assign([pods_cluster(M1, 10), pods_cluster(M3, 10)], 8, DYNAMIC, ((M1, 4), (M2, 4)))
    assert got == [(M1, 6), (M3, 2)]


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
