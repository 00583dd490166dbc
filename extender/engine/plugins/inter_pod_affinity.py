"""InterPodAffinity: required pod affinity / anti-affinity filter nodes (both the incoming pod's rules and
the required anti-affinity of the pods already there); preferred terms, and existing pods' required
affinity weighted by ``hardPodAffinityWeight``, score them (upstream plugins/interpodaffinity).

Upstream (k8s.io/kubernetes v1.36.3, pkg/scheduler/framework/plugins/interpodaffinity):

* ``filtering.go`` PreFilter (:274): counts per topology pair (key, value) of (1) existing pods whose
  required anti-affinity terms match the incoming pod, over the snapshot's nodes with such pods
  (getExistingAntiAffinityCounts, :204); (2) existing pods matching ALL the incoming pod's required
  affinity terms, one count per term whose topology key the pod's node carries; (3) existing pods
  matching each required anti-affinity term of the incoming pod, over every node of the snapshot
  (getIncomingAffinityAntiAffinityCounts, :234). Skip when (1) is empty and the pod has no required
  terms (:303). A pod whose terms cannot be parsed is UnschedulableAndUnresolvable "parsing pod: ..." (:284),
  upstream's list label ("requiredAffinityTerms: ") followed by our selector error, which names the field.
* Filter (:412) checks, in this order: affinity (UnschedulableAndUnresolvable; a node lacking any term's
  topology key fails at once; with no matching pod anywhere, i.e. empty counts, a pod matching its own
  terms may start the group, :402), the pod's anti-affinity (Unschedulable), the existing pods'
  anti-affinity over every label of the node (Unschedulable).
* ``scoring.go`` PreScore (:128): Skip when ``ignorePreferredTermsOfExistingPods`` and the pod has no
  preferred terms; walks every pod of every node when the pod has preferred terms, else only the pods
  with affinity; processExistingPod (:81) adds ± weight per matching term at the existing pod's
  topology value; Skip when nothing was added anywhere (:211). Score (:240) sums the entries for the
  node's labels; NormalizeScore (:258) is a min-max in float64, truncated.
* Terminating pods count like any other pod: upstream does not look at deletionTimestamp here.
* The incoming pod's namespaceSelector is resolved against the Namespace objects of the snapshot
  (mergeAffinityTermNamespacesIfNotEmpty, plugin.go:144); existing pods' namespace selectors are matched
  against the labels of the incoming pod's Namespace, empty when it is unknown (plugin.go:161).
* Preemption's AddPod/RemovePod extensions are not ported: the extender never evaluates nominated pods.

Cost: parsed terms of every pod are cached in ``PodRecord.memo`` (see pod_affinity_terms), and the counting
itself reads a :class:`ClusterIndex` of the snapshot kept up to date across requests per node generation, so a
request matches each distinct pod label set and each distinct existing term once instead of walking every pod.
The counts a request derives are ``{topology key: {value: count}}`` of positive counts only, so "present"
means "positive" as upstream's ``> 0`` checks require.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final, TypeVar

import numpy as np

from extender.cluster.columns import Int64Array, LabelCounts, NodeBatch, NodeColumns, NodeContributions
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.pod_groups import GroupKey, PodGroups
from extender.cluster.records import PodRecord
from extender.engine.framework import (
    MAX_NODE_SCORE,
    SKIP,
    Code,
    CycleState,
    FilterPlugin,
    PluginError,
    ScorePlugin,
    Status,
    Verdicts,
    unresolvable,
    unschedulable,
)
from extender.engine.plugins.pod_affinity_terms import (
    AffinityTerm,
    WeightedAffinityTerm,
    namespace_labels,
    pod_affinity_terms,
)
from extender.engine.profile import ProfileError
from extender.engine.registry import register

ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

PREFILTER_KEY: Final = "PreFilterInterPodAffinity"
PRESCORE_KEY: Final = "PreScoreInterPodAffinity"
_INDEX_SYNCED: Final = "InterPodAffinity/index-synced"

DEFAULT_HARD_POD_AFFINITY_WEIGHT: Final = 1
_MIN_HARD_WEIGHT, _MAX_HARD_WEIGHT = 0, 100
_ARG_KEYS: Final = frozenset({"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods", "apiVersion", "kind"})

# Statuses are immutable in practice (the runtime copies them to attach the plugin name): share them.
_AFFINITY_MISMATCH: Final = unresolvable(ERR_REASON_AFFINITY)
_ANTI_AFFINITY_MISMATCH: Final = unschedulable(ERR_REASON_ANTI_AFFINITY)
_EXISTING_ANTI_AFFINITY_MISMATCH: Final = unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY)

#: topology key -> topology value -> count (every stored count is positive); counts added up over the
#: snapshot's label codes stay in that form (LabelCounts).
Counts = Mapping[str, Mapping[str, int]]
#: topology key -> topology value -> score.
TopologyScores = dict[str, dict[str, int]]
_NO_VALUES: Final[Mapping[str, int]] = {}


def _int32(value: int) -> int:
    """Wrap to Go's int32, as ``weight * multiplier`` is computed upstream before widening to int64."""
    return (value + 2**31) % 2**32 - 2**31


