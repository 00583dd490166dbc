"""NodeVolumeLimits: a node's CSI drivers may only attach so many volumes (upstream plugins/nodevolumelimits,
csi.go).

A pod's attachable volumes are its PVCs and generic ephemeral volumes resolved to a CSI driver and volume
handle — through the bound PV's CSI source, an in-tree PV translated by csi-translation-lib, or, for a claim
not bound yet, its StorageClass's provisioner (with a per-claim handle) — plus inline in-tree volumes of
migrated plugins. In 1.36 migration counts AWS EBS, GCE PD, Azure Disk, Cinder and Portworx (only when the
node has a CSINode object); Azure File and vSphere are recognised (so PreFilter does not skip) but never
counted.

Filter, per node: the limits are the CSINode's ``spec.drivers[].allocatable.count``; for each driver of the
pod's new volumes, volumes already used by the node's pods (a volume counted once however many pods use it)
plus attached ones plus new ones must not exceed the limit (Unschedulable "node(s) exceed max volume
count"). A claim of the incoming pod that does not exist rejects every node UnschedulableAndUnresolvable.

VolumeAttachment objects count attached volumes not used by any pod. With the VolumeLimitScaling gate (alpha and
off in v1.36, beta and on by default in v1.37), a driver of the pod's new volumes whose CSIDriver object sets
``preventPodSchedulingIfMissing`` must be listed in the node's CSINode first: otherwise Unschedulable
"<driver> CSI driver is not installed on the node" (csi.go Filter, checkCSIDriverOnNode; upstream walks a Go map,
here the pod's volumes in order decide which missing driver is named).

The incoming pod's volumes are resolved once in PreFilter, for nodes with and without a CSINode (the only
node-dependent input); each scheduled pod's attachable volumes are cached on its record for as long as the
claims, volumes and classes of the snapshot do not change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import SKIP, Code, CycleState, FilterPlugin, Status, unresolvable, unschedulable
from extender.engine.plugins.volume_common import (
    IN_TREE_BY_NAME,
    KIND_CSIDRIVER,
    KIND_VOLUMEATTACHMENT,
    PVC_RESOURCE,
    Objects,
    TranslationError,
    as_list,
    as_mapping,
    as_str,
    claim_of,
    inline_plugin,
    is_set,
    not_found,
    pod_volumes,
    pv_plugin,
    pvc_class,
    spec,
    translate_inline_handle,
    translate_pv_handle,
    volume_is_for_pod,
)
from extender.engine.registry import register

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

_STATE_KEY = "PreFilterNodeVolumeLimits"
_MEMO_ATTACHABLE = "NodeVolumeLimits/attachable"
# Upstream prefixes the handle of a not yet bound claim with a random string per plugin instance, so that it
# cannot collide with a real volume handle; only its stability within the process matters.
_UNBOUND_PREFIX = "k8s-extender-unbound-pvc"

# volumeUniqueName ("<driver>/<handle>") -> driver name
Volumes = dict[str, str]


class _Failure(Exception):
    """filterAttachableVolumes' error, carried as the status Filter returns for it."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def _migration_on(has_csinode: bool, plugin_name: str) -> bool:
    """isCSIMigrationOn: a CSINode exists and the in-tree plugin is one 1.36 migrates."""
    plugin = IN_TREE_BY_NAME.get(plugin_name)
    return has_csinode and plugin is not None and plugin.migration_on


def _driver_from_class(objects: Objects, has_csinode: bool, pvc: Mapping[str, Any], namespace: str,
                       claim: str) -> tuple[str, str]:
    """getCSIDriverInfoFromSC: the provisioner of the claim's class and a handle unique to the claim."""
    sc_name = pvc_class(pvc)
    if not sc_name:
        return "", ""  # an immediate-binding claim: it must be bound before scheduling, so it is not counted
    sc = objects.sc(sc_name)
    if sc is None:
        return "", ""
    handle = f"{_UNBOUND_PREFIX}-{namespace}/{claim}"
    provisioner = as_str(sc.get("provisioner"))
    plugin = IN_TREE_BY_NAME.get(provisioner)
    if plugin is not None:
        if not _migration_on(has_csinode, provisioner):
            return "", ""
        return plugin.driver, handle
    return provisioner, handle


