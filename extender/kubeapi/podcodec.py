"""Decoding Pods from the apiserver straight into what the cache keeps.

A Pod as the apiserver sends it is several kilobytes (managedFields, env, probes, volume mounts,
conditions...), of which the scheduler reads a fraction (extender.cluster.records.slim_pod). Decoding
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

Kept = Any | UnsetType  # a kept field: any JSON value, left out of the result when absent


class _Meta(msgspec.Struct):
    name: Kept = UNSET
    namespace: Kept = UNSET
    uid: Kept = UNSET
    labels: Kept = UNSET
    ownerReferences: Kept = UNSET
    deletionTimestamp: Kept = UNSET
    resourceVersion: Kept = UNSET
    creationTimestamp: Kept = UNSET


class _Container(msgspec.Struct):
    name: Kept = UNSET
    image: Kept = UNSET
    resources: Kept = UNSET
    ports: Kept = UNSET
    restartPolicy: Kept = UNSET


class _Spec(msgspec.Struct):
    nodeName: Kept = UNSET
    affinity: Kept = UNSET
    priority: Kept = UNSET
    priorityClassName: Kept = UNSET
    preemptionPolicy: Kept = UNSET
    schedulerName: Kept = UNSET
    tolerations: Kept = UNSET
    topologySpreadConstraints: Kept = UNSET
    nodeSelector: Kept = UNSET
    overhead: Kept = UNSET
    resources: Kept = UNSET
    hostNetwork: Kept = UNSET
    containers: list[_Container] | UnsetType = UNSET
    initContainers: list[_Container] | UnsetType = UNSET
    volumes: Kept = UNSET


class _ContainerStatus(msgspec.Struct):
    name: Kept = UNSET
    allocatedResources: Kept = UNSET
    resources: Kept = UNSET


class _Status(msgspec.Struct):
    phase: Kept = UNSET
    startTime: Kept = UNSET
    containerStatuses: list[_ContainerStatus] | UnsetType = UNSET
    initContainerStatuses: list[_ContainerStatus] | UnsetType = UNSET
    conditions: Kept = UNSET


class _Pod(msgspec.Struct):
    metadata: _Meta | UnsetType = UNSET
    spec: _Spec | UnsetType = UNSET
    status: _Status | UnsetType = UNSET


class _ListMeta(msgspec.Struct):
    resourceVersion: Kept = UNSET
    # "continue" is a Python keyword: renamed in the struct, read from JSON as is.
    continue_: Kept = msgspec.field(default=UNSET, name="continue")


class _PodList(msgspec.Struct):
    metadata: _ListMeta | UnsetType = UNSET
    items: list[_Pod] | UnsetType = UNSET


class _PodEvent(msgspec.Struct):
    type: Kept = UNSET
    object: _Pod | UnsetType = UNSET


_list_decoder = msgspec.json.Decoder(_PodList)
_event_decoder = msgspec.json.Decoder(_PodEvent)
_pod_decoder = msgspec.json.Decoder(_Pod)
# Volume sources no plugin reads (as in records.slim_pod).
_UNREAD_VOLUMES = frozenset({"configMap", "secret", "projected", "downwardAPI", "emptyDir"})


def _pod_dict(pod: _Pod) -> dict[str, Any]:
    out: dict[str, Any] = msgspec.to_builtins(pod)
    out["kind"] = "Pod"
    spec = out.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("volumes"), list):
        spec["volumes"] = [v for v in spec["volumes"] if not (isinstance(v, dict) and _UNREAD_VOLUMES & v.keys())]
    status = out.get("status")
    if isinstance(status, dict) and isinstance(status.get("conditions"), list):
        # Only the resize state matters; keep such conditions whole, as slim_pod does.
        status["conditions"] = [c for c in status["conditions"]
                                if isinstance(c, dict) and c.get("type") == "PodResizePending"]
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
