"""How many more replicas each cluster can hold: Karmada's general estimator.

Upstream: ``pkg/estimator/client/general.go`` (``GeneralEstimator.maxAvailableReplicas``) and
``pkg/scheduler/core/util.go`` (``calAvailableReplicas``, the minimum over every estimator).  Only the
general estimator runs here; the per-cluster ``karmada-scheduler-estimator`` (gRPC) is not consulted.

The general estimator, for one cluster:

1. no ``resourceSummary`` -> 0;
2. start from the allowed pods: ``pods`` allocatable - allocated - allocating (0 or less -> 0; a
   summary without ``pods`` therefore holds nothing);
3. no ``replicaRequirements`` -> the allowed pods;
4. with resource models (``spec.resourceModels`` and a non-empty ``allocatableModelings``; feature
   gate CustomizedClusterResourceModeling, on by default): sum over the grades at or above the smallest
   grade whose minimum satisfies every request of ``count x replicas-per-node`` (a node that fits none
   counts as one), capped by the allowed pods.  A request naming a resource the models lack makes the
   models inapplicable and falls back to step 5;
5. else, per requested resource: ``(allocatable - allocated - allocating) // request`` (CPU in
   millicores, everything else in whole units rounded up, as ``Quantity.Value()``), the minimum over
   resources and the allowed pods; a requested resource the cluster does not report holds 0.

Go arithmetic is kept where it shows: int64 products and sums wrap, and the result is truncated to
int32.  Upstream iterates the request map in Go's random order; where that order matters (step 4,
one resource missing from the models and another fitting no grade) we take resources in name order.
Where upstream would index past the end of ``allocatableModelings`` (a panic), missing grades count 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Final

from extender.kube.quantity import milli_value, value
from extender.multicluster.model import INT32_MAX, Cluster, ResourceBinding, ResourceSummary, TargetCluster

__all__ = ["UNAUTHENTIC_REPLICA", "cal_available_replicas", "max_available_replicas"]

#: ``estimatorclient.UnauthenticReplica``: an estimator's "don't know" answer, ignored by the scheduler.
UNAUTHENTIC_REPLICA: Final = -1

_INT64_MAX: Final = 2**63 - 1
_CPU: Final = "cpu"
_PODS: Final = "pods"


def _wrap64(number: int) -> int:
    """Go int64 wrap-around."""
    return (number + 2**63) % 2**64 - 2**63


def _int32(number: int) -> int:
    """Go ``int32(x)`` conversion of an int64: keep the low 32 bits, signed."""
    return (number + 2**31) % 2**32 - 2**31


def _go_div(a: int, b: int) -> int:
    """Go integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _allowed_pods(summary: ResourceSummary) -> int:
    def pods(resources: Mapping[str, Fraction] | None) -> int:
        return value(resources.get(_PODS, Fraction(0))) if resources is not None else 0

    allowed = pods(summary.allocatable) - pods(summary.allocated) - pods(summary.allocating)
    # Many pending pods can make "allocating" huge: never let it go negative.
    return max(allowed, 0)


def _by_summary(summary: ResourceSummary, request: Mapping[str, Fraction]) -> int:
    maximum = _INT64_MAX
    for name, quantity in request.items():
        requested = value(quantity)
        if requested <= 0:
            continue
        if summary.allocatable is None or name not in summary.allocatable:
            return 0
        available = summary.allocatable[name]
        if summary.allocated is not None and name in summary.allocated:
            available -= summary.allocated[name]
        if summary.allocating is not None and name in summary.allocating:
            available -= summary.allocating[name]
        available_units = value(available)
        if available_units <= 0:
            return 0
        if name == _CPU:
            requested = milli_value(quantity)
            available_units = milli_value(available)
        maximum = min(maximum, _go_div(available_units, requested))
    return maximum


def _minimum_model_index(minimums: Sequence[Fraction], request: Fraction) -> int:
    """The first grade whose minimum is at least the request (a pod asking 1.5 CPU needs the [2,3) grade)."""
    for index, minimum in enumerate(minimums):
        if minimum >= request:
            return index
    return -1


def _node_replicas(index: int, request: Mapping[str, Fraction], minimums: Mapping[str, list[Fraction]]) -> int:
    per_node = _INT64_MAX
    for name, quantity in request.items():
        requested = value(quantity)
        if requested <= 0:
            continue
        grade_min = minimums[name][index] if index < len(minimums[name]) else Fraction(0)
        available = value(grade_min)
        if name == _CPU:
            requested = milli_value(quantity)
            available = milli_value(grade_min)
        per_node = min(per_node, _go_div(available, requested))
    # The smallest compliant grade is taken to fit one pod even when the integer division says 0.
    return 1 if per_node == 0 else per_node


def _by_models(cluster: Cluster, summary: ResourceSummary, request: Mapping[str, Fraction]) -> int | None:
    """Replicas by resource models, or ``None`` when the models do not cover a requested resource."""
    minimums: dict[str, list[Fraction]] = {}
    for model in cluster.resource_models:
        for rng in model.ranges:
            minimums.setdefault(rng.name, []).append(rng.min)
    compliant = 0
    for name in sorted(request):
        quantity = request[name]
        if value(quantity) <= 0:
            continue
        if name not in minimums:
            return None
        index = _minimum_model_index(minimums[name], quantity)
        if index == -1:
            return 0
        compliant = max(compliant, index)
    total = 0
    modelings = summary.allocatable_modelings
    for index in range(compliant, len(cluster.resource_models)):
        count = modelings[index].count if index < len(modelings) else 0
        if count == 0:
            continue
        total = _wrap64(total + _wrap64(count * _node_replicas(index, request, minimums)))
    return total


def max_available_replicas(cluster: Cluster, request: Mapping[str, Fraction] | None, *,
                           has_requirements: bool = True, resource_modeling: bool = True) -> int:
    """The general estimator's answer for one cluster (``request`` is ``replicaRequirements.resourceRequest``).

    ``has_requirements`` False stands for an absent ``replicaRequirements`` (then only pods count);
    ``resource_modeling`` mirrors the CustomizedClusterResourceModeling feature gate.
    """
    summary = cluster.resource_summary
    if summary is None:
        return 0
    maximum = _allowed_pods(summary)
    if maximum <= 0:
        return 0
    if not has_requirements:
        return _int32(maximum)
    request = request or {}
    if resource_modeling and summary.allocatable_modelings:
        by_models = _by_models(cluster, summary, request)
        if by_models is not None:
            return _int32(min(maximum, by_models))
    return _int32(min(maximum, _by_summary(summary, request)))


def cal_available_replicas(clusters: Sequence[Cluster], binding: ResourceBinding, *,
                           resource_modeling: bool = True) -> list[TargetCluster]:
    """Upstream ``calAvailableReplicas``: per cluster, the minimum over estimators, in input order.

    Non-workloads (``replicas`` 0) are not estimated; a cluster no estimator bounded gets the
    binding's replicas rather than MaxInt32, as upstream does to avoid overflow.
    """
    bounds = [INT32_MAX] * len(clusters)
    if binding.replicas == 0:
        return [TargetCluster(c.name, INT32_MAX) for c in clusters]
    for i, cluster in enumerate(clusters):
        estimate = max_available_replicas(cluster, binding.resource_request,
                                          has_requirements=binding.has_replica_requirements,
                                          resource_modeling=resource_modeling)
        if estimate == UNAUTHENTIC_REPLICA:
            continue
        bounds[i] = min(bounds[i], estimate)
    return [TargetCluster(c.name, binding.replicas if b == INT32_MAX else b)
            for c, b in zip(clusters, bounds, strict=True)]
