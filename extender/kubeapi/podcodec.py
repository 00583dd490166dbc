"""Decoding Pods from the apiserver straight into what the cache keeps.

A Pod as the apiserver sends it is several kilobytes (managedFields, env, probes, volume mounts,
conditions...), of which the scheduler reads a fraction (extender.kube.podfields). Decoding
whole pages of pods into dicts and then trimming them dominated the time to sync 150k pods and left the
heap fragmented. msgspec decodes into structs that declare only the kept fields, skipping the rest
without creating objects for them, and turns them into the same dicts slim_pod would produce.

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
    SlimPod,
    intern_metadata,
    intern_values,
    trim_conditions,
    trim_volumes,
)
from extender.kube.podfields import KEPT_CONTAINER, KEPT_METADATA, KEPT_SPEC, KEPT_STATUS, KEPT_STATUS_CONTAINER

Kept = Any | UnsetType  # a kept field: any JSON value, left out of the result when absent


def _struct(name: str, fields: tuple[str, ...], typed: dict[str, Any] | None = None) -> Any:
    """A struct with the given fields, each optional (UNSET when absent); ``typed`` overrides some types."""
    typed = typed or {}
    return msgspec.defstruct(name, [(f, typed.get(f, Kept), UNSET) for f in fields])


_Container: Any = _struct("_Container", KEPT_CONTAINER)
_ContainerStatus: Any = _struct("_ContainerStatus", KEPT_STATUS_CONTAINER)
_Meta: Any = _struct("_Meta", KEPT_METADATA)
_Spec: Any = _struct("_Spec", (*KEPT_SPEC, "containers", "initContainers"),
                {"containers": list[_Container] | UnsetType, "initContainers": list[_Container] | UnsetType})
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


def _pod_dict(pod: Any) -> SlimPod:
    """The decoded struct as slim_pod's result, built field by field from what was decoded.

    Values typed Any are already plain JSON values: they are taken as they are, never copied again.
    """
    out = SlimPod(kind="Pod")
    meta, spec, status = pod.metadata, pod.spec, pod.status
    if meta is not UNSET:
        out["metadata"] = intern_metadata(_fields(meta, KEPT_METADATA))
    if spec is not UNSET:
        out["spec"] = _slim_part(spec, PLAIN_SPEC, ("containers", "initContainers"), KEPT_CONTAINER,
                                 "volumes", trim_volumes)
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
    except msgspec.ValidationError:
        result: dict[str, Any] = orjson.loads(body)
        return result
    meta: dict[str, Any] = msgspec.to_builtins(page.metadata) if page.metadata is not UNSET else {}
    if "continue_" in meta:
        meta["continue"] = meta.pop("continue_")
    items = [_pod_dict(p) for p in page.items] if page.items is not UNSET else []
    return {"metadata": meta, "items": items}


def decode_pod_event(line: bytes) -> dict[str, Any]:
    """A Pod watch event with its object trimmed; general decoding for ERROR events and anything odd."""
    try:
        event = _event_decoder.decode(line)
    except msgspec.ValidationError:
        result: dict[str, Any] = orjson.loads(line)
        return result
    out: dict[str, Any] = {"type": event.type if event.type is not UNSET else None}
    if event.object is not UNSET:
        out["object"] = _pod_dict(event.object)
    return out


def decode_pod(body: bytes) -> dict[str, Any]:
    """One Pod, trimmed; general decoding if unexpected."""
    try:
        return _pod_dict(_pod_decoder.decode(body))
    except msgspec.ValidationError:
        result: dict[str, Any] = orjson.loads(body)
        return result
