"""Compact, immutable records of Pods and Nodes, built once when an object enters the cache.

The engine's hot paths (every node, every pod) read these records, never raw dicts or pydantic models.
Each record keeps the raw object too, for the plugins that need rarely used fields and for reports. The one
change a record ever sees: the cache may give a pod's record a newer version of its object that is equal in
everything but metadata.resourceVersion (ClusterCache.upsert_pod), from which nothing derived differs.
Building a record validates what the scheduler relies on; a bad object raises :class:`RecordError`
naming the field, so bad input is reported instead of half-read.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeGuard

import orjson

from extender.cluster.resource import Resource
from extender.kube.podfields import (
    KEPT_CONDITION_TYPES,
    KEPT_CONTAINER,
    KEPT_METADATA,
    KEPT_SPEC,
    KEPT_STATUS,
    KEPT_STATUS_CONTAINER,
    UNREAD_VOLUMES,
)
from extender.kube.quantity import QuantityError, decode_quantity
from extender.kube.resources import ResourceError, non_zero_requests, pod_requests
from extender.kube.taints import Taint, TaintError, Toleration
from extender.memo import BoundedMemo, exact_bytes

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


class RecordError(ValueError):
    """An object the scheduler cannot read; the message names the field."""


def _mapping(obj: Any, path: str) -> Mapping[str, Any]:
    if obj is None:
        return {}
    if not is_mapping(obj):
        raise RecordError(f"{path}: expected an object, got {type(obj).__name__}")
    return obj


def _list(obj: Any, path: str) -> list[Any]:
    if obj is None:
        return []
    if not isinstance(obj, list):
        raise RecordError(f"{path}: expected a list, got {type(obj).__name__}")
    return obj


def _labels(obj: Any, path: str) -> dict[str, str]:
    labels = _mapping(obj, path)
    for key, val in labels.items():
        if not isinstance(val, str):
            raise RecordError(f"{path}.{key}: label values must be strings")
    # Shared with the raw object, not copied: neither is ever mutated, and 150k pods' labels add up.
    return labels if isinstance(labels, dict) else dict(labels)


# What the scheduler reads of pods it holds is listed once, in extender.kube.podfields.


def is_mapping(obj: Any) -> TypeGuard[Mapping[str, Any]]:
    """Whether ``obj`` is an object (any mapping). Decoded JSON objects are dicts, tested first: the Mapping ABC
    check costs several times more, and a Python call of its own on the hot paths that read pods."""
    return type(obj) is dict or isinstance(obj, Mapping)


def _pick(obj: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: obj[k] for k in keys if k in obj}


#: Metadata values unique to each pod (never interned: sharing them saves nothing).
UNIQUE_METADATA = frozenset({"name", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"})
_MAX_INTERNED = 256


def intern_values(obj: Any) -> Any:
    """Replace string values inside dicts and lists by their interned, shared copy, in place.

    JSON decoding makes a separate string object for every occurrence; across 150k pods the same values
    (operators, effects, protocols, quantities, images, owner UIDs, label values) repeat endlessly, and
    sharing them is a large part of what the cache weighs. Values are only replaced by equal strings.
    """
    if type(obj) is dict:
        for key, value in obj.items():
            if type(value) is str:
                if len(value) <= _MAX_INTERNED:
                    obj[key] = sys.intern(value)
            elif type(value) is dict or type(value) is list:
                intern_values(value)
    elif type(obj) is list:
        for i, value in enumerate(obj):
            if type(value) is str:
                if len(value) <= _MAX_INTERNED:
                    obj[i] = sys.intern(value)
            elif type(value) is dict or type(value) is list:
                intern_values(value)
    return obj


def intern_value(value: Any) -> Any:
    """One JSON value with its strings interned: a string's shared copy, a dict's or list's strings in place."""
    if type(value) is str:
        return sys.intern(value) if len(value) <= _MAX_INTERNED else value
    return intern_values(value)


DROP: Any = object()  # a list element a trim leaves out

