"""DeferredPodScheduling: where an already bound pod's deferred in-place resize may be retried (v1.37, alpha).

Upstream: ``pkg/scheduler/framework/plugins/deferredpodscheduling`` (kubernetes v1.37.2), in the default profile
only with the InPlacePodVerticalScalingSchedulerPreemption gate (just before NodeResourcesFit). For a pod whose
``PodResizePending`` condition has reason Deferred (and only with the gate), Filter keeps the pod on the node it
is bound to ("pod assigned to different node") and rejects a node whose ``spec.podPreemptionPolicy`` disables
resize preemption ("node had resize preemption disabled"), both UnschedulableAndUnresolvable; every other pod
skips the plugin at PreFilter. Its Permit (the pod waits for the kubelet) is kube-scheduler's side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import SKIP, CycleState, FilterPlugin, Status, unresolvable
from extender.engine.registry import register
from extender.kube.resources import resize_deferred

NAME = "DeferredPodScheduling"
ERR_REASON_OTHER_NODE = "pod assigned to different node"
ERR_REASON_PREEMPTION_DISABLED = "node had resize preemption disabled"


def _resize_preemption_disabled(node: NodeInfo) -> bool:
    record = node.node
    spec = record.raw.get("spec") if record is not None else None
    policy = spec.get("podPreemptionPolicy") if isinstance(spec, Mapping) else None
    return isinstance(policy, Mapping) and bool(policy.get("disableResizePreemption"))


@register
class DeferredPodScheduling(FilterPlugin):
    """Keep a deferred resize on its node, and off nodes that disable resize preemption."""

    name = NAME
    introduced = 37

    def _applies(self, pod: PodRecord) -> bool:
        return self.release.gate("InPlacePodVerticalScalingSchedulerPreemption") and resize_deferred(pod.raw)

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        return None if self._applies(pod) else SKIP

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        if not self._applies(pod):
            return None
        if pod.node_name and pod.node_name != node.name:
            return unresolvable(ERR_REASON_OTHER_NODE)
        if _resize_preemption_disabled(node):
            return unresolvable(ERR_REASON_PREEMPTION_DISABLED)
        return None
