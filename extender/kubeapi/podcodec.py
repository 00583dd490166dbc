"""Decoding Pods from the apiserver straight into what the cache keeps.

A Pod as the apiserver sends it is several kilobytes (managedFields, env, probes, volume mounts,
conditions...), of which the scheduler reads a fraction (extender.kube.podfields). Decoding
whole pages of pods into dicts and then trimming them dominated the time to sync 150k pods and left the
heap fragmented. msgspec decodes into structs that declare only the kept fields, skipping the rest
without creating objects for them, and turns them into the same dicts slim_pod would produce.

The parts of a pod that a workload's replicas repeat word for word (its containers, tolerations, affinity,
spreading constraints and volumes; its labels and owner references) are taken as their JSON text and decoded
once per distinct text: every pod of a template then holds the same objects (see :func:`_shared_part`). A
watch event decodes, trims and interns only what differs from pod to pod (its name and versions, the node it
is on, its status), and 150,000 pods of a few templates hold a few copies of their containers instead of
150,000. Like the rest of a cached pod, the shared parts are never mutated.

Anything unexpected (an ERROR event's Status, a malformed object) falls back to the general path
(orjson, then slim_pod in the cache), so the result is always what slim_pod gives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import orjson
from msgspec import UNSET, UnsetType

from extender.cluster.records import (
    DROP,
    PLAIN_SPEC,
    PLAIN_STATUS,
    UNIQUE_METADATA,
    SlimPod,
    intern_value,
    intern_values,
    trim_conditions,
    trim_volumes,
)
from extender.kube.podfields import KEPT_CONTAINER, KEPT_METADATA, KEPT_SPEC, KEPT_STATUS, KEPT_STATUS_CONTAINER
from extender.memo import BoundedMemo

Kept = Any | UnsetType  # a kept field: any JSON value, left out of the result when absent


def _struct(name: str, fields: tuple[str, ...], typed: dict[str, Any] | None = None) -> Any:
    """A struct with the given fields, each optional (UNSET when absent); ``typed`` overrides some types."""
    typed = typed or {}
    return msgspec.defstruct(name, [(f, typed.get(f, Kept), UNSET) for f in fields])


_Container: Any = _struct("_Container", KEPT_CONTAINER)
_ContainerStatus: Any = _struct("_ContainerStatus", KEPT_STATUS_CONTAINER)
#: Metadata fields kept as their JSON text and decoded once per distinct text: a workload's pods carry the same
#: labels and owner (the apiserver adds the node's zone and region labels at binding: one more text per zone).
SHARED_METADATA = ("labels", "ownerReferences")
_Meta: Any = _struct("_Meta", KEPT_METADATA, {field: msgspec.Raw | UnsetType for field in SHARED_METADATA})
#: Spec fields kept as their JSON text and decoded once per distinct text (the parts replicas share).
SHARED_SPEC = ("affinity", "tolerations", "topologySpreadConstraints", "containers", "initContainers", "volumes")
_Spec: Any = _struct("_Spec", (*KEPT_SPEC, "containers", "initContainers"),
                {field: msgspec.Raw | UnsetType for field in SHARED_SPEC})
_Status: Any = _struct("_Status", (*KEPT_STATUS, "containerStatuses", "initContainerStatuses"),
                  {"containerStatuses": list[_ContainerStatus] | UnsetType,
                   "initContainerStatuses": list[_ContainerStatus] | UnsetType})
_Pod: Any = _struct("_Pod", ("metadata", "spec", "status"),
               {"metadata": _Meta | UnsetType, "spec": _Spec | UnsetType, "status": _Status | UnsetType})


class _ListMeta(msgspec.Struct):
    resourceVersion: Kept = UNSET
    # "continue" is a Python keyword: renamed in the struct, read from JSON as is.
    continue_: Kept = msgspec.field(default=UNSET, name="continue")


_PodList: Any = msgspec.defstruct("_PodList", [("metadata", _ListMeta | UnsetType, UNSET),
                                           ("items", list[_Pod] | UnsetType, UNSET)])
_PodEvent: Any = msgspec.defstruct("_PodEvent", [("type", Kept, UNSET), ("object", _Pod | UnsetType, UNSET)])


class _ListHead(msgspec.Struct):
    metadata: _ListMeta | UnsetType = UNSET


_list_decoder = msgspec.json.Decoder(_PodList)
_head_decoder = msgspec.json.Decoder(_ListHead)
_event_decoder = msgspec.json.Decoder(_PodEvent)
_pod_decoder = msgspec.json.Decoder(_Pod)
def _fields(struct: Any, names: tuple[str, ...]) -> dict[str, Any]:
    # The struct's present fields, in the given order: what _pick gives on the decoded object.
    return {name: value for name in names if (value := getattr(struct, name)) is not UNSET}


class _Malformed(Exception):
    """A shared part that does not decode as what it must be: the whole body takes the general path."""


_containers_decoder = msgspec.json.Decoder(list[_Container] | None)
_any_decoder = msgspec.json.Decoder()


def _decode_containers(text: bytes) -> Any:
    items = _containers_decoder.decode(text)  # (not a list: the general path keeps it for the record to report)
    return DROP if items is None else [_fields(item, KEPT_CONTAINER) for item in items]  # null: left out


def _decode_volumes(text: bytes) -> Any:
    return trim_volumes(_any_decoder.decode(text))  # DROP for null: the field is left out


_PART_DECODERS: dict[str, Callable[[bytes], Any]] = {
    "labels": _any_decoder.decode, "ownerReferences": _any_decoder.decode,
    "affinity": _any_decoder.decode, "tolerations": _any_decoder.decode,
    "topologySpreadConstraints": _any_decoder.decode,
    "containers": _decode_containers, "initContainers": _decode_containers, "volumes": _decode_volumes}

#: Decoded parts by field and JSON text, shared by every pod that sends the same text. A part weighs about four
#: times its text once decoded; a template's parts come to a few kilobytes, so the budget holds the parts of
#: hundreds of templates, and a pod whose parts are not kept just decodes its own. Metadata has a memo of its
#: own: pods whose labels are their own (a StatefulSet's or an indexed Job's carry their index) make a new text
#: each, and must not push the templates' spec parts out.
_SPEC_PARTS: BoundedMemo[tuple[str, bytes], Any] = BoundedMemo(
    "shared pod spec parts", max_bytes=8 * 1024 * 1024, max_entries=4096)
_METADATA_PARTS: BoundedMemo[tuple[str, bytes], Any] = BoundedMemo(
    "shared pod metadata parts", max_bytes=4 * 1024 * 1024, max_entries=4096)
_PART_WEIGHT = 5  # the text kept as the key, and the decoded value


def _shared_part(field: str, raw: msgspec.Raw) -> Any:
    """A part decoded, trimmed and interned once per distinct text (DROP: leave the field out)."""
    memo = _METADATA_PARTS if field in SHARED_METADATA else _SPEC_PARTS
    key = (field, bytes(raw))  # (a copy of exactly the part's text)
    held = memo.get(key)
    if held is not None:
        return held
    try:
        value = _PART_DECODERS[field](key[1])
    except (msgspec.ValidationError, msgspec.DecodeError) as err:
        raise _Malformed(field) from err
    if value is not DROP:
        value = intern_values(value)
    memo.put(key, value, _PART_WEIGHT * len(key[1]))
    return value


_SPEC_ORDER = (*PLAIN_SPEC, "containers", "initContainers", "volumes")  # slim_pod's order of a spec's fields


def _slim_fields(part: Any, fields: tuple[str, ...], unique: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A pod's metadata or spec as slim_pod gives it, in ``fields``' order: its shared parts as kept for their
    text (interned once, when first decoded), its own values interned, but for ``unique`` ones (the pod's own
    name, UID and versions, as intern_metadata leaves them)."""
    slim: dict[str, Any] = {}
    for field in fields:
        value = getattr(part, field)
        if value is UNSET:
            continue
        if type(value) is msgspec.Raw:
            value = _shared_part(field, value)
            if value is DROP:
                continue
        elif field not in unique:
            value = intern_value(value)
        slim[field] = value
    return slim


