"""NodeResourcesBalancedAllocation: favours nodes whose resource usage stays balanced across resources
once the pod is placed (upstream plugins/noderesources/balanced_allocation.go, v1.36 form)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import MAX_NODE_SCORE, SKIP, CycleState, ScorePlugin, Status, go_div
from extender.engine.plugins.resource_allocation import ResourceAllocationScorer, parse_resource_specs
from extender.engine.registry import register

_PRESCORE_KEY = "PreScoreNodeResourcesBalancedAllocation"


def balance(requested: list[int], allocatable: list[int]) -> int:
    """(1 - standard deviation of the used fractions) × 100, fractions capped at 1, truncated."""
    fractions = [min(float(requested[i]) / float(capacity), 1.0) for i, capacity in enumerate(allocatable) if capacity]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def balanced_resource_scorer(requested: list[int], allocated: list[int], allocatable: list[int]) -> int:
    """50 plus half of how much placing the pod improves the balance (it can also worsen it)."""
    with_pod = balance(requested, allocatable)
    without_pod = balance(allocated, allocatable)
    half = MAX_NODE_SCORE // 2
    return half + go_div(half + with_pod - without_pod, 2)


@register
class NodeResourcesBalancedAllocation(ScorePlugin):
    """Score: balance of cpu/memory (or the configured resources) usage after placing the pod."""

    name = "NodeResourcesBalancedAllocation"
    node_local = True

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        resources = parse_resource_specs(self.args.get("resources"), "NodeResourcesBalancedAllocation args.resources")
        self.scorer = ResourceAllocationScorer(resources, balanced_resource_scorer, use_requested=True)

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        requests = self.scorer.pod_request_list(pod.raw)
        if not any(requests):
            return SKIP  # a best-effort pod does not change any node's balance
        state.data[_PRESCORE_KEY] = requests
        return None

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        return self.scorer.score(node, state.data[_PRESCORE_KEY])
