"""VolumeZone: a pod's bound volumes must be in the node's zone and region (upstream plugins/volumezone).

PreFilter resolves every PVC volume of the pod to its PV (UnschedulableAndUnresolvable when the claim, the
volume or the class is missing, when an unbound claim has no class, or when its class is not
WaitForFirstConsumer), and collects the PV's topology labels (beta and GA zone and region; a value may list
several zones separated by "__"; an unparsable value is ignored). Unbound WaitForFirstConsumer claims are
left to VolumeBinding. Without any topology to check the plugin is skipped.

Filter: a node carrying none of the four topology labels passes; otherwise, for each PV label, the node's
label of the same key — or its GA equivalent — must hold one of the PV's values, else
UnschedulableAndUnresolvable "node(s) had no available volume zone".
"""

from __future__ import annotations

from collections.abc import Sequence

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import SKIP, CycleState, FilterPlugin, Status, unresolvable
from extender.engine.plugins.volume_common import (
    LABEL_REGION,
    LABEL_REGION_BETA,
    LABEL_ZONE,
    LABEL_ZONE_BETA,
    PV_RESOURCE,
    PVC_RESOURCE,
    SC_RESOURCE,
    WAIT_FOR_FIRST_CONSUMER,
    Objects,
    as_mapping,
    as_str,
    go_quote,
    is_set,
    label_zones_to_set,
    labels_of,
    not_found,
    pod_volumes,
    pvc_class,
    spec,
)
from extender.engine.registry import register

ERR_REASON_CONFLICT = "node(s) had no available volume zone"

TOPOLOGY_LABELS = (LABEL_ZONE_BETA, LABEL_REGION_BETA, LABEL_ZONE, LABEL_REGION)
_GA_LABEL = {LABEL_REGION_BETA: LABEL_REGION, LABEL_ZONE_BETA: LABEL_ZONE}

_STATE_KEY = "PreFilterVolumeZone"

# (label key, allowed values) of one PV topology label.
Topology = tuple[str, frozenset[str]]


def pod_pv_topologies(objects: Objects, pod: PodRecord) -> list[Topology] | Status:
    """getPVbyPod: the topology labels of the pod's bound volumes, or the status that rejects the pod."""
    topologies: list[Topology] = []
    for volume in pod_volumes(pod):
        if not is_set(volume, "persistentVolumeClaim"):
            continue
        claim = as_str(as_mapping(volume["persistentVolumeClaim"]).get("claimName"))
        if not claim:
            return unresolvable("PersistentVolumeClaim had no name")
        pvc = objects.pvc(pod.namespace, claim)
        if pvc is None:
            return unresolvable(not_found(PVC_RESOURCE, claim))
        pv_name = as_str(spec(pvc).get("volumeName"))
        if not pv_name:
            sc_name = pvc_class(pvc)
            if not sc_name:
                return unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
            sc = objects.sc(sc_name)
            if sc is None:
                return unresolvable(not_found(SC_RESOURCE, sc_name))
            mode = sc.get("volumeBindingMode")
            if mode is None:
                return unresolvable(f"VolumeBindingMode not set for StorageClass {go_quote(sc_name)}")
            if mode == WAIT_FOR_FIRST_CONSUMER:
                continue  # VolumeBinding picks the volume, and checks its topology
            return unresolvable("PersistentVolume had no name")
        pv = objects.pv(pv_name)
        if pv is None:
            return unresolvable(not_found(PV_RESOURCE, pv_name))
        pv_labels = labels_of(pv)
        for key in TOPOLOGY_LABELS:
            if key in pv_labels:
                zones = label_zones_to_set(as_str(pv_labels[key]))
                if zones is not None:  # upstream logs and ignores an unparsable label
                    topologies.append((key, frozenset(zones)))
    return topologies


@register
class VolumeZone(FilterPlugin):
    """Reject nodes outside the zones and regions of the pod's bound volumes."""

    name = "VolumeZone"
    skips_deferred_resize = True  # v1.37 PreFilter: Skip a deferred resize (see Plugin)

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        topologies = pod_pv_topologies(Objects(state.snapshot), pod)
        if isinstance(topologies, Status):
            return topologies
        if not topologies:
            return SKIP
        state.data[_STATE_KEY] = topologies
        return None

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        topologies: list[Topology] | None = state.data.get(_STATE_KEY)
        if topologies is None:
            found = pod_pv_topologies(Objects(state.snapshot), pod)
            if isinstance(found, Status):
                return found
            topologies = found
        record = node.node
        assert record is not None
        node_labels = record.labels
        if not any(key in node_labels for key in TOPOLOGY_LABELS):
            return None
        for key, values in topologies:
            value = node_labels.get(key)
            if value is None:
                value = node_labels.get(_GA_LABEL.get(key, key))
            if value is None or value not in values:
                return unresolvable(ERR_REASON_CONFLICT)
        return None
