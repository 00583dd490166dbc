"""Inter-pod affinity as kube-scheduler v1.12 had it: the MatchInterPodAffinity predicate and the
InterPodAffinityPriority priority (0..10).

Upstream: k8s.io/kubernetes v1.12.10 pkg/scheduler/algorithm/predicates/predicates.go
(``InterPodAffinityMatches``, ``satisfiesExistingPodsAntiAffinity``, ``satisfiesPodsAffinityAntiAffinity``,
``nodeMatchesAllTopologyTerms``, ``nodeMatchesAnyTopologyTerm``), predicates/metadata.go
(``getTPMapMatchingExistingAntiAffinity``, ``getTPMapMatchingIncomingAffinityAntiAffinity``,
``targetPodMatchesAffinityOfPod``), priorities/interpod_affinity.go and priorities/util/topologies.go.

That release's terms: ``namespaces`` (empty = the namespace of the pod defining the term) and
``labelSelector`` only (no namespaceSelector, no matchLabelKeys); only required and preferred
"IgnoredDuringExecution" lists.

MatchInterPodAffinity, precomputed once per pod over every node of the cluster:

1. existing pods' anti-affinity: for each pod with a required anti-affinity term matching the incoming pod,
   the (topologyKey, value) of the existing pod's node; a candidate node carrying any of these pairs fails
   with "didn't match pod affinity/anti-affinity" and "didn't satisfy existing pods anti-affinity rules".
2. the pod's required affinity: pairs (for every term's key present on the node) of the existing pods that
   match ALL the terms' namespaces and selectors; a node passes when, for every term, it has the key and
   its (key, value) is among the pairs. Otherwise it fails with "didn't match pod affinity rules", unless
   no pair exists at all and the pod matches its own terms (the first pod of a group).
3. the pod's required anti-affinity: pairs of the existing pods matching each term (per term); a node that
   has, for any term, its (key, value) among them fails with "didn't match pod anti-affinity rules".

InterPodAffinityPriority: for every existing pod (only the pods with affinity when the incoming pod has
none), weights are added to every candidate node sharing the topology value of the existing pod's node:
the incoming pod's preferred affinity (+w) and anti-affinity (-w) terms the existing pod matches, and the
existing pod's required affinity (+hardPodAffinitySymmetricWeight, default 1, 0 disables), preferred
affinity (+w) and preferred anti-affinity (-w) terms the incoming pod matches. Then
``int(10 * (count - min) / (max - min))`` in float64, min and max starting at 0 (all 0 when max == min).
An invalid label selector fails the pod (v1.12 failed the scheduling attempt).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import CycleState, FilterPlugin, ScorePlugin, Status
from extender.engine.plugins.legacy.common import (
    ERR_EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_POD_AFFINITY_NOT_MATCH,
    ERR_POD_AFFINITY_RULES_NOT_MATCH,
    ERR_POD_ANTI_AFFINITY_RULES_NOT_MATCH,
    MAX_PRIORITY,
    as_list,
    as_mapping,
    error,
    node_of,
    unschedulable,
)
from extender.engine.profile import ProfileError
from extender.engine.registry import register
from extender.kube.selectors import LabelSelector, SelectorError, compile_label_selector

_TERMS_MEMO: Final = "legacy/affinity-terms"
_FILTER_KEY: Final = "legacy/MatchInterPodAffinity"
_SCORE_KEY: Final = "legacy/InterPodAffinityPriority"

_EXISTING_ANTI: Final = unschedulable(ERR_POD_AFFINITY_NOT_MATCH, ERR_EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH)
_AFFINITY: Final = unschedulable(ERR_POD_AFFINITY_NOT_MATCH, ERR_POD_AFFINITY_RULES_NOT_MATCH)
_ANTI_AFFINITY: Final = unschedulable(ERR_POD_AFFINITY_NOT_MATCH, ERR_POD_ANTI_AFFINITY_RULES_NOT_MATCH)

Labels = Mapping[str, str]


class Term:
    """A v1.PodAffinityTerm as v1.12 used it: namespaces, selector, topology key (and a weight)."""

    __slots__ = ("namespaces", "selector", "topology_key", "weight")

    def __init__(self, namespaces: frozenset[str], selector: LabelSelector, topology_key: str, weight: int) -> None:
        self.namespaces = namespaces
        self.selector = selector
        self.topology_key = topology_key
        self.weight = weight

    def matches(self, pod: PodRecord) -> bool:
        """PodMatchesTermsNamespaceAndSelector."""
        return pod.namespace in self.namespaces and self.selector.matches(pod.labels)


class PodTerms:
    """A pod's four term lists, and whether podAffinity / podAntiAffinity are set at all.

    A list that fails to parse is left empty and its error kept: v1.12 parsed each list where it used it,
    so an invalid list only fails the checks that read it.
    """

    __slots__ = ("errors", "has_affinity", "has_anti_affinity", "preferred_affinity", "preferred_anti_affinity",
                 "required_affinity", "required_anti_affinity")

    def __init__(self, pod: PodRecord) -> None:
        self.errors: dict[str, str] = {}
        affinity = as_mapping(pod.spec.get("affinity"))
        aff, anti = affinity.get("podAffinity"), affinity.get("podAntiAffinity")
        self.has_affinity = aff is not None
        self.has_anti_affinity = anti is not None
        base = "spec.affinity"
        self.required_affinity = self._parse(pod, aff, False, f"{base}.podAffinity", "required_affinity")
        self.required_anti_affinity = self._parse(pod, anti, False, f"{base}.podAntiAffinity",
                                                  "required_anti_affinity")
        self.preferred_affinity = self._parse(pod, aff, True, f"{base}.podAffinity", "preferred_affinity")
        self.preferred_anti_affinity = self._parse(pod, anti, True, f"{base}.podAntiAffinity",
                                                   "preferred_anti_affinity")

    def _parse(self, pod: PodRecord, holder: Any, preferred: bool, path: str, kind: str) -> tuple[Term, ...]:
        try:
            return _terms(pod, as_mapping(holder), preferred, path)
        except (SelectorError, ValueError) as err:
            self.errors[kind] = str(err)
            return ()

    def error(self, *kinds: str) -> str | None:
        """The first parse error among the named lists, if any."""
        for kind in kinds:
            if kind in self.errors:
                return self.errors[kind]
        return None


def _terms(pod: PodRecord, holder: Mapping[str, Any], preferred: bool, path: str) -> tuple[Term, ...]:
    field = "preferredDuringSchedulingIgnoredDuringExecution" if preferred else \
        "requiredDuringSchedulingIgnoredDuringExecution"
    out: list[Term] = []
    for i, entry in enumerate(as_list(holder.get(field))):
        entry = as_mapping(entry)
        weight = 0
        term = entry
        if preferred:
            weight = entry.get("weight") or 0
            if not isinstance(weight, int):
                raise ValueError(f"{path}.{field}[{i}].weight: expected an integer")
            term = as_mapping(entry.get("podAffinityTerm"))
        term_path = f"{path}.{field}[{i}]" + (".podAffinityTerm" if preferred else "")
        raw_selector = term.get("labelSelector")
        selector = compile_label_selector(raw_selector, path=f"{term_path}.labelSelector")
        namespaces = [str(n) for n in as_list(term.get("namespaces"))]
        out.append(Term(frozenset(namespaces) if namespaces else frozenset({pod.namespace}), selector,
                        str(term.get("topologyKey") or ""), weight))
    return tuple(out)


def pod_terms(pod: PodRecord) -> PodTerms:
    """The pod's parsed terms, once per record."""
    cached = pod.memo.get(_TERMS_MEMO)
    if cached is None:
        cached = PodTerms(pod)
        pod.memo[_TERMS_MEMO] = cached
    assert isinstance(cached, PodTerms)
    return cached


