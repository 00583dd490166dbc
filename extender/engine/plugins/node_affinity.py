"""NodeAffinity: nodeSelector and required node affinity filter nodes; preferred terms score them
(upstream plugins/nodeaffinity). Supports NodeAffinityArgs.addedAffinity, the scheduler-enforced
affinity a profile adds to every pod."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from extender.cluster.columns import BoolArray, Int64Array, NodeBatch
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import (
    SKIP,
    Code,
    CycleState,
    FilterPlugin,
    ScorePlugin,
    Status,
    Verdicts,
    default_normalize_batch,
    unresolvable,
)
from extender.engine.profile import ProfileError
from extender.engine.registry import register
from extender.engine.template_memo import TemplateMemo
from extender.kube.selectors import (
    NodeSelector,
    NodeSelectorTerm,
    PreferredTerms,
    RequiredNodeAffinity,
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


# The replicas of one template carry the same nodeSelector and node affinity: each distinct text is compiled
# once (extender.engine.template_memo), since filter, prioritize and PodTopologySpread's node inclusion all
# ask for it. Bounded: requests send any text.
_COMPILED = TemplateMemo("compiled node affinity", max_bytes=4 * 1024 * 1024, max_entries=4096, weight=8,
                         errors=(SelectorError,))
_REQUIRED_MEMO = "node_affinity.required"
_PREFERRED_MEMO = "node_affinity.preferred"


def required_node_affinity(pod: PodRecord) -> RequiredNodeAffinity:
    """The pod's nodeSelector and required node affinity, compiled (compile_required_node_affinity), once per
    template; SelectorError for a malformed spec."""
    def source() -> tuple[Any, Any]:  # what compiling reads (a malformed part as it is, to be refused)
        spec = pod.spec
        affinity = spec.get("affinity")
        node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else affinity
        required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") \
            if isinstance(node_affinity, Mapping) else node_affinity
        return spec.get("nodeSelector"), required

    return _COMPILED.compiled(pod, _REQUIRED_MEMO, source, lambda: compile_required_node_affinity(pod.raw))


def preferred_node_affinity(pod: PodRecord) -> PreferredTerms | None:
    """The pod's preferred node affinity terms, compiled once per template (None without any)."""
    preferred = _node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution")
    if preferred is None:
        return None
    return _COMPILED.compiled(pod, _PREFERRED_MEMO, lambda: preferred, lambda: compile_preferred_terms(preferred))


def term_mask(term: NodeSelectorTerm, batch: NodeBatch) -> BoolArray:
    """Nodes a NodeSelectorTerm matches: each label requirement is a column mask; the rare field
    requirements (metadata.name) are checked, with the whole term, on the nodes still matching."""
    if not term.valid:
        return np.zeros(len(batch), np.bool_)
    mask = np.ones(len(batch), np.bool_)
    for requirement in term.label_requirements:
        mask &= batch.label_mask(requirement.key, requirement.matches)
    if term.field_requirements:
        nodes = batch.nodes
        for i in mask.nonzero()[0].tolist():
            record = nodes[i].node
            assert record is not None
            mask[i] = term.matches(record.labels, record.name)
    return mask


def selector_mask(selector: NodeSelector, batch: NodeBatch) -> BoolArray:
    """Nodes a NodeSelector matches (any of its valid terms)."""
    mask = np.zeros(len(batch), np.bool_)
    for term in selector.terms:
        mask |= term_mask(term, batch)
    return mask


def _equals(key: str, wanted: str) -> Callable[[Mapping[str, str]], bool]:
    """A nodeSelector entry: the label is present with exactly this value."""
    return lambda labels: labels.get(key) == wanted


def _reads_fields(terms: Iterable[NodeSelectorTerm]) -> bool:
    """Whether a term names a node's fields (metadata.name): its mask reads the NodeInfos, not labels alone."""
    return any(term.field_requirements for term in terms)


def required_mask(required: RequiredNodeAffinity, batch: NodeBatch) -> BoolArray:
    """Nodes matching a pod's nodeSelector (exact label values) and its required node affinity.

    Over the labels alone (no metadata.name field in any term), the mask of every row of the batch's columns
    is kept with them for that compiled affinity (NodeColumns.by_records) and gathered: the replicas of a
    template share one compiled affinity (required_node_affinity), and Filter and PodTopologySpread's node
    inclusion both ask, request after request, over the same node records."""
    if required.empty:  # most pods: every node (no memo to look up, no mask to gather)
        return np.ones(len(batch), np.bool_)
    if required.affinity is not None and _reads_fields(required.affinity.terms):
        return _required_mask(required, batch)
    mask: BoolArray = batch.of_every_row((_REQUIRED_MEMO, required), lambda every: _required_mask(required, every))
    return mask


def _required_mask(required: RequiredNodeAffinity, batch: NodeBatch) -> BoolArray:
    mask = np.ones(len(batch), np.bool_)
    for key, wanted in required.node_selector:
        mask &= batch.label_mask(key, _equals(key, wanted))
    if required.affinity is not None:
        mask &= selector_mask(required.affinity, batch)
    return mask


def preferred_scores(terms: PreferredTerms, batch: NodeBatch) -> Int64Array:
    """The sum of the weights of the preferred terms each node matches (over the labels alone, kept with the
    columns as required_mask keeps its mask)."""
    if _reads_fields(term for _, term in terms.terms):
        return _preferred_scores(terms, batch)
    scores: Int64Array = batch.of_every_row((_PREFERRED_MEMO, terms), lambda every: _preferred_scores(terms, every))
    return scores


def _preferred_scores(terms: PreferredTerms, batch: NodeBatch) -> Int64Array:
    total = np.zeros(len(batch), np.int64)
    for weight, term in terms.terms:
        total += np.where(term_mask(term, batch), weight, 0)
    return total


@register
class NodeAffinity(FilterPlugin, ScorePlugin):
    """Filter on nodeSelector + required terms (+ added affinity); score by preferred term weights."""

    name = "NodeAffinity"
    skips_deferred_resize = True  # v1.37 PreFilter: Skip a deferred resize (see Plugin)
    node_local = True
    columnar = True

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
        compiled = required_node_affinity(pod)
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

    def filter_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Verdicts:
        enforced = selector_mask(self.added_selector, batch) if self.added_selector is not None \
            else np.ones(len(batch), np.bool_)
        required = state.data.get(_PREFILTER_KEY)
        if required is None:
            required = state.data[_PREFILTER_KEY] = required_node_affinity(pod)
        matched = required_mask(required, batch)
        codes = np.where(~enforced, 1, np.where(matched, 0, 2))
        return Verdicts(codes, (unresolvable(ERR_REASON_ENFORCED), unresolvable(ERR_REASON_POD)))

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        terms = preferred_node_affinity(pod)
        if terms is None and self.added_preferred is None:
            return SKIP
        state.data[_PRESCORE_KEY] = terms
        return None

    def score_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Int64Array:
        total = np.zeros(len(batch), np.int64)
        if self.added_preferred is not None:
            total += preferred_scores(self.added_preferred, batch)
        terms = state.data.get(_PRESCORE_KEY)
        if terms is not None:
            total += preferred_scores(terms, batch)
        return total

    def normalize_batch(self, state: CycleState, pod: PodRecord, scores: Int64Array) -> Int64Array:
        return default_normalize_batch(scores, reverse=False)
