"""NodeName: a pod that names its node (``spec.nodeName``) fits only that node (upstream plugins/nodename).

v1.37 (nodename/node_name.go PreFilter) also narrows the cycle to that node with a PreFilterResult: kube-scheduler
then filters no other node, counts the others under "node(s) didn't satisfy plugin(s) [NodeName]" in its
FitError, and rejects the pod outright when another plugin's PreFilterResult excludes the named node. v1.36 has
no PreFilter.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from extender.cluster.columns import NodeBatch
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import CycleState, FilterPlugin, Status, Verdicts, unresolvable
from extender.engine.registry import register

ERR_REASON = "node(s) didn't match the requested node name"


@register
class NodeName(FilterPlugin):
    """Filter: passes every node for a pod without spec.nodeName, else only the named node."""

    name = "NodeName"
    node_local = True
    columnar = True

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        if pod.node_name and self.release.at_least(37):  # v1.37 node_name.go PreFilter
            state.prefilter_nodes[self.name] = frozenset((pod.node_name,))
        return None

    def filter_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Verdicts:
        if not pod.node_name:
            return Verdicts.all_pass(len(batch))
        wanted = pod.node_name
        return Verdicts.where(np.fromiter((node.name != wanted for node in batch.nodes), np.bool_, len(batch)),
                              unresolvable(ERR_REASON))
