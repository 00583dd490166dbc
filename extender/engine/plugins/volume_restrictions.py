"""VolumeRestrictions: disk conflicts between pods on a node, and ReadWriteOncePod claims already in use
(upstream plugins/volumerestrictions).

* Disk conflicts (Filter, Unschedulable): the same GCE PD unless both mounts are read-only, the same AWS EBS
  volume, the same iSCSI IQN unless both read-only, the same RBD image (a shared monitor, same pool and
  image) unless both read-only — checked against every pod already on the node.
* ReadWriteOncePod (PreFilter + Filter, Unschedulable): every claim of the pod must exist (else PreFilter
  fails UnschedulableAndUnresolvable with the lister's NotFound message); if a claim with the
  ReadWriteOncePod access mode is used by any scheduled pod in the cluster, every node is rejected.
* PreFilter skips the plugin when the pod has no disk volume to check and no ReadWriteOncePod conflict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import SKIP, CycleState, FilterPlugin, Status, unresolvable, unschedulable
from extender.engine.plugins.volume_common import (
    PVC_RESOURCE,
    Objects,
    access_modes,
    as_list,
    as_mapping,
    as_str,
    is_set,
    not_found,
    pod_volumes,
)
from extender.engine.registry import register

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)

_STATE_KEY = "PreFilterVolumeRestrictions"
_MEMO_DISKS = "VolumeRestrictions/disks"

# A restricted disk, reduced to what the conflict rules compare:
#   ("gce", pdName, readOnly) | ("aws", volumeID) | ("iscsi", iqn, readOnly)
#   | ("rbd", frozenset(monitors), pool, image, readOnly)
Disk = tuple[Any, ...]


def _disks(volumes: Sequence[Mapping[str, Any]]) -> tuple[Disk, ...]:
    """The volumes needsRestrictionsCheck selects, one entry per volume (a volume sets one source)."""
    disks: list[Disk] = []
    for volume in volumes:
        if is_set(volume, "gcePersistentDisk"):
            src = as_mapping(volume["gcePersistentDisk"])
            disks.append(("gce", as_str(src.get("pdName")), src.get("readOnly") is True))
        elif is_set(volume, "awsElasticBlockStore"):
            disks.append(("aws", as_str(as_mapping(volume["awsElasticBlockStore"]).get("volumeID"))))
        elif is_set(volume, "rbd"):
            src = as_mapping(volume["rbd"])
            disks.append(("rbd", frozenset(as_str(m) for m in as_list(src.get("monitors"))),
                          as_str(src.get("pool")), as_str(src.get("image")), src.get("readOnly") is True))
        elif is_set(volume, "iscsi"):
            src = as_mapping(volume["iscsi"])
            disks.append(("iscsi", as_str(src.get("iqn")), src.get("readOnly") is True))
    return tuple(disks)


def _existing_disks(pod: PodRecord) -> tuple[Disk, ...]:
    """A scheduled pod's restricted disks, derived once per pod record."""
    disks: tuple[Disk, ...] | None = pod.memo.get(_MEMO_DISKS)
    if disks is None:
        disks = pod.memo[_MEMO_DISKS] = _disks(pod_volumes(pod))
    return disks


def _conflict(new: Disk, existing: Disk) -> bool:
    """isVolumeConflict for one volume of the incoming pod and one of an existing pod."""
    kind = new[0]
    if kind != existing[0]:
        return False
    if kind == "gce" or kind == "iscsi":
        return bool(new[1] == existing[1] and not (new[2] and existing[2]))
    if kind == "aws":
        return bool(new[1] == existing[1])
    # rbd: at least one shared monitor, same pool and image, not both read-only.
    return bool(new[1] & existing[1] and new[2] == existing[2] and new[3] == existing[3]
                and not (new[4] and existing[4]))


@register
class VolumeRestrictions(FilterPlugin):
    """Reject nodes where the pod's disks conflict, and pods whose ReadWriteOncePod claims are in use."""

    name = "VolumeRestrictions"
    skips_deferred_resize = True  # v1.37 PreFilter: Skip a deferred resize (see Plugin)
    prefilter_reads_pods = True  # upstream updates its PreFilter state through AddPod/RemovePod

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        volumes = pod_volumes(pod)
        disks = _disks(volumes)
        objects = Objects(state.snapshot)
        rwop: set[str] = set()
        for volume in volumes:
            if not is_set(volume, "persistentVolumeClaim"):
                continue
            claim = as_str(as_mapping(volume["persistentVolumeClaim"]).get("claimName"))
            pvc = objects.pvc(pod.namespace, claim)
            if pvc is None:
                return unresolvable(not_found(PVC_RESOURCE, claim))
            if "ReadWriteOncePod" in access_modes(pvc):
                rwop.add(claim)
        conflicts = 0
        if rwop:
            # StorageInfos().IsPVCUsedByPods: claims used by any scheduled pod of the snapshot.
            node_list = state.snapshot.node_list
            for claim in rwop:
                key = f"{pod.namespace}/{claim}"
                if any(key in info.pvc_ref_counts for info in node_list):
                    conflicts += 1
        if not disks and conflicts == 0:
            return SKIP
        state.data[_STATE_KEY] = (disks, conflicts)
        return None

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        pre: tuple[tuple[Disk, ...], int] | None = state.data.get(_STATE_KEY)
        if pre is None:
            status = self.pre_filter(state, pod, [node])
            if status is not None:
                return None if status is SKIP else status
            pre = state.data[_STATE_KEY]
        disks, conflicts = pre
        if disks:
            for existing_pod in node.pods:
                existing = _existing_disks(existing_pod)
                if existing and any(_conflict(d, e) for d in disks for e in existing):
                    return unschedulable(ERR_REASON_DISK_CONFLICT)
        if conflicts > 0:
            return unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return None
