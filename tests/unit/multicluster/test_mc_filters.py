"""Filter plugins and cluster matching, with upstream's plugin test tables ported as data."""

from __future__ import annotations

from typing import Any

import pytest
from mc_helpers import binding, cluster

from extender.multicluster.filters import (
    APIEnablement,
    ClusterAffinityFilter,
    ClusterEviction,
    FilterContext,
    SpreadConstraintFilter,
    TaintToleration,
    cluster_matches,
    overflow_tiers,
    run_filters,
)
from extender.multicluster.model import ClusterAffinity as Affinity
from extender.multicluster.model import parse_placement


def _ctx(placement: dict[str, Any] | None = None, affinity_name: str = "", **binding_kwargs: Any) -> FilterContext:
    return FilterContext(binding(1, **binding_kwargs), parse_placement(placement or {}), affinity_name)


def _affinity(raw: dict[str, Any]) -> Affinity:
    pl = parse_placement({"clusterAffinity": raw})
    assert pl.cluster_affinity is not None
    return pl.cluster_affinity


# TestAPIEnablement_Filter.
def test_api_enablement_enabled() -> None:
    assert APIEnablement().filter(_ctx(), cluster("cluster1")) is None


def test_api_enablement_missing() -> None:
    c = cluster("cluster1", apis=[{"groupVersion": "custom.io/v1", "resources": [{"kind": "Other"}]}])
    assert APIEnablement().filter(_ctx(), c) == "cluster(s) did not have the API resource"


def test_api_enablement_cluster_in_target_list_passes() -> None:
    c = cluster("cluster1", apis=[])
    assert APIEnablement().filter(_ctx(clusters=[("cluster1", 1)]), c) is None


# TestTaintToleration_Filter.
TAINT = {"key": "key1", "value": "value1", "effect": "NoSchedule"}


def test_taint_toleration_cluster_already_in_targets() -> None:
    assert TaintToleration().filter(_ctx(clusters=[("cluster1", 0)]), cluster("cluster1", taints=[TAINT])) is None


def test_taint_toleration_no_taints() -> None:
    assert TaintToleration().filter(_ctx(), cluster("cluster1")) is None


def test_taint_toleration_tolerated() -> None:
    ctx = _ctx({"clusterTolerations": [{"key": "key1", "operator": "Equal", "value": "value1",
                                        "effect": "NoSchedule"}]})
    assert TaintToleration().filter(ctx, cluster("cluster1", taints=[TAINT])) is None


def test_taint_toleration_untolerated() -> None:
    got = TaintToleration().filter(_ctx(), cluster("cluster1", taints=[TAINT]))
    assert got == "cluster(s) had untolerated taint {key1=value1:NoSchedule}"


def test_taint_toleration_ignores_prefer_no_schedule_and_tolerates_not_ready_only_when_told() -> None:
    # Since v1.15 karmada-webhook adds no default not-ready/unreachable tolerations.
    soft = {"key": "k", "effect": "PreferNoSchedule"}
    not_ready = {"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}
    assert TaintToleration().filter(_ctx(), cluster("c", taints=[soft])) is None
    assert TaintToleration().filter(_ctx(), cluster("c", taints=[soft, not_ready])) == (
        "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoExecute}")
    tolerant = _ctx({"clusterTolerations": [{"key": "cluster.karmada.io/not-ready", "operator": "Exists"}]})
    assert TaintToleration().filter(tolerant, cluster("c", taints=[soft, not_ready])) is None
    no_schedule = {"key": "cluster.karmada.io/not-ready", "effect": "NoSchedule"}
    assert TaintToleration().filter(_ctx(), cluster("c", taints=[no_schedule])) == (
        "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}")


# TestClusterAffinity_Filter.
def test_cluster_affinity_matching() -> None:
    assert ClusterAffinityFilter().filter(_ctx({"clusterAffinity": {"clusterNames": ["cluster1"]}}),
                                          cluster("cluster1")) is None


def test_cluster_affinity_non_matching() -> None:
    got = ClusterAffinityFilter().filter(_ctx({"clusterAffinity": {"clusterNames": ["cluster2"]}}),
                                         cluster("cluster1"))
    assert got == "cluster(s) did not match the placement cluster affinity constraint"


def test_cluster_affinity_from_cluster_affinities() -> None:
    ctx = _ctx({"clusterAffinities": [{"affinityName": "affinity1", "clusterNames": ["cluster1"]}]}, "affinity1")
    assert ClusterAffinityFilter().filter(ctx, cluster("cluster1")) is None


def test_cluster_affinity_none_specified() -> None:
    assert ClusterAffinityFilter().filter(_ctx(), cluster("cluster1")) is None


def test_cluster_affinity_overflow_tiers_all_pass() -> None:
    raw = {"clusterAffinities": [{"affinityName": "idc", "clusterNames": ["a"],
                                  "overflowAffinities": [{"affinityName": "cloud", "clusterNames": ["b", "a"]}]}],
           "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
                                 "weightPreference": {"dynamicWeight": "AvailableReplicas"}}}
    ctx = _ctx(raw, "idc")
    plugin = ClusterAffinityFilter()
    assert plugin.filter(ctx, cluster("a")) is None
    assert plugin.filter(ctx, cluster("b")) is None
    assert plugin.filter(ctx, cluster("c")) is not None
    # A cluster in several tiers belongs to the first.
    assert overflow_tiers(ctx, [cluster("a"), cluster("b")]) == {"a": 0, "b": 1}