def _driver_info(objects: Objects, has_csinode: bool, pvc: Mapping[str, Any], namespace: str,
                 claim: str) -> tuple[str, str]:
    """getCSIDriverInfo: (driver, volume handle) of a claim, ("", "") when it is not a countable CSI volume."""
    pv_name = as_str(spec(pvc).get("volumeName"))
    pv = objects.pv(pv_name) if pv_name else None
    if pv is None:
        # Not bound yet, or bound to a PV that is gone: count it by its class.
        return _driver_from_class(objects, has_csinode, pvc, namespace, claim)
    csi = spec(pv).get("csi")
    if csi is not None:
        csi = as_mapping(csi)
        return as_str(csi.get("driver")), as_str(csi.get("volumeHandle"))
    plugin = pv_plugin(pv)
    if plugin is None or not _migration_on(has_csinode, plugin.name):
        return "", ""
    try:
        return plugin.driver, translate_pv_handle(plugin, pv)
    except TranslationError:
        return "", ""  # upstream logs the failed translation and does not count the volume


def attachable_volumes(objects: Objects, has_csinode: bool, pod: PodRecord, new_pod: bool) -> Volumes:
    """filterAttachableVolumes: the pod's countable volumes; raises _Failure with upstream's status."""
    result: Volumes = {}
    for volume in pod_volumes(pod):
        claimed = claim_of(pod, volume)
        if claimed is None:
            # checkAttachableInlineVolume: an inline volume of a migrated in-tree plugin.
            plugin = inline_plugin(volume)
            if plugin is None or not _migration_on(has_csinode, plugin.name):
                continue
            try:
                handle = translate_inline_handle(plugin, volume)
            except TranslationError as err:
                raise _Failure(Status(Code.ERROR, f"converting volume({as_str(volume.get('name'))}) from inline "
                                                  f"to csi: {err}")) from err
            result[f"{plugin.driver}/{handle}"] = plugin.driver
            continue
        claim, ephemeral = claimed
        if not claim:
            raise _Failure(Status(Code.ERROR, "PersistentVolumeClaim had no name"))
        pvc = objects.pvc(pod.namespace, claim)
        if pvc is None:
            if new_pod:
                # The pod can never run without the claim: it is not schedulable until it is created.
                raise _Failure(unresolvable(f"looking up PVC {pod.namespace}/{claim}: "
                                            + not_found(PVC_RESOURCE, claim)))
            continue  # an existing pod's missing claim is not counted
        if ephemeral:
            error = volume_is_for_pod(pod, pvc)
            if error is not None:
                raise _Failure(Status(Code.ERROR, error))
        driver, handle = _driver_info(objects, has_csinode, pvc, pod.namespace, claim)
        if driver and handle:
            result[f"{driver}/{handle}"] = driver
    return result


def _existing_attachable(objects: Objects, pod: PodRecord) -> Volumes | _Failure:
    """attachable_volumes of a scheduled pod on a node with a CSINode, cached on its record."""
    cached: tuple[Any, Any, Any, Volumes | _Failure] | None = pod.memo.get(_MEMO_ATTACHABLE)
    if cached is not None and cached[0] is objects.pvcs and cached[1] is objects.pvs and cached[2] is objects.scs:
        return cached[3]
    try:
        value: Volumes | _Failure = attachable_volumes(objects, True, pod, False)
    except _Failure as failure:
        value = failure
    # The mappings themselves are kept (not their ids): they are replaced, never mutated, by the cache.
    pod.memo[_MEMO_ATTACHABLE] = (objects.pvcs, objects.pvs, objects.scs, value)
    return value


def volume_limits(csinode: Mapping[str, Any] | None) -> dict[str, int]:
    """getVolumeLimits: driver -> allocatable count of the drivers that report one."""
    limits: dict[str, int] = {}
    if csinode is None:
        return limits
    for driver in as_list(spec(csinode).get("drivers")):
        driver = as_mapping(driver)
        count = as_mapping(driver.get("allocatable")).get("count")
        if isinstance(count, int) and not isinstance(count, bool):
            limits[as_str(driver.get("name"))] = count
    return limits


