"""Inter-pod affinity terms, parsed once per pod (upstream fwk.AffinityTerm / WeightedAffinityTerm and the
term parsing of framework.PodInfo).

Upstream sources (k8s.io/kubernetes v1.36.3 and its staging module k8s.io/kube-scheduler v0.36.3):

* ``kube-scheduler/framework/types.go``: ``AffinityTerm`` (namespaces, label selector, topology key,
  namespace selector) and its ``Matches``; ``GetAffinityTerms`` / ``GetWeightedAffinityTerms``
  (``newAffinityTerm``, ``getNamespacesFromPodAffinityTerm``); ``GetPodAffinityTerms`` /
  ``GetPodAntiAffinityTerms``.
* ``kubernetes/pkg/scheduler/framework/types.go``: ``PodInfo.Update`` parses the four lists of a pod
  (required and preferred, affinity and anti-affinity); a failing list is left empty and its error is
  reported as ``requiredAffinityTerms: ...``, ``requiredAntiAffinityTerms: ...``,
  ``preferredAffinityTerms: ...`` or ``preferredAntiAffinityTerms: ...``.

``matchLabelKeys`` / ``mismatchLabelKeys`` are deliberately NOT read here: kube-scheduler v1.36 never
looks at them. The apiserver merges them into ``labelSelector`` when the pod is created
(pkg/registry/core/pod/strategy.go ``mutatePodAffinity``, feature MatchLabelKeysInPodAffinity), so the
selector the scheduler (and we) see already carries them; merging again at scheduling time would use the
pod's current labels instead of those at creation, and could differ from upstream.

Parsed terms of a record are cached in ``PodRecord.memo`` (records are immutable, so the cache stays
valid for the record's life). Terms are never mutated after parsing: the incoming pod's namespace
selectors are resolved into new term objects (:meth:`AffinityTerm.with_namespaces_resolved`), because the
incoming pod's record may later become an existing pod of the cache (bind assumes it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from extender.cluster.records import PodRecord
from extender.kube.selectors import NOTHING, LabelSelector, SelectorError, compile_label_selector

__all__ = [
    "EMPTY_TERMS",
    "AffinityTerm",
    "PodAffinityTerms",
    "WeightedAffinityTerm",
    "namespace_labels",
    "parse_pod_affinity_terms",
    "pod_affinity_terms",
]

_MEMO_KEY: Final = "InterPodAffinity/terms"
_INT32_MIN: Final = -(2**31)
_INT32_MAX: Final = 2**31 - 1

Labels = Mapping[str, str]
_NO_LABELS: Final[Mapping[str, str]] = {}


class TermError(ValueError):
    """A term that cannot be parsed; the message names the field."""


class AffinityTerm:
    """A processed ``v1.PodAffinityTerm`` (upstream ``fwk.AffinityTerm``)."""

    __slots__ = ("_hash", "namespace_selector", "namespaces", "selector", "topology_key")

    def __init__(self, namespaces: frozenset[str], selector: LabelSelector, topology_key: str,
                 namespace_selector: LabelSelector) -> None:
        self.namespaces = namespaces
        self.selector = selector
        self.topology_key = topology_key
        self.namespace_selector = namespace_selector
        # Terms compare by content, so that the identical terms of a workload's replicas can be grouped.
        self._hash = hash((type(self), namespaces, selector, topology_key, namespace_selector))

    def _key(self) -> tuple[Any, ...]:
        return (type(self), self.namespaces, self.selector, self.topology_key, self.namespace_selector)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AffinityTerm):
            return NotImplemented
        return self is other or (self._hash == other._hash and self._key() == other._key())

    def __hash__(self) -> int:
        return self._hash

    @property
    def listed_namespaces_only(self) -> bool:
        """True when only :attr:`namespaces` can match (no namespace selector, or one already resolved)."""
        return self.namespace_selector.matches_nothing

    def matches(self, namespace: str, labels: Labels, ns_labels: Labels | None) -> bool:
        """Whether a pod (its namespace and labels) matches: namespace listed or selected, then labels.

        ``ns_labels`` are the labels of the pod's Namespace object (None, as upstream's nil set, when it
        is unknown or when the caller resolved the namespace selector beforehand).
        """
        if namespace in self.namespaces or self.namespace_selector.matches(ns_labels or _NO_LABELS):
            return self.selector.matches(labels)
        return False

    def with_namespaces_resolved(self, namespaces: Iterable[Mapping[str, Any]],
                                 keep_selector: bool = False) -> AffinityTerm:
        """Upstream ``mergeAffinityTermNamespacesIfNotEmpty`` for an incoming pod's term, without mutation.

        A non-empty namespace selector adds the names of the Namespace objects it selects to the listed
        namespaces, and is then replaced by Nothing. An empty selector ({} = every namespace) is kept as is.
        Upstream's "nothing" selector (a nil namespaceSelector) is not Empty() either, but it selects no
        Namespace, which leaves the term unchanged: we return it as is.

        ``keep_selector`` is v1.36's behaviour (interpodaffinity/plugin.go takes the term by value there: the
        names reach the shared set, the Nothing does not), under which the selector also stays in force, matched
        against the empty label set of an existing pod's namespace (upstream passes nil labels): a selector that
        empty labels satisfy (only DoesNotExist / NotIn) then matches pods of every namespace. v1.37 passes the
        term by pointer.
        """
        if self.namespace_selector.empty or self.namespace_selector.matches_nothing:
            return self
        selected = set(self.namespaces)
        for ns in namespaces:
            name, labels = _namespace_name_labels(ns)
            if self.namespace_selector.matches(labels):
                selected.add(name)
        return AffinityTerm(frozenset(selected), self.selector, self.topology_key,
                            self.namespace_selector if keep_selector else NOTHING)

    def __repr__(self) -> str:
        return (f"AffinityTerm(namespaces={sorted(self.namespaces)!r}, selector={self.selector!r}, "
                f"topology_key={self.topology_key!r}, namespace_selector={self.namespace_selector!r})")


class WeightedAffinityTerm(AffinityTerm):
    """A processed ``v1.WeightedPodAffinityTerm`` (upstream ``fwk.WeightedAffinityTerm``)."""

    __slots__ = ("weight",)

    def __init__(self, namespaces: frozenset[str], selector: LabelSelector, topology_key: str,
                 namespace_selector: LabelSelector, weight: int) -> None:
        super().__init__(namespaces, selector, topology_key, namespace_selector)
        self.weight = weight
        self._hash = hash((self._hash, weight))

    def _key(self) -> tuple[Any, ...]:
        return (*AffinityTerm._key(self), self.weight)

    def with_namespaces_resolved(self, namespaces: Iterable[Mapping[str, Any]],
                                 keep_selector: bool = False) -> WeightedAffinityTerm:
        """As :meth:`AffinityTerm.with_namespaces_resolved`, keeping the weight."""
        resolved = AffinityTerm.with_namespaces_resolved(self, namespaces, keep_selector)
        if resolved is self:
            return self
        return WeightedAffinityTerm(resolved.namespaces, resolved.selector, resolved.topology_key,
                                    resolved.namespace_selector, self.weight)

    def __repr__(self) -> str:
        return f"Weighted({self.weight}, {AffinityTerm.__repr__(self)})"


class PodAffinityTerms:
    """The four parsed term lists of a pod, and the parse errors (upstream PodInfo's term fields)."""

    __slots__ = ("errors", "preferred_affinity", "preferred_anti_affinity", "required_affinity",
                 "required_anti_affinity")

    def __init__(self, required_affinity: Sequence[AffinityTerm] = (),
                 required_anti_affinity: Sequence[AffinityTerm] = (),
                 preferred_affinity: Sequence[WeightedAffinityTerm] = (),
                 preferred_anti_affinity: Sequence[WeightedAffinityTerm] = (),
                 errors: Sequence[str] = ()) -> None:
        self.required_affinity: tuple[AffinityTerm, ...] = tuple(required_affinity)
        self.required_anti_affinity: tuple[AffinityTerm, ...] = tuple(required_anti_affinity)
        self.preferred_affinity: tuple[WeightedAffinityTerm, ...] = tuple(preferred_affinity)
        self.preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = tuple(preferred_anti_affinity)
        # Upstream aggregates the errors of the failing lists; the lists themselves are then empty.
        self.errors: tuple[str, ...] = tuple(errors)

    @property
    def has_scoring_terms(self) -> bool:
        """True when the pod contributes to scoring as an existing pod (any term but required anti-affinity)."""
        return bool(self.required_affinity or self.preferred_affinity or self.preferred_anti_affinity)

    def error_message(self) -> str:
        """The errors joined as upstream's utilerrors.NewAggregate prints them."""
        if len(self.errors) == 1:
            return self.errors[0]
        return "[" + ", ".join(self.errors) + "]"

    def __repr__(self) -> str:
        return (f"PodAffinityTerms(required={list(self.required_affinity)!r}, "
                f"required_anti={list(self.required_anti_affinity)!r}, "
                f"preferred={list(self.preferred_affinity)!r}, "
                f"preferred_anti={list(self.preferred_anti_affinity)!r}, errors={list(self.errors)!r})")


#: The terms of a pod without inter-pod affinity; shared, never mutated.
EMPTY_TERMS: Final = PodAffinityTerms()


def _mapping(obj: Any, path: str) -> Mapping[str, Any]:
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise TermError(f"{path}: expected an object, got {type(obj).__name__}")
    return obj


def _list(obj: Any, path: str) -> Sequence[Any]:
    if obj is None:
        return ()
    if not isinstance(obj, list):
        raise TermError(f"{path}: expected a list, got {type(obj).__name__}")
    return obj


def _namespace_name_labels(ns: Mapping[str, Any]) -> tuple[str, Labels]:
    meta = ns.get("metadata") if isinstance(ns, Mapping) else None
    if not isinstance(meta, Mapping):
        return "", _NO_LABELS
    labels = meta.get("labels")
    return str(meta.get("name") or ""), labels if isinstance(labels, Mapping) else _NO_LABELS


def namespace_labels(namespaces: Mapping[str, Mapping[str, Any]], name: str) -> Labels | None:
    """The labels of a Namespace object by name, or None when it is unknown (GetNamespaceLabelsSnapshot)."""
    ns = namespaces.get(name)
    if ns is None:
        return None
    return _namespace_name_labels(ns)[1]


def _term(pod_namespace: str, raw: Any, path: str, weight: int | None) -> AffinityTerm:
    """newAffinityTerm: compile the selectors and the namespace set of one PodAffinityTerm."""
    body = _mapping(raw, path)
    try:
        selector = compile_label_selector(body.get("labelSelector"), path=f"{path}.labelSelector")
        ns_selector_raw = body.get("namespaceSelector")
        ns_selector = compile_label_selector(ns_selector_raw, path=f"{path}.namespaceSelector")
    except SelectorError as err:
        raise TermError(str(err)) from err
    listed = _list(body.get("namespaces"), f"{path}.namespaces")
    for i, name in enumerate(listed):
        if not isinstance(name, str):
            raise TermError(f"{path}.namespaces[{i}]: expected a string")
    # No namespaces and no namespace selector: the pod's own namespace. Otherwise exactly the listed ones
    # (possibly none), the selector adding more.
    namespaces = frozenset(listed) if listed or ns_selector_raw is not None else frozenset((pod_namespace,))
    topology_key = body.get("topologyKey") or ""
    if not isinstance(topology_key, str):
        raise TermError(f"{path}.topologyKey: expected a string")
    if weight is None:
        return AffinityTerm(namespaces, selector, topology_key, ns_selector)
    return WeightedAffinityTerm(namespaces, selector, topology_key, ns_selector, weight)


def _required(pod_namespace: str, part: Mapping[str, Any], path: str) -> list[AffinityTerm]:
    path = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    return [_term(pod_namespace, raw, f"{path}[{i}]", None)
            for i, raw in enumerate(_list(part.get("requiredDuringSchedulingIgnoredDuringExecution"), path))]


def _preferred(pod_namespace: str, part: Mapping[str, Any], path: str) -> list[WeightedAffinityTerm]:
    path = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    out: list[WeightedAffinityTerm] = []
    for i, raw in enumerate(_list(part.get("preferredDuringSchedulingIgnoredDuringExecution"), path)):
        item = _mapping(raw, f"{path}[{i}]")
        weight = item.get("weight") or 0
        # WeightedPodAffinityTerm.weight is an int32: Go cannot even decode a pod with another value.
        if isinstance(weight, bool) or not isinstance(weight, int) or not _INT32_MIN <= weight <= _INT32_MAX:
            raise TermError(f"{path}[{i}].weight: expected a 32-bit integer")
        term = _term(pod_namespace, item.get("podAffinityTerm"), f"{path}[{i}].podAffinityTerm", weight)
        assert isinstance(term, WeightedAffinityTerm)
        out.append(term)
    return out


def parse_pod_affinity_terms(raw_pod: Mapping[str, Any], pod_namespace: str) -> PodAffinityTerms:
    """Parse a pod's inter-pod affinity terms as upstream's PodInfo.Update does.

    Each of the four lists is parsed on its own; a list with an invalid term is left empty and its
    error recorded (prefixed as upstream: ``requiredAffinityTerms: ``...), the other lists stay usable.
    """
    spec = raw_pod.get("spec")
    affinity = spec.get("affinity") if isinstance(spec, Mapping) else None
    if not isinstance(affinity, Mapping):
        return EMPTY_TERMS
    base = "spec.affinity"
    errors: list[str] = []

    def part(name: str) -> Mapping[str, Any]:
        try:
            return _mapping(affinity.get(name), f"{base}.{name}")
        except TermError as err:
            errors.append(str(err))
            return {}

    pod_aff = part("podAffinity")
    pod_anti = part("podAntiAffinity")
    if not pod_aff and not pod_anti and not errors:
        return EMPTY_TERMS

    def required(label: str, p: Mapping[str, Any], path: str) -> list[AffinityTerm]:
        try:
            return _required(pod_namespace, p, path)
        except TermError as err:
            errors.append(f"{label}: {err}")
            return []

    def preferred(label: str, p: Mapping[str, Any], path: str) -> list[WeightedAffinityTerm]:
        try:
            return _preferred(pod_namespace, p, path)
        except TermError as err:
            errors.append(f"{label}: {err}")
            return []

    return PodAffinityTerms(
        required("requiredAffinityTerms", pod_aff, f"{base}.podAffinity"),
        required("requiredAntiAffinityTerms", pod_anti, f"{base}.podAntiAffinity"),
        preferred("preferredAffinityTerms", pod_aff, f"{base}.podAffinity"),
        preferred("preferredAntiAffinityTerms", pod_anti, f"{base}.podAntiAffinity"),
        errors,
    )


def pod_affinity_terms(pod: PodRecord) -> PodAffinityTerms:
    """A record's parsed terms, computed on first use and kept in ``pod.memo``."""
    terms: PodAffinityTerms | None = pod.memo.get(_MEMO_KEY)
    if terms is None:
        terms = parse_pod_affinity_terms(pod.raw, pod.namespace) if pod.has_affinity else EMPTY_TERMS
        pod.memo[_MEMO_KEY] = terms
    return terms
