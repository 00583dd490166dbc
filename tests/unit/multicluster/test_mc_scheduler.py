"""The whole pipeline: filter, score, select, assign; clusterAffinities fallback, overflow tiers, errors."""

from __future__ import annotations

from typing import Any

from mc_helpers import AGGREGATED, DUPLICATED, DYNAMIC, binding, cluster, fixed_capacity, pairs, static

from extender.multicluster.model import parse_placement
from extender.multicluster.scheduler import fit_error, schedule

TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


def _placement(**fields: Any) -> Any:
    return parse_placement(fields)


def test_fit_error_histogram_is_sorted() -> None:
    clusters = [cluster("a", apis=[]), cluster("b"), cluster("c")]
    result = schedule(clusters, binding(3), _placement(clusterAffinity={"clusterNames": ["a"]},
                                                      replicaScheduling=DYNAMIC))
    assert result.clusters == []
    assert result.error == ("0/3 clusters are available: 1 cluster(s) did not have the API resource, "
                            "2 cluster(s) did not match the placement cluster affinity constraint.")
    assert result.filtered == {
        "a": ["cluster(s) did not have the API resource"],
        "b": ["cluster(s) did not match the placement cluster affinity constraint"],
        "c": ["cluster(s) did not match the placement cluster affinity constraint"],
    }


def test_no_cluster_at_all() -> None:
    assert schedule([], binding(1), _placement()).error == "0/0 clusters are available: no cluster exists."
    assert fit_error(2, {}) == "0/2 clusters are available: no cluster exists."


def test_capacity_error_message() -> None:
    clusters = [cluster("member1", pods=4), cluster("member2", pods=3)]
    result = schedule(clusters, binding(10), _placement(replicaScheduling=DYNAMIC))
    assert result.error == ("failed to assign replicas: failed to scale up: Clusters available replicas 7 are not "
                            "enough to schedule.")
    assert result.available == {"member1": 4, "member2": 3}
    assert result.as_dict() == {"clusters": [], "filtered": {}, "error": result.error}


def test_select_error_message() -> None:
    result = schedule([cluster("a")], binding(1), _placement(
        replicaScheduling=DYNAMIC, spreadConstraints=[{"spreadByField": "cluster", "minGroups": 2, "maxGroups": 2}]))
    assert result.error == ("failed to select clusters: the number of feasible clusters is less than "
                            "spreadConstraint.MinGroups")


def test_binding_without_placement() -> None:
    assert "no placement" in schedule([cluster("a")], binding(1)).error


def test_binding_placement_is_used_without_policy() -> None:
    b = binding(4, placement={"replicaScheduling": static({"a": 1, "b": 1})})
    assert pairs(schedule([cluster("a"), cluster("b")], b).clusters) == [("a", 2), ("b", 2)]


def test_no_replica_scheduling_means_duplicated_in_candidate_order() -> None:
    clusters = [cluster("a", pods=5), cluster("b", pods=50), cluster("c", pods=20, taints=[TAINT])]
    result = schedule(clusters, binding(3), _placement())
    # Candidates are ordered by score, then available replicas, then name.
    assert pairs(result.clusters) == [("b", 3), ("a", 3)]
    assert result.filtered == {"c": ["cluster(s) had untolerated taint {dedicated=gpu:NoSchedule}"]}


def test_duplicated_explicit() -> None:
    result = schedule([cluster("a"), cluster("b")], binding(2), _placement(replicaScheduling=DUPLICATED))
    assert sorted(pairs(result.clusters)) == [("a", 2), ("b", 2)]


def test_locality_keeps_current_clusters_first() -> None:
    # b already runs the workload: ClusterLocality scores it 100, so cluster spread picks it over a.
    clusters = [cluster("a", pods=100), cluster("b", pods=5)]
    pl = _placement(replicaScheduling=AGGREGATED, spreadConstraints=[{"spreadByField": "cluster", "maxGroups": 1}])
    result = schedule(clusters, binding(4, clusters=[("b", 2)]), pl)
    assert result.scores == {"a": 0, "b": 100}
    assert pairs(result.clusters) == [("b", 4)]


def test_cluster_affinities_fall_back_to_the_next_term() -> None:
    pl = _placement(clusterAffinities=[{"affinityName": "small", "clusterNames": ["a"]},
                                       {"affinityName": "big", "clusterNames": ["a", "b"]}],
                    replicaScheduling=DYNAMIC)
    clusters = [cluster("a", pods=2), cluster("b", pods=10)]
    result = schedule(clusters, binding(6), pl)
    assert result.affinity_name == "big"
    assert sum(r for _n, r in pairs(result.clusters)) == 6


def test_cluster_affinities_start_from_the_observed_term_and_report_the_first_error() -> None:
    pl = _placement(clusterAffinities=[{"affinityName": "one", "clusterNames": ["a"]},
                                       {"affinityName": "two", "clusterNames": ["b"]},
                                       {"affinityName": "three", "clusterNames": ["c"]}],
                    replicaScheduling=DYNAMIC)
    clusters = [cluster("a", pods=10), cluster("b", pods=1), cluster("c", pods=1)]
    started_at_two = schedule(clusters, binding(5, observed_affinity="two"), pl)
    assert not started_at_two.ok
    assert started_at_two.affinity_name == "two"
    assert started_at_two.error == ("failed to assign replicas: failed to scale up: Clusters available replicas 1 "
                                    "are not enough to schedule.")
    assert schedule(clusters, binding(5), pl).affinity_name == "one"


