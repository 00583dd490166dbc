"""The v1.12 resource priorities, on the 0..10 scale: LeastRequestedPriority, MostRequestedPriority,
BalancedResourceAllocation, RequestedToCapacityRatioPriority and ResourceLimitsPriority.

Upstream: k8s.io/kubernetes v1.12.10 pkg/scheduler/algorithm/priorities/ (resource_allocation.go,
least_requested.go, most_requested.go, balanced_resource_allocation.go, requested_to_capacity_ratio.go,
resource_limits.go).

The first four score ``requested = pod non-zero request + node non-zero requested`` against the node's
allocatable cpu and memory (v1.12's non-zero request: regular containers only, 100m / 200Mi for a
container that names no cpu / memory request):

- LeastRequested: per resource ``(cap - req) * 10 / cap`` (0 when cap is 0 or req > cap), then
  ``(cpu + mem) / 2``, integer division throughout.
- MostRequested: per resource ``req * 10 / cap`` (0 when cap is 0 or req > cap), same averaging.
- BalancedResourceAllocation: fractions ``req / cap`` in float64 (1 when cap is 0); 0 if either is >= 1,
  else ``int((1 - |cpuFraction - memFraction|) * 10)``. (The volume-aware variant sat behind the alpha
  gate BalanceAttachedNodeVolumes, off by default, and is not modelled.)
- RequestedToCapacityRatio: utilisation ``100 - (cap - req) * 100 / cap`` (100 when cap is 0 or req >
  cap) through a broken linear function (default points {0: 10, 100: 0}), then ``(cpu + mem) / 2``. Args
  ``utilizationShape: [{utilization, score}]`` (v1.12's policy argument), validated as NewFunctionShape.
- ResourceLimitsPriority: 1 when the pod's cpu limit or memory limit (containers summed, raised to any
  init container) is non-zero and within the node's allocatable, else 0. (It sat behind the alpha gate
  ResourceLimitsPriorityFunction in v1.12, so it is not in the preset.)

None of them has a reduce step: the map score is the final score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import CycleState, ScorePlugin, Status, go_div
from extender.engine.plugins.legacy.common import MAX_PRIORITY, legacy_pod, node_of, node_totals, pod_error
from extender.engine.profile import ProfileError
from extender.engine.registry import register

_MAX_UTILIZATION = 100


class _ResourceAllocationPriority(ScorePlugin):
    """ResourceAllocationPriority.PriorityMap: a scorer over (requested, allocatable) cpu and memory."""

    max_score = MAX_PRIORITY

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        return pod_error(pod)

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        legacy = legacy_pod(pod)
        totals = node_totals(node)
        allocatable = node_of(node).allocatable
        return self.scorer(legacy.non0_cpu + totals.non0_cpu, allocatable.milli_cpu,
                           legacy.non0_mem + totals.non0_mem, allocatable.memory)

    def scorer(self, cpu: int, cpu_cap: int, mem: int, mem_cap: int) -> int:
        """The priority's arithmetic on the requested and allocatable cpu and memory."""
        raise NotImplementedError


def _least_requested(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_PRIORITY, capacity)