# List fields trimmed element by element (malformed elements are kept as they are, to be reported later).
_TRIM_SPEC: dict[str, Callable[[Any], Any]] = {
    "containers": lambda c: _pick(c, KEPT_CONTAINER) if is_mapping(c) else c,
    "initContainers": lambda c: _pick(c, KEPT_CONTAINER) if is_mapping(c) else c,
    "volumes": lambda v: DROP if is_mapping(v) and UNREAD_VOLUMES & v.keys() else v,
}
_TRIM_STATUS: dict[str, Callable[[Any], Any]] = {
    "containerStatuses": lambda c: _pick(c, KEPT_STATUS_CONTAINER) if is_mapping(c) else c,
    "initContainerStatuses": lambda c: _pick(c, KEPT_STATUS_CONTAINER) if is_mapping(c) else c,
    "conditions": lambda c: c if is_mapping(c) and c.get("type") in KEPT_CONDITION_TYPES else DROP,
}
# The kept fields taken as they are, in the order a trimmed pod lists them (the trimmed lists follow).
PLAIN_SPEC = tuple(k for k in KEPT_SPEC if k not in _TRIM_SPEC)
PLAIN_STATUS = tuple(k for k in KEPT_STATUS if k not in _TRIM_STATUS)


def trim_list(value: Any, trim: Callable[[Any], Any]) -> Any:
    """A list field trimmed element by element; ``DROP`` (leave the field out) for null; else as it is."""
    if type(value) is list:
        return [kept for kept in map(trim, value) if kept is not DROP]
    return DROP if value is None else value


def trim_volumes(volumes: Any) -> Any:
    """spec.volumes without the volume sources no plugin reads (``DROP`` for null)."""
    return trim_list(volumes, _TRIM_SPEC["volumes"])


def trim_conditions(conditions: Any) -> Any:
    """status.conditions reduced to the resize state; ``DROP`` for null and when no condition is kept.

    Left out rather than empty so that a version whose only new condition is one no plugin reads equals the
    version before it: the Binding sets PodScheduled, and kube-scheduler's pod (the one assumed) has none or
    an unschedulable one (see ClusterCache._unchanged_pod)."""
    kept = trim_list(conditions, _TRIM_STATUS["conditions"])
    return DROP if type(kept) is list and not kept else kept


def _field_trims(element_trims: dict[str, Callable[[Any], Any]], whole: dict[str, Callable[[Any], Any]],
                 ) -> dict[str, Callable[[Any], Any]]:
    """Each trimmed field's trim of its whole value: ``whole``'s own, else element by element."""
    return {field: whole.get(field) or functools.partial(trim_list, trim=trim) for field, trim in element_trims.items()}


# The same trims the pod codec applies (extender.kubeapi.podcodec): slim_pod's result is the codec's.
_SPEC_FIELDS = _field_trims(_TRIM_SPEC, {"volumes": trim_volumes})
_STATUS_FIELDS = _field_trims(_TRIM_STATUS, {"conditions": trim_conditions})


def _trim_fields(source: Mapping[str, Any], out: dict[str, Any], trims: dict[str, Callable[[Any], Any]]) -> None:
    for field, trim in trims.items():
        if field in source:
            value = trim(source[field])  # not a list: kept as it is, for the record to report
            if value is not DROP:
                out[field] = value


def intern_metadata(slim_meta: dict[str, Any]) -> dict[str, Any]:
    """Kept metadata with its repeated values interned in place (the pod's own names and versions are not)."""
    for key, value in slim_meta.items():
        if key not in UNIQUE_METADATA:
            slim_meta[key] = intern_value(value)
    return slim_meta


class SlimPod(dict[str, Any]):
    """A pod trimmed to the fields the scheduler reads, its repeated values interned: slim_pod's result.

    Its own type so that trimming it again is free: the apiserver codec (extender.kubeapi.podcodec)
    decodes pods straight into this form, and the cache takes them as they are. Treat it as immutable.
    """

    __slots__ = ()


def slim_pod(raw: Mapping[str, Any], *, intern: bool = True) -> SlimPod:
    """A copy of a pod keeping only what the scheduler reads (extender.kube.podfields).

    Repeated string values are interned (see intern_values; not with ``intern=False``, for a copy that is
    only encoded, not kept); the pod's own names and versions are not, as they are unique. Malformed parts
    are kept as they are, so that building the record still reports them. A pod already trimmed (a SlimPod)
    is returned as it is.
    """
    if type(raw) is SlimPod:
        return raw
    shared: Callable[[Any], Any] = intern_values if intern else _as_is
    meta = raw.get("metadata")
    spec = raw.get("spec")
    status = raw.get("status")
    out = SlimPod(kind="Pod")
    if is_mapping(meta):
        kept = _pick(meta, KEPT_METADATA)
        out["metadata"] = intern_metadata(kept) if intern else kept
    elif meta is not None:
        out["metadata"] = meta
    if is_mapping(spec):
        slim_spec = _pick(spec, PLAIN_SPEC)
        _trim_fields(spec, slim_spec, _SPEC_FIELDS)
        out["spec"] = shared(slim_spec)
    elif spec is not None:
        out["spec"] = spec
    if is_mapping(status):
        slim_status = _pick(status, PLAIN_STATUS)
        _trim_fields(status, slim_status, _STATUS_FIELDS)
        out["status"] = shared(slim_status)
    elif status is not None:
        out["status"] = status
    return out


