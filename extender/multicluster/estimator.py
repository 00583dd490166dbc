"""How many more replicas each cluster can hold: Karmada's general estimator.

Upstream: ``pkg/estimator/client/general.go`` (``GeneralEstimator.maxAvailableReplicas``) and
``pkg/scheduler/core/util.go`` (``calAvailableReplicas``, the minimum over every estimator).  Only the
general estimator runs here; the per-cluster ``karmada-scheduler-estimator`` (gRPC) is not consulted.

The general estimator, for one cluster:

1. no ``resourceSummary`` -> 0;
2. start from the allowed pods: ``pods`` allocatable - allocated - allocating (0 or less -> 0; a
   summary without ``pods`` therefore holds nothing);
3. no ``replicaRequirements`` -> the allowed pods;
4. with resource models (a non-empty ``allocatableModelings``; feature gate
   CustomizedClusterResourceModeling, on by default), since v1.18 a placement simulation: each grade
   present in both ``spec.resourceModels`` and ``allocatableModelings`` becomes ``count`` virtual nodes
   with the grade's minimum of every resource and 110 pods, replicas go one by one onto the first node
   they fit, and the answer is how many fit (capped by the allowed pods).  A resource the models do not
   list counts 0 on the virtual nodes, so a request for it fits nowhere; names the scheduler does not
   track (neither native nor extended) are ignored.  Without ``spec.resourceModels`` step 5 applies;
5. else, per requested resource: ``(allocatable - allocated - allocating) // request`` (CPU in
   millicores, everything else in whole units rounded up, as ``Quantity.Value()``), the minimum over
   resources and the allowed pods; a requested resource the cluster does not report holds 0.  The
   subtraction is Go's ``Quantity.Sub`` on the quantities' Go forms (:mod:`.goquantity`): an
   over-committed resource written with a fraction and a binary suffix (``3.5Gi``) can read as a large
   positive amount, as it does in Karmada.

Sums are int64 and the result is truncated to int32, as upstream's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from extender.cluster.resource import is_scalar_resource_name
from extender.multicluster.budget import charge
from extender.multicluster.goquantity import ZERO, GoQuantity, sub
from extender.multicluster.model import INT32_MAX, Cluster, ResourceBinding, ResourceSummary, TargetCluster

__all__ = ["UNAUTHENTIC_REPLICA", "cal_available_replicas", "max_available_replicas"]

#: ``estimatorclient.UnauthenticReplica``: an estimator's "don't know" answer, ignored by the scheduler.
UNAUTHENTIC_REPLICA: Final = -1

_INT64_MAX: Final = 2**63 - 1
_CPU: Final = "cpu"
_MEMORY: Final = "memory"
_EPHEMERAL_STORAGE: Final = "ephemeral-storage"
_PODS: Final = "pods"
#: Pods one virtual node of a resource model holds (kubelet's default ``maxPods``).
_MAX_PODS_PER_NODE: Final = 110


def _int32(number: int) -> int:
    """Go ``int32(x)`` conversion of an int64: keep the low 32 bits, signed."""
    return (number + 2**31) % 2**32 - 2**31


def _go_div(a: int, b: int) -> int:
    """Go integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _wrap64(number: int) -> int:
    """Go int64 arithmetic wraps around."""
    return (number + 2**63) % 2**64 - 2**63


def _allowed_pods(summary: ResourceSummary) -> int:
    def pods(resources: Mapping[str, GoQuantity] | None) -> int:
        return resources.get(_PODS, ZERO).value() if resources is not None else 0

    allowed = _wrap64(pods(summary.allocatable) - pods(summary.allocated) - pods(summary.allocating))
    # Many pending pods can make "allocating" huge: never let it go negative.
    return max(allowed, 0)