def _pod_dict(pod: Any) -> SlimPod:
    """The decoded struct as slim_pod's result, built field by field from what was decoded.

    Values typed Any are already plain JSON values: they are taken as they are, never copied again.
    """
    out = SlimPod(kind="Pod")
    meta, spec, status = pod.metadata, pod.spec, pod.status
    if meta is not UNSET:
        out["metadata"] = _slim_fields(meta, KEPT_METADATA, UNIQUE_METADATA)
    if spec is not UNSET:
        out["spec"] = _slim_fields(spec, _SPEC_ORDER)
    if status is not UNSET:
        out["status"] = _slim_part(status, PLAIN_STATUS, ("containerStatuses", "initContainerStatuses"),
                                   KEPT_STATUS_CONTAINER, "conditions", trim_conditions)
    return out


def _slim_part(part: Any, plain: tuple[str, ...], listed: tuple[str, str], kept_item: tuple[str, ...],
               trimmed: str, trim: Callable[[Any], Any]) -> Any:
    """A pod's spec or status, slim: its plain fields, its two container lists with each item's kept
    fields, and the one field that is trimmed (volumes, conditions), left out when nothing of it is kept."""
    slim = _fields(part, plain)
    for field in listed:
        items = getattr(part, field)
        if items is not UNSET:
            slim[field] = [_fields(item, kept_item) for item in items]
    value = getattr(part, trimmed)
    if value is not UNSET and (kept := trim(value)) is not DROP:
        slim[trimmed] = kept
    return intern_values(slim)


