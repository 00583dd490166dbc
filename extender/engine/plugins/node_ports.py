"""NodePorts: a pod's host ports must be free on the node (upstream plugins/nodeports)."""

from __future__ import annotations

from collections.abc import Sequence

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import SKIP, CycleState, FilterPlugin, Status, unschedulable
from extender.engine.registry import register

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"


@register
class NodePorts(FilterPlugin):
    """Filter: hostIP/protocol/hostPort conflicts with pods already on the node (0.0.0.0 overlaps all)."""

    name = "NodePorts"
    node_local = True

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        return None if pod.host_ports else SKIP

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        if not node.used_ports:
            return None
        for ip, protocol, port in pod.host_ports:
            if node.port_conflict(ip, protocol, port):
                return unschedulable(ERR_REASON)
        return None
