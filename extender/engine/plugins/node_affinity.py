"""NodeAffinity: nodeSelector and required node affinity filter nodes; preferred terms score them
(upstream plugins/nodeaffinity). Supports NodeAffinityArgs.addedAffinity, the scheduler-enforced
affinity a profile adds to every pod."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import (
    SKIP,
    Code,
    CycleState,
    FilterPlugin,
    ScorePlugin,
    Status,
    default_normalize,
    unresolvable,
)
from extender.engine.profile import ProfileError
from extender.engine.registry import register
from extender.kube.selectors import (
    SelectorError,
    compile_node_selector,
    compile_preferred_terms,
    compile_required_node_affinity,
)

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_PREFILTER_KEY = "PreFilterNodeAffinity"
_PRESCORE_KEY = "PreScoreNodeAffinity"


def _node_affinity(pod: PodRecord) -> Mapping[str, Any]:
    affinity = pod.spec.get("affinity") or {}
    return affinity.get("nodeAffinity") or {}


@register
class NodeAffinity(FilterPlugin, ScorePlugin):
    """Filter on nodeSelector + required terms (+ added affinity); score by preferred term weights."""

    name = "NodeAffinity"
    node_local = True

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        added = self.args.get("addedAffinity") or {}
        try:
            required = added.get("requiredDuringSchedulingIgnoredDuringExecution")
            self.added_selector = compile_node_selector(required) if required is not None else None
            preferred = added.get("preferredDuringSchedulingIgnoredDuringExecution")
            self.added_preferred = compile_preferred_terms(preferred) if preferred else None
        except SelectorError as err:
            raise ProfileError(f"NodeAffinity args.addedAffinity: {err}") from err

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        required = _node_affinity(pod).get("requiredDuringSchedulingIgnoredDuringExecution")
        if required is None and self.added_selector is None and pod.spec.get("nodeSelector") is None:
            return SKIP
        compiled = compile_required_node_affinity(pod.raw)
        if compiled.affinity is not None and compiled.affinity.errors:
            # The apiserver never admits such a pod; a hand-made request gets told what is wrong
            # instead of the silent "term never matches" that upstream's lazy selector gives.
            return Status(Code.ERROR, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution: "
                          + "; ".join(compiled.affinity.errors))
        state.data[_PREFILTER_KEY] = compiled
        terms = (required or {}).get("nodeSelectorTerms") or []
        if not terms:
            return None
        # Terms that pin metadata.name with In can make the whole set of acceptable names empty.
        names: set[str] | None = None
        for term in terms:
            term_names: set[str] | None = None
            for req in term.get("matchFields") or []:
                if req.get("key") == "metadata.name" and req.get("operator") == "In":
                    values = set(req.get("values") or [])
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None
            names = term_names if names is None else names | term_names
        if names is not None and not names:
            return unresolvable(ERR_REASON_CONFLICT)
        if names:
            state.prefilter_nodes[self.name] = frozenset(names)
        return None

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        record = node.node
        assert record is not None
        if self.added_selector is not None and not self.added_selector.matches(record.labels, record.name):
            return unresolvable(ERR_REASON_ENFORCED)
        required = state.data.get(_PREFILTER_KEY)
        if required is None:
            required = state.data[_PREFILTER_KEY] = compile_required_node_affinity(pod.raw)
        if not required.matches(record.labels, record.name):
            return unresolvable(ERR_REASON_POD)
        return None

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        preferred = _node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution")
        terms = compile_preferred_terms(preferred) if preferred is not None else None
        if terms is None and self.added_preferred is None:
            return SKIP
        state.data[_PRESCORE_KEY] = terms
        return None

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        record = node.node
        assert record is not None
        total = 0
        if self.added_preferred is not None:
            total += self.added_preferred.score(record.labels, record.name)
        terms = state.data.get(_PRESCORE_KEY)
        if terms is not None:
            total += terms.score(record.labels, record.name)
        return total

    def normalize(self, state: CycleState, pod: PodRecord, scores: list[int]) -> None:
        default_normalize(scores, reverse=False)
