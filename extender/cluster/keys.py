"""How the cache keys the objects it holds: ``namespace/name``, or ``name`` for cluster-scoped kinds.

One rule for every kind, DRA's included, so that the cache, its DRA store and the live source agree on
which object an event is about.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CLUSTER_SCOPED = frozenset({"PersistentVolume", "StorageClass", "CSINode", "Namespace", "Node", "CSIDriver",
                            "VolumeAttachment", "ResourceSlice", "DeviceClass", "PriorityClass"})


def object_key(obj: Mapping[str, Any], kind: str) -> str:
    """namespace/name for namespaced kinds (namespace ``default`` when unset), name for cluster-scoped ones."""
    meta = obj.get("metadata") or {}
    name = str(meta.get("name") or "")
    if kind in CLUSTER_SCOPED:
        return name
    return f"{meta.get('namespace') or 'default'}/{name}"
