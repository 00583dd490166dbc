"""Extended resources backed by DRA (the DRAExtendedResource feature, beta and on by default in 1.36).

A DeviceClass can stand for an extended resource: ``deviceclass.resource.kubernetes.io/<class>``, or the
name in its ``extendedResourceName``. On a node that has no allocatable of such a resource (no device
plugin provides it), NodeResourcesFit leaves the request to DynamicResources, which allocates devices of
that class instead (upstream ``shouldDelegateResourceToDRA`` in ``noderesources/fit.go``).

Kept apart from NodeResourcesFit so that its one call there stays small.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from extender.cluster.dra_objects import IMPLICIT_EXTENDED_RESOURCE_PREFIX, DRAView
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.cluster.resource import is_extended_resource_name
from extender.cluster.snapshot import Snapshot
from extender.dra.cel import CelCache
from extender.dra.pools import PoolError, node_matches
from extender.dra.records import DeviceClassRecord, DeviceRecord, SliceRecord
from extender.engine.framework import CycleState
from extender.kube.quantity import QuantityError, decode_quantity
from extender.kube.release import Release


def cel_list_attributes(release: Release) -> bool:
    """Whether a list-typed device attribute reaches a CEL selector as a list: always from v0.37.2 (cel/compile.go
    getAttributeValue), with DRAListTypeAttributes before (otherwise it is an unsupported attribute value)."""
    return release.at_least(37) or release.gate("DRAListTypeAttributes")


def delegated_to_dra(state: CycleState) -> Mapping[str, str]:
    """The extended resources NodeResourcesFit leaves to DRA on a node with no allocatable of them
    (fit.go shouldDelegateResourceToDRA): those a DeviceClass stands for, each with its class."""
    return state.snapshot.dra.extended_resource_classes()


def dra_equivalence_suffix(snapshot: Snapshot, pod: PodRecord) -> str:
    """What the equivalence key of a pod must add: the classes its extended resources map to.

    NodeResourcesFit's verdict then depends on cluster DeviceClasses too, not on the node alone; pods
    whose requests map to no class keep their plain key, whose entries were all computed without one.
    """
    if not pod.requests.scalars:
        return ""
    classes = snapshot.dra.extended_resource_classes()
    if not classes:
        return ""
    mapped = sorted((name, classes[name]) for name in pod.requests.scalars if name in classes)
    return "" if not mapped else "|dra:" + ",".join(f"{name}={klass}" for name, klass in mapped)


# ---- the scoring side: a DRA-backed extended resource counted in devices -----------------------------
class DeviceTotals:
    """How many devices of a DeviceClass a node has, and how many of them are taken: what the resource
    scores count as allocatable and allocated for a DRA-backed extended resource on a node with no
    allocatable of it (resource_allocation.go calculateDRAResourceTotals).

    Every ResourceSlice that reaches the node counts (by name, all nodes, node selector, or device by
    device), whatever its pool's generation, as upstream does; a device counts when every CEL selector
    of the class matches it, and is taken when any claim holds it (dedicated, shared, or with consumed
    capacity; in-flight claims included). A node selector or selector that fails makes the node count
    nothing, as upstream's error return does.

    Per-device results do not depend on the node, so they are kept for as long as the DRA view is the
    same object (a view is immutable and replaced on any change); node selection is evaluated per call
    because node labels change without the view changing.
    """

    def __init__(self, *, list_attributes: bool = True) -> None:
        self.cel_cache = CelCache(list_attributes=list_attributes)
        # (the view, slice indexes by node name, the other slices, class -> device id -> counts|None)
        self._memo: tuple[DRAView, dict[str, list[int]], list[int],
                          dict[str, dict[tuple[int, int], tuple[int, int] | None]]] | None = None

    def _index(self, view: DRAView) -> tuple[dict[str, list[int]], list[int],
                                               dict[str, dict[tuple[int, int], tuple[int, int] | None]]]:
        memo = self._memo
        if memo is None or memo[0] is not view:
            by_name: dict[str, list[int]] = {}
            others: list[int] = []
            for i, slice_ in enumerate(view.slices):
                if slice_.node_name and not slice_.all_nodes and not slice_.per_device_node_selection:
                    by_name.setdefault(slice_.node_name, []).append(i)
                else:
                    others.append(i)
            memo = self._memo = (view, by_name, others, {})
        return memo[1], memo[2], memo[3]

    def totals(self, view: DRAView, klass: DeviceClassRecord, node_name: str,
               labels: Mapping[str, str]) -> tuple[int, int]:
        """(devices of the class on the node, those of them already allocated)."""
        by_name, others, per_class = self._index(view)
        counts = per_class.setdefault(klass.name, {})
        capacity = allocated = 0
        for i in (*by_name.get(node_name, ()), *others):
            slice_ = view.slices[i]
            try:
                devices = _devices_on_node(slice_, node_name, labels)
            except PoolError:
                return 0, 0
            for j in devices:
                key = (i, j)
                if key not in counts:
                    counts[key] = self._count(view, klass, slice_, slice_.devices[j])
                count = counts[key]
                if count is None:
                    return 0, 0
                capacity += count[0]
                allocated += count[1]
        return capacity, allocated

    def _count(self, view: DRAView, klass: DeviceClassRecord, slice_: SliceRecord,
               device: DeviceRecord) -> tuple[int, int] | None:
        """(1, 1 if taken) for a device of the class, (0, 0) for another one, None on a CEL error."""
        for expression in klass.selectors:
            if expression is None:  # not a CEL selector: upstream's scorer passes over it
                continue
            compiled = self.cel_cache.get_or_compile(expression)
            if compiled.error is not None:
                return None
            matches, error = compiled.device_matches(device, slice_.driver)
            if error is not None:
                return None
            if not matches:
                return 0, 0
        taken = view.allocated().is_allocated((slice_.driver, slice_.pool_name, device.name))
        return 1, int(taken)


def _devices_on_node(slice_: SliceRecord, node_name: str, labels: Mapping[str, str]) -> Sequence[int]:
    """Indexes of the slice's devices that are on the node, in the scorer's order of checks (raises
    PoolError for a node selector it cannot parse)."""
    if slice_.per_device_node_selection:
        out: list[int] = []
        for j, device in enumerate(slice_.devices):
            on_node = device.all_nodes or (bool(device.node_name) and device.node_name == node_name)
            if on_node or (device.node_selector is not None and node_matches(
                    node_name, labels, device.node_name, device.all_nodes, device.node_selector)):
                out.append(j)
        return out
    if not slice_.all_nodes and slice_.node_name != node_name and slice_.node_selector is not None:
        if not node_matches(node_name, labels, slice_.node_name, slice_.all_nodes, slice_.node_selector):
            return ()
    elif not slice_.all_nodes and slice_.node_name and slice_.node_name != node_name:
        return ()
    return range(len(slice_.devices))


# ---- the DynamicResources side: one claim for all of a pod's DRA-backed extended resources -------------
SPECIAL_CLAIM_NAME = "<extended-resources>"  # specialClaimInMemName: never a valid object name
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def is_dra_extended_resource_name(name: str) -> bool:
    """schedutil.IsDRAExtendedResourceName: an extended resource, or a class's implicit resource name."""
    return is_extended_resource_name(name) or name.startswith(IMPLICIT_EXTENDED_RESOURCE_PREFIX)