def _as_is(obj: Any) -> Any:
    return obj


#: A pod's namespace and its labels as a sorted tuple: all that a label selector's verdict on the pod depends on.
PodSignature = tuple[str, tuple[tuple[str, str], ...]]

# Pods of one template share one signature object: 150k pods hold a few hundred, and dicts keyed by them find
# equal keys by identity. Bounded (requests send pods of any labels): past it, a signature is simply not shared.
_signatures: BoundedMemo[PodSignature, PodSignature] = BoundedMemo(
    "pod label sets", max_bytes=4 * 1024 * 1024, max_entries=16384)
_SIGNATURE_PAIR_WEIGHT = 120  # a (key, value) tuple and its slot, beside the strings' characters


def label_signature(namespace: str, labels: Mapping[str, str]) -> PodSignature:
    """The shared (namespace, sorted label pairs) of pods with these labels in this namespace."""
    signature = (namespace, tuple(sorted(labels.items())))
    shared = _signatures.get(signature)
    if shared is not None:
        return shared
    weight = len(namespace) + sum(len(k) + len(v) + _SIGNATURE_PAIR_WEIGHT for k, v in signature[1])
    _signatures.put(signature, signature, weight)
    return signature


class PodRecord:
    """What the scheduler reads of a Pod, precomputed once."""

    __slots__ = (
        "_signature",
        "cache_key",
        "has_affinity",
        "has_required_anti_affinity",
        "host_ports",
        "key",
        "labels",
        "memo",
        "name",
        "namespace",
        "node_name",
        "non0_cpu",
        "non0_mem",
        "priority",
        "pvc_keys",
        "raw",
        "requests",
        "resource_key",
        "terminating",
        "tolerations",
        "uid",
    )

    def __init__(self, raw: Mapping[str, Any], *, minor: int = 37) -> None:
        """``minor``: the release whose rules count a resized pod's requests (see kube.resources)."""
        if not is_mapping(raw):
            raise RecordError(f"Pod: expected an object, got {type(raw).__name__}")
        meta = _mapping(raw.get("metadata"), "metadata")
        spec = _mapping(raw.get("spec"), "spec")
        self.raw = raw
        # Plugin-owned derived data (e.g. parsed affinity terms), computed on first use and kept with the
        # record: records are immutable, so whatever is derived from them stays valid.
        self.memo: dict[str, Any] = {}
        self.name: str = str(meta.get("name") or "")
        self.namespace: str = str(meta.get("namespace") or "default")
        self.uid: str = str(meta.get("uid") or "")
        self.key = f"{self.namespace}/{self.name}"
        # kube-scheduler keys its cache by UID; hand-written dumps may lack one.
        self.cache_key = self.uid or self.key
        self.labels = _labels(meta.get("labels"), "metadata.labels")
        self._signature: PodSignature | None = None
        self.terminating = meta.get("deletionTimestamp") is not None
        node_name = spec.get("nodeName") or ""
        if not isinstance(node_name, str):
            raise RecordError("spec.nodeName: expected a string")
        self.node_name: str = node_name
        priority = spec.get("priority") or 0
        if not isinstance(priority, int):
            raise RecordError("spec.priority: expected an integer")
        self.priority: int = priority
        # The JSON of every spec field a request computation reads (b"" when it cannot be encoded): replicas
        # of one template share it, so whatever is computed from those fields is computed once per template.
        self.resource_key = resource_spec_key(spec)
        self.requests, self.non0_cpu, self.non0_mem = _pod_resources(raw, spec, bool(spec.get("nodeName")), minor,
                                                                     self.resource_key)
        self.host_ports = _host_ports(spec)
        self.tolerations = _tolerations(spec.get("tolerations"))
        affinity = _mapping(spec.get("affinity"), "spec.affinity")
        self.has_affinity = bool(affinity.get("podAffinity") or affinity.get("podAntiAffinity"))
        anti = _mapping(affinity.get("podAntiAffinity"), "spec.affinity.podAntiAffinity")
        self.has_required_anti_affinity = bool(anti.get("requiredDuringSchedulingIgnoredDuringExecution"))
        pvc_keys = []
        for i, vol in enumerate(_list(spec.get("volumes"), "spec.volumes")):
            claim = _mapping(vol, f"spec.volumes[{i}]").get("persistentVolumeClaim")
            if claim is not None:  # upstream counts `persistentVolumeClaim: {}` too (empty claim name)
                pvc_keys.append(f"{self.namespace}/{_mapping(claim, f'spec.volumes[{i}]').get('claimName', '')}")
        self.pvc_keys: tuple[str, ...] = tuple(pvc_keys)

    def placed_on(self, node_name: str, *, minor: int) -> PodRecord:
        """This pod as it is once bound to ``node_name`` (the cache's assumed pod): a trimmed copy of its object
        that names the node, and its record.

        Of a record, only the node and the requests depend on spec.nodeName (a pod on a node counts the
        resources its status reports, as release 1.<minor> reads them); everything else is derived from fields
        the copy shares with this record's object, so it is taken from this record rather than parsed again.
        The new record starts with no memo: plugins derive their data again for it."""
        raw = SlimPod(slim_pod(self.raw))  # a copy: this record's own object stays as it is
        spec = {**_mapping(raw.get("spec"), "spec"), "nodeName": node_name}
        raw["spec"] = spec
        placed = PodRecord.__new__(PodRecord)
        for field in _SHARED_WHEN_PLACED:
            setattr(placed, field, getattr(self, field))
        placed.raw = raw
        placed.memo = {}
        placed.node_name = node_name
        placed.requests, placed.non0_cpu, placed.non0_mem = _pod_resources(raw, spec, bool(node_name), minor,
                                                                           self.resource_key)
        return placed

    @property
    def signature(self) -> PodSignature:
        """Its namespace and sorted labels, shared with the other pods of its template (label_signature)."""
        signature = self._signature
        if signature is None:
            signature = self._signature = label_signature(self.namespace, self.labels)
        return signature

    @property
    def spec_requests(self) -> Resource:
        """The requests of its spec alone, as an incoming pod's are counted (fit.go computePodResourceRequest),
        even for a pod that already names a node and reports resized resources in its status."""
        if not self.node_name:
            return self.requests
        held: Resource | None = self.memo.get(_SPEC_REQUESTS)
        if held is None:
            held = self.memo[_SPEC_REQUESTS] = _pod_resources(self.raw, self.spec, False, 0, self.resource_key)[0]
        return held

    @property
    def spec(self) -> Mapping[str, Any]:
        """The raw spec."""
        return _mapping(self.raw.get("spec"), "spec")

    @property
    def phase(self) -> str:
        """status.phase, or "" when absent."""
        return str(_mapping(self.raw.get("status"), "status").get("phase") or "")

    def __repr__(self) -> str:
        return f"PodRecord({self.key}, node={self.node_name!r})"