class _FilterState:
    __slots__ = ("affinity_keys", "affinity_pairs", "anti_keys", "anti_pairs", "error", "existing_anti", "has_any",
                 "self_match")

    def __init__(self) -> None:
        self.error: Status | None = None
        self.existing_anti: dict[str, set[str]] = {}
        self.affinity_pairs: set[tuple[str, str]] = set()
        self.anti_pairs: set[tuple[str, str]] = set()
        self.affinity_keys: tuple[str, ...] = ()
        self.anti_keys: tuple[str, ...] = ()
        self.self_match = False
        self.has_any = False


@register
class MatchInterPodAffinity(FilterPlugin):
    """Required pod affinity and anti-affinity, the pod's own and the existing pods' anti-affinity."""

    name = "MatchInterPodAffinity"

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        snapshot = state.snapshot
        terms = pod_terms(pod)
        data = _FilterState()
        state.data[_FILTER_KEY] = data
        # v1.12 met these errors when a node reached the predicate (the metadata failed, the slow path then
        # returned the error): report them per node, so that nodes rejected earlier keep their reasons.
        failed = terms.error("required_affinity", "required_anti_affinity")
        if failed:
            data.error = error(failed)
            return None
        # 1. Existing pods' required anti-affinity terms that the incoming pod matches.
        for info in snapshot.pods_with_required_anti_affinity_nodes:
            labels = node_of(info).labels
            for existing in info.pods_with_required_anti_affinity:
                existing_terms = pod_terms(existing)
                failed = existing_terms.error("required_anti_affinity")
                if failed:
                    data.error = error(f"pod {existing.key}: {failed}")
                    return None
                for term in existing_terms.required_anti_affinity:
                    if term.matches(pod):
                        value = labels.get(term.topology_key)
                        if value is not None:
                            data.existing_anti.setdefault(term.topology_key, set()).add(value)
        data.has_any = terms.has_affinity or terms.has_anti_affinity
        if data.has_any:
            affinity = terms.required_affinity
            anti = terms.required_anti_affinity
            data.affinity_keys = tuple(t.topology_key for t in affinity)
            data.anti_keys = tuple(t.topology_key for t in anti)
            if affinity or anti:
                for info in snapshot.node_list:
                    labels = node_of(info).labels
                    for existing in info.pods:
                        # podMatchesAllAffinityTermProperties: every term's namespaces and selector.
                        if affinity and all(t.matches(existing) for t in affinity):
                            for t in affinity:
                                value = labels.get(t.topology_key)
                                if value is not None:
                                    data.affinity_pairs.add((t.topology_key, value))
                        for t in anti:
                            if t.matches(existing):
                                value = labels.get(t.topology_key)
                                if value is not None:
                                    data.anti_pairs.add((t.topology_key, value))
            data.self_match = bool(affinity) and all(t.matches(pod) for t in affinity)
        return None

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        data: _FilterState = state.data[_FILTER_KEY]
        if data.error is not None:
            return data.error
        labels = node_of(node).labels
        for key, values in data.existing_anti.items():
            if labels.get(key) in values:
                return _EXISTING_ANTI
        if not data.has_any:
            return None
        if data.affinity_keys:
            matched = True
            for key in data.affinity_keys:
                value = labels.get(key)
                if value is None or (key, value) not in data.affinity_pairs:
                    matched = False
                    break
            # The first pod of a group with affinity to itself may go anywhere the other checks allow.
            if not matched and not (not data.affinity_pairs and data.self_match):
                return _AFFINITY
        for key in data.anti_keys:
            value = labels.get(key)
            if value is not None and (key, value) in data.anti_pairs:
                return _ANTI_AFFINITY
        return None