def _most_requested(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return go_div(requested * MAX_PRIORITY, capacity)


@register
class LeastRequestedPriority(_ResourceAllocationPriority):
    """Favours nodes with more unrequested cpu and memory."""

    name = "LeastRequestedPriority"

    def scorer(self, cpu: int, cpu_cap: int, mem: int, mem_cap: int) -> int:
        return go_div(_least_requested(cpu, cpu_cap) + _least_requested(mem, mem_cap), 2)


@register
class MostRequestedPriority(_ResourceAllocationPriority):
    """Favours nodes with more requested cpu and memory (the ClusterAutoscalerProvider's choice)."""

    name = "MostRequestedPriority"

    def scorer(self, cpu: int, cpu_cap: int, mem: int, mem_cap: int) -> int:
        return go_div(_most_requested(cpu, cpu_cap) + _most_requested(mem, mem_cap), 2)


def _fraction(requested: int, capacity: int) -> float:
    # float64(requested) / float64(capacity): each operand rounded to a double first, as Go converts them.
    return 1.0 if capacity == 0 else float(requested) / float(capacity)


@register
class BalancedResourceAllocation(_ResourceAllocationPriority):
    """Favours nodes whose cpu and memory fractions would be close to each other."""

    name = "BalancedResourceAllocation"

    def scorer(self, cpu: int, cpu_cap: int, mem: int, mem_cap: int) -> int:
        cpu_fraction = _fraction(cpu, cpu_cap)
        mem_fraction = _fraction(mem, mem_cap)
        if cpu_fraction >= 1 or mem_fraction >= 1:
            return 0
        return int((1 - abs(cpu_fraction - mem_fraction)) * float(MAX_PRIORITY))


DEFAULT_FUNCTION_SHAPE: tuple[tuple[int, int], ...] = ((0, 10), (100, 0))


def new_function_shape(points: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """NewFunctionShape: validate (utilization, score) points; raises ValueError with upstream's message."""
    if not points:
        raise ValueError("at least one point must be specified")
    for i in range(1, len(points)):
        if points[i - 1][0] >= points[i][0]:
            raise ValueError(f"utilization values must be sorted. Utilization[{i - 1}]=={points[i - 1][0]} >= "
                             f"Utilization[{i}]=={points[i][0]}")
    for i, (utilization, score) in enumerate(points):
        if utilization < 0:
            raise ValueError(f"utilization values must not be less than 0. Utilization[{i}]=={utilization}")
        if utilization > _MAX_UTILIZATION:
            raise ValueError(f"utilization values must not be greater than {_MAX_UTILIZATION}. "
                             f"Utilization[{i}]=={utilization}")
        if score < 0:
            raise ValueError(f"score values must not be less than 0. Score[{i}]=={score}")
        if score > MAX_PRIORITY:
            # (sic) upstream's message
            raise ValueError(f"score valuses not be greater than {MAX_PRIORITY}. Score[{i}]=={score}")
    return tuple(points)


def broken_linear_function(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """buildBrokenLinearFunction: linear interpolation between the points, flat outside them."""

    def evaluate(p: int) -> int:
        for i, (utilization, score) in enumerate(shape):
            if p <= utilization:
                if i == 0:
                    return shape[0][1]
                prev_u, prev_s = shape[i - 1]
                return prev_s + go_div((score - prev_s) * (p - prev_u), utilization - prev_u)
        return shape[-1][1]

    return evaluate


@register
class RequestedToCapacityRatioPriority(_ResourceAllocationPriority):
    """Scores utilisation through a configurable broken linear function."""

    name = "RequestedToCapacityRatioPriority"

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        raw = self.args.get("utilizationShape")
        points: Sequence[tuple[int, int]] = DEFAULT_FUNCTION_SHAPE
        if raw is not None:
            if not isinstance(raw, list):
                raise ProfileError(f"{self.name} args.utilizationShape: expected a list of {{utilization, score}}")
            parsed: list[tuple[int, int]] = []
            for i, point in enumerate(raw):
                if not isinstance(point, dict):
                    raise ProfileError(f"{self.name} args.utilizationShape[{i}]: expected {{utilization, score}}")
                u, s = point.get("utilization", 0), point.get("score", 0)
                if not all(isinstance(x, int) and not isinstance(x, bool) for x in (u, s)):
                    raise ProfileError(f"{self.name} args.utilizationShape[{i}]: utilization and score must be "
                                       "integers")
                parsed.append((u, s))
            points = parsed
        try:
            self.points = new_function_shape(points)
        except ValueError as err:
            raise ProfileError(f"{self.name} args.utilizationShape: invalid RequestedToCapacityRatioPriority "
                               f"arguments: {err}") from err
        self.function = broken_linear_function(self.points)

    def _resource(self, requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return self.function(_MAX_UTILIZATION)
        return self.function(_MAX_UTILIZATION - go_div((capacity - requested) * _MAX_UTILIZATION, capacity))

    def scorer(self, cpu: int, cpu_cap: int, mem: int, mem_cap: int) -> int:
        return go_div(self._resource(cpu, cpu_cap) + self._resource(mem, mem_cap), 2)


@register
class ResourceLimitsPriority(ScorePlugin):
    """1 when the node's allocatable satisfies the pod's cpu or memory limit, else 0."""

    name = "ResourceLimitsPriority"
    max_score = MAX_PRIORITY

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        return pod_error(pod)

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        legacy = legacy_pod(pod)
        allocatable = node_of(node).allocatable

        def fits(limit: int, capacity: int) -> bool:
            return limit != 0 and capacity != 0 and limit <= capacity

        return 1 if fits(legacy.limit_cpu, allocatable.milli_cpu) or fits(legacy.limit_mem, allocatable.memory) else 0
