"""TaintToleration: NoSchedule/NoExecute taints the pod does not tolerate reject a node; untolerated
PreferNoSchedule taints lower its score (upstream plugins/tainttoleration)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from extender.cluster.columns import Int64Array, NodeBatch
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import (
    CycleState,
    FilterPlugin,
    ScorePlugin,
    Status,
    Verdicts,
    default_normalize_batch,
    unresolvable,
)
from extender.engine.registry import register
from extender.kube.taints import Taint, find_untolerated_taint, tolerates

# Since v1.35 (and 1.34 patches) the reason no longer names the taint (kubernetes PR #134740).
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"

DO_NOT_SCHEDULE_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
_UNTOLERATED = unresolvable(ERR_REASON_UNTOLERATED)
_PRESCORE_KEY = "PreScoreTaintToleration"


@register
class TaintToleration(FilterPlugin, ScorePlugin):
    """Filter on hard taints; score by the count of untolerated PreferNoSchedule taints (reversed)."""

    name = "TaintToleration"
    skips_deferred_resize = True  # v1.37 PreFilter: Skip a deferred resize (see Plugin)
    node_local = True
    columnar = True

    def filter_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Verdicts:
        tolerations = pod.tolerations

        def untolerated(taints: tuple[Taint, ...]) -> bool:
            return bool(taints) and find_untolerated_taint(taints, tolerations, DO_NOT_SCHEDULE_EFFECTS) is not None

        return Verdicts.where(batch.by_taints(untolerated, np.bool_, key=("TaintToleration", tolerations)),
                              _UNTOLERATED)

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        # Only tolerations that can match a PreferNoSchedule taint matter for the score.
        state.data[_PRESCORE_KEY] = tuple(t for t in pod.tolerations if t.effect in ("", "PreferNoSchedule"))
        return None

    def score_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Int64Array:
        tolerations = state.data[_PRESCORE_KEY]

        def count(taints: tuple[Taint, ...]) -> int:
            return sum(1 for taint in taints if taint.effect == "PreferNoSchedule"
                       and not any(tolerates(t, taint) for t in tolerations))

        counts: Int64Array = batch.by_taints(count, np.int64, key=("TaintToleration.score", tolerations))
        return counts

    def normalize_batch(self, state: CycleState, pod: PodRecord, scores: Int64Array) -> Int64Array:
        return default_normalize_batch(scores, reverse=True)
