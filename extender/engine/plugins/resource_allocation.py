"""Shared arithmetic of the resource-based scores (upstream noderesources/resource_allocation.go):
the pod's request per configured resource, and the node's allocatable and allocated amounts."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.resource import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name
from extender.engine.profile import ProfileError
from extender.kube.quantity import milli_value, value
from extender.kube.resources import pod_requests

# Scores assume these for containers that request nothing (schedutil DefaultMilliCPURequest/MemoryRequest).
NON_ZERO_DEFAULTS: Mapping[str, Fraction] = {CPU: Fraction(1, 10), MEMORY: Fraction(200 * 1024 * 1024)}

DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = ((CPU, 1), (MEMORY, 1))

# requested, allocated, allocatable (one entry per configured resource) -> score
Scorer = Callable[[list[int], list[int], list[int]], int]


def parse_resource_specs(specs: Any, path: str) -> tuple[tuple[str, int], ...]:
    """Validate ``resources: [{name, weight}]`` as upstream's args validation does (weight 1..100)."""
    if specs is None:
        return DEFAULT_RESOURCES
    if not isinstance(specs, list) or not specs:
        raise ProfileError(f"{path}: expected a non-empty list of {{name, weight}}")
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    for i, spec in enumerate(specs):
        if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str) or not spec["name"]:
            raise ProfileError(f"{path}[{i}]: expected {{name: <resource>, weight: <1..100>}}")
        weight = spec.get("weight", 1)
        if weight == 0 or weight is None:
            weight = 1
        if not isinstance(weight, int) or isinstance(weight, bool) or not 1 <= weight <= 100:
            raise ProfileError(f"{path}[{i}].weight: must be in the range [1, 100]")
        if spec["name"] in seen:
            raise ProfileError(f"{path}[{i}].name: duplicate resource {spec['name']!r}")
        seen.add(spec["name"])
        out.append((spec["name"], weight))
    return tuple(out)


def to_units(name: str, quantity: Fraction) -> int:
    """A quantity in the scheduler's integer units for that resource."""
    return milli_value(quantity) if name == CPU else value(quantity)


class ResourceAllocationScorer:
    """Computes per-resource vectors for one pod on one node and applies a scoring function."""

    def __init__(self, resources: Sequence[tuple[str, int]], scorer: Scorer, use_requested: bool,
                 pod_level_resources: bool = True) -> None:
        self.resources = tuple(resources)
        self.pod_level_resources = pod_level_resources
        self.names = tuple(name for name, _ in self.resources)
        self.weights = tuple(weight for _, weight in self.resources)
        self.scorer = scorer
        self.use_requested = use_requested

    def pod_request_list(self, raw_pod: Mapping[str, Any]) -> list[int]:
        """The pod's request for each configured resource (non-zero defaults unless use_requested)."""
        requests = pod_requests(raw_pod, non_missing=None if self.use_requested else NON_ZERO_DEFAULTS,
                                pod_level_resources=self.pod_level_resources)
        return [to_units(name, requests[name]) if name in requests else 0 for name in self.names]

    def vectors(self, node: NodeInfo, pod_requests_list: list[int]) -> tuple[list[int], list[int], list[int]]:
        """(requested incl. the pod, allocated before it, allocatable) per resource; 0s mean skipped."""
        count = len(self.names)
        requested = [0] * count
        allocated = [0] * count
        allocatable = [0] * count
        assert node.node is not None
        alloc = node.node.allocatable
        used = node.requested if self.use_requested else node.non_zero_requested
        for i, name in enumerate(self.names):
            pod_request = pod_requests_list[i]
            if name == CPU:
                node_alloc, node_used = alloc.milli_cpu, used.milli_cpu
            elif name == MEMORY:
                node_alloc, node_used = alloc.memory, used.memory
            elif name == EPHEMERAL_STORAGE:
                node_alloc, node_used = alloc.ephemeral_storage, node.requested.ephemeral_storage
            else:
                if pod_request == 0 and is_scalar_resource_name(name):
                    continue
                if name not in alloc.scalars:
                    continue
                node_alloc, node_used = alloc.scalars[name], node.requested.scalars.get(name, 0)
            if node_alloc == 0:
                continue
            allocatable[i] = node_alloc
            allocated[i] = node_used
            requested[i] = node_used + pod_request
        return requested, allocated, allocatable

    def score(self, node: NodeInfo, pod_requests_list: list[int]) -> int:
        """The scoring function applied to this node's vectors."""
        if self.names == (CPU, MEMORY):
            # The default resources: same arithmetic as vectors(), without the generic per-name dispatch.
            assert node.node is not None
            alloc = node.node.allocatable
            used = node.requested if self.use_requested else node.non_zero_requested
            cpu_alloc, mem_alloc = alloc.milli_cpu, alloc.memory
            cpu_used = used.milli_cpu if cpu_alloc else 0
            mem_used = used.memory if mem_alloc else 0
            return self.scorer(
                [cpu_used + pod_requests_list[0] if cpu_alloc else 0,
                 mem_used + pod_requests_list[1] if mem_alloc else 0],
                [cpu_used, mem_used], [cpu_alloc, mem_alloc])
        requested, allocated, allocatable = self.vectors(node, pod_requests_list)
        return self.scorer(requested, allocated, allocatable)