def _driver_on_node(objects: Objects, driver: str, csinode: Mapping[str, Any] | None) -> bool:
    """checkCSIDriverOnNode: true unless the driver's CSIDriver asks to prevent scheduling where it is missing and
    the node's CSINode does not list it."""
    csidriver = objects.snapshot.kind(KIND_CSIDRIVER).get(driver)
    if csidriver is None or spec(csidriver).get("preventPodSchedulingIfMissing") is not True:
        return True
    if csinode is None:
        return False
    return any(as_str(as_mapping(d).get("name")) == driver for d in as_list(spec(csinode).get("drivers")))


def _attachments_by_node(objects: Objects) -> dict[str, Volumes]:
    """getNodeVolumeAttachmentInfo for every node: attached CSI volumes from VolumeAttachment objects."""
    by_node: dict[str, Volumes] = {}
    for va in objects.snapshot.kind(KIND_VOLUMEATTACHMENT).values():
        va_spec = spec(va)
        node_name = as_str(va_spec.get("nodeName"))
        attacher = as_str(va_spec.get("attacher"))
        pv_name = as_mapping(va_spec.get("source")).get("persistentVolumeName")
        if not attacher or pv_name is None:
            continue
        pv = objects.pv(as_str(pv_name))
        if pv is None or spec(pv).get("csi") is None:
            continue
        handle = as_str(as_mapping(spec(pv)["csi"]).get("volumeHandle"))
        by_node.setdefault(node_name, {})[f"{attacher}/{handle}"] = attacher
    return by_node


class _PreFilterState:
    """The incoming pod's new volumes on nodes without / with a CSINode (or the failure for each)."""

    __slots__ = ("attachments", "objects", "with_csinode", "without_csinode")

    def __init__(self, objects: Objects, pod: PodRecord) -> None:
        self.objects = objects
        self.without_csinode = self._resolve(objects, False, pod)
        self.with_csinode = self._resolve(objects, True, pod)
        self.attachments: dict[str, Volumes] | None = None

    @staticmethod
    def _resolve(objects: Objects, has_csinode: bool, pod: PodRecord) -> Volumes | Status:
        try:
            return attachable_volumes(objects, has_csinode, pod, True)
        except _Failure as failure:
            return failure.status


@register
class NodeVolumeLimits(FilterPlugin):
    """Reject nodes whose CSI drivers' volume limits the pod's new volumes would exceed."""

    name = "NodeVolumeLimits"
    skips_deferred_resize = True  # v1.37 PreFilter: Skip a deferred resize (see Plugin)

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        for volume in pod_volumes(pod):
            if is_set(volume, "persistentVolumeClaim") or is_set(volume, "ephemeral") or inline_plugin(volume):
                state.data[_STATE_KEY] = _PreFilterState(Objects(state.snapshot), pod)
                return None
        return SKIP

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        pre: _PreFilterState | None = state.data.get(_STATE_KEY)
        if pre is None:
            pre = state.data[_STATE_KEY] = _PreFilterState(Objects(state.snapshot), pod)
        objects = pre.objects
        csinode = objects.csinode(node.name)
        new = pre.with_csinode if csinode is not None else pre.without_csinode
        if isinstance(new, Status):
            return new
        if not new:
            return None
        if self.release.gate("VolumeLimitScaling"):
            for driver in dict.fromkeys(new.values()):
                if not _driver_on_node(objects, driver, csinode):
                    return unschedulable(f"{driver} CSI driver is not installed on the node")
        limits = volume_limits(csinode)
        if not limits:
            return None
        attached: Volumes = {}
        for existing in node.pods:
            volumes = _existing_attachable(objects, existing)
            if isinstance(volumes, _Failure):
                return volumes.status
            attached.update(volumes)
        new_volumes = dict(new)
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new_volumes.pop(unique, None)  # a volume already used on the node is not attached again
            attached_count[driver] = attached_count.get(driver, 0) + 1
        if pre.attachments is None:
            pre.attachments = _attachments_by_node(objects)
        for unique, driver in pre.attachments.get(node.name, {}).items():
            if unique not in attached:
                attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return None