#: What PodRecord.placed_on takes over from the record as it is (derived from nothing the node changes).
_SHARED_WHEN_PLACED: Final = tuple(sorted(set(PodRecord.__slots__) - {
    "raw", "memo", "node_name", "requests", "non0_cpu", "non0_mem"}))


# Replicas of one controller share their specs: a few distinct ones in practice, but requests can send any.
_resource_memo: BoundedMemo[bytes, tuple[Resource, int, int]] = BoundedMemo(
    "pod resources", max_bytes=4 * 1024 * 1024, max_entries=4096)
_RESOURCE_WEIGHT = 600  # a Resource and its scalar dict, beside the key's bytes


def _resource_fields(container: Any) -> Any:
    if not is_mapping(container):
        return container  # let the full computation report the error
    return (container.get("name"), container.get("resources"), container.get("restartPolicy"))


def _status_resource_fields(status: Mapping[str, Any]) -> Any:
    """What of a pod's status the request computation reads: container resources and resize state."""
    statuses: Any = []
    for field in ("containerStatuses", "initContainerStatuses"):
        entries = status.get(field) or []
        if not isinstance(entries, list):
            return status  # malformed: key on everything, the computation will report it
        statuses += [(c.get("name"), c.get("allocatedResources"), c.get("resources")) if is_mapping(c)
                     else c for c in entries]
    conditions = status.get("conditions") or []
    if not isinstance(conditions, list):
        return status
    resize = [c for c in conditions if is_mapping(c) and c.get("type") == "PodResizePending"]
    return statuses, resize


