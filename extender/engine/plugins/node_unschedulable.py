"""NodeUnschedulable: rejects nodes marked ``spec.unschedulable`` unless the pod tolerates that
(upstream plugins/nodeunschedulable)."""

from __future__ import annotations

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import CycleState, FilterPlugin, Status, unresolvable
from extender.engine.registry import register
from extender.kube.taints import Taint, tolerates

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"

# The taint a cordoned node behaves as if it carried; tolerating it lets a pod onto a cordoned node.
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


@register
class NodeUnschedulable(FilterPlugin):
    """Filter: ``spec.unschedulable`` nodes pass only pods tolerating node.kubernetes.io/unschedulable."""

    name = "NodeUnschedulable"
    node_local = True

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        record = node.node
        if record is None:
            return unresolvable(ERR_REASON_UNKNOWN_CONDITION)
        if not record.unschedulable:
            return None
        if any(tolerates(t, UNSCHEDULABLE_TAINT) for t in pod.tolerations):
            return None
        return unresolvable(ERR_REASON_UNSCHEDULABLE)