def _add(counts: TopologyScores, key: str, value: str, delta: int) -> None:
    by_value = counts.get(key)
    if by_value is None:
        counts[key] = {value: delta}
    else:
        by_value[value] = by_value.get(value, 0) + delta


def _pod_matches_all(terms: Sequence[AffinityTerm], pod: PodRecord) -> bool:
    """podMatchesAllAffinityTerms: false for no terms; namespace selectors were resolved beforehand."""
    return bool(terms) and _all_match(terms, pod.namespace, pod.labels)


# ---- the cluster index ---------------------------------------------------------------------------------------------
#
# Upstream walks every pod of every node in each PreFilter/PreScore (in parallel goroutines). Here the same counts
# come from an index of the snapshot kept across requests and updated per node by NodeInfo.generation (which changes
# on any change of a node or its pods): pods are grouped by (namespace, labels), which the replicas of a workload
# share, and existing pods' terms by content with the topology values of their nodes. A request then matches each
# distinct label set or term once and adds up counts; the result is exactly upstream's sums.

# Kinds of an existing pod's scoring terms.
_REQUIRED_AFFINITY, _PREFERRED_AFFINITY, _PREFERRED_ANTI_AFFINITY = 0, 1, 2


K = TypeVar("K")
_NO_COUNTS: Mapping[Any, int] = {}


def _deltas(old: Mapping[K, int], new: Mapping[K, int]) -> Iterator[tuple[K, int]]:
    """Each key whose count differs between two counters, and by how much (new minus old)."""
    if old is new:
        return
    for key, count in new.items():
        delta = count - old.get(key, 0)
        if delta:
            yield key, delta
    for key, count in old.items():
        if key not in new:
            yield key, -count


def _bump(counter: dict[Any, int], key: Any, delta: int) -> None:
    count = counter.get(key, 0) + delta
    if count:
        counter[key] = count
    else:
        del counter[key]


class _NodeEntry:
    """One node's existing terms in the index, as of one NodeInfo generation (its pods are counted by label set
    in the profile's PodGroups), with what they were taken from: the node's labels and its pods with terms."""

    __slots__ = ("anti_terms", "labels", "pods", "score_terms")

    @classmethod
    def of(cls, info: NodeInfo, old: _NodeEntry | None) -> _NodeEntry:
        """The node's entry; ``old`` itself when the node's labels and its pods with terms are those it was
        taken from (the usual change: a pod without terms bound or confirmed there)."""
        node = info.node
        assert node is not None
        if old is not None and old.labels == node.labels and _same_pods(old.pods, info):
            return old
        return cls(info)

    def __init__(self, info: NodeInfo) -> None:
        node = info.node
        assert node is not None
        labels = self.labels = node.labels
        self.pods = (tuple(info.pods_with_required_anti_affinity), tuple(info.pods_with_affinity))
        # Terms whose topology key the node lacks never count (upstream checks the node's label when counting).
        self.anti_terms: dict[tuple[AffinityTerm, str], int] = {}
        for pod in info.pods_with_required_anti_affinity:
            for term in pod_affinity_terms(pod).required_anti_affinity:
                value = labels.get(term.topology_key)
                if value is not None:
                    key = (term, value)
                    self.anti_terms[key] = self.anti_terms.get(key, 0) + 1
        self.score_terms: dict[tuple[int, AffinityTerm, str], int] = {}
        for pod in info.pods_with_affinity:
            terms = pod_affinity_terms(pod)
            for kind, group in ((_REQUIRED_AFFINITY, terms.required_affinity),
                                (_PREFERRED_AFFINITY, terms.preferred_affinity),
                                (_PREFERRED_ANTI_AFFINITY, terms.preferred_anti_affinity)):
                for term in group:
                    value = labels.get(term.topology_key)
                    if value is not None:
                        skey = (kind, term, value)
                        self.score_terms[skey] = self.score_terms.get(skey, 0) + 1


