"""The structured-parameters allocator: upstream's default "incubating" variant (dynamic-resource-allocation
v0.36.3 and v0.37.2, told apart by ``Features.minor``).

Usage (what the DynamicResources plugin does per pod, then per node)::

    state = allocated_state(all_claims_with_allocation)        # plus in-flight (assumed) claims
    allocator = Allocator(DEFAULT_FEATURES, state, classes_by_name, all_slices, cel_cache)
    results = allocator.allocate(node_name, node_labels, claims_to_allocate, deadline=time.monotonic() + 10)

``allocate`` returns one :class:`~extender.dra.results.AllocationResult` per claim (same order) when
every claim can be allocated on the node, None when there is no solution there, and raises
:class:`~extender.dra.results.AllocationError` with upstream's text otherwise (see that class for
``failed_on_node`` and ``timed_out``). ``deadline`` is a ``time.monotonic()`` value (FilterTimeout).

The search is upstream's: claims in order, their requests in order, the devices of each request
from the pools in :func:`~extender.dra.pools.gather_pools` order (slices by name, devices in slice
order), combinations not permutations within a request, backtracking on failure, and the first full
solution wins. A ``firstAvailable`` request tries its subrequests in order. Admin access does not
mark devices as in use; devices with ``allowMultipleAllocations`` are shared by consumed capacity;
partitions consume shared counters; NoSchedule/NoExecute device taints must be tolerated; pools with
binding conditions are searched last. The features on by default in v1.36 and v1.37 are all in
:data:`DEFAULT_FEATURES` (AdminAccess, PrioritizedList, PartitionableDevices, DeviceTaints,
DeviceBindingConditions + ResourceClaimDeviceStatus, ConsumableCapacity).

What v0.37.2 changed (each a branch on ``minor``; docs/versions.md lists them with their upstream files):
the claim limit is checked per request with the request named; a CEL runtime error names the device; a
claim config is added once, and one naming every request says so with no list; a distinctAttribute
constraint compares every device (v0.36.3 remembered one value per request); an ``All`` request counts
devices by their static capacity; a capacity amount that cannot be represented, or is negative, aborts the
allocation (:mod:`extender.dra.capacity`); shared counters are kept per pool ID; a shared device with a
share recorded without capacity does not charge its counters again; slices with shared counters are picked
by node like others and slices using compatibility groups are ignored (:mod:`extender.dra.pools`); a
request with derived attributes is refused.

An :class:`Allocator` keeps no per-call state and may be reused for every node of one pod.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from extender.dra.capacity import CapacityError, CapacityRules, consumed_amounts, fits_capacity
from extender.dra.cel import CelCache
from extender.dra.constraints import Constraint, DistinctAttribute, MatchAttribute
from extender.dra.pools import Pool, PoolError, gather_pools, node_matches
from extender.dra.records import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    ClaimRecord,
    DeviceClassRecord,
    DeviceRecord,
    DeviceRequest,
    Quantity,
    RequestSpec,
    SliceRecord,
)
from extender.dra.results import AllocationError, AllocationResult, ConfigResult, DeviceResult

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "DEFAULT_FEATURES",
    "AllocatedState",
    "Allocator",
    "DeviceID",
    "Features",
    "allocated_state",
]

#: ``resourceapi.AllocationResultsMaxSize``: at most this many devices per claim.
ALLOCATION_RESULTS_MAX_SIZE: Final = 32

#: ``(driver, pool, device)``.
DeviceID = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class Features:
    """The allocator's feature switches (upstream ``structured.Features``, from the DynamicResources plugin's
    ``AllocatorFeatures``) and the minor of the release whose allocator code runs (``minor``: where v0.36.3 and
    v0.37.2 differ, see docs/versions.md)."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    device_binding_and_status: bool = True
    consumable_capacity: bool = True
    fractional_capacity_range: bool = False
    compatibility_groups: bool = False
    minor: int = 37

    @property
    def capacity_rules(self) -> CapacityRules:
        """The consumable-capacity arithmetic of this release (see :mod:`extender.dra.capacity`)."""
        return CapacityRules(self.minor, self.fractional_capacity_range)


#: kube-scheduler's defaults (both releases): every feature of the incubating allocator is on.
DEFAULT_FEATURES: Final = Features()


