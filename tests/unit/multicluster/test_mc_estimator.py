"""The general estimator: available replicas from resourceSummary and from resource models."""

from __future__ import annotations

from typing import Any

import pytest
from mc_helpers import binding, cluster

from extender.multicluster.estimator import cal_available_replicas, max_available_replicas
from extender.multicluster.model import INT32_MAX

REQUEST = {"cpu": "500m", "memory": "1Gi"}


def _estimate(request: dict[str, Any] | None, **cluster_kwargs: Any) -> int:
    b = binding(5, request=request or {}, requirements=request is not None)
    return cal_available_replicas([cluster("c", **cluster_kwargs)], b)[0].replicas


# (name, request or None for no replicaRequirements, cluster fields, available replicas)
SUMMARY_TABLE: list[tuple[str, dict[str, Any] | None, dict[str, Any], int]] = [
    ("no replicaRequirements: allowed pods", None, {"pods": 30, "allocated": {"pods": "10"}}, 20),
    ("allocating pods count too", None, {"pods": 30, "allocated": {"pods": "10"}, "allocating": {"pods": "15"}}, 5),
    ("more pods allocating than allocatable: none", None, {"pods": 30, "allocating": {"pods": "40"}}, 0),
    ("no pods allocatable: none", REQUEST, {"pods": None, "allocatable": {"cpu": "8", "memory": "8Gi"}}, 0),
    ("cpu in millicores", {"cpu": "300m"}, {"allocatable": {"cpu": "1"}}, 3),
    ("allocated and allocating are subtracted", REQUEST,
     {"allocatable": {"cpu": "4", "memory": "64Gi"}, "allocated": {"cpu": "1500m"}, "allocating": {"cpu": "500m"}}, 4),
    ("the scarcest resource decides", REQUEST, {"allocatable": {"cpu": "40", "memory": "3Gi"}}, 3),
    ("pods cap the answer", REQUEST, {"pods": 2, "allocatable": {"cpu": "40", "memory": "40Gi"}}, 2),
    ("a resource the cluster does not report: none", {"nvidia.com/gpu": "1"}, {"allocatable": {"cpu": "4"}}, 0),
    ("nothing left of a resource: none", REQUEST, {"allocatable": {"cpu": "1", "memory": "8Gi"},
                                                  "allocated": {"cpu": "1"}}, 0),
    # Quantity.Value() rounds up: 0.5 of a unit left counts as 1 before the division.
    ("non-cpu quantities round up", {"example.com/foo": "1"}, {"allocatable": {"example.com/foo": "1500m"}}, 2),
    ("zero requests are ignored", {"cpu": "0", "memory": "0"}, {"pods": 7}, 7),
    ("no resourceSummary: none", REQUEST, {"summary": False}, 0),
]


@pytest.mark.parametrize(("name", "request_", "fields", "want"), SUMMARY_TABLE, ids=[r[0] for r in SUMMARY_TABLE])
def test_general_estimator_by_summary(name: str, request_: dict[str, Any] | None, fields: dict[str, Any],
                                      want: int) -> None:
    assert _estimate(request_, **fields) == want


MODELS = {"resourceModels": [
    {"grade": 0, "ranges": [{"name": "cpu", "min": "0", "max": "1"}, {"name": "memory", "min": "0", "max": "4Gi"}]},
    {"grade": 1, "ranges": [{"name": "cpu", "min": "1", "max": "4"}, {"name": "memory", "min": "4Gi", "max": "16Gi"}]},
    {"grade": 2, "ranges": [{"name": "cpu", "min": "4", "max": "16"},
                            {"name": "memory", "min": "16Gi", "max": "64Gi"}]},
]}
MODELINGS = [{"grade": 0, "count": 4}, {"grade": 1, "count": 3}, {"grade": 2, "count": 1}]


def test_resource_models_count_nodes_per_grade() -> None:
    # 500m/1Gi fits grade 1 and up: grade 1 nodes hold min(1000/500, 4Gi/1Gi) = 2 each (3 nodes), the
    # grade 2 node min(4000/500, 16) = 8: 14 in all.
    got = _estimate(REQUEST, pods=300, allocatable={"cpu": "48", "memory": "192Gi"}, extra_spec=MODELS,
                    modelings=MODELINGS)
    assert got == 14


