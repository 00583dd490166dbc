"""TaintToleration: NoSchedule/NoExecute taints the pod does not tolerate reject a node; untolerated
PreferNoSchedule taints lower its score (upstream plugins/tainttoleration)."""

from __future__ import annotations

from collections.abc import Sequence

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import CycleState, FilterPlugin, ScorePlugin, Status, default_normalize, unresolvable
from extender.engine.registry import register
from extender.kube.taints import find_untolerated_taint, tolerates

# Since v1.35 (and 1.34 patches) the reason no longer names the taint (kubernetes PR #134740).
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

DO_NOT_SCHEDULE_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
_PRESCORE_KEY = "PreScoreTaintToleration"


@register
class TaintToleration(FilterPlugin, ScorePlugin):
    """Filter on hard taints; score by the count of untolerated PreferNoSchedule taints (reversed)."""

    name = "TaintToleration"
    node_local = True

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        assert node.node is not None
        taints = node.node.taints
        if not taints:
            return None
        if find_untolerated_taint(taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is None:
            return None
        return unresolvable(ERR_REASON_UNTOLERATED)

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        # Only tolerations that can match a PreferNoSchedule taint matter for the score.
        state.data[_PRESCORE_KEY] = tuple(t for t in pod.tolerations if t.effect in ("", "PreferNoSchedule"))
        return None

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        assert node.node is not None
        tolerations = state.data[_PRESCORE_KEY]
        count = 0
        for taint in node.node.taints:
            if taint.effect == "PreferNoSchedule" and not any(tolerates(t, taint) for t in tolerations):
                count += 1
        return count

    def normalize(self, state: CycleState, pod: PodRecord, scores: list[int]) -> None:
        default_normalize(scores, reverse=True)