def _by_summary(summary: ResourceSummary, request: Mapping[str, GoQuantity]) -> int:
    maximum = _INT64_MAX
    for name, quantity in request.items():
        requested = quantity.value()
        if requested <= 0:
            continue
        if summary.allocatable is None or name not in summary.allocatable:
            return 0
        # Quantity.Sub, then Value(): a Dec far below zero reads as a large positive amount in Go.
        available = summary.allocatable[name]
        if summary.allocated is not None and name in summary.allocated:
            available = sub(available, summary.allocated[name])
        if summary.allocating is not None and name in summary.allocating:
            available = sub(available, summary.allocating[name])
        available_units = available.value()
        if available_units <= 0:
            return 0
        if name == _CPU:
            requested = quantity.milli_value()
            available_units = available.milli_value()
        maximum = min(maximum, _go_div(available_units, requested))
    return maximum


def _vector(resources: Mapping[str, GoQuantity]) -> dict[str, int]:
    """Upstream ``util.NewResource``: CPU in millicores, memory, storage, pods and scalar resources in
    units rounded up; any other name is not tracked."""
    out: dict[str, int] = {}
    for name, quantity in resources.items():
        if name == _CPU:
            out[name] = _wrap64(out.get(name, 0) + quantity.milli_value())
        elif name in (_MEMORY, _PODS, _EPHEMERAL_STORAGE) or is_scalar_resource_name(name):
            out[name] = _wrap64(out.get(name, 0) + quantity.value())
    return out


def _max_divided(node: Mapping[str, int], request: Mapping[str, GoQuantity]) -> int:
    """Upstream ``Resource.MaxDivided``: how many requests fit the node, pods included (one per replica)."""
    fits = _INT64_MAX
    for name, quantity in request.items():
        if name == _CPU:
            asked = quantity.milli_value()
        elif name in (_MEMORY, _EPHEMERAL_STORAGE) or (name != _PODS and is_scalar_resource_name(name)):
            asked = quantity.value()
        else:
            continue
        if asked > 0:
            fits = min(fits, _go_div(node.get(name, 0), asked))
    return min(fits, node.get(_PODS, 0))


def _by_models(cluster: Cluster, summary: ResourceSummary, request: Mapping[str, GoQuantity]) -> int | None:
    """Replicas by resource models (``getMaximumReplicasBasedOnResourceModels``), ``None`` without models.

    Every grade present in both ``spec.resourceModels`` and ``allocatableModelings`` becomes ``count``
    virtual nodes holding the grade's minimum of each resource and 110 pods; replicas are placed one by
    one on the first node they fit, so each node takes as many as fit it and the total is their sum.
    """
    if not cluster.resource_models:
        return None  # buildModelNodes fails: upstream falls back to the resource summary
    capacity: dict[int, dict[str, int]] = {}
    for model in cluster.resource_models:
        template = {rng.name: rng.min for rng in model.ranges}
        template[_PODS] = GoQuantity(False, _MAX_PODS_PER_NODE, 0)
        capacity[model.grade] = _vector(template)
    counts: dict[int, int] = {}
    for modeling in summary.allocatable_modelings:
        counts[modeling.grade] = counts.get(modeling.grade, 0) + modeling.count
    total = 0
    for grade in sorted(capacity):
        nodes = counts.get(grade, 0)
        if nodes:
            total += nodes * _max_divided(capacity[grade], request)
    return min(total, INT32_MAX)


def max_available_replicas(cluster: Cluster, request: Mapping[str, GoQuantity] | None, *,
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
        charge(1 + len(cluster.resource_models), "estimating available replicas")
        estimate = max_available_replicas(cluster, binding.resource_request,
                                          has_requirements=binding.has_replica_requirements,
                                          resource_modeling=resource_modeling)
        if estimate == UNAUTHENTIC_REPLICA:
            continue
        bounds[i] = min(bounds[i], estimate)
    return [TargetCluster(c.name, binding.replicas if b == INT32_MAX else b)
            for c, b in zip(clusters, bounds, strict=True)]