def test_resource_models_are_capped_by_pods() -> None:
    assert _estimate(REQUEST, pods=5, extra_spec=MODELS, modelings=MODELINGS) == 5


def test_resource_models_without_a_fitting_grade_hold_nothing() -> None:
    assert _estimate({"cpu": "32"}, pods=300, allocatable={"cpu": "400"}, extra_spec=MODELS, modelings=MODELINGS) == 0


def test_a_node_of_the_smallest_fitting_grade_holds_at_least_one() -> None:
    # 1.5 CPU needs grade 2 (min 4: 4000/1500 = 2 per node); 3.9 CPU also needs grade 2 (4000/3900 = 1);
    # 4 CPU exactly fits grade 2 at 1 per node.
    assert _estimate({"cpu": "1500m"}, pods=300, extra_spec=MODELS, modelings=MODELINGS) == 2
    assert _estimate({"cpu": "4"}, pods=300, extra_spec=MODELS, modelings=MODELINGS) == 1


def test_a_resource_the_models_lack_fits_no_virtual_node() -> None:
    # v1.18's simulation: the virtual nodes hold no GPU, so a GPU request fits nowhere (the summary's 3
    # GPUs are not consulted once the models apply).
    got = _estimate({"cpu": "1", "nvidia.com/gpu": "1"}, pods=300,
                    allocatable={"cpu": "10", "nvidia.com/gpu": "3"}, extra_spec=MODELS, modelings=MODELINGS)
    assert got == 0


def test_a_virtual_node_holds_at_most_110_pods() -> None:
    # 4 grade-2 nodes of 4 CPU hold 4000m/10m = 400 replicas each by CPU, but 110 pods each.
    got = _estimate({"cpu": "10m"}, pods=10_000, extra_spec=MODELS, modelings=[{"grade": 2, "count": 4}])
    assert got == 4 * 110


def test_modelings_without_resource_models_fall_back_to_the_summary() -> None:
    assert _estimate({"cpu": "1"}, pods=300, allocatable={"cpu": "3"}, modelings=MODELINGS) == 3


def test_models_are_off_without_allocatable_modelings() -> None:
    assert _estimate(REQUEST, pods=300, allocatable={"cpu": "2", "memory": "8Gi"}, extra_spec=MODELS) == 4


def test_models_feature_gate_off_uses_the_summary() -> None:
    c = cluster("c", pods=300, allocatable={"cpu": "2", "memory": "8Gi"}, extra_spec=MODELS, modelings=MODELINGS)
    from extender.multicluster.goquantity import parse_go_quantity

    request = {"cpu": parse_go_quantity("500m"), "memory": parse_go_quantity("1Gi")}
    assert max_available_replicas(c, request, resource_modeling=True) == 14
    assert max_available_replicas(c, request, resource_modeling=False) == 4


def test_non_workloads_are_not_estimated() -> None:
    got = cal_available_replicas([cluster("c", pods=0)], binding(0))
    assert got[0].replicas == INT32_MAX


def test_an_unbounded_cluster_gets_the_binding_replicas() -> None:
    # Upstream replaces MaxInt32 by spec.replicas to avoid overflow in later sums.
    got = cal_available_replicas([cluster("c", pods=INT32_MAX)], binding(5, requirements=False))
    assert got[0].replicas == 5


def test_int32_truncation_as_go() -> None:
    # int32(int64) keeps the low 32 bits: 2**32 + 5 allowed pods read as 5.
    assert _estimate(None, pods=2**32 + 5) == 5


def test_upstream_divide_by_resource_pods_only() -> None:
    # division_algorithm_test.go Test_divideReplicasByResource: pods 6/8/10, no requests.
    b = binding(12, request={})
    got = cal_available_replicas([cluster("m1", pods=6), cluster("m2", pods=8), cluster("m3", pods=10)], b)
    assert [t.replicas for t in got] == [6, 8, 10]