def wants_dra_extended_resources(pod: PodRecord, classes: Mapping[str, str]) -> bool:
    """hasDeviceClassMappedExtendedResource: a non-zero request of a resource some class provides."""
    return any(amount and is_dra_extended_resource_name(name) and name in classes
               for name, amount in pod.requests.scalars.items())


def existing_extended_claim(pod: PodRecord, claims: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """findExtendedResourceClaim: the claim an earlier cycle created for the pod's extended resources."""
    for claim in claims:
        meta = claim.get("metadata")
        annotations = meta.get("annotations") if isinstance(meta, Mapping) else None
        if not isinstance(annotations, Mapping) or annotations.get(EXTENDED_CLAIM_ANNOTATION) != "true":
            continue
        refs = meta.get("ownerReferences") if isinstance(meta, Mapping) else None
        for ref in refs if isinstance(refs, list) else []:
            if isinstance(ref, Mapping) and ref.get("name") == pod.name and ref.get("controller") is True \
                    and ref.get("uid") == pod.uid:
                return claim
    return None


def in_memory_extended_claim(pod: PodRecord) -> dict[str, Any]:
    """The special claim that stands for the pod's extended resources until PreBind creates it."""
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"namespace": pod.namespace, "name": SPECIAL_CLAIM_NAME, "uid": f"{SPECIAL_CLAIM_NAME}{pod.uid}",
                     "generateName": f"{pod.name}-extended-resources-",
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                                          "controller": True}],
                     "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"}},
        "spec": {},
    }


