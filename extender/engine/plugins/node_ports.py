"""NodePorts: a pod's host ports must be free on the node (upstream plugins/nodeports)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from extender.cluster.columns import NodeBatch
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import SKIP, CycleState, FilterPlugin, Status, Verdicts, unschedulable
from extender.engine.registry import register

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


@register
class NodePorts(FilterPlugin):
    """Filter: hostIP/protocol/hostPort conflicts with pods already on the node (0.0.0.0 overlaps all)."""

    name = "NodePorts"
    skips_deferred_resize = True  # v1.37 PreFilter: Skip a deferred resize (see Plugin)
    node_local = True
    columnar = True

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        return None if pod.host_ports else SKIP

    def filter_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Verdicts:
        # Only nodes with host ports in use can conflict: those few are checked port by port.
        conflicts = np.zeros(len(batch), np.bool_)
        wanted = pod.host_ports
        nodes = batch.nodes
        for i in batch.column("has_ports").nonzero()[0].tolist():
            node = nodes[i]
            conflicts[i] = any(node.port_conflict(ip, protocol, port) for ip, protocol, port in wanted)
        return Verdicts.where(conflicts, unschedulable(ERR_REASON))