def _same_pods(pods: tuple[tuple[PodRecord, ...], tuple[PodRecord, ...]], info: NodeInfo) -> bool:
    """Whether the node's pods with terms are these very records (records are immutable)."""
    anti, affinity = pods
    now_anti, now_affinity = info.pods_with_required_anti_affinity, info.pods_with_affinity
    return len(anti) == len(now_anti) and len(affinity) == len(now_affinity) \
        and all(map(operator.is_, anti, now_anti)) and all(map(operator.is_, affinity, now_affinity))


class ClusterIndex:
    """The snapshot's existing pods' terms, aggregated for counting, beside the profile's index of its pods by
    label set (``groups``, read for the incoming pod's terms; see the comment above)."""

    __slots__ = ("_anti_views", "_columns", "_every", "_groups", "_nodes", "anti_terms", "score_terms")

    def __init__(self, groups: PodGroups | None = None) -> None:
        self._groups = groups if groups is not None else PodGroups()
        self._every: NodeBatch | None = None  # the batch of the last sync, which the groups are brought to
        self._nodes: NodeContributions[_NodeEntry] = NodeContributions(_NodeEntry.of, self._apply)
        self._columns: NodeColumns | None = None  # the columns of the last sync
        # existing required anti-affinity term -> topology value -> count
        self.anti_terms: dict[AffinityTerm, dict[str, int]] = {}
        # the same counts over the synced columns' label codes, made when a pod first meets the term and kept
        # until the term's counts or the columns change (Filter then reads them with one gather)
        self._anti_views: dict[AffinityTerm, LabelCounts] = {}
        # (kind, existing scoring term) -> topology value -> count
        self.score_terms: dict[tuple[int, AffinityTerm], dict[str, int]] = {}

    @property
    def nodes(self) -> Mapping[str, tuple[int, _NodeEntry]]:
        """The nodes synced, by name: (their NodeInfo generation then, their terms)."""
        return self._nodes.held

    @property
    def groups(self) -> PodGroups:
        """The pods by label set, brought to the nodes of the last sync on first read: only a pod with terms of
        its own reads them (the existing pods' terms are this index's own), so most pods never wait for them."""
        if self._every is not None:
            self._groups.sync(self._every, complete=True)
        return self._groups

    def sync(self, every: NodeBatch) -> None:
        """Bring the index to these nodes (a snapshot's every node): only changed nodes are redone, found by
        comparing the batch's generation column with the generations the index last saw in those rows."""
        self._every = every
        if self._columns is not every.columns:
            self._anti_views.clear()
        self._columns = every.columns
        self._nodes.sync(every, complete=True)

    def _apply(self, _name: str, old: _NodeEntry | None, new: _NodeEntry | None) -> None:
        """Move a node's terms from ``old`` to ``new`` (None: none): only the counts that differ change (and only
        their terms' label-code views are dropped)."""
        for (term, value), delta in _deltas(old.anti_terms if old else _NO_COUNTS,
                                            new.anti_terms if new else _NO_COUNTS):
            self._anti_views.pop(term, None)
            by_value = self.anti_terms.setdefault(term, {})
            _bump(by_value, value, delta)
            if not by_value:
                del self.anti_terms[term]
        for (kind, term, value), delta in _deltas(old.score_terms if old else _NO_COUNTS,
                                                  new.score_terms if new else _NO_COUNTS):
            by_value = self.score_terms.setdefault((kind, term), {})
            _bump(by_value, value, delta)
            if not by_value:
                del self.score_terms[(kind, term)]

    def _pod_groups(self, terms: Sequence[AffinityTerm]) -> Iterable[tuple[GroupKey, Mapping[str, str]]]:
        """The pod groups (key, labels) that may match ALL the terms, narrowed by namespace."""
        namespaces: frozenset[str] | None = None  # None: no restriction
        for term in terms:
            if term.listed_namespaces_only:
                namespaces = term.namespaces if namespaces is None else namespaces & term.namespaces
        return self.groups.groups(namespaces)

    def existing_anti_affinity_counts(self, pod: PodRecord, ns_labels: Mapping[str, str] | None) -> Counts:
        """getExistingAntiAffinityCounts: per topology pair, existing required anti-affinity terms matching the pod."""
        counts: dict[str, LabelCounts] = {}
        namespace, labels = pod.namespace, pod.labels
        for term in self.anti_terms:
            if term.matches(namespace, labels, ns_labels):
                view = self._anti_view(term)
                into = counts.get(term.topology_key)
                counts[term.topology_key] = view if into is None else view.plus(into)
        return counts

    def _anti_view(self, term: AffinityTerm) -> LabelCounts:
        """An existing term's counts by topology value, over the synced columns' codes of its key."""
        view = self._anti_views.get(term)
        if view is None:
            columns = self._columns
            assert columns is not None, "sync first"
            key = term.topology_key
            known = columns._label_codes.get(key, {})
            table = np.zeros(len(columns.label_values.get(key, ())), np.int64)
            for value, count in self.anti_terms[term].items():
                code = known.get(value)  # always there: the value is a synced node's label
                if code is not None:
                    table[code] += count
            view = self._anti_views[term] = LabelCounts(columns, key, table)
        return view

    def incoming_affinity_counts(self, affinity_terms: Sequence[AffinityTerm],
                                 anti_affinity_terms: Sequence[AffinityTerm]) -> tuple[Counts, Counts]:
        """getIncomingAffinityAntiAffinityCounts: existing pods matching all the incoming pod's affinity terms
        (one count per term whose topology key their node has), and those matching each anti-affinity term.

        The terms are the incoming pod's, with namespace selectors resolved. The matching groups' pods are
        added up per row of the synced columns, then per topology value through the label-code columns.
        """
        affinity: dict[str, Mapping[str, int]] = {}
        anti: dict[str, Mapping[str, int]] = {}
        if affinity_terms:
            matched = [key for key, labels in self._pod_groups(affinity_terms)
                       if _all_match(affinity_terms, key[0], labels)]
            if matched:
                per_row = self._pods_per_row(matched)
                for term in affinity_terms:
                    self._add_by_value(affinity, term.topology_key, per_row)
        for term in anti_affinity_terms:
            matched = [key for key, labels in self._pod_groups((term,)) if term.matches(key[0], labels, None)]
            if matched:
                self._add_by_value(anti, term.topology_key, self._pods_per_row(matched))
        return affinity, anti

    def _pods_per_row(self, groups: Sequence[GroupKey]) -> Int64Array:
        """Every pod of these groups (terminating ones too: upstream does not look at them here) on each row of
        the synced columns."""
        return self.groups.pods_per_row(groups, terminating=True)

    def _by_value(self, key: str, per_row: Int64Array) -> LabelCounts | None:
        """Pods per row added up by each row's value of ``key`` (rows without it add nothing); None when no
        such pod is on a node with the key."""
        columns = self._columns
        assert columns is not None
        codes = columns.labels.get(key)
        if codes is None:
            return None
        codes = codes[:len(per_row)]
        has = (per_row > 0) & (codes >= 0)
        if not has.any():
            return None
        return LabelCounts(columns, key, np.bincount(codes[has], weights=per_row[has].astype(np.float64))
                           .astype(np.int64))

    def _add_by_value(self, counts: dict[str, Mapping[str, int]], key: str, per_row: Int64Array) -> None:
        """Add pods per row into ``counts[key]`` by each row's value of ``key`` (rows without it add nothing)."""
        added = self._by_value(key, per_row)
        if added is None:
            return
        by_value = counts.get(key)
        if by_value is None:
            counts[key] = added
        elif isinstance(by_value, LabelCounts):
            counts[key] = by_value.plus(added)
        else:
            merged = dict(by_value)
            for value, count in added.items():
                merged[value] = merged.get(value, 0) + count
            counts[key] = merged

    def topology_scores(self, pod: PodRecord, ns_labels: Mapping[str, str] | None,
                        preferred: Sequence[WeightedAffinityTerm], preferred_anti: Sequence[WeightedAffinityTerm],
                        hard_weight: int) -> tuple[TopologyScores, bool]:
        """PreScore's sums of processExistingPod over every existing pod, and whether any term counted at all
        (upstream's Skip when no node produced an entry)."""
        scores: TopologyScores = {}
        touched = False
        # The incoming pod's preferred terms against existing pods (namespace selectors resolved): the matching
        # pods per row, added up per value of the term's topology key (weight x pods, summed by value).
        for terms, sign in ((preferred, 1), (preferred_anti, -1)):
            for term in terms:
                weight = _int32(sign * term.weight)
                matched = [key for key, labels in self._pod_groups((term,)) if term.matches(key[0], labels, None)]
                if not matched:
                    continue
                added = self._by_value(term.topology_key, self._pods_per_row(matched))
                if added is None:
                    continue
                values = added.columns.label_values[term.topology_key]
                for code in (added.counts > 0).nonzero()[0].tolist():
                    _add(scores, term.topology_key, values[code], weight * int(added.counts[code]))
                touched = True
        # The existing pods' terms against the incoming pod (with its namespace's labels).
        namespace, labels = pod.namespace, pod.labels
        for (kind, existing_term), by_value in self.score_terms.items():
            if kind == _REQUIRED_AFFINITY:
                if hard_weight <= 0:
                    continue
                weight = hard_weight
            else:
                assert isinstance(existing_term, WeightedAffinityTerm)
                weight = _int32(existing_term.weight if kind == _PREFERRED_AFFINITY else -existing_term.weight)
            if existing_term.matches(namespace, labels, ns_labels):
                for value, count in by_value.items():
                    _add(scores, existing_term.topology_key, value, weight * count)
                    touched = True
        return scores, touched


