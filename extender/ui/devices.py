"""Devices for a pod with ResourceClaims: on which nodes the claims can be allocated, with which devices.

The profile's DynamicResources plugin runs on its own (PreFilter, then Filter on every node), so the answer is
about devices alone; the explanation says what the other plugins think of each node. For each node where
the claims can be allocated, the devices are those of the allocator's first full solution, the one
kube-scheduler would reserve; for the others, the plugin's reason, counted. Each node with devices also lists
them, with the ones other claims already hold marked in use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from extender.cluster.records import PodRecord, RecordError
from extender.cluster.snapshot import Snapshot
from extender.engine.framework import CycleState
from extender.engine.plugins.dynamic_resources import DynamicResources
from extender.engine.runtime import Framework


def device_choices(framework: Framework, snapshot: Snapshot, raw_pod: Mapping[str, Any]) -> dict[str, Any]:
    """``{"plugin": bool, "claims": [names], "prefilter": {code, reasons} | None, "nodes": {node: {"claims":
    {claim: [{request, driver, pool, device}]}}}, "rejected": {reason: count}, "inventory": {node: [...]}}``."""
    try:
        pod = PodRecord(raw_pod)
    except RecordError as err:
        return {"error": f"Pod: {err}"}
    spec = raw_pod.get("spec") or {}
    names = [str(c.get("name") or "") for c in spec.get("resourceClaims") or [] if isinstance(c, Mapping)]
    plugin = next((p for p in framework.filter_plugins if isinstance(p, DynamicResources)), None)
    out: dict[str, Any] = {"plugin": plugin is not None, "claims": names, "prefilter": None, "nodes": {},
                           "rejected": {}, "inventory": inventory(snapshot)}
    if plugin is None:
        return out
    state = CycleState(snapshot)
    nodes = snapshot.node_list
    status = plugin.pre_filter(state, pod, nodes)
    if status is not None:
        out["prefilter"] = {"code": status.code.label, "reasons": list(status.reasons)}
        return out
    rejected: dict[str, int] = {}
    for node in nodes:
        verdict = plugin.filter(state, pod, node)
        if verdict is not None:
            reason = verdict.message or verdict.code.label
            rejected[reason] = rejected.get(reason, 0) + 1
            continue
        chosen: dict[str, list[dict[str, str]]] = {}
        for claim in plugin.allocated_claims(state, pod, node.name, include_extended=True):
            results = ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results") or []
            chosen[str((claim.get("metadata") or {}).get("name") or "")] = [
                {key: str(r.get(key) or "") for key in ("request", "driver", "pool", "device")} for r in results]
        out["nodes"][node.name] = {"claims": chosen}
    out["rejected"] = dict(sorted(rejected.items(), key=lambda kv: (-kv[1], kv[0])))
    return out


def inventory(snapshot: Snapshot) -> dict[str, list[dict[str, Any]]]:
    """Per node, the devices its ResourceSlices publish (node-local slices), each marked in use when an
    allocated claim holds it."""
    dra = snapshot.dra
    if dra.empty:
        return {}
    taken = dra.allocated().devices
    out: dict[str, list[dict[str, Any]]] = {}
    for record in dra.slices:
        for device in record.devices:
            node = device.node_name or record.node_name
            if not node:
                continue
            out.setdefault(node, []).append({
                "driver": record.driver, "pool": record.pool_name, "device": device.name,
                "inUse": (record.driver, record.pool_name, device.name) in taken,
            })
    return out
