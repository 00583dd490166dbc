"""NodeName: a pod that names its node (``spec.nodeName``) fits only that node (upstream plugins/nodename)."""

from __future__ import annotations

import numpy as np

from extender.cluster.columns import NodeBatch
from extender.cluster.records import PodRecord
from extender.engine.framework import CycleState, FilterPlugin, Verdicts, unresolvable
from extender.engine.registry import register

ERR_REASON = "node(s) didn't match the requested node name"


@register
class NodeName(FilterPlugin):
    """Filter: passes every node for a pod without spec.nodeName, else only the named node."""

    name = "NodeName"
    node_local = True
    columnar = True

    def filter_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Verdicts:
        if not pod.node_name:
            return Verdicts.all_pass(len(batch))
        wanted = pod.node_name
        return Verdicts.where(np.fromiter((node.name != wanted for node in batch.nodes), np.bool_, len(batch)),
                              unresolvable(ERR_REASON))
