"""Reading Karmada objects: defaults applied as karmada-webhook does, errors that name the field."""

from __future__ import annotations

from typing import Any

import pytest
from mc_helpers import binding_obj, cluster_obj

from extender.multicluster.model import (
    DIVIDED,
    DUPLICATED,
    WEIGHTED,
    ModelError,
    parse_binding,
    parse_cluster,
    parse_placement,
    parse_placement_source,
)


def test_replica_scheduling_defaults() -> None:
    pl = parse_placement({"replicaScheduling": {}})
    assert pl.replica_scheduling is not None
    assert (pl.replica_scheduling.scheduling_type, pl.replica_scheduling.division_preference) == (DIVIDED, WEIGHTED)
    assert not pl.replica_scheduling.weight_preference_set
    assert parse_placement({}).scheduling_type == DUPLICATED


def test_spread_constraint_defaults() -> None:
    pl = parse_placement({"spreadConstraints": [{"maxGroups": 2}]})
    assert (pl.spread_constraints[0].spread_by_field, pl.spread_constraints[0].min_groups) == ("cluster", 1)


def test_no_default_tolerations() -> None:
    # karmada-webhook stopped adding not-ready/unreachable NoExecute tolerations in v1.15.
    pl = parse_placement({"clusterTolerations": [{"key": "x", "operator": "Exists"}]})
    assert [(t.key, t.effect, t.toleration_seconds) for t in pl.tolerations] == [("x", "", None)]
    assert parse_placement({}).tolerations == ()