def list_metadata(body: bytes) -> tuple[str, str]:
    """A list's (resourceVersion, continue token) of any kind, without decoding its items.

    Unreadable bodies give ("", ""): decoding the page then reports what is wrong.
    """
    try:
        meta = _head_decoder.decode(body).metadata
    except msgspec.DecodeError:
        return "", ""
    if meta is UNSET:
        return "", ""
    version, token = meta.resourceVersion, meta.continue_
    return (str(version or "") if version is not UNSET else "", str(token or "") if token is not UNSET else "")


def decode_pod_list(body: bytes) -> dict[str, Any]:
    """A PodList page as {"metadata": {...}, "items": [trimmed pods]}; general decoding if unexpected."""
    try:
        page = _list_decoder.decode(body)
        items = [_pod_dict(p) for p in page.items] if page.items is not UNSET else []
    except (msgspec.ValidationError, _Malformed):
        result: dict[str, Any] = orjson.loads(body)
        return result
    meta: dict[str, Any] = msgspec.to_builtins(page.metadata) if page.metadata is not UNSET else {}
    if "continue_" in meta:
        meta["continue"] = meta.pop("continue_")
    return {"metadata": meta, "items": items}


def decode_pod_event(line: bytes) -> dict[str, Any]:
    """A Pod watch event with its object trimmed; general decoding for ERROR events and anything odd."""
    try:
        event = _event_decoder.decode(line)
        out: dict[str, Any] = {"type": event.type if event.type is not UNSET else None}
        if event.object is not UNSET:
            out["object"] = _pod_dict(event.object)
    except (msgspec.ValidationError, _Malformed):
        result: dict[str, Any] = orjson.loads(line)
        return result
    return out


def decode_pod(body: bytes) -> dict[str, Any]:
    """One Pod, trimmed; general decoding if unexpected."""
    try:
        return _pod_dict(_pod_decoder.decode(body))
    except (msgspec.ValidationError, _Malformed):
        result: dict[str, Any] = orjson.loads(body)
        return result
