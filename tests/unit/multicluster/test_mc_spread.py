"""Spread-constraint selection, with upstream's select_groups_test.go table and documented examples."""

from __future__ import annotations

from typing import Any

import pytest
from mc_helpers import DUPLICATED, DYNAMIC, binding, cluster, fixed_capacity, placement, static

from extender.multicluster.model import Cluster
from extender.multicluster.spread import (
    ClusterDetail,
    GroupInfo,
    SelectError,
    _group_score,
    group_clusters,
    select_best_clusters,
    select_groups,
)

G = GroupInfo

# TestSelectGroups: (name, groups, min, max, target, expected names).
SELECT_GROUPS_TABLE: list[tuple[str, list[GroupInfo], int, int, int, list[str]]] = [
    ("empty groups", [], 2, 3, 1, []),
    ("no enough groups", [G("R1", 1, 80)], 2, 3, 1, []),
    ("no enough value", [G("R1", 1, 80), G("R2", 2, 30)], 2, 3, 4, []),
    ("select one group", [G("R1", 1, 80)], 1, 3, 1, ["R1"]),
    ("prioritize one path", [G("R1", 1, 80), G("R3", 1, 80), G("R2", 1, 60), G("R5", 2, 60), G("R4", 5, 50),
                             G("R6", 3, 50)], 1, 3, 10, ["R5", "R4", "R6"]),
    ("select groups with less total number", [G("R1", 1, 80), G("R2", 4, 40), G("R3", 1, 30), G("R4", 3, 30),
                                              G("R5", 3, 20), G("R6", 5, 10)], 2, 6, 5, ["R1", "R2"]),
    ("select groups with the highest score", [G("R1", 1, 60), G("R2", 1, 50), G("R3", 1, 40), G("R4", 3, 30),
                                              G("R5", 3, 20), G("R6", 3, 10)], 1, 3, 6, ["R1", "R4", "R5"]),
    ("select groups that are chosen earlier", [G("R1", 1, 60), G("R2", 2, 50), G("R3", 3, 40), G("R4", 4, 30)],
     1, 2, 5, ["R1", "R4"]),
    ("select groups with greater value", [G("R4", 1, 60), G("R3", 3, 50), G("R1", 3, 40), G("R2", 4, 30)],
     1, 2, 5, ["R3", "R1"]),
]


@pytest.mark.parametrize(("name", "groups", "low", "high", "target", "expected"), SELECT_GROUPS_TABLE,
                         ids=[r[0] for r in SELECT_GROUPS_TABLE])
def test_select_groups_upstream_table(name: str, groups: list[GroupInfo], low: int, high: int, target: int,
                                      expected: list[str]) -> None:
    assert [g.name for g in select_groups(groups, low, high, target)] == expected


def _details(rows: list[tuple[int, int]]) -> list[ClusterDetail]:
    return [ClusterDetail(cluster(f"member{i + 1}"), score, available) for i, (score, available) in enumerate(rows)]


# calcGroupScore's documented examples (group_clusters.go), replicas 100 (Divided) or 50 (Duplicated).
def test_group_score_divided_examples() -> None:
    pl = placement(DYNAMIC, spreadConstraints=[{"spreadByField": "region", "minGroups": 2},
                                               {"spreadByField": "cluster", "minGroups": 1}])
    b = binding(100)
    assert _group_score(_details([(100, 10), (100, 10), (100, 10), (100, 10), (100, 5)]), b, pl, 2) == 45100
    assert _group_score(_details([(0, 40), (0, 30), (0, 10), (0, 10)]), b, pl, 2) == 50000
    assert _group_score(_details([(100, 40), (100, 40), (100, 10), (100, 10), (100, 5)]), b, pl, 2) == 50100
    assert _group_score(_details([(0, 100), (0, 100), (0, 10), (0, 10)]), b, pl, 2) == 50000


def test_group_score_duplicated_examples() -> None:
    pl = placement(DUPLICATED)
    b = binding(50)
    assert _group_score(_details([(100, 60), (100, 70), (100, 40), (100, 30), (100, 10)]), b, pl, 1) == 2100
    assert _group_score(_details([(0, 60), (0, 60), (0, 60), (0, 60)]), b, pl, 1) == 4000
    assert _group_score(_details([(100, 60), (100, 70), (100, 10), (100, 10), (100, 5)]), b, pl, 1) == 2100
    assert _group_score(_details([(0, 100), (0, 100), (0, 10), (0, 10)]), b, pl, 1) == 2000
    # Upstream divides by zero when no cluster can hold all replicas; the group scores 0 here.
    assert _group_score(_details([(100, 1)]), b, pl, 1) == 0