_SPEC_REQUESTS: Final = "records.spec_requests"


# Every record keeps its resource key: the replicas of one template share one object (bounded like the memos:
# requests can send any spec; past it a key is simply not shared).
_resource_keys: BoundedMemo[bytes, bytes] = BoundedMemo(
    "pods' resource keys", max_bytes=4 * 1024 * 1024, max_entries=4096)


def resource_spec_key(spec: Mapping[str, Any]) -> bytes:
    """The JSON of the spec fields a pod's requests are computed from (containers' names, resources and
    restart policies, init containers', overhead, pod-level resources), one object shared by the pods that
    have the same; b"" when something in them cannot be encoded (the computation itself then reports what is
    wrong, and nothing is memoised)."""
    containers, inits = spec.get("containers"), spec.get("initContainers")
    try:
        text = orjson.dumps((
            [_resource_fields(c) for c in containers] if isinstance(containers, list) else containers,
            [_resource_fields(c) for c in inits] if isinstance(inits, list) else inits,
            spec.get("overhead"), spec.get("resources"),
        ))
    except TypeError:
        return b""
    shared = _resource_keys.get(text)
    if shared is None:
        shared = exact_bytes(text)
        _resource_keys.put(shared, shared, len(shared))
    return shared


def resource_status_key(raw: Mapping[str, Any]) -> bytes:
    """The JSON of what a request computation that counts status resources reads of the pod's status (b"" when
    it cannot be encoded)."""
    status = raw.get("status")
    try:
        return exact_bytes(orjson.dumps(_status_resource_fields(status) if is_mapping(status) else status))
    except TypeError:
        return b""


def _pod_resources(raw: Mapping[str, Any], spec: Mapping[str, Any], on_node: bool,
                   minor: int, spec_key: bytes) -> tuple[Resource, int, int]:
    """The pod's request vector and its non-zero cpu/memory, memoised by the fields they depend on.

    Replicas of one controller share their resource specs, so computing these (exact Fraction arithmetic
    over containers, init containers, sidecars, overhead and pod-level resources) once per distinct spec
    makes ingesting 150k pods several times faster. The returned Resource is shared: never mutate it.

    Pods already on a node count with the resources their status reports after an in-place resize
    (InPlacePodVerticalScaling is GA: NodeInfo uses UseStatusResources), as release 1.<minor> counts them; an
    incoming pod has none.
    """
    status = raw.get("status") if on_node else None
    status_fields = _status_resource_fields(status) if is_mapping(status) else None
    key = b""
    if spec_key:
        try:
            key = spec_key + orjson.dumps((on_node, status_fields, minor if status_fields else 0))
        except TypeError:  # something orjson cannot encode: no memo, the computation will say what is wrong
            key = b""
    cached = _resource_memo.get(key) if key else None
    if cached is not None:
        return cached
    try:
        result = (Resource.from_requests(pod_requests(raw, use_status_resources=on_node, minor=minor)),
                  *non_zero_requests(raw, use_status_resources=on_node, minor=minor))
    except (ResourceError, QuantityError) as err:
        raise RecordError(str(err)) from err
    if key:
        _resource_memo.put(key, result, len(key) + _RESOURCE_WEIGHT)
    return result


_toleration_memo: BoundedMemo[bytes, tuple[Toleration, ...]] = BoundedMemo(
    "tolerations", max_bytes=4 * 1024 * 1024, max_entries=4096)
#: Parsed tolerations weigh about this many times their JSON text.
_TOLERATION_WEIGHT = 4


def _tolerations(raw: Any) -> tuple[Toleration, ...]:
    """Parsed tolerations, one shared tuple per distinct list (most pods carry the same defaults)."""
    if not raw:
        return ()
    try:
        key = orjson.dumps(raw)
    except TypeError:
        key = b""
    cached = _toleration_memo.get(key) if key else None
    if cached is not None:
        return cached
    try:
        parsed = tuple(Toleration.from_dict(_mapping(t, f"spec.tolerations[{i}]"))
                       for i, t in enumerate(_list(raw, "spec.tolerations")))
    except TaintError as err:
        raise RecordError(f"spec.tolerations: {err}") from err
    if key:
        _toleration_memo.put(exact_bytes(key), parsed, _TOLERATION_WEIGHT * len(key))
    return parsed


