"""NodeDeclaredFeatures: the node must declare every feature the pod relies on.

Upstream: ``pkg/scheduler/framework/plugins/nodedeclaredfeatures`` (kubernetes v1.36.3, beta and on by
default; v1.37.2, GA and locked on, with a larger feature registry). PreFilter infers the pod's required
features from the release's registry (``extender.kube.node_declared_features``) and skips when there are none;
Filter rejects, as UnschedulableAndUnresolvable, a node whose ``status.declaredFeatures`` lacks one of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import SKIP, CycleState, FilterPlugin, Status, unresolvable
from extender.engine.registry import register
from extender.kube.node_declared_features import node_features, required_features

NAME = "NodeDeclaredFeatures"
REASON = "node(s) didn't match Pod's required features"
_STATE_KEY = "PreFilter" + NAME
_NODE_MEMO = "declared_features"


def declared_features(info: NodeInfo, minor: int = 37) -> frozenset[str]:
    """The node's declared features registered in release 1.<minor>, read once per node record."""
    node = info.node
    if node is None:
        return frozenset()
    key = f"{_NODE_MEMO}/{minor}"
    cached: frozenset[str] | None = node.memo.get(key)
    if cached is None:
        status = node.raw.get("status")
        cached = node_features(status.get("declaredFeatures") if isinstance(status, Mapping) else None, minor)
        node.memo[key] = cached
    return cached


@register
class NodeDeclaredFeatures(FilterPlugin):
    """Filter out nodes that do not declare the features the pod needs."""

    name = NAME
    skips_deferred_resize = True  # v1.37 PreFilter: Skip a deferred resize (see Plugin)
    # Node-local in substance, but the equivalence key does not cover the pod fields read here
    # (restartPolicyRules, hostUsers); it runs last in the default profile, so nothing is lost.
    node_local = False

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        spec = pod.raw.get("spec")
        required = required_features(spec if isinstance(spec, Mapping) else {}, self.release.minor)
        if not required:
            return SKIP
        state.data[_STATE_KEY] = required
        return None

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        required: frozenset[str] = state.data[_STATE_KEY]
        if required <= declared_features(node, self.release.minor):
            return None
        return unresolvable(REASON)