def _all_match(terms: Sequence[AffinityTerm], namespace: str, labels: Mapping[str, str]) -> bool:
    for term in terms:  # noqa: SIM110 - hot path
        if not term.matches(namespace, labels, None):
            return False
    return True


class _PreFilterState:
    """What Filter reads (upstream preFilterState)."""

    __slots__ = ("affinity_counts", "affinity_terms", "anti_affinity_counts", "anti_affinity_terms",
                 "existing_anti_affinity_counts", "matches_own_affinity")

    def __init__(self, affinity_terms: tuple[AffinityTerm, ...], anti_affinity_terms: tuple[AffinityTerm, ...],
                 existing: Counts, affinity: Counts, anti: Counts, matches_own_affinity: bool) -> None:
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.existing_anti_affinity_counts = existing
        self.affinity_counts = affinity
        self.anti_affinity_counts = anti
        self.matches_own_affinity = matches_own_affinity


class _PreScoreState:
    """What Score and NormalizeScore read (upstream preScoreState)."""

    __slots__ = ("topology_scores",)

    def __init__(self, topology_scores: TopologyScores) -> None:
        self.topology_scores = topology_scores


def _resolve(terms: Sequence[AffinityTerm], namespaces: Sequence[Mapping[str, Any]],
             keep_selector: bool) -> tuple[AffinityTerm, ...]:
    return tuple(t.with_namespaces_resolved(namespaces, keep_selector) for t in terms)