BAD_PLACEMENTS: list[tuple[dict[str, Any], str]] = [
    ({"spreadConstraints": [{"spreadByField": "region", "spreadByLabel": "x"}]},
     "placement.spreadConstraints[0]: spreadByLabel should not co-exist with spreadByField"),
    ({"spreadConstraints": [{"spreadByField": "cluster", "minGroups": 3, "maxGroups": 2}]},
     "placement.spreadConstraints[0]: maxGroups lower than minGroups is not allowed"),
    ({"spreadConstraints": [{"spreadByField": "cluster", "maxGroups": -1}]},
     "placement.spreadConstraints[0]: maxGroups lower than 0 is not allowed"),
    ({"spreadConstraints": [{"spreadByField": "region"}]},
     "the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled"),
    ({"spreadConstraints": [{"spreadByField": "cluster"}, {"spreadByField": "cluster"}]},
     "multiple cluster spread constraints are not allowed"),
    ({"spreadConstraints": [{"spreadByField": "rack"}]}, "spreadByField: unsupported value 'rack'"),
    ({"clusterAffinity": {"fieldSelector": {"matchExpressions": [{"key": "name", "operator": "In", "values": ["a"]}]}}},
     'placement.clusterAffinity.fieldSelector: unsupported key "name", must be provider, region, or zone'),
    ({"clusterAffinity": {"fieldSelector": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}},
     'unsupported operator "Exists", must be In or NotIn'),
    ({"clusterAffinity": {"excludeClusters": ["a"]}}, "the JSON key of excluded clusters is 'exclude'"),
    ({"clusterAffinity": {}, "clusterAffinities": [{"affinityName": "a"}]},
     "placement: clusterAffinities cannot co-exist with clusterAffinity"),
    ({"clusterAffinities": [{"affinityName": ""}]}, "placement.clusterAffinities[0]: name part must be non-empty"),
    # Karmada v1.18.2 builds with apimachinery v0.35.3, whose content.IsLabelKey counts bytes.
    ({"clusterAffinities": [{"affinityName": "x" * 64}]},
     "placement.clusterAffinities[0]: name part must be no more than 63 bytes"),
    ({"clusterAffinities": [{"affinityName": "/a"}]}, "placement.clusterAffinities[0]: prefix part must be non-empty"),
    ({"clusterAffinities": [{"affinityName": "a", "clusterNames": ["m1"],
                             "overflowAffinities": [{"affinityName": "not a key"}]}],
      "replicaScheduling": {"replicaDivisionPreference": "Aggregated"}},
     "placement.clusterAffinities[0].overflowAffinities[0].affinityName: name part must consist of"),
    ({"clusterTolerations": [{"key": "a", "operator": "Lt", "value": "3"}]},
     'placement.clusterTolerations[0].operator: Unsupported value: "Lt": supported values: "", "Exists", "Equal"'),
    ({"clusterAffinities": [{"affinityName": "a"}, {"affinityName": "a"}]},
     "each affinity term in a policy must have a unique name"),
    ({"clusterAffinities": [{"affinityName": "a", "clusterNames": ["m1"],
                             "overflowAffinities": [{"affinityName": "b"}]}],
      "replicaScheduling": {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"}},
     "placement.clusterAffinities[0].overflowAffinities: overflowAffinities can only be used together with dynamic "
     "weight or aggregated scheduling"),
    ({"clusterAffinities": [{"affinityName": "a", "overflowAffinities": [{"affinityName": "b"}]}],
      "replicaScheduling": {"replicaDivisionPreference": "Aggregated"}},
     "overflowAffinities can only be used together with the inline ClusterAffinity"),
    ({"clusterAffinities": [{"affinityName": "a", "clusterNames": ["m1"],
                             "overflowAffinities": [{"affinityName": "a"}]}],
      "replicaScheduling": {"replicaDivisionPreference": "Aggregated"}},
     "overflowAffinities[0].affinityName: overflow affinity name must be unique"),
    ({"replicaScheduling": {"replicaSchedulingType": "Spread"}},
     "placement.replicaScheduling.replicaSchedulingType: unsupported value 'Spread'"),
    ({"replicaScheduling": {"weightPreference": {"dynamicWeight": "Pods"}}},
     "placement.replicaScheduling.weightPreference.dynamicWeight: unsupported value 'Pods'"),
    ({"replicaScheduling": {"weightPreference": {"staticWeightList": [{"targetCluster": {}, "weight": 0}]}}},
     "placement.replicaScheduling.weightPreference.staticWeightList[0].weight: 0 is out of range"),
    ({"clusterTolerations": [{"key": "a", "operator": "Maybe"}]}, "placement.clusterTolerations[0].operator"),
    ({"clusterAffinity": {"clusterNames": "member1"}},
     "placement.clusterAffinity.clusterNames: expected a list, got str"),
]


@pytest.mark.parametrize(("raw", "message"), BAD_PLACEMENTS, ids=[m[:50] for _r, m in BAD_PLACEMENTS])
def test_invalid_placements_name_the_field(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelError, match=None) as caught:
        parse_placement(raw)
    assert message in str(caught.value)


def test_a_label_selector_that_does_not_compile_matches_no_cluster() -> None:
    # The webhook does not validate label selectors; util.ClusterMatches returns false on one it cannot
    # compile, so the policy is accepted and places nothing by it.
    from extender.multicluster.filters import cluster_matches

    near = {"matchExpressions": [{"key": "a", "operator": "Near"}]}
    pl = parse_placement({"clusterAffinity": {"labelSelector": near}})
    assert pl.cluster_affinity is not None and pl.cluster_affinity.matches_nothing
    assert not cluster_matches(parse_cluster(cluster_obj("m1", labels={"a": "b"})), pl.cluster_affinity)


def test_static_weight_targets_are_not_validated() -> None:
    # ValidatePlacement checks the placement's affinities only; a static weight target with another
    # field key is accepted and simply matches no cluster field.
    pl = parse_placement({"replicaScheduling": {"replicaSchedulingType": "Divided", "weightPreference": {
        "staticWeightList": [{"targetCluster": {"fieldSelector": {"matchExpressions": [
            {"key": "name", "operator": "In", "values": ["m1"]}]}}, "weight": 2}]}}})
    assert pl.replica_scheduling is not None and len(pl.replica_scheduling.static_weights) == 1


def test_cluster_parsing() -> None:
    raw = cluster_obj("m1", provider="aws", region="r", zones=["z1"], labels={"env": "prod"},
                      taints=[{"key": "k", "effect": "NoSchedule"}], allocatable={"cpu": "2"})
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    c = parse_cluster(raw)
    assert (c.name, c.provider, c.region, c.zones, dict(c.labels), c.deleting) == (
        "m1", "aws", "r", ("z1",), {"env": "prod"}, True)
    assert c.serves("apps/v1", "Deployment") and not c.serves("apps/v1", "DaemonSet")
    assert str(c.taints[0]) == "k:NoSchedule"


BAD_CLUSTERS: list[tuple[dict[str, Any], str]] = [
    ({"metadata": {}}, "metadata.name: required value"),
    ({"metadata": {"name": "m"}, "spec": {"taints": [{"key": "k", "effect": "Sometimes"}]}},
     "Cluster 'm': spec.taints[0].effect: unsupported value 'Sometimes'"),
    ({"metadata": {"name": "m"}, "status": {"resourceSummary": {"allocatable": {"cpu": "lots"}}}},
     "Cluster 'm': status.resourceSummary.allocatable.cpu: invalid quantity 'lots'"),
    ({"metadata": {"name": "m"}, "spec": {"zones": "z1"}}, "Cluster 'm': spec.zones: expected a list, got str"),
    ({"metadata": {"name": "m"}, "status": {"apiEnablements": [{"groupVersion": 1}]}},
     "Cluster 'm': status.apiEnablements[0].groupVersion: expected a string, got int"),
]


@pytest.mark.parametrize(("raw", "message"), BAD_CLUSTERS, ids=[m[:40] for _r, m in BAD_CLUSTERS])
def test_invalid_clusters_name_the_field(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelError) as caught:
        parse_cluster(raw)
    assert message in str(caught.value)


def test_binding_parsing() -> None:
    raw = binding_obj(5, clusters=[("a", 2)], uid="u-1", request={"cpu": "250m"}, evictions=["b"],
                      reschedule_at="2026-01-02T00:00:00Z", last_scheduled="2026-01-01T00:00:00Z",
                      observed_affinity="t1")
    b = parse_binding(raw)
    assert (b.replicas, b.resource.uid, b.resource.kind, b.observed_affinity_name) == (5, "u-1", "Deployment", "t1")
    assert b.target_contains("a") and not b.target_contains("b")
    assert b.assigned_replicas_for("a") == 2 and b.assigned_replicas_for("z") == 0
    assert [t.from_cluster for t in b.eviction_tasks] == ["b"]
    assert b.reschedule_triggered_at is not None and b.last_scheduled_time is not None
    assert b.reschedule_triggered_at > b.last_scheduled_time


BAD_BINDINGS: list[tuple[dict[str, Any], str]] = [
    ({"kind": "Deployment"}, "kind: expected ResourceBinding or ClusterResourceBinding, got 'Deployment'"),
    ({"spec": {"replicas": -1}}, "spec.replicas: -1 is out of range"),
    ({"spec": {"replicas": True}}, "spec.replicas: expected an integer, got bool"),
    ({"spec": {"clusters": [{"replicas": 1}]}}, "spec.clusters[0].name: required value"),
    ({"spec": {"replicaRequirements": {"resourceRequest": {"memory": "1Zi"}}}},
     "spec.replicaRequirements.resourceRequest.memory: invalid quantity '1Zi'"),
    ({"spec": {"rescheduleTriggeredAt": "yesterday"}}, "spec.rescheduleTriggeredAt: 'yesterday' is not an RFC 3339"),
    ({"spec": {"placement": {"spreadConstraints": {}}}}, "spec.placement.spreadConstraints: expected a list, got dict"),
]


@pytest.mark.parametrize(("raw", "message"), BAD_BINDINGS, ids=[m[:40] for _r, m in BAD_BINDINGS])
def test_invalid_bindings_name_the_field(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelError) as caught:
        parse_binding(raw)
    assert message in str(caught.value)


def test_placement_sources() -> None:
    policy = {"kind": "PropagationPolicy", "spec": {"placement": {"replicaScheduling": {}}}}
    assert parse_placement_source(policy).replica_scheduling is not None
    assert parse_placement_source({"replicaScheduling": {}}).replica_scheduling is not None
    with pytest.raises(ModelError, match=r"spec\.placement: required value"):
        parse_placement_source({"kind": "ClusterPropagationPolicy", "spec": {}})
    with pytest.raises(ModelError, match="kind: expected PropagationPolicy"):
        parse_placement_source({"kind": "OverridePolicy"})


# A JSON number the fuzzer found (a 500 before), a scientific amount, and 2^61 cores (x 1000 wraps to exactly 0).
@pytest.mark.parametrize("cpu", [6.749275722587511e16, "9e18", "2305843009213693952"])
def test_a_cpu_request_whose_millicores_read_as_zero_is_refused(cpu: object) -> None:
    """Go's MilliValue() reads such a request as 0 and Karmada's estimator divides by it: bad input, named."""
    with pytest.raises(ModelError, match=r"spec\.replicaRequirements\.resourceRequest\.cpu: .*millicores"):
        parse_binding(binding_obj(3, request={"cpu": cpu, "memory": "1Gi"}))


def test_large_cpu_requests_whose_millicores_read_as_non_zero_are_kept() -> None:
    """Upstream computes with these (the second wraps, as Go's int64 does): no refusal, Karmada's answer."""
    for cpu, milli in (("9223372036854775", 9223372036854775000), ("9223372036854775807", -1000)):
        binding = parse_binding(binding_obj(3, request={"cpu": cpu}))
        assert binding.resource_request is not None
        assert binding.resource_request["cpu"].milli_value() == milli
