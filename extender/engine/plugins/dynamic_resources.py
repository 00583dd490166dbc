"""DynamicResources: the pod's ResourceClaims must be allocatable (or already usable) on the node.

Upstream: ``pkg/scheduler/framework/plugins/dynamicresources`` (kubernetes v1.36.3), with the feature
gates as 1.36 sets them by default (prioritized lists, admin access, partitionable devices, device
taints, consumable capacity, binding conditions, the filter timeout).

- PreFilter resolves ``spec.resourceClaims``: a claim by name, or a template's claim through
  ``status.resourceClaimStatuses`` (which must be controlled by the pod). A claim that is missing, being
  deleted, not the pod's, or that names a DeviceClass that does not exist rejects the pod on every node
  (UnschedulableAndUnresolvable). Allocated claims contribute their allocation's node selector; the
  others are handed to the structured-parameters allocator (``extender.dra``), built once per pod over
  the slices, classes and the devices every other claim holds (in-flight assumptions included).
- Filter rejects a node outside an allocated claim's node selector ("resourceclaim not available on the
  node") and runs the allocator for the unallocated claims: no solution is "cannot allocate all claims",
  a node-local failure is reported with the allocator's text, and running past the filter timeout or a
  broken claim/class (a bad CEL expression) is an Error, as upstream.
- Score rewards the node where prioritized-list requests got their earlier alternatives
  (``FirstAvailableDeviceRequestMaxSize - index`` per allocated subrequest), normalised with
  DefaultNormalizeScore. Upstream has no PreScore: a pod without claims scores 0 on every node, which
  the extender short-cuts with a Skip that explain shows as the zeros upstream's log prints
  (``skip_scores_zero``).
- PostFilter, when no node fits: a claim that Filter found unavailable on some node (its allocation's
  node selector, or a binding that failed or timed out) and that is reserved for no pod (or only for
  this one) is deallocated, so that the next cycle may allocate it elsewhere; a leftover claim for
  extended resources is deleted. Nothing is written here: the write is returned as an action, which a
  simulation applies to its own cache.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from extender.cluster.dra_objects import ClaimEntry, DRAView
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.cluster.snapshot import Snapshot
from extender.dra.allocator import Allocator, Features
from extender.dra.cel import CelCache
from extender.dra.records import claim_record
from extender.dra.results import AllocationError, AllocationResult
from extender.engine.framework import (
    SKIP,
    Code,
    CycleState,
    FilterPlugin,
    NodeToStatus,
    PostFilterPlugin,
    PostFilterResult,
    ScorePlugin,
    Status,
    default_normalize,
    unresolvable,
)
from extender.engine.plugins.dra_claims import (
    BindingFailed,
    ClaimsUnusable,
    claim_allocation,
    claim_binding_timed_out,
    claim_meta,
    claim_ready_for_binding,
    claim_requests,
    claim_status,
    has_claims,
    pod_claims,
)
from extender.engine.plugins.dra_extended_resources import (
    SPECIAL_CLAIM_NAME,
    cel_list_attributes,
    dra_resources_on_node,
    existing_extended_claim,
    extended_claim_requests,
    in_memory_extended_claim,
    wants_dra_extended_resources,
)
from extender.engine.profile import ProfileError
from extender.engine.registry import register
from extender.kube.duration import parse_duration
from extender.kube.release import Release
from extender.kube.resources import resize_deferred
from extender.kube.selectors import NodeSelector, SelectorError, compile_node_selector
from extender.memo import BoundedMemo

NAME = "DynamicResources"
STATE_KEY = NAME
DEFAULT_FILTER_TIMEOUT_SECONDS = 10.0  # DynamicResourcesFilterTimeoutDefault
DEFAULT_BINDING_TIMEOUT_SECONDS = 600.0  # DynamicResourcesBindingTimeoutDefault
FIRST_AVAILABLE_MAX_SIZE = 8  # resourceapi.FirstAvailableDeviceRequestMaxSize

REASON_NOT_AVAILABLE = "resourceclaim not available on the node"
RECENT_CYCLES = 64
_RECENT_CYCLES_BYTES = 16 * 1024 * 1024
_NODE_ALLOCATIONS_WEIGHT = 512  # one node's allocation results, about
REASON_CANNOT_ALLOCATE = "cannot allocate all claims"
RESERVED_FOR_MAX_SIZE = 256  # resourceapi.ResourceClaimReservedForMaxSize

# PostFilter's answers (dynamicresources.go, PostFilter), all Unschedulable.
POST_FILTER_NO_CLAIMS = "no new claims to deallocate"
POST_FILTER_DEALLOCATED = "deallocation of ResourceClaim completed"
POST_FILTER_DELETED = "deletion of ResourceClaim completed"
POST_FILTER_STILL = "still not schedulable"
# cycleState.Read's error when PreFilter never ran (an earlier PreFilter rejected the pod): PostFilter's Error.
STATE_NOT_FOUND = "not found"


# ---- plugin args -------------------------------------------------------------------------------
def _duration_arg(args: Mapping[str, Any], key: str, default: float) -> float:
    value = args.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ProfileError(f"{NAME} args.{key}: expected a duration string such as \"10s\"")
    try:
        return parse_duration(value)
    except ValueError as err:
        raise ProfileError(f"{NAME} args.{key}: {err}") from None


# ---- per-cycle state ---------------------------------------------------------------------------
@dataclass
class _State:
    claims: list[ClaimEntry]
    available_on: list[NodeSelector | None]
    to_allocate: list[int]  # indices into claims of the unallocated ones
    allocator: Allocator | None = None
    node_allocations: dict[str, list[AllocationResult]] = field(default_factory=dict)
    # The claim standing for DRA-backed extended resources (last in claims), its request of each
    # resource set, and the variant of it each node allocated (None where nothing was needed).
    extended: int | None = None
    extended_variants: dict[tuple[str, ...], ClaimEntry] = field(default_factory=dict)
    node_extended: dict[str, ClaimEntry | None] = field(default_factory=dict)
    # The node object each allocation was made for: a later call may reuse it only for that object.
    node_records: dict[str, object] = field(default_factory=dict)
    # Per claim, "request/subrequest" -> its prioritized-list score (computed on first use).
    subrequest_scores: list[dict[str, int]] | None = None
    # Indices of claims Filter found unavailable on some node (state.unavailableClaims): PostFilter's choice.
    unavailable: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class DeallocateClaim:
    """PostFilter's write: the claim's status without allocation, reservations and device status."""

    claim: Mapping[str, Any]  # the claim as it is now
    others: tuple[str, ...] = ()  # other claims that qualified: upstream picks one at random

    def describe(self) -> dict[str, Any]:
        """The claim, the node its allocation is for, and the alternatives."""
        out: dict[str, Any] = {"action": "deallocate", "claim": _claim_key(self.claim)}
        nodes = _allocated_nodes(self.claim)
        if nodes:
            out["allocatedFor"] = nodes
        if self.others:
            out["orOneOf"] = list(self.others)
        return out

    def apply(self, cache: Any) -> None:
        """Write the deallocated claim into a simulation's cache."""
        cleared = ("allocation", "reservedFor", "devices")
        status = {k: v for k, v in claim_status(self.claim).items() if k not in cleared}
        cache.dra.upsert("ResourceClaim", {**self.claim, "status": status})