def _resolve_weighted(terms: Sequence[WeightedAffinityTerm], namespaces: Sequence[Mapping[str, Any]],
                      keep_selector: bool) -> tuple[WeightedAffinityTerm, ...]:
    return tuple(t.with_namespaces_resolved(namespaces, keep_selector) for t in terms)


def _has_preferred(affinity: Any, kind: str) -> bool:
    part = affinity.get(kind) if isinstance(affinity, Mapping) else None
    return isinstance(part, Mapping) and bool(part.get("preferredDuringSchedulingIgnoredDuringExecution"))


@register
class InterPodAffinity(FilterPlugin, ScorePlugin):
    """Inter-pod affinity and anti-affinity, required (filter) and preferred (score), both directions."""

    name = "InterPodAffinity"
    skips_deferred_resize = True  # v1.37 PreFilter: Skip a deferred resize (see Plugin)
    prefilter_reads_pods = True  # upstream updates its PreFilter state through AddPod/RemovePod
    columnar = True

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        path = "InterPodAffinity args"
        unknown = sorted(set(self.args) - _ARG_KEYS)
        if unknown:
            raise ProfileError(f"{path}: unknown field(s) {', '.join(unknown)}")
        weight = self.args.get("hardPodAffinityWeight")
        if weight is None:
            weight = DEFAULT_HARD_POD_AFFINITY_WEIGHT  # SetDefaults_InterPodAffinityArgs
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise ProfileError(f"{path}.hardPodAffinityWeight: expected an integer")
        if not _MIN_HARD_WEIGHT <= weight <= _MAX_HARD_WEIGHT:
            # ValidateInterPodAffinityArgs: field.Invalid(path, w, "not in valid range [0, 100]").
            raise ProfileError(f"{path}.hardPodAffinityWeight: Invalid value: {weight}: not in valid range "
                               f"[{_MIN_HARD_WEIGHT}, {_MAX_HARD_WEIGHT}]")
        ignore = self.args.get("ignorePreferredTermsOfExistingPods", False)
        if ignore is None:
            ignore = False
        if not isinstance(ignore, bool):
            raise ProfileError(f"{path}.ignorePreferredTermsOfExistingPods: expected a boolean")
        self.hard_pod_affinity_weight: int = weight
        self.ignore_preferred_terms_of_existing_pods: bool = ignore
        self._cluster_index: ClusterIndex | None = None
        # v1.36 plugin.go mergeAffinityTermNamespacesIfNotEmpty takes the term by value: the incoming pod's
        # namespace selector stays in force beside the names it selected (see AffinityTerm.with_namespaces_resolved).
        self.keeps_namespace_selectors = not self.release.at_least(37)

    def _index(self, state: CycleState) -> ClusterIndex:
        """The index brought up to this request's snapshot (once per request and snapshot: preemption's dry
        run copies the state onto a snapshot of its own)."""
        index = self.index
        if state.data.get(_INDEX_SYNCED) is not state.snapshot:
            index.sync(state.snapshot.all_nodes())
            state.data[_INDEX_SYNCED] = state.snapshot
        return index

    @property
    def index(self) -> ClusterIndex:
        """The existing pods' terms over the profile's pod groups (made once the framework is known)."""
        if self._cluster_index is None:
            self._cluster_index = ClusterIndex(self.pod_groups)
        return self._cluster_index

    # ---- filtering -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        snapshot = state.snapshot
        terms = pod_affinity_terms(pod)
        if terms.errors:
            return unresolvable(f"parsing pod: {terms.error_message()}")
        namespaces = snapshot.kind("Namespace")
        ns_objects = list(namespaces.values())
        affinity_terms = _resolve(terms.required_affinity, ns_objects, self.keeps_namespace_selectors)
        anti_terms = _resolve(terms.required_anti_affinity, ns_objects, self.keeps_namespace_selectors)
        ns_labels = namespace_labels(namespaces, pod.namespace)
        # Upstream counts over allNodes, every node of the scheduler's snapshot, not just the candidates.
        index = self._index(state)
        existing = index.existing_anti_affinity_counts(pod, ns_labels)
        if not existing and not affinity_terms and not anti_terms:
            return SKIP
        affinity, anti = index.incoming_affinity_counts(affinity_terms, anti_terms)
        state.data[PREFILTER_KEY] = _PreFilterState(
            affinity_terms, anti_terms, existing, affinity, anti, _pod_matches_all(affinity_terms, pod))
        return None

    def filter_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Verdicts:
        s: _PreFilterState | None = state.data.get(PREFILTER_KEY)
        if s is None:
            return Verdicts(np.ones(len(batch), np.int64),
                            (Status(Code.ERROR, f'error reading "{PREFILTER_KEY}" from cycleState: not found'),))
        count = len(batch)
        # satisfyPodAffinity
        affinity_fails = np.zeros(count, np.bool_)
        if s.affinity_terms:
            counts = s.affinity_counts
            pods_exist = np.ones(count, np.bool_)
            for term in s.affinity_terms:
                affinity_fails |= batch.label_codes(term.topology_key) < 0  # every topology key must exist
                pods_exist &= batch.label_in(term.topology_key, counts.get(term.topology_key, _NO_VALUES))
            # The first pod of a group with affinity to itself: allowed when no pod matches anywhere.
            if not (not counts and s.matches_own_affinity):
                affinity_fails |= ~pods_exist
        # satisfyPodAntiAffinity
        anti_fails = np.zeros(count, np.bool_)
        anti = s.anti_affinity_counts
        if anti:
            for term in s.anti_affinity_terms:
                anti_fails |= batch.label_in(term.topology_key, anti.get(term.topology_key, _NO_VALUES))
        # satisfyExistingPodsAntiAffinity: any label of the node naming a counted topology pair. Looking up
        # the (few) counted keys in the node's labels is the same test as walking every node label.
        existing_fails = np.zeros(count, np.bool_)
        for key, values in s.existing_anti_affinity_counts.items():
            existing_fails |= batch.label_in(key, values)
        # In upstream's order: the first check failed decides the reason.
        codes = np.where(affinity_fails, 1, np.where(anti_fails, 2, np.where(existing_fails, 3, 0)))
        return Verdicts(codes.astype(np.int64),
                        (_AFFINITY_MISMATCH, _ANTI_AFFINITY_MISMATCH, _EXISTING_ANTI_AFFINITY_MISMATCH))

    # ---- scoring -------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        affinity = pod.spec.get("affinity")
        has_constraints = _has_preferred(affinity, "podAffinity") or _has_preferred(affinity, "podAntiAffinity")
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP
        snapshot = state.snapshot
        terms = pod_affinity_terms(pod)
        if terms.errors:
            return Status(Code.ERROR, f"failed to parse pod: {terms.error_message()}")
        namespaces = snapshot.kind("Namespace")
        ns_objects = list(namespaces.values())
        preferred = _resolve_weighted(terms.preferred_affinity, ns_objects, self.keeps_namespace_selectors)
        preferred_anti = _resolve_weighted(terms.preferred_anti_affinity, ns_objects, self.keeps_namespace_selectors)
        ns_labels = namespace_labels(namespaces, pod.namespace)
        # Without preferred terms of its own, the incoming pod only meets the terms of existing pods, which is what
        # upstream's walk over the pods with affinity amounts to; with them, every pod counts.
        scores, touched = self._index(state).topology_scores(pod, ns_labels, preferred, preferred_anti,
                                                             self.hard_pod_affinity_weight)
        if not touched:
            return SKIP  # upstream's "index == -1": no node produced any entry
        state.data[PRESCORE_KEY] = _PreScoreState(scores)
        return None

    def score_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Int64Array:
        s: _PreScoreState | None = state.data.get(PRESCORE_KEY)
        if s is None:
            raise PluginError(f'failed to read "{PRESCORE_KEY}" from cycleState: not found')
        total = np.zeros(len(batch), np.int64)
        for key, by_value in s.topology_scores.items():
            total += batch.label_table(key, by_value)
        return total

    def normalize(self, state: CycleState, pod: PodRecord, scores: list[int]) -> None:
        scores[:] = self.normalize_batch(state, pod, np.array(scores, np.int64)).tolist()

    def normalize_batch(self, state: CycleState, pod: PodRecord, scores: Int64Array) -> Int64Array:
        s: _PreScoreState | None = state.data.get(PRESCORE_KEY)
        if s is None:
            raise PluginError(f'failed to read "{PRESCORE_KEY}" from cycleState: not found')
        if not s.topology_scores or not len(scores):
            return scores
        low, high = int(scores.min()), int(scores.max())
        spread = high - low
        if spread <= 0:
            return np.zeros(len(scores), np.int64)
        # float64 arithmetic, then int64() truncation toward zero, as upstream.
        scaled = float(MAX_NODE_SCORE) * ((scores - low).astype(np.float64) / float(spread))
        result: Int64Array = np.trunc(scaled).astype(np.int64)
        return result
