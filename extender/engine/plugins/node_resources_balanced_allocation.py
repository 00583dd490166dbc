"""NodeResourcesBalancedAllocation: favours nodes whose resource usage stays balanced across resources
once the pod is placed (upstream plugins/noderesources/balanced_allocation.go, v1.36 form)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from extender.cluster.columns import Int64Array, NodeBatch, trunc_div
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import MAX_NODE_SCORE, SKIP, CycleState, ScorePlugin, Status
from extender.engine.plugins.dra_extended_resources import cel_list_attributes
from extender.engine.plugins.resource_allocation import ResourceAllocationScorer, parse_resource_specs
from extender.engine.registry import register

_PRESCORE_KEY = "PreScoreNodeResourcesBalancedAllocation"


def balance(requested: Int64Array, allocatable: Int64Array) -> Int64Array:
    """(1 - standard deviation of the used fractions) × 100, fractions capped at 1, truncated; over the
    resources each node has (rows: resources, columns: nodes), in float64 and in upstream's order of
    operations, so the result is bit for bit the scalar one."""
    present = allocatable != 0
    if present.all():
        # Every node has every resource (the usual case): no masking, and with two resources (cpu and memory
        # by default) upstream's two-fraction form for every node at once.
        if len(allocatable) == 2:
            both: Int64Array = _balance_of_two(requested, allocatable)
            return both
        fractions = np.minimum(requested / allocatable.astype(np.float64), 1.0)
        return _score(_std_of_more(fractions, present, np.full(allocatable.shape[1], len(fractions))))
    count = present.sum(axis=0)
    fractions = np.where(present, np.minimum(requested / np.where(present, allocatable, 1).astype(np.float64), 1.0),
                         0.0)
    std = np.zeros(allocatable.shape[1], np.float64)
    two = count == 2
    if two.any():
        # The two present fractions, whichever rows they are in: the first and the last present one.
        first = fractions[np.argmax(present, axis=0), np.arange(present.shape[1])]
        last = fractions[present.shape[0] - 1 - np.argmax(present[::-1], axis=0), np.arange(present.shape[1])]
        std = np.where(two, np.abs((first - last) / 2), std)
    more = count > 2
    if more.any():
        std = np.where(more, _std_of_more(fractions, present, count), std)
    return _score(std)


def _balance_of_two(used: Any, allocatable: Int64Array) -> Any:
    """balance where every node has both of two resources: upstream's two-fraction form, |f1 - f2| / 2.
    ``used`` is (two resources, nodes), or several such stacked (..., 2, nodes): one result per stack."""
    fractions = np.minimum(used / allocatable.astype(np.float64), 1.0)
    return _score(np.abs((fractions[..., 0, :] - fractions[..., 1, :]) / 2))


def _std_of_more(fractions: Any, present: Any, count: Any) -> Any:
    """The standard deviation of each node's present fractions (rows: resources), summed left to right as a
    sequential sum; absent rows add an exact 0.0."""
    total = np.zeros(fractions.shape[1], np.float64)
    for row in fractions:
        total = total + row
    mean = total / np.maximum(count, 1)
    squares = np.zeros(fractions.shape[1], np.float64)
    for row, has in zip(fractions, present, strict=True):
        squares = squares + np.where(has, (row - mean) * (row - mean), 0.0)
    return np.sqrt(squares / np.maximum(count, 1))


def _score(std: Any) -> Int64Array:
    scores: Int64Array = ((1 - std) * MAX_NODE_SCORE).astype(np.int64)  # non-negative: truncation is int()
    return scores


def balanced_resource_scorer(requested: Int64Array, allocated: Int64Array, allocatable: Int64Array) -> Int64Array:
    """50 plus half of how much placing the pod improves the balance (it can also worsen it)."""
    if len(allocatable) == 2 and (allocatable != 0).all():
        # Two resources every node has (cpu and memory by default): both balances in one pass.
        with_pod, without_pod = _balance_of_two(np.stack((requested, allocated)), allocatable)
    else:
        with_pod, without_pod = balance(requested, allocatable), balance(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return half + trunc_div(half + with_pod - without_pod, 2)


@register
class NodeResourcesBalancedAllocation(ScorePlugin):
    """Score: balance of cpu/memory (or the configured resources) usage after placing the pod."""

    name = "NodeResourcesBalancedAllocation"
    node_local = True
    columnar = True

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        resources = parse_resource_specs(self.args.get("resources"), "NodeResourcesBalancedAllocation args.resources")
        self.scorer = ResourceAllocationScorer(resources, balanced_resource_scorer, use_requested=True,
                                               status_resources=True,
                                               list_attributes=cel_list_attributes(self.release),
                                               minor=self.release.minor)

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        requests = self.scorer.requests_of(pod)
        if not any(requests):
            return SKIP  # a best-effort pod does not change any node's balance
        state.data[_PRESCORE_KEY] = (requests, self.scorer.dra_view(state.snapshot.dra))
        return None

    def score_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Int64Array:
        requests, dra = state.data[_PRESCORE_KEY]
        return self.scorer.score(batch, requests, dra)
