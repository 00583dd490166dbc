"""Shared arithmetic of the resource-based scores (upstream noderesources/resource_allocation.go):
the pod's request per configured resource, and the node's allocatable and allocated amounts.

An extended resource a DeviceClass stands for, on a node with no allocatable of it, is counted in
devices of that class (allocatable) and those of them already allocated (allocated), as upstream does
with the DRAExtendedResource feature (on by default in 1.36).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from extender.cluster.columns import Int64Array, NodeBatch
from extender.cluster.dra_objects import DRAView
from extender.cluster.records import PodRecord, resource_status_key
from extender.cluster.resource import CPU, EPHEMERAL_STORAGE, MEMORY, is_scalar_resource_name
from extender.engine.plugins.dra_extended_resources import DeviceTotals, is_dra_extended_resource_name
from extender.engine.profile import ProfileError
from extender.kube.quantity import milli_value, value
from extender.kube.resources import pod_requests
from extender.memo import BoundedMemo

#: The request lists of pod templates (the scorer's configuration, the template's resource fields): shared by
#: every scorer and profile of the process, bounded as every memo a request reaches is (docs/operations.md).
_TEMPLATE_REQUESTS: BoundedMemo[tuple[str, bytes, bytes], list[int]] = BoundedMemo(
    "scorers' pod requests", max_bytes=4 * 1024 * 1024, max_entries=4096)
_REQUESTS_WEIGHT = 300  # the key's configuration string and the list, beside the key's JSON

# Scores assume these for containers that request nothing (schedutil DefaultMilliCPURequest/MemoryRequest).
NON_ZERO_DEFAULTS: Mapping[str, Fraction] = {CPU: Fraction(1, 10), MEMORY: Fraction(200 * 1024 * 1024)}

DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = ((CPU, 1), (MEMORY, 1))

# requested, allocated, allocatable (a row per configured resource, a column per node) -> score per node
Scorer = Callable[[Int64Array, Int64Array, Int64Array], Int64Array]


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
                 pod_level_resources: bool = True, *, status_resources: bool = False, list_attributes: bool = True,
                 minor: int = 37) -> None:
        self.resources = tuple(resources)
        self.pod_level_resources = pod_level_resources
        self.status_resources = status_resources
        self.minor = minor
        self.names = tuple(name for name, _ in self.resources)
        self._memo_key = (f"resource_allocation.requests:{use_requested}:{pod_level_resources}:{status_resources}:"
                          f"{minor}:{self.names}")
        self.weights = tuple(weight for _, weight in self.resources)
        self.scorer = scorer
        self.use_requested = use_requested
        self.devices = DeviceTotals(list_attributes=list_attributes)  # its own CEL cache, as upstream's scorer has

    def pod_request_list(self, raw_pod: Mapping[str, Any]) -> list[int]:
        """The pod's request for each configured resource (non-zero defaults unless use_requested); with
        ``status_resources``, the resources its status reports count, as release 1.<minor> reads them
        (resource_allocation.go calculatePodResourceRequest: UseStatusResources, which BalancedAllocation's scorer
        sets from InPlacePodVerticalScaling, GA, and Fit's scorer leaves unset)."""
        requests = pod_requests(raw_pod, non_missing=None if self.use_requested else NON_ZERO_DEFAULTS,
                                pod_level_resources=self.pod_level_resources,
                                use_status_resources=self.status_resources, minor=self.minor)
        return [to_units(name, requests[name]) if name in requests else 0 for name in self.names]

    def requests_of(self, pod: PodRecord) -> list[int]:
        """pod_request_list of a record, kept with it and shared by the replicas of its template (scorers
        configured alike share it; do not mutate)."""
        held: list[int] | None = pod.memo.get(self._memo_key)
        if held is not None:
            return held
        # Keyed by the JSON of every field the computation reads (the record's resource key, and what it reads
        # of the status when status resources count): the pods of one template compute it once.
        status_key = resource_status_key(pod.raw) if self.status_resources else b"-"
        memoised = bool(pod.resource_key and status_key)  # b"": a field JSON cannot encode, computed each time
        key = (self._memo_key, pod.resource_key, status_key)
        shared = _TEMPLATE_REQUESTS.get(key) if memoised else None
        if shared is None:
            shared = self.pod_request_list(pod.raw)
            if memoised:
                _TEMPLATE_REQUESTS.put(key, shared, len(pod.resource_key) + len(status_key) + _REQUESTS_WEIGHT)
        held = pod.memo[self._memo_key] = shared
        return held

    def dra_view(self, view: DRAView) -> DRAView | None:
        """The DRA view the scores read, or None when no configured resource is one a DeviceClass stands
        for (upstream's getDRAPreScoredParams: then no resource is counted in devices)."""
        classes = view.extended_resource_classes()
        backed = any(is_dra_extended_resource_name(name) and name in classes for name in self.names)
        return view if backed else None

    def vectors(self, batch: NodeBatch, pod_requests_list: list[int],
                dra: DRAView | None = None) -> tuple[Int64Array, Int64Array, Int64Array]:
        """(requested incl. the pod, allocated before it, allocatable): one row per configured resource,
        one column per node; all three are 0 where the resource is skipped for that node."""
        size = len(batch)
        prefix = "req_" if self.use_requested else "nonzero_"
        capacities: list[Int64Array] = []
        used: list[Int64Array] = []
        for i, name in enumerate(self.names):
            if name == CPU:
                node_alloc, node_used = batch.column("alloc_cpu"), batch.column(prefix + "cpu")
            elif name == MEMORY:
                node_alloc, node_used = batch.column("alloc_mem"), batch.column(prefix + "mem")
            elif name == EPHEMERAL_STORAGE:
                node_alloc, node_used = batch.column("alloc_eph"), batch.column("req_eph")
            elif pod_requests_list[i] == 0 and is_scalar_resource_name(name):
                node_alloc = node_used = np.zeros(size, np.int64)  # skipped on every node
            else:
                # A node without the resource in its allocatable skips it, as one with 0 of it does.
                node_alloc, node_used = batch.scalar(name)
                if dra is not None:
                    node_alloc, node_used = self._dra_counts(batch, name, node_alloc, node_used, dra)
            capacities.append(node_alloc)
            used.append(node_used)
        # Whole matrices in a few calls (each numpy call costs more than the arithmetic over a few hundred
        # nodes): a resource a node lacks (allocatable 0) counts 0 in all three.
        allocatable = np.array(capacities, np.int64).reshape(len(self.names), size)
        allocated = np.array(used, np.int64).reshape(len(self.names), size)
        requested = allocated + np.array(pod_requests_list, np.int64)[:, None]
        present = allocatable != 0
        if not present.all():
            allocated = np.where(present, allocated, 0)
            requested = np.where(present, requested, 0)
        return requested, allocated, allocatable

    def _dra_counts(self, batch: NodeBatch, name: str, node_alloc: Int64Array, node_used: Int64Array,
                    dra: DRAView) -> tuple[Int64Array, Int64Array]:
        """Where a node has none of a resource a DeviceClass stands for: its devices of the class, and
        those already allocated (nodes with no such device keep skipping the resource)."""
        class_name = dra.extended_resource_classes().get(name)
        klass = dra.classes.get(class_name) if class_name is not None else None
        without = (node_alloc == 0).nonzero()[0]
        if klass is None or not len(without):
            return node_alloc, node_used
        node_alloc, node_used = node_alloc.copy(), node_used.copy()
        for k in without.tolist():
            node = batch.nodes[k].node
            if node is None:
                continue
            capacity, taken = self.devices.totals(dra, klass, node.name, node.labels)
            if capacity > 0:
                node_alloc[k], node_used[k] = capacity, taken
        return node_alloc, node_used

    def score(self, batch: NodeBatch, pod_requests_list: list[int], dra: DRAView | None = None) -> Int64Array:
        """The scoring function applied to every node's vectors (``dra``: from :meth:`dra_view`)."""
        requested, allocated, allocatable = self.vectors(batch, pod_requests_list, dra)
        return self.scorer(requested, allocated, allocatable)
