"""NodeUnschedulable: rejects nodes marked ``spec.unschedulable`` unless the pod tolerates that
(upstream plugins/nodeunschedulable)."""

from __future__ import annotations

from extender.cluster.columns import NodeBatch
from extender.cluster.records import PodRecord
from extender.engine.framework import CycleState, FilterPlugin, Verdicts, unresolvable
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
    skips_deferred_resize = True  # v1.37 PreFilter: Skip a deferred resize (see Plugin)
    node_local = True
    columnar = True

    def filter_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Verdicts:
        # Placeholders (no node object: "unknown conditions") never reach a batch: snapshots leave them out.
        if any(tolerates(t, UNSCHEDULABLE_TAINT) for t in pod.tolerations):
            return Verdicts.all_pass(len(batch))
        return Verdicts.where(batch.column("unschedulable") != 0, unresolvable(ERR_REASON_UNSCHEDULABLE))