@dataclass(slots=True)
class AllocatedState:
    """Devices already taken by allocated (or in-flight) claims (upstream ``AllocatedState``).

    ``devices``: dedicated devices (admin-access results are not counted); ``shared_device_ids``:
    ``(driver, pool, device, shareID)`` of shares of multi-allocatable devices;
    ``aggregated_capacity``: capacity consumed per shared device.
    """

    devices: set[DeviceID] = field(default_factory=set)
    shared_device_ids: set[tuple[str, str, str, str]] = field(default_factory=set)
    aggregated_capacity: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)

    def add_claim(self, claim: ClaimRecord, *, consumable_capacity: bool = True) -> None:
        """Count the devices of an allocated claim (upstream ``foreachAllocatedDevice``)."""
        if claim.allocation is None:
            return
        for result in claim.allocation.devices:
            if result.admin_access:
                continue
            device_id = (result.driver, result.pool, result.device)
            if consumable_capacity and result.share_id is not None:
                self.shared_device_ids.add((*device_id, result.share_id))
                if result.consumed_capacity is not None:
                    consumed = self.aggregated_capacity.setdefault(device_id, {})
                    for name, quantity in result.consumed_capacity.items():
                        consumed[name] = consumed.get(name, Fraction(0)) + quantity.value
                continue
            self.devices.add(device_id)

    def is_allocated(self, device_id: DeviceID) -> bool:
        """Upstream ``IsDeviceAllocated``: dedicated, shared or with consumed capacity."""
        if device_id in self.devices or device_id in self.aggregated_capacity:
            return True
        return any(shared[:3] == device_id for shared in self.shared_device_ids)


def allocated_state(claims: Iterable[ClaimRecord], *, consumable_capacity: bool = True) -> AllocatedState:
    """The allocated state of these claims (those without ``status.allocation`` are skipped)."""
    state = AllocatedState()
    for claim in claims:
        state.add_claim(claim, consumable_capacity=consumable_capacity)
    return state


class Allocator:
    """Allocates the devices of a pod's claims on one node at a time; see the module docstring."""

    def __init__(
        self,
        features: Features,
        allocated: AllocatedState,
        classes: Mapping[str, DeviceClassRecord],
        slices: Sequence[SliceRecord],
        cel_cache: CelCache,
    ) -> None:
        """Index the slices by node; shared slices (no node name, or with counters) go to every node."""
        self.features = features
        self.allocated = allocated
        self.classes = classes
        self.cel_cache = cel_cache
        self.all_slices = slices
        self.slices_on_node: dict[str, list[SliceRecord]] = {}
        self.slices_shared: list[SliceRecord] = []
        for s in slices:
            # v0.36.3 offers slices with shared counters to every node; v0.37.2 only those without a node name.
            if not s.node_name or (s.shared_counters and features.minor < 37):
                self.slices_shared.append(s)
            else:
                self.slices_on_node.setdefault(s.node_name, []).append(s)
        # Counters still available per pool name after the allocated devices (computed on first use).
        self.available_counters: dict[str, dict[str, dict[str, Fraction]]] = {}

    def allocate(
        self,
        node_name: str,
        node_labels: Mapping[str, str],
        claims: Sequence[ClaimRecord],
        deadline: float | None = None,
    ) -> list[AllocationResult] | None:
        """Allocate every claim on the node: results, None for "no solution", or AllocationError."""
        return _Run(self, node_name, node_labels, claims, deadline).run()


# ---------------------------------------------------------------------------------------------------------------
# One Allocate call


@dataclass(slots=True)
class _RequestData:
    request: RequestSpec
    parent: DeviceRequest | None
    device_class: DeviceClassRecord | None
    num_devices: int = 0
    selected_sub_request: int = 0
    all_devices: list[tuple[DeviceID, DeviceRecord, SliceRecord, Pool]] = field(default_factory=list)

    def name(self) -> str:
        return f"{self.parent.name}/{self.request.name}" if self.parent is not None else self.request.name


@dataclass(slots=True)
class _Chosen:
    """One device chosen for the current attempt."""

    request: str
    parent_request: str
    device_id: DeviceID
    device: DeviceRecord
    slice: SliceRecord
    spec: RequestSpec
    admin_access: bool | None
    share_id: str | None
    consumed_capacity: dict[str, Quantity] | None

    def request_name(self) -> str:
        return f"{self.parent_request}/{self.request}" if self.parent_request else self.request