def _select(scores: dict[str, int], capacity: dict[str, int], replicas: int, scheduling: dict[str, Any],
            constraints: list[dict[str, Any]], clusters: list[Cluster] | None = None,
            current: tuple[tuple[str, int], ...] = ()) -> list[str]:
    pl = placement(scheduling, spreadConstraints=constraints)
    b = binding(replicas, clusters=current)
    cs = clusters or [cluster(n) for n in capacity]
    info = group_clusters(scores, cs, b, pl, fixed_capacity(capacity))
    return [c.name for c in select_best_clusters(pl, info, replicas)]


def test_by_cluster_swaps_the_tail_for_capacity() -> None:
    # select_clusters_by_cluster.go: maxGroups 2, 80 replicas; member1/member2 score highest but hold 70,
    # so member2 is swapped for member3.
    got = _select({"member1": 60, "member2": 50, "member3": 40}, {"member1": 40, "member2": 30, "member3": 60}, 80,
                  DYNAMIC, [{"spreadByField": "cluster", "maxGroups": 2, "minGroups": 1}])
    assert got == ["member1", "member3"]


def test_by_cluster_orders_by_score_then_capacity_then_name() -> None:
    got = _select({"a": 0, "b": 0, "c": 100}, {"a": 5, "b": 9, "c": 1}, 3, DYNAMIC,
                  [{"spreadByField": "cluster", "maxGroups": 2}])
    assert got == ["c", "b"]


def test_by_cluster_errors() -> None:
    with pytest.raises(SelectError, match=r"the number of feasible clusters is less than spreadConstraint\.MinGroups"):
        _select({}, {"a": 5}, 3, DYNAMIC, [{"spreadByField": "cluster", "minGroups": 2, "maxGroups": 3}])
    with pytest.raises(SelectError, match="no enough resource when selecting 2 clusters"):
        _select({}, {"a": 1, "b": 1, "c": 1}, 5, DYNAMIC, [{"spreadByField": "cluster", "maxGroups": 2}])


def test_by_cluster_duplicated_ignores_capacity() -> None:
    assert _select({}, {"a": 0, "b": 0}, 5, DUPLICATED, [{"spreadByField": "cluster", "maxGroups": 1}]) == ["a"]


def test_static_weight_ignores_spread_constraints() -> None:
    got = _select({}, {"a": 0, "b": 0, "c": 0}, 5, static({"a": 1}), [{"spreadByField": "cluster", "maxGroups": 1}])
    assert got == ["a", "b", "c"]


def test_zone_and_provider_do_not_select() -> None:
    with pytest.raises(SelectError, match="just support cluster and region spread constraint"):
        pl = placement(DYNAMIC, spreadConstraints=[{"spreadByLabel": "topology/rack"}])
        info = group_clusters({}, [cluster("a")], binding(1), pl, fixed_capacity({"a": 1}))
        select_best_clusters(pl, info, 1)


def test_by_region_best_cluster_per_region_then_fill() -> None:
    clusters = [cluster("a1", region="r1"), cluster("a2", region="r1"), cluster("b1", region="r2"),
                cluster("c1", region="r3"), cluster("c2", region="r3"), cluster("c3", region="r3")]
    capacity = {"a1": 10, "a2": 9, "b1": 50, "c1": 4, "c2": 3, "c3": 2}
    constraints = [{"spreadByField": "region", "minGroups": 2, "maxGroups": 2},
                   {"spreadByField": "cluster", "minGroups": 3, "maxGroups": 4}]
    # Region scores (20 replicas, target 10 per region): r1 10000, r2 10000, r3 9000.  Paths of two regions
    # with >= 3 clusters: [r1, r3] and [r2, r3]... and [r1, r2] has 3 clusters too; the heaviest is
    # [r1, r2] (20000).  Best cluster of each, then the rest by capacity up to 4 clusters.
    got = _select({}, capacity, 20, DYNAMIC, constraints, clusters)
    assert got == ["a1", "b1", "a2"]


def test_by_region_errors() -> None:
    clusters = [cluster("a1", region="r1"), cluster("b1", region="r2")]
    with pytest.raises(SelectError, match=r"the number of feasible region is less than spreadConstraint\.MinGroups"):
        _select({}, {"a1": 5, "b1": 5}, 2, DYNAMIC, [{"spreadByField": "region", "minGroups": 3, "maxGroups": 3},
                                                     {"spreadByField": "cluster", "maxGroups": 3}], clusters)
    with pytest.raises(SelectError, match="the number of clusters is less than the cluster spreadConstraint"):
        _select({}, {"a1": 5, "b1": 5}, 2, DYNAMIC, [{"spreadByField": "region", "minGroups": 1, "maxGroups": 2},
                                                     {"spreadByField": "cluster", "minGroups": 3, "maxGroups": 3}],
                clusters)


def test_current_replicas_count_as_available() -> None:
    pl = placement(DYNAMIC)
    info = group_clusters({}, [cluster("a"), cluster("b")], binding(5, clusters=[("b", 4)]), pl,
                          fixed_capacity({"a": 3, "b": 1}))
    assert [(d.name, d.available) for d in info.clusters] == [("b", 5), ("a", 3)]
