"""The v1.12 predicates that read a node's own state: conditions, pressure, unschedulable, taints.

Upstream: k8s.io/kubernetes v1.12.10 pkg/scheduler/algorithm/predicates/predicates.go
(``CheckNodeConditionPredicate``, ``CheckNodeUnschedulablePredicate``, ``CheckNodeMemoryPressurePredicate``,
``CheckNodeDiskPressurePredicate``, ``CheckNodePIDPressurePredicate``, ``PodToleratesNodeTaints``,
``PodToleratesNodeNoExecuteTaints``).

- CheckNodeCondition collects every reason, in the order of the node's conditions: Ready not True gives
  "were not ready", OutOfDisk not False "were out of disk space", NetworkUnavailable not False "had
  unavailable network"; then ``spec.unschedulable`` adds "were unschedulable" (without looking at
  tolerations). A node without conditions passes.
- CheckNodeUnschedulable rejects an unschedulable node unless the pod tolerates the taint
  ``node.kubernetes.io/unschedulable:NoSchedule``.
- CheckNodeMemoryPressure rejects only BestEffort pods, when MemoryPressure is True; DiskPressure and
  PIDPressure reject every pod when True.
- PodToleratesNodeTaints: every NoSchedule and NoExecute taint must be tolerated; the NoExecute variant
  looks at NoExecute taints only.

All of them read the node and the pod's tolerations or resources only (``node_local``), so the equivalence
cache may reuse their verdicts, as v1.12's own equivalence cache did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import SKIP, CycleState, FilterPlugin, Status
from extender.engine.plugins.legacy.common import (
    ERR_NODE_NETWORK_UNAVAILABLE,
    ERR_NODE_NOT_READY,
    ERR_NODE_OUT_OF_DISK,
    ERR_NODE_UNDER_DISK_PRESSURE,
    ERR_NODE_UNDER_MEMORY_PRESSURE,
    ERR_NODE_UNDER_PID_PRESSURE,
    ERR_NODE_UNSCHEDULABLE,
    ERR_TAINTS_TOLERATIONS_NOT_MATCH,
    as_list,
    as_mapping,
    legacy_pod,
    node_of,
    unschedulable,
)
from extender.engine.registry import register
from extender.kube.taints import (
    EFFECT_NO_EXECUTE,
    EFFECT_NO_SCHEDULE,
    Taint,
    find_untolerated_taint,
    tolerations_tolerate_taint,
)

_UNSCHEDULABLE: Final = unschedulable(ERR_NODE_UNSCHEDULABLE)
_MEMORY_PRESSURE: Final = unschedulable(ERR_NODE_UNDER_MEMORY_PRESSURE)
_DISK_PRESSURE: Final = unschedulable(ERR_NODE_UNDER_DISK_PRESSURE)
_PID_PRESSURE: Final = unschedulable(ERR_NODE_UNDER_PID_PRESSURE)
_TAINTS: Final = unschedulable(ERR_TAINTS_TOLERATIONS_NOT_MATCH)
_UNSCHEDULABLE_TAINT: Final = Taint(key="node.kubernetes.io/unschedulable", value="", effect=EFFECT_NO_SCHEDULE)
_SCHEDULE_EFFECTS: Final = frozenset({EFFECT_NO_SCHEDULE, EFFECT_NO_EXECUTE})
_EXECUTE_EFFECTS: Final = frozenset({EFFECT_NO_EXECUTE})
_CONDITIONS_MEMO: Final = "legacy/CheckNodeCondition"


@register
class CheckNodeCondition(FilterPlugin):
    """Ready, OutOfDisk and NetworkUnavailable conditions, and spec.unschedulable (every reason found)."""

    name = "CheckNodeCondition"
    node_local = True

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        record = node_of(node)
        reasons = record.memo.get(_CONDITIONS_MEMO)
        if reasons is None:
            # The raw conditions list, in order (the record's dict keeps only one status per type).
            found: list[str] = []
            for cond in as_list(as_mapping(record.raw.get("status")).get("conditions")):
                cond = as_mapping(cond)
                kind, status = cond.get("type"), cond.get("status")
                if kind == "Ready" and status != "True":
                    found.append(ERR_NODE_NOT_READY)
                elif kind == "OutOfDisk" and status != "False":
                    found.append(ERR_NODE_OUT_OF_DISK)
                elif kind == "NetworkUnavailable" and status != "False":
                    found.append(ERR_NODE_NETWORK_UNAVAILABLE)
            if record.unschedulable:
                found.append(ERR_NODE_UNSCHEDULABLE)
            reasons = tuple(found)
            record.memo[_CONDITIONS_MEMO] = reasons
        return unschedulable(*reasons) if reasons else None


@register
class CheckNodeUnschedulable(FilterPlugin):
    """spec.unschedulable, unless the pod tolerates node.kubernetes.io/unschedulable:NoSchedule."""

    name = "CheckNodeUnschedulable"
    node_local = True

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        if node_of(node).unschedulable and not tolerations_tolerate_taint(pod.tolerations, _UNSCHEDULABLE_TAINT):
            return _UNSCHEDULABLE
        return None


@register
class CheckNodeMemoryPressure(FilterPlugin):
    """MemoryPressure=True rejects BestEffort pods only."""

    name = "CheckNodeMemoryPressure"
    node_local = True

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        return None if legacy_pod(pod).best_effort else SKIP

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        return _MEMORY_PRESSURE if node_of(node).conditions.get("MemoryPressure") == "True" else None


@register
class CheckNodeDiskPressure(FilterPlugin):
    """DiskPressure=True rejects every pod."""

    name = "CheckNodeDiskPressure"
    node_local = True

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        return _DISK_PRESSURE if node_of(node).conditions.get("DiskPressure") == "True" else None


@register
class CheckNodePIDPressure(FilterPlugin):
    """PIDPressure=True rejects every pod."""

    name = "CheckNodePIDPressure"
    node_local = True

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        return _PID_PRESSURE if node_of(node).conditions.get("PIDPressure") == "True" else None


@register
class PodToleratesNodeTaints(FilterPlugin):
    """Every NoSchedule and NoExecute taint of the node must be tolerated."""

    name = "PodToleratesNodeTaints"
    node_local = True
    effects: frozenset[str] = _SCHEDULE_EFFECTS

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        taints = node_of(node).taints
        if taints and find_untolerated_taint(taints, pod.tolerations, self.effects) is not None:
            return _TAINTS
        return None


@register
class PodToleratesNodeNoExecuteTaints(PodToleratesNodeTaints):
    """Every NoExecute taint of the node must be tolerated."""

    name = "PodToleratesNodeNoExecuteTaints"
    effects = _EXECUTE_EFFECTS