OVERFLOW = {"clusterAffinities": [{"affinityName": "idc", "clusterNames": ["a"],
                                   "overflowAffinities": [{"affinityName": "cloud", "clusterNames": ["b", "c"]}]}],
            "replicaScheduling": DYNAMIC}


def test_overflow_fills_the_primary_tier_first() -> None:
    clusters = [cluster("a", pods=3), cluster("b", pods=10), cluster("c", pods=10)]
    result = schedule(clusters, binding(2), _placement(**OVERFLOW))
    assert pairs(result.clusters) == [("a", 2)]
    result = schedule(clusters, binding(8), _placement(**OVERFLOW))
    assert pairs(result.clusters)[0] == ("a", 3)
    assert sum(r for _n, r in pairs(result.clusters)) == 8
    assert result.tiers == {"a": 0, "b": 1, "c": 1}


def test_overflow_refills_the_tiers_in_order_on_every_schedule() -> None:
    # assignWorkloadReplicas: each tier gets min(still to place, its capacity including what it holds);
    # a holds 3 and has 3 free, so it alone takes all 4 and the overflow tier is emptied.
    clusters = [cluster("a", pods=3), cluster("b", pods=10), cluster("c", pods=10)]
    current = [("a", 3), ("b", 3), ("c", 2)]
    result = schedule(clusters, binding(4, clusters=current), _placement(**OVERFLOW))
    assert pairs(result.clusters) == [("a", 4)]
    result = schedule(clusters, binding(2, clusters=current), _placement(**OVERFLOW))
    assert pairs(result.clusters) == [("a", 2)]


def test_overflow_beyond_every_tier_is_unschedulable() -> None:
    clusters = [cluster("a", pods=3), cluster("b", pods=1), cluster("c", pods=1)]
    result = schedule(clusters, binding(9), _placement(**OVERFLOW))
    assert result.error == "failed to assign replicas: Clusters available replicas are not enough to schedule."


def test_failover_moves_replicas_off_an_evicted_cluster() -> None:
    # member2 is being evicted (graceful eviction task, already out of spec.clusters): ClusterEviction
    # filters it and its replicas go to the others as a scale-up.
    clusters = [cluster("member1", pods=10), cluster("member2", pods=10), cluster("member3", pods=10)]
    b = binding(6, clusters=[("member1", 3)], evictions=["member2"])
    result = schedule(clusters, b, _placement(replicaScheduling=DYNAMIC))
    assert result.filtered == {"member2": ["cluster(s) is in the process of eviction"]}
    assert "member2" not in dict(pairs(result.clusters))
    assert sum(r for _n, r in pairs(result.clusters)) == 6


def test_same_inputs_same_answer() -> None:
    clusters = [cluster(f"m{i}", pods=7) for i in range(5)]
    b = binding(11, uid="6c1d2e3f")
    first = schedule(clusters, b, _placement(replicaScheduling=DYNAMIC))
    second = schedule(list(reversed(clusters)), b, _placement(replicaScheduling=DYNAMIC))
    assert first.as_dict() == second.as_dict()


def test_custom_calculator() -> None:
    result = schedule([cluster("a"), cluster("b")], binding(4), _placement(replicaScheduling=AGGREGATED),
                      calculator=fixed_capacity({"a": 1, "b": 9}))
    assert pairs(result.clusters) == [("b", 4)]


def test_an_empty_cluster_affinities_list_schedules_nothing() -> None:
    # clusterAffinities: [] takes upstream's affinity-terms path, which tries no term, reports no error
    # and writes nothing: the binding keeps its clusters.
    result = schedule([cluster("a"), cluster("b")], binding(4, clusters=[("a", 4)]),
                      _placement(clusterAffinities=[], replicaScheduling=DYNAMIC))
    assert result.ok
    assert pairs(result.clusters) == [("a", 4)]


def test_an_empty_overflow_list_still_assigns_by_tiers() -> None:
    # overflowAffinities: [] is a non-nil slice in Go: enableOverflow holds, so the shortfall is the
    # overflow assignment's error, not the scale-up's.
    pl = _placement(clusterAffinities=[{"affinityName": "t", "clusterNames": ["a"], "overflowAffinities": []}],
                    replicaScheduling=DYNAMIC)
    result = schedule([cluster("a", pods=3)], binding(5), pl)
    assert result.error == "failed to assign replicas: Clusters available replicas are not enough to schedule."
    plain = _placement(clusterAffinities=[{"affinityName": "t", "clusterNames": ["a"]}], replicaScheduling=DYNAMIC)
    assert schedule([cluster("a", pods=3)], binding(5), plain).error == (
        "failed to assign replicas: failed to scale up: Clusters available replicas 3 are not enough to schedule.")
