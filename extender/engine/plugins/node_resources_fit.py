"""NodeResourcesFit: the pod's requests must fit the node's free allocatable resources; nodes are scored
by LeastAllocated, MostAllocated or RequestedToCapacityRatio (upstream plugins/noderesources/fit.go)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.cluster.resource import is_extended_resource_name
from extender.engine.framework import (
    MAX_NODE_SCORE,
    Code,
    CycleState,
    FilterPlugin,
    ScorePlugin,
    Status,
    go_div,
)
from extender.engine.plugins.dra_extended_resources import delegated_to_dra
from extender.engine.plugins.resource_allocation import ResourceAllocationScorer, Scorer, parse_resource_specs
from extender.engine.profile import ProfileError
from extender.engine.registry import register

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10

_PRESCORE_KEY = "PreScoreNodeResourcesFit"


def least_requested_score(requested: int, capacity: int) -> int:
    """Free share of a resource after placing the pod, 0..100."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    """Used share of a resource after placing the pod, 0..100 (requests above capacity count as full)."""
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def weighted_mean_scorer(per_resource: Any, weights: Sequence[int]) -> Scorer:
    """Weighted mean of a per-resource score over the resources the node has (integer division)."""

    def scorer(requested: list[int], _allocated: list[int], allocatable: list[int]) -> int:
        total = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            total += per_resource(requested[i], capacity) * weights[i]
            weight_sum += weights[i]
        return total // weight_sum if weight_sum else 0

    return scorer


def broken_linear(shape: Sequence[tuple[int, int]]) -> Any:
    """helper.BuildBrokenLinearFunction: piecewise linear through (utilization, score) points."""

    def fn(p: int) -> int:
        for i, (utilization, score) in enumerate(shape):
            if p <= utilization:
                if i == 0:
                    return score
                prev_u, prev_s = shape[i - 1]
                return prev_s + go_div((score - prev_s) * (p - prev_u), utilization - prev_u)
        return shape[-1][1]

    return fn


def requested_to_capacity_ratio_scorer(shape: Sequence[tuple[int, int]], weights: Sequence[int]) -> Scorer:
    """Score by a configured utilization→score shape; resources scoring 0 do not count (as upstream)."""
    points = [(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape]
    raw = broken_linear(points)

    def per_resource(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return int(raw(MAX_UTILIZATION))
        return int(raw(requested * MAX_UTILIZATION // capacity))

    def scorer(requested: list[int], _allocated: list[int], allocatable: list[int]) -> int:
        total = weight_sum = 0
        for i, capacity in enumerate(allocatable):
            if capacity == 0:
                continue
            score = per_resource(requested[i], capacity)
            if score > 0:
                total += score * weights[i]
                weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        # math.Round: halves away from zero (scores are non-negative here).
        return (2 * total + weight_sum) // (2 * weight_sum)

    return scorer


def _parse_shape(rtcr: Any, path: str) -> list[tuple[int, int]]:
    shape = (rtcr or {}).get("shape") if isinstance(rtcr, Mapping) else None
    if not isinstance(shape, list) or not shape:
        raise ProfileError(f"{path}.shape: at least one point is required")
    points: list[tuple[int, int]] = []
    for i, point in enumerate(shape):
        if not isinstance(point, Mapping):
            raise ProfileError(f"{path}.shape[{i}]: expected {{utilization, score}}")
        u, s = point.get("utilization", 0), point.get("score", 0)
        if not isinstance(u, int) or not 0 <= u <= 100:
            raise ProfileError(f"{path}.shape[{i}].utilization: must be in the range [0, 100]")
        if not isinstance(s, int) or not 0 <= s <= MAX_CUSTOM_PRIORITY_SCORE:
            raise ProfileError(f"{path}.shape[{i}].score: must be in the range [0, 10]")
        if points and u <= points[-1][0]:
            raise ProfileError(f"{path}.shape[{i}].utilization: values must be sorted in increasing order")
        points.append((u, s))
    return points


@register
class NodeResourcesFit(FilterPlugin, ScorePlugin):
    """Filter on free resources and pod count; score by the configured scoring strategy."""

    name = "NodeResourcesFit"
    node_local = True

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        path = "NodeResourcesFit args"
        ignored = self.args.get("ignoredResources") or []
        groups = self.args.get("ignoredResourceGroups") or []
        if not isinstance(ignored, list) or not all(isinstance(x, str) for x in ignored):
            raise ProfileError(f"{path}.ignoredResources: expected a list of resource names")
        if not isinstance(groups, list) or not all(isinstance(x, str) and "/" not in x for x in groups):
            raise ProfileError(f"{path}.ignoredResourceGroups: expected a list of names without '/'")
        self.ignored_resources = frozenset(ignored)
        self.ignored_groups = frozenset(groups)
        strategy = self.args.get("scoringStrategy") or {}
        if not isinstance(strategy, Mapping):
            raise ProfileError(f"{path}.scoringStrategy: expected an object")
        kind = strategy.get("type", LEAST_ALLOCATED)
        resources = parse_resource_specs(strategy.get("resources"), f"{path}.scoringStrategy.resources")
        weights = [w for _, w in resources]
        scorer: Scorer
        if kind == LEAST_ALLOCATED:
            scorer = weighted_mean_scorer(least_requested_score, weights)
        elif kind == MOST_ALLOCATED:
            scorer = weighted_mean_scorer(most_requested_score, weights)
        elif kind == REQUESTED_TO_CAPACITY_RATIO:
            shape = _parse_shape(strategy.get("requestedToCapacityRatio"),
                                 f"{path}.scoringStrategy.requestedToCapacityRatio")
            scorer = requested_to_capacity_ratio_scorer(shape, weights)
        else:
            raise ProfileError(f"{path}.scoringStrategy.type: scoring strategy {kind} is not supported")
        self.strategy = kind
        # Upstream builds Fit's scorer without enablePodLevelResources (only BalancedAllocation sets it), so
        # Fit's scores take container requests even when spec.resources sets pod-level ones (fit.go NewFit).
        self.scorer = ResourceAllocationScorer(resources, scorer, use_requested=False, pod_level_resources=False)

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        assert node.node is not None
        allocatable = node.node.allocatable
        requested = node.requested
        want = pod.requests
        reasons: list[str] = []
        unresolvable = False
        if len(node.pods) + 1 > allocatable.allowed_pods:
            reasons.append("Too many pods")
        if want.is_zero():
            return Status(Code.UNSCHEDULABLE, *reasons) if reasons else None
        if want.milli_cpu > 0 and want.milli_cpu > allocatable.milli_cpu - requested.milli_cpu:
            reasons.append("Insufficient cpu")
            unresolvable |= want.milli_cpu > allocatable.milli_cpu
        if want.memory > 0 and want.memory > allocatable.memory - requested.memory:
            reasons.append("Insufficient memory")
            unresolvable |= want.memory > allocatable.memory
        if want.ephemeral_storage > 0 and (
                want.ephemeral_storage > allocatable.ephemeral_storage - requested.ephemeral_storage):
            reasons.append("Insufficient ephemeral-storage")
            unresolvable |= want.ephemeral_storage > allocatable.ephemeral_storage
        # Upstream walks a Go map here, so the order among scalar resources is random; ours is sorted.
        for name in sorted(want.scalars):
            amount = want.scalars[name]
            if amount == 0:
                continue
            if is_extended_resource_name(name) and (
                    name in self.ignored_resources or name.split("/", 1)[0] in self.ignored_groups):
                continue
            capacity = allocatable.scalars.get(name, 0)
            if capacity == 0 and delegated_to_dra(state, node, name):
                continue
            if amount > capacity - requested.scalars.get(name, 0):
                reasons.append(f"Insufficient {name}")
                unresolvable |= amount > capacity
        if not reasons:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, *reasons)

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        state.data[_PRESCORE_KEY] = self.scorer.pod_request_list(pod.raw)
        return None

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        return self.scorer.score(node, state.data[_PRESCORE_KEY])