# TestSpreadConstraint_Filter.
SPREAD_TABLE = [
    ("no spread constraints", [], {}, None),
    ("spread by provider - provider present", ["provider"], {"provider": "aws"}, None),
    ("spread by provider - provider missing", ["provider"], {}, "cluster(s) did not have provider property"),
    ("spread by region - region present", ["region"], {"region": "us-west-2"}, None),
    ("spread by region - region missing", ["region"], {}, "cluster(s) did not have region property"),
    ("spread by zone - zones present", ["zone"], {"zones": ["us-west-2a"]}, None),
    ("spread by zone - zones missing", ["zone"], {}, "cluster(s) did not have zones property"),
]


@pytest.mark.parametrize(("name", "fields", "spec", "want"), SPREAD_TABLE, ids=[r[0] for r in SPREAD_TABLE])
def test_spread_constraint_upstream_table(name: str, fields: list[str], spec: dict[str, Any],
                                         want: str | None) -> None:
    constraints = [{"spreadByField": f} for f in fields] + ([{"spreadByField": "cluster"}] if fields else [])
    assert SpreadConstraintFilter().filter(_ctx({"spreadConstraints": constraints}), cluster("c", **spec)) == want


def test_cluster_eviction() -> None:
    ctx = _ctx(evictions=["member1"])
    assert ClusterEviction().filter(ctx, cluster("member1")) == "cluster(s) is in the process of eviction"
    assert ClusterEviction().filter(ctx, cluster("member2")) is None


# ClusterMatches (pkg/util/selector.go): exclude, label selector, field selector, names.
MATCH_TABLE: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = [
    ("empty affinity matches all", {}, {}, True),
    ("excluded", {"exclude": ["c"]}, {}, False),
    ("exclude wins over names", {"clusterNames": ["c"], "exclude": ["c"]}, {}, False),
    ("label selector", {"labelSelector": {"matchLabels": {"env": "prod"}}}, {"labels": {"env": "prod"}}, True),
    ("label selector mismatch", {"labelSelector": {"matchLabels": {"env": "prod"}}}, {"labels": {"env": "dev"}},
     False),
    ("label and names both needed", {"labelSelector": {"matchLabels": {"env": "prod"}}, "clusterNames": ["x"]},
     {"labels": {"env": "prod"}}, False),
    ("provider In", {"fieldSelector": {"matchExpressions": [{"key": "provider", "operator": "In",
                                                             "values": ["aws"]}]}}, {"provider": "aws"}, True),
    ("provider NotIn with no provider", {"fieldSelector": {"matchExpressions": [
        {"key": "provider", "operator": "NotIn", "values": ["aws"]}]}}, {}, True),
    ("region In without region", {"fieldSelector": {"matchExpressions": [
        {"key": "region", "operator": "In", "values": ["eu"]}]}}, {}, False),
    ("zone In needs one zone listed", {"fieldSelector": {"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["z1"]}]}}, {"zones": ["z1", "z2"]}, True),
    ("zone In none listed", {"fieldSelector": {"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["z3"]}]}}, {"zones": ["z1", "z2"]}, False),
    ("zone In all listed", {"fieldSelector": {"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["z1", "z2", "z3"]}]}}, {"zones": ["z1", "z2"]}, True),
    ("zone In with no zones", {"fieldSelector": {"matchExpressions": [
        {"key": "zone", "operator": "In", "values": ["z1"]}]}}, {}, False),
    ("zone NotIn none listed", {"fieldSelector": {"matchExpressions": [
        {"key": "zone", "operator": "NotIn", "values": ["z3"]}]}}, {"zones": ["z1", "z2"]}, True),
    ("zone NotIn one listed", {"fieldSelector": {"matchExpressions": [
        {"key": "zone", "operator": "NotIn", "values": ["z2"]}]}}, {"zones": ["z1", "z2"]}, False),
    ("field and name", {"clusterNames": ["c"], "fieldSelector": {"matchExpressions": [
        {"key": "region", "operator": "In", "values": ["eu"]}]}}, {"region": "eu"}, True),
]


@pytest.mark.parametrize(("name", "affinity", "spec", "want"), MATCH_TABLE, ids=[r[0] for r in MATCH_TABLE])
def test_cluster_matches(name: str, affinity: dict[str, Any], spec: dict[str, Any], want: bool) -> None:
    assert cluster_matches(cluster("c", **spec), _affinity(affinity)) is want


def test_run_filters_reports_every_reason_and_skips_deleting_clusters() -> None:
    from dataclasses import replace

    ctx = _ctx({"clusterAffinity": {"clusterNames": ["ok"]}})
    bad = cluster("bad", taints=[TAINT], apis=[])
    deleting = replace(cluster("gone"), deleting=True)
    feasible, reasons = run_filters(ctx, [cluster("ok"), bad, deleting])
    assert [c.name for c in feasible] == ["ok"]
    assert reasons == {"bad": ["cluster(s) did not have the API resource",
                               "cluster(s) had untolerated taint {key1=value1:NoSchedule}",
                               "cluster(s) did not match the placement cluster affinity constraint"]}