class _MaxSizeExceeded(Exception):
    """Allocating the current request would exceed the per-claim result limit (backtrack harder)."""


_RequestKey = tuple[int, int, int]


class _Run:
    """The mutable state of one ``Allocator.allocate`` call."""

    def __init__(
        self,
        allocator: Allocator,
        node_name: str,
        node_labels: Mapping[str, str],
        claims: Sequence[ClaimRecord],
        deadline: float | None,
    ) -> None:
        self.a = allocator
        self.features = allocator.features
        self.node_name = node_name
        self.node_labels = node_labels
        self.claims = claims
        self.deadline = deadline
        self.pools: list[Pool] = []
        self.request_data: dict[_RequestKey, _RequestData] = {}
        self.constraints: list[list[Constraint]] = []
        self.match_cache: dict[tuple[int, _RequestKey], bool] = {}
        self.allocating_devices: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.results: list[list[_Chosen]] = [[] for _ in claims]

    # -- set-up ---------------------------------------------------------------------------------------------------

    def run(self) -> list[AllocationResult] | None:
        a = self.a
        slices_for_node = a.slices_on_node.get(self.node_name, []) + a.slices_shared
        try:
            self.pools = gather_pools(
                slices_for_node, self.node_name, self.node_labels, self.features.partitionable_devices, a.all_slices,
                minor=self.features.minor, compatibility_groups=self.features.compatibility_groups,
            )
        except PoolError as err:
            raise AllocationError(f"gather pool information: {err}") from None

        for claim_index, claim in enumerate(self.claims):
            min_devices = 0
            for request_index, request in enumerate(claim.spec.requests):
                subs = request.first_available
                if not self.features.prioritized_list and subs:
                    raise AllocationError(
                        f"claim {claim.key}, request {request.name}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled"
                    )
                if not self.features.consumable_capacity:
                    if request.exactly is not None and request.exactly.capacity_requests is not None:
                        raise AllocationError(
                            f"claim {claim.key}, request {request.name}: has capacity requests, "
                            "but the DRAConsumableCapacity feature is disabled"
                        )
                    for sub in subs:
                        if sub.capacity_requests is not None:
                            raise AllocationError(
                                f"claim {claim.key}, subrequest {sub.name}: has capacity requests, "
                                "but the DRAConsumableCapacity feature is disabled"
                            )
                if subs:
                    least = None
                    for sub_index, sub in enumerate(subs):
                        key = (claim_index, request_index, sub_index)
                        data = self._validate_request(claim, sub, request, key)
                        self.request_data[key] = data
                        least = data.num_devices if least is None else min(least, data.num_devices)
                    request_devices = least or 0
                else:
                    key = (claim_index, request_index, 0)
                    if request.exactly is None:
                        raise AllocationError(
                            f"claim {claim.key}, request {request.name}: "
                            "missing device class name (unsupported request type?)"
                        )
                    data = self._validate_request(claim, request.exactly, None, key)
                    self.request_data[key] = data
                    request_devices = data.num_devices
                if self.features.minor >= 37 and request_devices > ALLOCATION_RESULTS_MAX_SIZE - min_devices:
                    # v0.37.2: checked per request, before adding, with the request named.
                    raise AllocationError(
                        f"claim {claim.key}, request {request.name}: adding {request_devices} devices exceeds the "
                        f"claim limit of {ALLOCATION_RESULTS_MAX_SIZE}, with {min_devices} already accounted for"
                    )
                min_devices += request_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {claim.key}: number of requested devices {min_devices} "
                    f"exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            constraints: list[Constraint] = []
            for index, constraint in enumerate(claim.spec.constraints):
                if constraint.kind == "matchAttribute":
                    constraints.append(MatchAttribute(constraint.requests, constraint.attribute))
                elif constraint.kind == "distinctAttribute":
                    constraints.append(DistinctAttribute(constraint.requests, constraint.attribute,
                                                         every_device=self.features.minor >= 37))
                else:
                    raise AllocationError(
                        f"claim {claim.key}, constraint #{index}: empty constraint (unsupported constraint type?)"
                    )
            self.constraints.append(constraints)

        self.match_cache = {}
        try:
            done = self._allocate_one(0, 0, 0, 0, False, (0, 0, 0))
        except _MaxSizeExceeded:
            done = False
        if not done:
            if any(pool.invalid for pool in self.pools):
                raise AllocationError("invalid resource pools were encountered", failed_on_node=True)
            return None
        return [self._result(claim_index, claim) for claim_index, claim in enumerate(self.claims)]

    def _validate_request(
        self, claim: ClaimRecord, request: RequestSpec, parent: DeviceRequest | None, key: _RequestKey
    ) -> _RequestData:
        if self.features.minor >= 37 and request.derived_attributes:
            # v0.37.2: the incubating allocator cannot evaluate derived attributes (DRADerivedAttributes, alpha).
            raise AllocationError(f"claim {claim.key}, request {request.name}: cannot handle request with derived "
                                  "attributes, the feature is disabled")
        for index, selector in enumerate(request.selectors):
            if selector is None:
                raise AllocationError(
                    f"claim {claim.key}, request {request.name}, selector #{index}: "
                    "CEL expression empty (unsupported selector type?)"
                )
        if not self.features.admin_access and request.admin_access is not None:
            raise AllocationError(
                f"claim {claim.key}, request {request.name}: admin access is requested, but the feature is disabled"
            )
        if not request.device_class_name:
            raise AllocationError(
                f"claim {claim.key}, request {request.name}: missing device class name (unsupported request type?)"
            )
        device_class = self.a.classes.get(request.device_class_name)
        if device_class is None:
            raise AllocationError(
                f"claim {claim.key}, request {request.name}: could not retrieve device class "
                f'{request.device_class_name}: deviceclass.resource.k8s.io "{request.device_class_name}" not found'
            )
        data = _RequestData(request, parent, device_class)
        if request.allocation_mode == ALLOCATION_MODE_EXACT_COUNT:
            data.num_devices = request.count
        elif request.allocation_mode == ALLOCATION_MODE_ALL:
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"claim {claim.key}, request {request.name}: asks for all devices, "
                        f"but resource pool {pool.pool_id} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"claim {claim.key}, request {request.name}: asks for all devices, "
                        f"but resource pool {pool.pool_id} is currently invalid"
                    )
                for s in pool.slices:
                    for device in s.devices:
                        if not self._selectable(key, data, s, device):
                            continue
                        device_id = (s.driver, s.pool_name, device.name)
                        if self.features.consumable_capacity and not self._all_mode_capacity_fits(
                            key[0], request, device_id, device
                        ):
                            continue
                        data.all_devices.append((device_id, device, s, pool))
            data.num_devices = len(data.all_devices)
        else:
            raise AllocationError(
                f"claim {claim.key}, request {request.name}: unsupported count mode {request.allocation_mode}"
            )
        return data

    # -- the search -----------------------------------------------------------------------------------------------

    def _allocate_one(
        self,
        claim_index: int,
        request_index: int,
        sub_index: int,
        device_index: int,
        in_sub_request: bool,
        start: tuple[int, int, int],
    ) -> bool:
        """Find a device for one slot and recurse; True when every claim is done.

        Raises :class:`_MaxSizeExceeded` to backtrack past requests that cannot fit the result limit.
        """
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationError("filter operation aborted: context deadline exceeded", timed_out=True)
        if claim_index >= len(self.claims):
            return True
        claim = self.claims[claim_index]
        if request_index >= len(claim.spec.requests):
            try:
                return self._allocate_one(claim_index + 1, 0, 0, 0, False, (0, 0, 0))
            except _MaxSizeExceeded:
                return False

        key = (claim_index, request_index, sub_index)
        data = self.request_data[key]

        if not in_sub_request and data.parent is not None:
            all_exceeded = True
            sub = 0
            while (claim_index, request_index, sub) in self.request_data:
                try:
                    success = self._allocate_one(claim_index, request_index, sub, device_index, True, (0, 0, 0))
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if success:
                    data.selected_sub_request = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False

        request = data.request
        all_mode = request.allocation_mode == ALLOCATION_MODE_ALL
        if all_mode and not data.all_devices:
            return False
        if device_index >= data.num_devices:
            return self._allocate_one(claim_index, request_index + 1, 0, 0, False, (0, 0, 0))
        if len(self.results[claim_index]) + data.num_devices - device_index > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded

        if all_mode:
            device_id, device, s, pool = data.all_devices[device_index]
            undo = self._allocate_device(key, data, device_id, device, s, pool, must=True)
            if undo is None:
                return False
            try:
                done = self._allocate_one(claim_index, request_index, sub_index, device_index + 1, in_sub_request,
                                          (0, 0, 0))
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done

        admin = bool(request.admin_access)
        pools = self.pools
        for pool_index in range(start[0], len(pools)):
            pool = pools[pool_index]
            if pool.incomplete or pool.invalid:
                continue
            slice_start = start[1] if pool_index == start[0] else 0
            for slice_index in range(slice_start, len(pool.slices)):
                s = pool.slices[slice_index]
                device_start = start[2] if pool_index == start[0] and slice_index == start[1] else 0
                devices = s.devices
                for dev_index in range(device_start, len(devices)):
                    device = devices[dev_index]
                    device_id = (pool.driver, pool.name, device.name)
                    if admin:
                        if claim_index in self.allocating_devices.get(device_id, ()):
                            continue
                    elif self._in_use(device_id):
                        continue
                    if not self._selectable(key, data, s, device):
                        continue
                    if self.features.consumable_capacity and not self._capacity_fits(
                        claim_index, request, device_id, device, "checking"
                    ):
                        continue
                    undo = self._allocate_device(key, data, device_id, device, s, pool, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._allocate_one(claim_index, request_index, sub_index, device_index + 1,
                                                  in_sub_request, (pool_index, slice_index, dev_index + 1))
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _capacity_in_use(self, device_id: DeviceID) -> bool:
        """Whether a shared device already has a share (its counters are then charged already): by consumed
        capacity or in flight, and from v0.37.2 also by a share recorded without capacity (deviceCapacityInUse)."""
        if device_id in self.a.allocated.aggregated_capacity or device_id in self.allocating_capacity:
            return True
        return self.features.minor >= 37 and any(
            shared[:3] == device_id for shared in self.a.allocated.shared_device_ids
        )

    def _in_use(self, device_id: DeviceID) -> bool:
        return device_id in self.a.allocated.devices or bool(self.allocating_devices.get(device_id))

    def _all_mode_capacity_fits(
        self, claim_index: int, request: RequestSpec, device_id: DeviceID, device: DeviceRecord
    ) -> bool:
        """Whether a device counts for an ``All`` request: v0.37.2 looks at its static capacity only (a device
        whose capacity is taken stays in the list, and the request then fails), v0.36.3 at what is left."""
        if self.features.minor < 37:
            return self._capacity_fits(claim_index, request, device_id, device, "checking")
        try:
            return bool(fits_capacity(request.capacity_requests, device.capacity, {}, {}, self.features.capacity_rules))
        except CapacityError as err:
            raise AllocationError(
                f"claim {self.claims[claim_index].key}, request {request.name}: checking capacity for device "
                f"{device.name}: {err}"
            ) from None

    def _capacity_fits(self, claim_index: int, request: RequestSpec, device_id: DeviceID, device: DeviceRecord,
                       doing: str) -> bool:
        """Upstream's ``alloc.CmpRequestOverCapacity``; an amount that cannot be honoured (v0.37.2) aborts the
        allocation with ``doing`` ("checking" or "rechecking") in the text."""
        if (
            not request.capacity_requests
            and not device.has_request_policy
            and device_id not in self.allocating_capacity
            and device_id not in self.a.allocated.aggregated_capacity
        ):
            # Every capacity is consumed whole and nothing else holds any: it fits.
            return True
        try:
            fits = fits_capacity(
                request.capacity_requests,
                device.capacity,
                self.a.allocated.aggregated_capacity.get(device_id, {}),
                self.allocating_capacity.get(device_id, {}),
                self.features.capacity_rules,
            )
        except CapacityError as err:
            raise self._capacity_error(claim_index, request, doing, device_id, err) from None
        return bool(fits)

    def _capacity_error(self, claim_index: int, request: RequestSpec, doing: str, device_id: DeviceID,
                        err: CapacityError) -> AllocationError:
        return AllocationError(f"claim {self.claims[claim_index].key}, request {request.name}: {doing} capacity "
                               f"for device {'/'.join(device_id)}: {err}")

    def _selectable(self, key: _RequestKey, data: _RequestData, s: SliceRecord, device: DeviceRecord) -> bool:
        if not self.features.device_binding_and_status and device.binding_conditions:
            return False
        cache_key = (id(device), key)
        cached = self.match_cache.get(cache_key)
        if cached is not None:
            return cached
        result = True
        if (data.device_class is not None and not self._selectors_match(
            key, device, s, data.device_class, data.device_class.selectors
        )) or not self._selectors_match(key, device, s, None, data.request.selectors):
            result = False
        elif s.per_device_node_selection:
            try:
                result = node_matches(self.node_name, self.node_labels, device.node_name, device.all_nodes,
                                      device.node_selector)
            except PoolError as err:
                raise AllocationError(str(err)) from None
        self.match_cache[cache_key] = result
        return result

    def _selectors_match(
        self,
        key: _RequestKey,
        device: DeviceRecord,
        s: SliceRecord,
        device_class: DeviceClassRecord | None,
        selectors: tuple[str | None, ...],
    ) -> bool:
        driver = s.driver
        for index, expression in enumerate(selectors):
            where = (
                f"class {device_class.name}" if device_class is not None else f"claim {self.claims[key[0]].key}"
            )
            if expression is None:
                raise AllocationError(f"{where}: selector #{index}: CEL expression empty (unsupported selector type?)")
            compiled = self.a.cel_cache.get_or_compile(expression)
            if compiled.error is not None:
                raise AllocationError(f"{where}: selector #{index}: CEL compile error: {compiled.error}")
            matches, error = compiled.device_matches(device, driver)
            if error is not None:
                if self.features.minor >= 37:
                    # v0.37.2 allocator_incubating.go selectorsMatch names the device; cel/errors.go
                    # EnhanceRuntimeError adds a hint to a missing-key error.
                    hint = (". consider using CEL optional chaining (.? followed by orValue()) or guarding the check "
                            "with has() for optional fields") if "no such key:" in str(error) else ""
                    raise AllocationError(f"{where}: selector #{index} on device {driver}/{s.pool_name}/{device.name}: "
                                          f"CEL runtime error: {error}{hint}")
                raise AllocationError(f"{where}: selector #{index}: CEL runtime error: {error}")
            if not matches:
                return False
        return True

    def _allocate_device(
        self,
        key: _RequestKey,
        data: _RequestData,
        device_id: DeviceID,
        device: DeviceRecord,
        s: SliceRecord,
        pool: Pool,
        *,
        must: bool,
    ) -> Callable[[], None] | None:
        """Try one candidate; on success apply it and return the function that undoes it."""
        claim_index = key[0]
        request = data.request
        admin = bool(request.admin_access)
        multi = self.features.consumable_capacity and device.allow_multiple_allocations is True
        if not multi and admin and claim_index in self.allocating_devices.get(device_id, ()):
            return None
        if not admin and self._in_use(device_id):
            return None
        if not self.features.partitionable_devices and device.consumes_counters:
            return None

        skip_counters = multi and self._capacity_in_use(device_id)
        counters_reserved = False
        if not skip_counters and device.consumes_counters:
            if not self._reserve_counters(device, pool):
                return None
            counters_reserved = True

        if data.parent is None:
            base_name, sub_name, parent_name = request.name, "", ""
        else:
            base_name, sub_name, parent_name = data.parent.name, request.name, data.parent.name

        constraints = self.constraints[claim_index]
        added = 0

        def rollback(marked: bool, capacity: dict[str, Quantity] | None, capacity_existed: bool,
                     result_added: bool) -> None:
            if result_added:
                self.results[claim_index].pop()
            if capacity is not None:
                consumed = self.allocating_capacity.get(device_id)
                if consumed is not None:
                    for name, q in capacity.items():
                        if name in consumed:
                            consumed[name] -= q.value
                    if all(v == 0 for v in consumed.values()):
                        del self.allocating_capacity[device_id]
                if capacity_existed and device_id not in self.allocating_capacity:
                    self.allocating_capacity[device_id] = {}
            if marked:
                self.allocating_devices[device_id].discard(claim_index)
            for constraint in reversed(constraints[:added]):
                constraint.remove(base_name, sub_name, device, s.driver)
            if counters_reserved:
                self._release_counters(device, pool)

        if self.features.device_taints and _taint_prevents_allocation(device, request):
            rollback(False, None, False, False)
            return None

        for constraint in constraints:
            if not constraint.add(base_name, sub_name, device, s.driver):
                rollback(False, None, False, False)
                if must:
                    raise AllocationError(
                        f"claim {self.claims[claim_index].key}, request {request.name}: cannot add device "
                        f"{'/'.join(device_id)} because a claim constraint would not be satisfied"
                    )
                return None
            added += 1

        marked = False
        if not multi:
            self.allocating_devices.setdefault(device_id, set()).add(claim_index)
            marked = True

        taken: dict[str, Quantity] | None = None
        capacity_existed = False
        share_id: str | None = None
        if self.features.consumable_capacity:
            try:
                fits = self._capacity_fits(claim_index, request, device_id, device, "rechecking")
            except AllocationError:
                rollback(marked, None, False, False)
                raise
            if not fits:
                rollback(marked, None, False, False)
                return None
            if multi:
                try:
                    taken = consumed_amounts(request.capacity_requests, device.capacity, self.features.capacity_rules)
                except CapacityError as err:
                    rollback(marked, None, False, False)
                    raise self._capacity_error(claim_index, request, "computing consumed", device_id, err) from None
                share_id = str(uuid.uuid4())
                capacity_existed = device_id in self.allocating_capacity
                current = self.allocating_capacity.setdefault(device_id, {})
                for name, q in taken.items():
                    current[name] = current.get(name, Fraction(0)) + q.value

        self.results[claim_index].append(
            _Chosen(
                request=request.name,
                parent_request=parent_name,
                device_id=device_id,
                device=device,
                slice=s,
                spec=request,
                admin_access=True if admin else None,
                share_id=share_id,
                consumed_capacity=taken or None,
            )
        )
        capacity_record = taken
        return lambda: rollback(marked, capacity_record, capacity_existed, True)

    # -- partitionable devices ------------------------------------------------------------------------------------

    def _counter_key(self, pool: Pool) -> str:
        """The key counters are tracked under: the pool's name in v0.36.3 (two drivers' pools of one name share
        them), its driver and name from v0.37.2 (allocator_incubating.go availableCounters by PoolID)."""
        return pool.pool_id if self.features.minor >= 37 else pool.name

    def _available_for_pool(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        available = self.a.available_counters.get(self._counter_key(pool))
        if available is not None:
            return available
        available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
        for s in (*pool.slices, *pool.slices_not_targeting_node):
            for device in s.devices:
                if not self.a.allocated.is_allocated((s.driver, s.pool_name, device.name)):
                    continue
                for consumption in device.consumes_counters:
                    counter_set = available.get(consumption.counter_set)
                    if counter_set is None:
                        continue
                    for name, q in consumption.counters.items():
                        if name in counter_set:
                            counter_set[name] -= q.value
        self.a.available_counters[self._counter_key(pool)] = available
        return available

    def _reserve_counters(self, device: DeviceRecord, pool: Pool) -> bool:
        available = self._available_for_pool(pool)
        consumed = self.consumed_counters.setdefault(self._counter_key(pool), {})
        for consumption in device.consumes_counters:
            counter_set = consumed.setdefault(consumption.counter_set, {})
            for name, q in consumption.counters.items():
                counter_set[name] = counter_set.get(name, Fraction(0)) + q.value
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            for name, amount in counters.items():
                if amount < used.get(name, Fraction(0)):
                    self._release_counters(device, pool)
                    return False
        return True

    def _release_counters(self, device: DeviceRecord, pool: Pool) -> None:
        consumed = self.consumed_counters.get(self._counter_key(pool), {})
        for consumption in device.consumes_counters:
            counter_set = consumed.setdefault(consumption.counter_set, {})
            for name, q in consumption.counters.items():
                counter_set[name] = counter_set.get(name, Fraction(0)) - q.value

    # -- the result -----------------------------------------------------------------------------------------------

    def _result(self, claim_index: int, claim: ClaimRecord) -> AllocationResult:
        chosen = self.results[claim_index]
        devices = tuple(
            DeviceResult(
                request=c.request_name(),
                driver=c.device_id[0],
                pool=c.device_id[1],
                device=c.device_id[2],
                admin_access=c.admin_access,
                tolerations=c.spec.tolerations,
                binding_conditions=c.device.binding_conditions if self.features.device_binding_and_status else None,
                binding_failure_conditions=(
                    c.device.binding_failure_conditions if self.features.device_binding_and_status else None
                ),
                share_id=c.share_id,
                consumed_capacity=c.consumed_capacity,
            )
            for c in chosen
        )
        config: list[tuple[str, list[str], Mapping[str, Any]]] = []
        class_ranges: dict[str, tuple[int, int]] = {}
        for request_index in range(len(claim.spec.requests)):
            data = self.request_data[(claim_index, request_index, 0)]
            if data.parent is not None:
                data = self.request_data[(claim_index, request_index, data.selected_sub_request)]
            device_class = data.device_class
            if device_class is None:
                continue
            existing = class_ranges.get(device_class.name)
            if existing is not None:
                for i in range(*existing):
                    config[i][1].append(data.name())
                continue
            begin = len(config)
            for raw in device_class.config:
                config.append(("FromClass", [data.name()], raw))
            class_ranges[device_class.name] = (begin, len(config))
        once = self.features.minor >= 37
        for claim_config in claim.spec.config:
            if not claim_config.requests:
                config.append(("FromClaim", [], claim_config.raw))
                continue
            # v0.36.3 adds the config once per request it names; v0.37.2 once (the first match).
            for request_index in range(len(claim.spec.requests)):
                if self._named(claim_config.requests, claim_index, request_index):
                    config.append(("FromClaim", list(claim_config.requests), claim_config.raw))
                    if once:
                        break
        if once:
            # v0.37.2: a config that names every request (or the chosen subrequest of one) applies to all, and an
            # empty list says so.
            every = range(len(claim.spec.requests))
            for _, requests, _ in config:
                if requests and all(self._named(requests, claim_index, index) for index in every):
                    requests.clear()
        try:
            selector = self._node_selector(chosen)
        except ValueError as err:
            raise AllocationError(f"create NodeSelector for claim {claim.name}: {err}") from None
        return AllocationResult(
            devices=devices,
            config=tuple(ConfigResult(source, tuple(requests), raw) for source, requests, raw in config),
            node_selector=selector,
        )

    def _named(self, names: Sequence[str], claim_index: int, request_index: int) -> bool:
        """Whether a config's request list names the request, or the subrequest a ``firstAvailable`` request was
        satisfied with ("request/subrequest")."""
        data = self.request_data[(claim_index, request_index, 0)]
        request = self.claims[claim_index].spec.requests[request_index]
        if request.name in names:
            return True
        if data.parent is None:
            return False
        return f"{request.name}/{request.first_available[data.selected_sub_request].name}" in names

    def _node_selector(self, chosen: Sequence[_Chosen]) -> dict[str, Any] | None:
        fields: list[Mapping[str, Any]] = []
        expressions: list[Mapping[str, Any]] = []
        for c in chosen:
            if c.slice.per_device_node_selection:
                node_name, selector = c.device.node_name, c.device.node_selector_raw
            else:
                node_name, selector = c.slice.node_name, c.slice.node_selector_raw
            if node_name is not None or c.device.binds_to_node:
                return {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [self.node_name]}]}
                    ]
                }
            if selector is None:
                continue
            terms = selector.get("nodeSelectorTerms") or []
            if len(terms) == 1:
                _add_requirements(terms[0].get("matchFields") or [], fields)
                _add_requirements(terms[0].get("matchExpressions") or [], expressions)
            elif len(terms) > 1:
                raise ValueError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        if not fields and not expressions:
            return None
        term: dict[str, Any] = {}
        if expressions:
            term["matchExpressions"] = [dict(r) for r in expressions]
        if fields:
            term["matchFields"] = [dict(r) for r in fields]
        return {"nodeSelectorTerms": [term]}


def _add_requirements(source: Iterable[Mapping[str, Any]], target: list[Mapping[str, Any]]) -> None:
    for requirement in source:
        values = set(requirement.get("values") or ())
        if not any(
            other.get("key") == requirement.get("key")
            and other.get("operator") == requirement.get("operator")
            and set(other.get("values") or ()) == values
            for other in target
        ):
            target.append(requirement)


def _taint_prevents_allocation(device: DeviceRecord, request: RequestSpec) -> bool:
    for taint in device.taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not any(t.tolerates(taint) for t in request.tolerations):
            return True
    return False