def _host_ports(spec: Mapping[str, Any]) -> tuple[tuple[str, str, int], ...]:
    """(hostIP, protocol, hostPort) of every container port with a hostPort (schedutil.GetHostPorts).

    Restartable (sidecar) init containers run for the pod's whole life, so their ports count; other
    init containers do not. Defaults: hostIP 0.0.0.0, protocol TCP.
    """
    ports: list[tuple[str, str, int]] = []
    containers: list[tuple[str, Any]] = []
    for i, c in enumerate(_list(spec.get("initContainers"), "spec.initContainers")):
        if _mapping(c, f"spec.initContainers[{i}]").get("restartPolicy") == "Always":
            containers.append((f"spec.initContainers[{i}]", c))
    containers.extend(
        (f"spec.containers[{i}]", c) for i, c in enumerate(_list(spec.get("containers"), "spec.containers"))
    )
    for path, container in containers:
        for j, port in enumerate(_list(_mapping(container, path).get("ports"), f"{path}.ports")):
            port = _mapping(port, f"{path}.ports[{j}]")
            host_port = port.get("hostPort") or 0
            if not isinstance(host_port, int) or host_port < 0 or host_port > 65535:
                raise RecordError(f"{path}.ports[{j}].hostPort: expected an integer in 0..65535")
            if host_port > 0:
                ports.append((str(port.get("hostIP") or "0.0.0.0"), str(port.get("protocol") or "TCP"), host_port))
    return tuple(ports)


class NodeRecord:
    """What the scheduler reads of a Node, precomputed once."""

    __slots__ = (
        "allocatable",
        "conditions",
        "images",
        "labels",
        "memo",
        "name",
        "raw",
        "resource_version",
        "taints",
        "uid",
        "unschedulable",
    )

    def __init__(self, raw: Mapping[str, Any]) -> None:
        if not is_mapping(raw):
            raise RecordError(f"Node: expected an object, got {type(raw).__name__}")
        meta = _mapping(raw.get("metadata"), "metadata")
        spec = _mapping(raw.get("spec"), "spec")
        status = _mapping(raw.get("status"), "status")
        self.raw = raw
        self.memo: dict[str, Any] = {}  # plugin-owned derived data, as on PodRecord
        name = meta.get("name")
        if not name or not isinstance(name, str):
            raise RecordError("metadata.name: a Node needs a name")
        self.name: str = name
        self.uid = str(meta.get("uid") or "")
        self.resource_version = str(meta.get("resourceVersion") or "")
        self.labels = _labels(meta.get("labels"), "metadata.labels")
        self.unschedulable = bool(spec.get("unschedulable"))
        try:
            self.taints = tuple(
                Taint.from_dict(_mapping(t, f"spec.taints[{i}]"))
                for i, t in enumerate(_list(spec.get("taints"), "spec.taints"))
            )
        except TaintError as err:
            raise RecordError(f"spec.taints: {err}") from err
        allocatable = _mapping(status.get("allocatable"), "status.allocatable")
        try:
            self.allocatable = Resource.from_list({k: decode_quantity(v) for k, v in allocatable.items()})
        except QuantityError as err:
            raise RecordError(f"status.allocatable: {err}") from err
        images: list[tuple[tuple[str, ...], int]] = []
        for i, image in enumerate(_list(status.get("images"), "status.images")):
            image = _mapping(image, f"status.images[{i}]")
            names = tuple(str(n) for n in _list(image.get("names"), f"status.images[{i}].names"))
            size = image.get("sizeBytes") or 0
            if not isinstance(size, int):
                raise RecordError(f"status.images[{i}].sizeBytes: expected an integer")
            images.append((names, size))
        self.images = tuple(images)
        self.conditions: dict[str, str] = {
            str(_mapping(c, "status.conditions[]").get("type")): str(_mapping(c, "status.conditions[]").get("status"))
            for c in _list(status.get("conditions"), "status.conditions")
        }

    def __repr__(self) -> str:
        return f"NodeRecord({self.name})"