@dataclass(frozen=True)
class DeleteClaim:
    """PostFilter's write for a leftover claim of the pod's extended resources: it is deleted."""

    claim: Mapping[str, Any]

    def describe(self) -> dict[str, Any]:
        """The claim deleted."""
        return {"action": "delete", "claim": _claim_key(self.claim)}

    def apply(self, cache: Any) -> None:
        """Remove the claim from a simulation's cache."""
        cache.dra.remove("ResourceClaim", _claim_key(self.claim))


def _claim_key(claim: Mapping[str, Any]) -> str:
    meta = claim_meta(claim)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


def _allocated_nodes(claim: Mapping[str, Any]) -> list[str]:
    """The node names an allocation's node selector names by metadata.name (the usual, single-node case)."""
    allocation = claim_allocation(claim) or {}
    selector = allocation.get("nodeSelector")
    terms = selector.get("nodeSelectorTerms") if isinstance(selector, Mapping) else None
    names: list[str] = []
    for term in terms if isinstance(terms, list) else []:
        fields = term.get("matchFields") if isinstance(term, Mapping) else None
        for req in fields if isinstance(fields, list) else []:
            if isinstance(req, Mapping) and req.get("key") == "metadata.name" and req.get("operator") == "In":
                names += [str(v) for v in req.get("values") or []]
    return names


