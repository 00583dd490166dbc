"""NodeName: a pod that names its node (``spec.nodeName``) fits only that node (upstream plugins/nodename)."""

from __future__ import annotations

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import CycleState, FilterPlugin, Status, unresolvable
from extender.engine.registry import register

ERR_REASON = "node(s) didn't match the requested node name"


@register
class NodeName(FilterPlugin):
    """Filter: passes every node for a pod without spec.nodeName, else only the named node."""

    name = "NodeName"
    node_local = True

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        if not pod.node_name or pod.node_name == node.name:
            return None
        return unresolvable(ERR_REASON)
