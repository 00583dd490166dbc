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

from typing import Any

import msgspec
import orjson
from msgspec import UNSET, UnsetType

from extender.kube.podfields import (
    KEPT_CONDITION_TYPE,
    KEPT_CONTAINER,
    KEPT_METADATA,
    KEPT_SPEC,
    KEPT_STATUS,
    KEPT_STATUS_CONTAINER,
    UNREAD_VOLUMES,
)

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


_list_decoder = msgspec.json.Decoder(_PodList)
_event_decoder = msgspec.json.Decoder(_PodEvent)
_pod_decoder = msgspec.json.Decoder(_Pod)
def _pod_dict(pod: Any) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.to_builtins(pod)
    out["kind"] = "Pod"
    spec = out.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("volumes"), list):
        spec["volumes"] = [v for v in spec["volumes"] if not (isinstance(v, dict) and UNREAD_VOLUMES & v.keys())]
    status = out.get("status")
    if isinstance(status, dict) and isinstance(status.get("conditions"), list):
        # Only the resize state matters; keep such conditions whole, as slim_pod does.
        status["conditions"] = [c for c in status["conditions"]
                                if isinstance(c, dict) and c.get("type") == KEPT_CONDITION_TYPE]
    return out


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