def dra_resources_on_node(pod: PodRecord, node: NodeInfo, classes: Mapping[str, str]) -> dict[str, int] | None:
    """The extended resources the node must provide through DRA (filterExtendedResources).

    None when a requested one is neither on the node nor backed by a class ("cannot fit resource").
    """
    assert node.node is not None
    allocatable = node.node.allocatable.scalars
    out: dict[str, int] = {}
    for name, amount in pod.requests.scalars.items():
        if not amount or not is_dra_extended_resource_name(name):
            continue
        if name in classes and allocatable.get(name, 0) == 0:
            out[name] = amount
        elif name not in allocatable:
            return None
    return out


def _container_request(container: Mapping[str, Any], resource: str) -> int:
    resources = container.get("resources")
    requests = resources.get("requests") if isinstance(resources, Mapping) else None
    if not isinstance(requests, Mapping) or resource not in requests:
        return 0
    try:
        value = decode_quantity(requests[resource])
    except QuantityError:
        return 0
    return int(value) if value.denominator == 1 else 0  # AsInt64 fails on fractions: no request


def _container_device_request(index: int, container: Mapping[str, Any], resource: str, klass: str,
                              reusable: Sequence[dict[str, Any] | None]) -> dict[str, Any] | None:
    """createResourceRequestAndMappings (the request only; the mappings are PreBind's business)."""
    wanted = _container_request(container, resource)
    if wanted == 0:
        return None
    covered = 0
    for request in reusable:
        if request is not None:
            covered += request["exactly"]["count"]
            if covered >= wanted:
                return None
    names = sorted((container.get("resources") or {}).get("requests") or {})  # both checked above
    position = names.index(resource) if resource in names else 0
    return {"name": f"container-{index}-request-{position}",
            "exactly": {"deviceClassName": klass, "allocationMode": "ExactCount", "count": wanted - covered}}


def extended_claim_requests(pod: PodRecord, resources: Mapping[str, int],
                            classes: Mapping[str, str]) -> list[dict[str, Any]]:
    """createRequestsAndMappings: one device request per container and resource, init containers folded."""
    spec = pod.raw.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    listed_init, listed = spec.get("initContainers"), spec.get("containers")
    init = [c for c in listed_init if isinstance(c, Mapping)] if isinstance(listed_init, list) else []
    containers = init + ([c for c in listed if isinstance(c, Mapping)] if isinstance(listed, list) else [])
    long_lived = [i for i, c in enumerate(containers) if i >= len(init) or c.get("restartPolicy") == "Always"]
    short_lived = [i for i in range(len(init)) if init[i].get("restartPolicy") != "Always"]
    requests: list[dict[str, Any]] = []
    for resource in sorted(resources):
        klass = classes.get(resource)
        if klass is None:
            continue
        long_requests: list[dict[str, Any] | None] = [None] * len(containers)
        for i in long_lived:
            long_requests[i] = _container_device_request(i, containers[i], resource, klass, [])
        largest: dict[str, Any] | None = None
        for i in short_lived:
            request = _container_device_request(i, containers[i], resource, klass, long_requests[i:])
            if request is not None and (largest is None or largest["exactly"]["count"] < request["exactly"]["count"]):
                largest = request
        if largest is not None:
            requests.append(largest)
        requests.extend(r for r in long_requests if r is not None)
    requests.sort(key=lambda r: str(r["name"]))
    return requests
