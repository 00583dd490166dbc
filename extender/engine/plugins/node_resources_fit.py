"""NodeResourcesFit: the pod's requests must fit the node's free allocatable resources; nodes are scored
by LeastAllocated, MostAllocated or RequestedToCapacityRatio (upstream plugins/noderesources/fit.go)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from extender.cluster.columns import Int64Array, NodeBatch, distinct, trunc_div
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
    Verdicts,
)
from extender.engine.plugins.dra_extended_resources import cel_list_attributes, delegated_to_dra
from extender.engine.plugins.resource_allocation import ResourceAllocationScorer, Scorer, parse_resource_specs
from extender.engine.profile import ProfileError
from extender.engine.registry import register
from extender.kube.resources import resize_deferred

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
MAX_UTILIZATION = 100
MAX_CUSTOM_PRIORITY_SCORE = 10

_PRESCORE_KEY = "PreScoreNodeResourcesFit"


def least_requested_score(requested: Int64Array, capacity: Int64Array) -> Int64Array:
    """Free share of a resource after placing the pod, 0..100 (0 where it does not fit or is absent)."""
    safe = np.where(capacity == 0, 1, capacity)
    return np.where((capacity == 0) | (requested > capacity), 0, (capacity - requested) * MAX_NODE_SCORE // safe)


def most_requested_score(requested: Int64Array, capacity: Int64Array) -> Int64Array:
    """Used share of a resource after placing the pod, 0..100 (requests above capacity count as full)."""
    safe = np.where(capacity == 0, 1, capacity)
    return np.where(capacity == 0, 0, np.minimum(requested, capacity) * MAX_NODE_SCORE // safe)


def weighted_mean_scorer(per_resource: Callable[[Int64Array, Int64Array], Int64Array],
                         weights: Sequence[int]) -> Scorer:
    """Weighted mean of a per-resource score over the resources each node has (integer division)."""
    column = np.array(weights, np.int64)[:, None]
    every = sum(weights)

    def scorer(requested: Int64Array, _allocated: Int64Array, allocatable: Int64Array) -> Int64Array:
        # Every resource at once (rows: resources, columns: nodes); integer sums, so exact in any order.
        weighted = per_resource(requested, allocatable) * column
        present = allocatable != 0
        if present.all():
            return weighted.sum(axis=0) // every if every > 0 else np.zeros(allocatable.shape[1], np.int64)
        total = np.where(present, weighted, 0).sum(axis=0)
        weight_sum = (present * column).sum(axis=0)
        result: Int64Array = np.where(weight_sum > 0, total // np.maximum(weight_sum, 1), 0)
        return result

    return scorer


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[Int64Array], Int64Array]:
    """helper.BuildBrokenLinearFunction: piecewise linear through (utilization, score) points."""

    def fn(p: Int64Array) -> Int64Array:
        result = np.full(p.shape, shape[-1][1], np.int64)
        # The first point at or above p decides; walking backwards lets the earliest one win.
        for i in range(len(shape) - 1, -1, -1):
            utilization, score = shape[i]
            if i == 0:
                value = np.full(p.shape, score, np.int64)
            else:
                prev_u, prev_s = shape[i - 1]
                value = prev_s + trunc_div((score - prev_s) * (p - prev_u), utilization - prev_u)
            result = np.where(p <= utilization, value, result)
        return result

    return fn


def requested_to_capacity_ratio_scorer(shape: Sequence[tuple[int, int]], weights: Sequence[int]) -> Scorer:
    """Score by a configured utilization→score shape; resources scoring 0 do not count (as upstream)."""
    points = [(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape]
    raw = broken_linear(points)

    def per_resource(requested: Int64Array, capacity: Int64Array) -> Int64Array:
        safe = np.where(capacity == 0, 1, capacity)
        over = (capacity == 0) | (requested > capacity)
        return raw(np.where(over, MAX_UTILIZATION, requested * MAX_UTILIZATION // safe))

    def scorer(requested: Int64Array, _allocated: Int64Array, allocatable: Int64Array) -> Int64Array:
        total = np.zeros(allocatable.shape[1], np.int64)
        weight_sum = np.zeros(allocatable.shape[1], np.int64)
        for i, weight in enumerate(weights):
            score = per_resource(requested[i], allocatable[i])
            counted = (allocatable[i] != 0) & (score > 0)
            total += np.where(counted, score * weight, 0)
            weight_sum += np.where(counted, weight, 0)
        # math.Round: halves away from zero (scores are non-negative here).
        safe = np.maximum(weight_sum, 1)
        result: Int64Array = np.where(weight_sum > 0, (2 * total + weight_sum) // (2 * safe), 0)
        return result

    return scorer


def parse_shape(rtcr: Any, path: str) -> list[tuple[int, int]]:
    """validateFunctionShape: a non-empty list of {utilization 0..100 increasing, score 0..10} points."""
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


_NATIVE_CHECKS = frozenset({"cpu", "memory", "ephemeral-storage"})


@register
class NodeResourcesFit(FilterPlugin, ScorePlugin):
    """Filter on free resources and pod count; score by the configured scoring strategy."""

    name = "NodeResourcesFit"
    node_local = True
    columnar = True

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
            shape = parse_shape(strategy.get("requestedToCapacityRatio"),
                                 f"{path}.scoringStrategy.requestedToCapacityRatio")
            scorer = requested_to_capacity_ratio_scorer(shape, weights)
        else:
            raise ProfileError(f"{path}.scoringStrategy.type: scoring strategy {kind} is not supported")
        self.strategy = kind
        # Upstream builds Fit's scorer without enablePodLevelResources (only BalancedAllocation sets it), so
        # Fit's scores take container requests even when spec.resources sets pod-level ones (fit.go NewFit).
        self.scorer = ResourceAllocationScorer(resources, scorer, use_requested=False, pod_level_resources=False,
                                               list_attributes=cel_list_attributes(self.release),
                                               minor=self.release.minor)

    def filter_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Verdicts:
        # PreFilter counts the incoming pod by its spec (no status resources), even when it names a node.
        want = pod.spec_requests
        # Each check sets one bit per node; a node's set of bits, in this order, is its list of reasons.
        reasons = ["Too many pods"]
        bits = (batch.column("pod_count") + 1 > batch.column("alloc_pods")).astype(np.int64)
        unresolvable = np.zeros(len(batch), np.bool_)
        if not want.is_zero():
            own = self._deferred_resize_node(pod, batch)
            checks: list[tuple[str, int, Int64Array, Int64Array]] = []
            if want.milli_cpu > 0:
                checks.append(("cpu", want.milli_cpu, batch.column("alloc_cpu"), batch.column("req_cpu")))
            if want.memory > 0:
                checks.append(("memory", want.memory, batch.column("alloc_mem"), batch.column("req_mem")))
            if want.ephemeral_storage > 0:
                checks.append(("ephemeral-storage", want.ephemeral_storage, batch.column("alloc_eph"),
                               batch.column("req_eph")))
            # Upstream walks a Go map here, so the order among scalar resources is random; ours is sorted.
            for name in sorted(want.scalars):
                amount = want.scalars[name]
                if amount == 0:
                    continue
                if is_extended_resource_name(name) and (
                        name in self.ignored_resources or name.split("/", 1)[0] in self.ignored_groups):
                    continue
                checks.append((name, amount, *batch.scalar(name)))
            # An extended resource a DeviceClass stands for is left to DRA on nodes that have none of it.
            delegated = delegated_to_dra(state)
            for name, amount, capacity, used in checks:
                need: Any = amount
                if own is not None:
                    # v1.37 fit.go adjustDeltasToAccomodateCacheDiscrepancy: on its own node a deferred resize
                    # needs only what it asks beyond what the node already counts for it (a zero extended
                    # resource delta is not checked at all).
                    row, held = own
                    delta = max(0, amount - held.get(name, 0))
                    need = np.full(len(batch), amount, np.int64)
                    need[row] = delta if delta or name in _NATIVE_CHECKS else -(2**62)
                short = need > capacity - used
                if name in delegated:
                    short &= capacity > 0
                bits |= short.astype(np.int64) << len(reasons)
                reasons.append(f"Insufficient {name}")
                unresolvable |= short & (amount > capacity)
        codes = np.where(bits == 0, 0, (bits << 1) | unresolvable)
        kinds = distinct(codes)
        statuses: list[Status] = []
        index = np.zeros(len(batch), np.int64)
        for key in kinds.tolist():
            if key == 0:
                continue
            mask = key >> 1
            statuses.append(Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if key & 1 else Code.UNSCHEDULABLE,
                                   *(reason for j, reason in enumerate(reasons) if mask >> j & 1)))
            index[codes == key] = len(statuses)
        return Verdicts(index, statuses)

    def _deferred_resize_node(self, pod: PodRecord, batch: NodeBatch) -> tuple[int, dict[str, int]] | None:
        """With InPlacePodVerticalScalingSchedulerPreemption, for a pod whose resize is deferred: the row of its own
        node in the batch and what that node already counts for it (from its cached copy), else None."""
        if not (pod.node_name and self.release.gate("InPlacePodVerticalScalingSchedulerPreemption")
                and resize_deferred(pod.raw)):
            return None
        for row, node in enumerate(batch.nodes):
            if node.name != pod.node_name:
                continue
            for held in node.pods:
                if held.uid == pod.uid:
                    res = held.requests
                    return row, {"cpu": res.milli_cpu, "memory": res.memory, "ephemeral-storage": res.ephemeral_storage,
                                 **res.scalars}
            return None
        return None

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        state.data[_PRESCORE_KEY] = (self.scorer.requests_of(pod), self.scorer.dra_view(state.snapshot.dra))
        return None

    def score_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Int64Array:
        requests, dra = state.data[_PRESCORE_KEY]
        return self.scorer.score(batch, requests, dra)