@register
class InterPodAffinityPriority(ScorePlugin):
    """Preferred pod affinity and anti-affinity, both ways, scaled to 0..10 between the min and the max."""

    name = "InterPodAffinityPriority"
    max_score = MAX_PRIORITY

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        weight = self.args.get("hardPodAffinitySymmetricWeight", 1)
        if not isinstance(weight, int) or isinstance(weight, bool) or not 0 <= weight <= 100:
            raise ProfileError(f"{self.name} args.hardPodAffinitySymmetricWeight: not in valid range 0-100")
        self.hard_weight = weight

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        terms = pod_terms(pod)
        failed = terms.error("preferred_affinity", "preferred_anti_affinity")
        if failed:
            return error(failed)
        snapshot = state.snapshot
        # (topologyKey, value of the existing pod's node) -> weight; a candidate node gains the weight of
        # every pair it shares (NodesHaveSameTopologyKey: both nodes carry the non-empty key, equal values).
        weights: dict[str, dict[str, int]] = {}

        def add(term: Term, labels: Labels, weight: int) -> None:
            key = term.topology_key
            value = labels.get(key)
            if key and value is not None:
                per_value = weights.setdefault(key, {})
                per_value[value] = per_value.get(value, 0) + weight

        incoming = terms.has_affinity or terms.has_anti_affinity
        infos = snapshot.node_list if incoming else snapshot.pods_with_affinity_nodes
        for info in infos:
            labels = node_of(info).labels
            for existing in (info.pods if incoming else info.pods_with_affinity):
                if terms.has_affinity:
                    for term in terms.preferred_affinity:
                        if term.matches(existing):
                            add(term, labels, term.weight)
                if terms.has_anti_affinity:
                    for term in terms.preferred_anti_affinity:
                        if term.matches(existing):
                            add(term, labels, -term.weight)
                if not existing.has_affinity:
                    continue
                theirs = pod_terms(existing)
                failed = theirs.error("preferred_affinity", "preferred_anti_affinity",
                                      *(("required_affinity",) if self.hard_weight > 0 else ()))
                if failed:
                    return error(f"pod {existing.key}: {failed}")
                if theirs.has_affinity:
                    if self.hard_weight > 0:
                        for term in theirs.required_affinity:
                            if term.matches(pod):
                                add(term, labels, self.hard_weight)
                    for term in theirs.preferred_affinity:
                        if term.matches(pod):
                            add(term, labels, term.weight)
                if theirs.has_anti_affinity:
                    for term in theirs.preferred_anti_affinity:
                        if term.matches(pod):
                            add(term, labels, -term.weight)
        state.data[_SCORE_KEY] = weights
        return None

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        weights: dict[str, dict[str, int]] = state.data[_SCORE_KEY]
        labels = node_of(node).labels
        total = 0
        for key, per_value in weights.items():
            value = labels.get(key)
            if value is not None:
                total += per_value.get(value, 0)
        return total

    def normalize(self, state: CycleState, pod: PodRecord, scores: list[int]) -> None:
        max_count = max([0, *scores])
        min_count = min([0, *scores])
        span = float(max_count - min_count)
        for i, count in enumerate(scores):
            f_score = 0.0
            if span > 0:
                f_score = float(MAX_PRIORITY) * (float(count - min_count) / span)
            scores[i] = int(f_score)