def _reserved_for(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    reserved = claim_status(claim).get("reservedFor")
    return [r for r in reserved if isinstance(r, Mapping)] if isinstance(reserved, list) else []


def _validate_class(dra: DRAView, class_name: Any, request_name: str) -> Status | None:
    """validateDeviceClass: an empty class is an Error, a missing one UnschedulableAndUnresolvable."""
    if not class_name:
        return Status(Code.ERROR, f"request {request_name}: unsupported request type")
    if str(class_name) not in dra.classes:
        return unresolvable(f"request {request_name}: device class {class_name} does not exist")
    return None


def _check_requests(dra: DRAView, claim: Mapping[str, Any]) -> Status | None:
    meta = claim_meta(claim)
    claim_ref = f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
    for request in claim_requests(claim):
        request_name = str(request.get("name") or "")
        exactly = request.get("exactly")
        first = request.get("firstAvailable")
        if isinstance(exactly, Mapping):
            status = _validate_class(dra, exactly.get("deviceClassName"), request_name)
            if status is not None:
                return status
        elif isinstance(first, list) and first:
            for sub in first:
                sub_name = str(sub.get("name") or "") if isinstance(sub, Mapping) else ""
                class_name = sub.get("deviceClassName") if isinstance(sub, Mapping) else None
                status = _validate_class(dra, class_name, f"{request_name}/{sub_name}")
                if status is not None:
                    return status
        else:
            return unresolvable(f"resource claim {claim_ref}, request {request_name}: unknown request type")
    return None


#: The node feature an allocation with skipNodeOperations needs (component-helpers draoptionalnodeoperations).
OPTIONAL_NODE_OPERATIONS: Final = "DRAOptionalNodeOperations"


def _skips_node_operations(allocation: Mapping[str, Any]) -> bool:
    """dynamicresources.go allocationResultRequiresDRAOptionalNodeOperations: a result with skipNodeOperations."""
    devices = allocation.get("devices")
    results = devices.get("results") if isinstance(devices, Mapping) else None
    return any(isinstance(r, Mapping) and r.get("skipNodeOperations") for r in results or ())


def _declares(node: Mapping[str, Any], feature: str) -> bool:
    """Whether ``status.declaredFeatures`` lists the feature (as written: no registry involved)."""
    status = node.get("status")
    declared = status.get("declaredFeatures") if isinstance(status, Mapping) else None
    return isinstance(declared, list) and feature in declared


def allocator_features(release: Release) -> Features:
    """dynamicresources.go AllocatorFeatures: the allocator's switches from the release's feature gates."""
    return Features(
        admin_access=release.gate("DRAAdminAccess"),
        prioritized_list=release.gate("DRAPrioritizedList"),
        partitionable_devices=release.gate("DRAPartitionableDevices"),
        device_taints=release.gate("DRADeviceTaints"),
        device_binding_and_status=release.gate("DRADeviceBindingConditions")
        and release.gate("DRAResourceClaimDeviceStatus"),
        consumable_capacity=release.gate("DRAConsumableCapacity"),
        fractional_capacity_range=release.gate("DRAFractionalCapacityRange"),
        minor=release.minor,
    )


@register
class DynamicResources(FilterPlugin, ScorePlugin, PostFilterPlugin):
    """Allocate the pod's ResourceClaims from the node's devices (structured parameters)."""

    name = NAME
    skips_deferred_resize = True  # v1.37 PreFilter: Skip a deferred resize (see Plugin)
    skip_scores_zero = True  # upstream has no PreScore: where we skip, its Score gives every node 0

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        unknown = sorted(set(self.args) - {"filterTimeout", "bindingTimeout"})
        if unknown:
            raise ProfileError(f"{NAME} args: unknown field(s) {', '.join(unknown)}")
        self.filter_timeout = _duration_arg(self.args, "filterTimeout", DEFAULT_FILTER_TIMEOUT_SECONDS)
        if self.filter_timeout < 0:
            raise ProfileError(f"{NAME} args.filterTimeout: Invalid value: {self.args['filterTimeout']!r}: "
                               "must be zero or positive")
        self.binding_timeout = _duration_arg(self.args, "bindingTimeout", DEFAULT_BINDING_TIMEOUT_SECONDS)
        if self.binding_timeout < 1:
            raise ProfileError(f"{NAME} args.bindingTimeout: Invalid value: {self.args['bindingTimeout']!r}: "
                               "must be at least 1 second")
        # compiled selectors, reused across pods as upstream's cel.Cache
        self.cel_cache = CelCache(list_attributes=cel_list_attributes(self.release))
        self.allocator_features = allocator_features(self.release)
        # The last cycles by pod (filter, then prioritize, are two calls): DRA view and per-node allocations,
        # bounded in bytes too (a pod's claims are what a request sends).
        self._recent: BoundedMemo[bytes, tuple[DRAView, _State]] = BoundedMemo(
            "DRA cycles", max_bytes=_RECENT_CYCLES_BYTES, max_entries=RECENT_CYCLES)

    # ---- PreFilter -----------------------------------------------------------------------------
    @staticmethod
    def _wants_extended(state: CycleState, pod: PodRecord) -> bool:
        if not pod.requests.scalars:
            return False
        classes = state.snapshot.dra.extended_resource_classes()
        return bool(classes) and wants_dra_extended_resources(pod, classes)

    def _may_need_devices(self, state: CycleState, pod: PodRecord) -> bool:
        """Claims, or extended resources a DeviceClass stands for: otherwise the plugin has nothing to do."""
        return has_claims(pod) or self._wants_extended(state, pod)

    def pre_enqueue(self, snapshot: Snapshot, pod: PodRecord) -> Status | None:
        """PreEnqueue: a pod whose claims cannot be used yet (missing, being deleted, not the pod's) waits
        outside the queue until a claim event, without a scheduling cycle."""
        if not has_claims(pod):
            return None
        try:
            pod_claims(pod, snapshot.dra)
        except ClaimsUnusable as err:
            return unresolvable(str(err))
        return None

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        state.data[STATE_KEY] = None
        dra = state.snapshot.dra
        wants_extended = self._wants_extended(state, pod)
        if not has_claims(pod) and not wants_extended:
            return SKIP
        try:
            claims = pod_claims(pod, dra)
        except ClaimsUnusable as err:
            return unresolvable(str(err))
        extended: int | None = None
        if wants_extended:
            found = existing_extended_claim(pod, (entry.raw for entry in dra.claims.values()))
            if found is not None:
                entry = dra.claim(str(found["metadata"].get("namespace") or "default"), str(found["metadata"]["name"]))
                assert entry is not None
            else:
                raw = in_memory_extended_claim(pod)
                entry = ClaimEntry(raw, claim_record(raw))
            extended = len(claims)
            claims.append(entry)
        if not claims:
            return SKIP
        available_on: list[NodeSelector | None] = []
        to_allocate: list[int] = []
        for index, entry in enumerate(claims):
            allocation = claim_allocation(entry.raw)
            selector: NodeSelector | None = None
            if allocation is not None:
                reserved = _reserved_for(entry.raw)
                if len(reserved) >= RESERVED_FOR_MAX_SIZE and not any(r.get("uid") == pod.uid for r in reserved):
                    return unresolvable("resourceclaim in use")  # cannot be reserved for one more pod
                terms = allocation.get("nodeSelector")
                if terms is not None:
                    try:
                        selector = compile_node_selector(terms, strict=True)
                    except SelectorError as err:
                        return Status(Code.ERROR, str(err))
            else:
                to_allocate.append(index)
                if index != extended:  # the extended resources' claim is checked per node, in Filter
                    status = _check_requests(dra, entry.raw)
                    if status is not None:
                        return status
            available_on.append(selector)
        cycle = _State(claims, available_on, to_allocate, extended=extended)
        if to_allocate:
            try:
                cycle.allocator = Allocator(self.allocator_features, dra.allocated(), dra.classes, dra.slices,
                                            self.cel_cache)
            except AllocationError as err:
                return Status(Code.ERROR, str(err))
        state.data[STATE_KEY] = cycle
        self._remember(state, pod, cycle)
        return None

    # ---- from filter to prioritize -------------------------------------------------------------
    @staticmethod
    def _pod_signature(pod: PodRecord) -> bytes:
        """What of the pod the allocations depend on: its claims and its extended resource requests."""
        spec = pod.raw.get("spec")
        status = pod.raw.get("status")
        spec = spec if isinstance(spec, Mapping) else {}
        status = status if isinstance(status, Mapping) else {}  # a request's pod status is not checked
        parts = [pod.cache_key, spec.get("resourceClaims"), status.get("resourceClaimStatuses"),
                 sorted(pod.requests.scalars.items())]
        try:
            return orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)
        except (TypeError, orjson.JSONEncodeError):  # an integer past 64 bits in what the request sent
            return repr(parts).encode()

    def _remember(self, state: CycleState, pod: PodRecord, cycle: _State) -> None:
        """Keep the cycle, so that the prioritize call that follows a filter reuses its allocations."""
        signature = self._pod_signature(pod)
        weight = 2 * len(signature) + _NODE_ALLOCATIONS_WEIGHT * (len(cycle.node_allocations) + 1)
        self._recent.put(signature, (state.snapshot.dra, cycle), weight)

    def _recalled(self, state: CycleState, pod: PodRecord) -> _State | None:
        """The cycle of an earlier call for the same pod over the same DRA objects, if any."""
        kept = self._recent.get(self._pod_signature(pod))
        if kept is None or kept[0] is not state.snapshot.dra:
            return None
        return kept[1]

    def _extended_claim_for_node(self, state: CycleState, cycle: _State, pod: PodRecord,
                                 node: NodeInfo) -> tuple[Status | None, ClaimEntry | None]:
        """filterExtendedResources: the extended resources' claim as this node needs it allocated."""
        if cycle.extended is None:
            return None, None
        special = cycle.claims[cycle.extended]
        spec = special.raw.get("spec")
        devices = spec.get("devices") if isinstance(spec, Mapping) else None
        if isinstance(devices, Mapping) and devices.get("requests") is not None:
            # Left over from an earlier cycle: PostFilter deletes it, then the pod is tried anew.
            return unresolvable("cannot schedule extended resource claim"), None
        classes = state.snapshot.dra.extended_resource_classes()
        resources = dra_resources_on_node(pod, node, classes)
        if resources is None:
            return unresolvable("cannot fit resource"), None
        if cycle.extended == 0 and not resources:  # no user claim, and the node's device plugin has it all
            return None, None
        if claim_allocation(special.raw) is not None:
            return None, None
        key = tuple(sorted(resources))
        variant = cycle.extended_variants.get(key)
        if variant is None:
            raw = {**special.raw, "spec": {"devices": {"requests": extended_claim_requests(pod, resources, classes)}}}
            variant = cycle.extended_variants[key] = ClaimEntry(raw, claim_record(raw))
        return None, variant

    # ---- Filter --------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        cycle: _State | None = state.data.get(STATE_KEY)
        if cycle is None:
            return None
        record = node.node
        assert record is not None
        status, node_extended = self._extended_claim_for_node(state, cycle, pod, node)
        if status is not None:
            return status
        if node_extended is None and cycle.extended == 0:
            return None  # only extended resources, all from the node's device plugins
        unavailable: list[int] = []
        now = time.time()
        for index, entry in enumerate(cycle.claims):
            selector = cycle.available_on[index]
            if selector is not None and not selector.matches(record.labels, record.name):
                unavailable.append(index)
                continue
            allocation = claim_allocation(entry.raw)
            if allocation is None:
                continue
            if self.release.at_least(37) and _skips_node_operations(allocation) and not _declares(
                    record.raw, OPTIONAL_NODE_OPERATIONS):
                # v1.37 (dynamicresources.go Filter): a device allocated with skipNodeOperations needs a node that
                # declares DRAOptionalNodeOperations.
                unavailable.append(index)
                continue
            try:
                ready = claim_ready_for_binding(entry.raw)
            except BindingFailed:
                unavailable.append(index)
            else:
                if not ready and claim_binding_timed_out(entry.raw, self.binding_timeout, now):
                    unavailable.append(index)
        if cycle.allocator is not None:
            deadline = time.monotonic() + self.filter_timeout if self.filter_timeout > 0 else None
            requested = [(node_extended if i == cycle.extended and node_extended is not None
                          else cycle.claims[i]).record for i in cycle.to_allocate]
            try:
                results = cycle.allocator.allocate(record.name, record.labels, requested, deadline=deadline)
            except AllocationError as err:
                if err.timed_out:  # potentially transient: an Error, so the pod is retried with backoff
                    return Status(Code.ERROR, f"node {record.name}: timed out trying to allocate devices")
                if err.failed_on_node:  # other nodes may still do
                    return unresolvable(str(err))
                return Status(Code.ERROR, str(err))  # a broken claim or class
            if results is None or len(results) != len(requested):
                return unresolvable(REASON_CANNOT_ALLOCATE)
            if not unavailable:
                cycle.node_allocations[record.name] = results
                cycle.node_extended[record.name] = node_extended
                cycle.node_records[record.name] = record
        if unavailable:
            cycle.unavailable.update(unavailable)  # for PostFilter
            return unresolvable(REASON_NOT_AVAILABLE)
        return None

    # ---- Score ---------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        """Skip for a pod with nothing to allocate (every node would score 0, as upstream's Score gives).

        Upstream scores in the same cycle as Filter. The extender's prioritize is a call of its own, so
        when this cycle ran no PreFilter, the allocations are made here for the nodes being scored.
        """
        ran_filter = STATE_KEY in state.data
        if not ran_filter and not self._may_need_devices(state, pod):
            return SKIP
        if not ran_filter:
            recalled = self._recalled(state, pod)
            if recalled is not None:
                state.data[STATE_KEY] = recalled
            elif self.pre_filter(state, pod, nodes) is not None:
                return SKIP
        cycle: _State | None = state.data.get(STATE_KEY)
        if cycle is None or cycle.allocator is None:
            return SKIP
        if not ran_filter:
            for node in nodes:  # nodes the earlier filter call did not allocate for (or that changed since)
                if cycle.node_records.get(node.name) is not node.node:
                    self.filter(state, pod, node)
        return None

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        cycle: _State | None = state.data.get(STATE_KEY)
        if cycle is None:
            return 0
        results = cycle.node_allocations.get(node.name)
        if results is None:
            return 0
        return prioritized_list_score(cycle, results)

    def normalize(self, state: CycleState, pod: PodRecord, scores: list[int]) -> None:
        default_normalize(scores, reverse=False)

    # ---- PostFilter ----------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: PodRecord,
                    statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status]:
        """PostFilter: deallocate one unavailable claim reserved for no other pod, else delete a leftover claim
        of the pod's extended resources, else nothing helps.

        Upstream walks the unavailable claims in Go's random map order and acts on the first that
        qualifies; here the lowest index acts and the other qualifying claims are named with it. v1.37.2
        (dynamicresources.go PostFilter, deallocateOrDeletePodClaims) says nothing when nothing is done (v1.36.3:
        "no new claims to deallocate", "still not schedulable", which end up in the PodScheduled message),
        and does nothing for a pod whose resize is deferred (InPlacePodVerticalScalingSchedulerPreemption).
        """
        quiet = self.release.at_least(37)
        if (quiet and self.release.gate("InPlacePodVerticalScalingSchedulerPreemption")
                and resize_deferred(pod.raw)):
            return None, Status(Code.UNSCHEDULABLE)
        if STATE_KEY not in state.data:  # PreFilter never ran: cycleState.Read fails, an Error
            return None, Status(Code.ERROR, STATE_NOT_FOUND)
        cycle: _State | None = state.data[STATE_KEY]
        if cycle is None or not cycle.claims:
            return None, Status(Code.UNSCHEDULABLE) if quiet else Status(Code.UNSCHEDULABLE, POST_FILTER_NO_CLAIMS)
        extended = cycle.claims[cycle.extended] if cycle.extended is not None else None
        real_extended = extended is not None and claim_meta(extended.raw).get("name") != SPECIAL_CLAIM_NAME
        qualifying: list[Mapping[str, Any]] = []
        for index in sorted(cycle.unavailable):
            if index == cycle.extended:
                continue  # upstream: a leftover extended claim ends the walk (deleted below), a special one is passed
            claim = cycle.claims[index].raw
            reserved = _reserved_for(claim)
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == pod.uid):
                qualifying.append(claim)
        if qualifying:
            action = DeallocateClaim(qualifying[0], tuple(_claim_key(c) for c in qualifying[1:]))
            return PostFilterResult(actions=[action]), Status(Code.UNSCHEDULABLE, POST_FILTER_DEALLOCATED)
        if real_extended and extended is not None:
            return (PostFilterResult(actions=[DeleteClaim(extended.raw)]),
                    Status(Code.UNSCHEDULABLE, POST_FILTER_DELETED))
        return None, Status(Code.UNSCHEDULABLE) if quiet else Status(Code.UNSCHEDULABLE, POST_FILTER_STILL)

    # ---- bind / simulate -----------------------------------------------------------------------
    def allocated_claims(self, state: CycleState, pod: PodRecord, node_name: str, *,
                         include_extended: bool = False) -> list[dict[str, Any]]:
        """The pod's unallocated claims as they will be once bound to the node (after a Filter of that node).

        Each is a copy of the claim with ``status.allocation`` set and the pod in ``status.reservedFor``,
        for the cache to count until the source reports the real claims (upstream's Reserve). The claim
        for DRA-backed extended resources, which PreBind creates under a generated name the source
        reports later, is included only with ``include_extended`` (a simulation, whose cache no source
        updates), named after the pod.
        """
        cycle: _State | None = state.data.get(STATE_KEY)
        if cycle is None or cycle.allocator is None:
            return []
        results = cycle.node_allocations.get(node_name)
        if results is None:
            return []
        out: list[dict[str, Any]] = []
        for index, result in zip(cycle.to_allocate, results, strict=True):
            raw = cycle.claims[index].raw
            if index == cycle.extended:
                variant = cycle.node_extended.get(node_name)
                if not include_extended or variant is None:
                    continue
                meta = {**claim_meta(variant.raw), "name": f"{pod.name}-extended-resources-{pod.uid}"}
                raw = {**variant.raw, "metadata": meta}
            status = dict(claim_status(raw))
            status["allocation"] = result.to_api()
            reserved = [r for r in status.get("reservedFor") or [] if isinstance(r, Mapping)]
            if not any(r.get("uid") == pod.uid for r in reserved):
                reserved.append({"resource": "pods", "name": pod.name, "uid": pod.uid})
            status["reservedFor"] = reserved
            out.append({**raw, "status": status})
        return out


def prioritized_list_score(cycle: _State, results: Sequence[AllocationResult]) -> int:
    """computeScore: per claim, ``MaxSize - index`` for each firstAvailable alternative that was allocated."""
    if cycle.subrequest_scores is None:
        cycle.subrequest_scores = [_subrequest_scores(entry.raw) for entry in cycle.claims]
    total = 0
    by_index = dict(zip(cycle.to_allocate, results, strict=True))
    for index, entry in enumerate(cycle.claims):
        scores = cycle.subrequest_scores[index]
        if not scores:
            continue
        result = by_index.get(index)
        if result is not None:
            names = [device.request for device in result.devices]
        else:
            allocation = claim_allocation(entry.raw)
            devices = allocation.get("devices") if allocation is not None else None
            listed = devices.get("results") if isinstance(devices, Mapping) else None
            names = [str(d.get("request") or "") for d in listed or [] if isinstance(d, Mapping)]
        total += sum(scores.get(name, 0) for name in set(names))
    return total


def _subrequest_scores(claim: Mapping[str, Any]) -> dict[str, int]:
    """"request/subrequest" -> ``MaxSize - index`` for a claim's firstAvailable alternatives."""
    out: dict[str, int] = {}
    for request in claim_requests(claim):
        if request.get("exactly") is not None:
            continue
        for i, sub in enumerate(request.get("firstAvailable") or []):
            if isinstance(sub, Mapping):
                out[f"{request.get('name') or ''}/{sub.get('name') or ''}"] = FIRST_AVAILABLE_MAX_SIZE - i
    return out


def claims_to_assume(plugins: Sequence[object], state: CycleState, pod: PodRecord, node_name: str, *,
                     include_extended: bool = False) -> list[dict[str, Any]]:
    """The claims the DynamicResources plugin among ``plugins`` allocated for the node in this cycle.

    Empty when the profile does not run the plugin or the pod has nothing to allocate. The cycle's
    Filter must have passed the node (simulate's chosen node; bind's re-filter of the target node).
    """
    for plugin in plugins:
        if isinstance(plugin, DynamicResources):
            return plugin.allocated_claims(state, pod, node_name, include_extended=include_extended)
    return []
