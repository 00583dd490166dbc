"""Shared parts of PodTopologySpread: constraint building, selectors, default selectors, Go float helpers.

Upstream (k8s.io/kubernetes v1.36.3):

* ``pkg/scheduler/framework/plugins/podtopologyspread/common.go``: the internal constraint
  (``topologySpreadConstraint``), ``filterTopologySpreadConstraints`` (parse the constraints of one
  ``whenUnsatisfiable`` action, merge ``matchLabelKeys`` into the selector, default ``minDomains`` and the
  node inclusion policies), ``buildDefaultConstraints``, ``matchNodeInclusionPolicies`` and
  ``countPodsMatchSelector``;
* ``pkg/scheduler/framework/plugins/helper/spread.go``: ``DefaultSelector`` (the selector deduced from
  the Services, ReplicationControllers, ReplicaSets and StatefulSets that select a pod);
* Go's ``math.Log`` (amd64 assembly, same algorithm as ``math/log.go``) and ``math.Round``, whose exact
  bits the scores depend on.

:class:`MatchCounts` is ours: a memo of per-node match counts keyed by NodeInfo generation, so that
PreFilter and PreScore need not re-match every pod of the cluster on every request.

This module registers no plugin; ``pod_topology_spread`` does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import numpy as np

from extender.cluster.columns import Int64Array, NodeBatch, NodeColumns, RowGenerations
from extender.cluster.nodeinfo import LabelPairs, NodeInfo
from extender.cluster.pod_groups import PodGroups
from extender.cluster.records import PodRecord
from extender.cluster.snapshot import Snapshot
from extender.kube.selectors import LabelSelector, Requirement, SelectorError, compile_label_selector
from extender.memo import BoundedMemo

DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
HONOR: Final = "Honor"
IGNORE: Final = "Ignore"
LABEL_HOSTNAME: Final = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE: Final = "topology.kubernetes.io/zone"
MAX_INT32: Final = 2**31 - 1

#: plugin.go systemDefaultConstraints: hostname first (maxSkew 3), then zone (maxSkew 5), both soft.
SYSTEM_DEFAULT_CONSTRAINTS: Final[tuple[Mapping[str, Any], ...]] = (
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_TOPOLOGY_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)

Labels = Mapping[str, str]


class ConstraintError(ValueError):
    """A topology spread constraint the plugin cannot read; the message starts with the field path."""


# ------------------------------------------------------------------------------------------ selector


class SpreadSelector:
    """A ``labels.Selector`` as the plugin builds it: exact label pairs and compiled label selectors, ANDed.

    It reproduces the three behaviours upstream relies on: ``nothing`` (a nil ``labelSelector``, which
    matches no pod, not even the incoming one), ``empty`` (no requirement at all: ``Matches`` is true but
    ``countPodsMatchSelector`` counts zero, common.go:146) and plain requirement lists. Exact pairs come
    from label *sets* (Service / RC selectors, ``matchLabelKeys``), which upstream turns into selectors
    without validation (``SelectorFromValidatedSet``).
    """

    __slots__ = ("_checks", "empty", "nothing", "signature")

    def __init__(self, pairs: Mapping[str, str] | None = None, selectors: Sequence[LabelSelector] = (), *,
                 nothing: bool = False) -> None:
        pairs = dict(pairs or {})
        parts = tuple(s for s in selectors if not s.empty)
        self.nothing = nothing or any(s.matches_nothing for s in parts)
        checks: list[Callable[[Labels], bool]] = [_pair_check(k, v) for k, v in sorted(pairs.items())]
        checks.extend(s.matches for s in parts)
        self._checks: tuple[Callable[[Labels], bool], ...] = tuple(checks)
        self.empty = not self.nothing and not self._checks
        requirements: tuple[Requirement, ...] = tuple(r for s in parts for r in s.requirements)
        # What the selector means, for caches and equality (order does not change an AND).
        self.signature: tuple[Any, ...] = (self.nothing, tuple(sorted(pairs.items())),
                                           tuple(sorted(requirements, key=repr)))

    def matches(self, labels: Labels) -> bool:
        """Whether labels satisfy every requirement (never, for a match-nothing selector)."""
        if self.nothing:
            return False
        for check in self._checks:  # noqa: SIM110 - a plain loop is faster on this hot path
            if not check(labels):
                return False
        return True

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SpreadSelector):
            return NotImplemented
        return self.signature == other.signature

    def __hash__(self) -> int:
        return hash(self.signature)

    def __repr__(self) -> str:
        return f"SpreadSelector({self.signature!r})"


NOTHING_SELECTOR: Final = SpreadSelector(nothing=True)


def _pair_check(key: str, value: str) -> Callable[[Labels], bool]:
    # A missing key reads as None, which never equals a string: "key=" needs the key present and empty.
    return lambda labels: labels.get(key) == value


# --------------------------------------------------------------------------------------- constraints


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """common.go topologySpreadConstraint: one parsed constraint of the action being evaluated."""

    max_skew: int
    topology_key: str
    selector: SpreadSelector
    min_domains: int
    honor_affinity: bool
    honor_taints: bool


def _int_field(raw: Mapping[str, Any], name: str, path: str, default: int | None) -> int:
    value = raw.get(name)
    if value is None:
        if default is None:
            raise ConstraintError(f"{path}.{name}: required value")
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConstraintError(f"{path}.{name}: expected an integer, got {type(value).__name__}")
    return value


def _str_field(raw: Mapping[str, Any], name: str, path: str) -> str | None:
    value = raw.get(name)
    if value is not None and not isinstance(value, str):
        raise ConstraintError(f"{path}.{name}: expected a string, got {type(value).__name__}")
    return value


def build_constraints(raws: Sequence[Any], pod_labels: Labels, action: str, *, path: str,
                      match_label_keys: bool = True, node_inclusion_policy: bool = True) -> list[SpreadConstraint]:
    """filterTopologySpreadConstraints (common.go:87): the constraints whose whenUnsatisfiable is ``action``.

    Only those constraints are read (an invalid selector in a soft constraint does not break filtering,
    as upstream). ``matchLabelKeys`` present on the pod are ANDed into the selector, except into a nil
    selector, which stays match-nothing (common.go:130). ``minDomains`` defaults to 1; with the node
    inclusion policy gate on, a present policy replaces the defaults (affinity Honor, taints Ignore), and
    any value other than "Honor" behaves as "Ignore" since upstream only ever compares with Honor.
    """
    out: list[SpreadConstraint] = []
    for i, raw in enumerate(raws):
        item_path = f"{path}[{i}]"
        if not isinstance(raw, Mapping):
            raise ConstraintError(f"{item_path}: expected an object, got {type(raw).__name__}")
        if _str_field(raw, "whenUnsatisfiable", item_path) != action:
            continue
        try:
            selector = _selector_of(raw, pod_labels, item_path, match_label_keys)
        except SelectorError as err:
            raise ConstraintError(str(err)) from err
        affinity_policy = _str_field(raw, "nodeAffinityPolicy", item_path)
        taints_policy = _str_field(raw, "nodeTaintsPolicy", item_path)
        honor_affinity, honor_taints = True, False
        if node_inclusion_policy:
            if affinity_policy is not None:
                honor_affinity = affinity_policy == HONOR
            if taints_policy is not None:
                honor_taints = taints_policy == HONOR
        out.append(SpreadConstraint(
            max_skew=_int_field(raw, "maxSkew", item_path, 0),
            topology_key=_str_field(raw, "topologyKey", item_path) or "",
            selector=selector,
            min_domains=_int_field(raw, "minDomains", item_path, 1),
            honor_affinity=honor_affinity,
            honor_taints=honor_taints,
        ))
    return out


def _selector_of(raw: Mapping[str, Any], pod_labels: Labels, path: str, match_label_keys: bool) -> SpreadSelector:
    label_selector = raw.get("labelSelector")
    if label_selector is None:
        return NOTHING_SELECTOR
    compiled = compile_label_selector(label_selector, path=f"{path}.labelSelector")
    pairs: dict[str, str] = {}
    if match_label_keys:
        keys = raw.get("matchLabelKeys") or []
        if not isinstance(keys, list):
            raise ConstraintError(f"{path}.matchLabelKeys: expected a list, got {type(keys).__name__}")
        for j, key in enumerate(keys):
            if not isinstance(key, str):
                raise ConstraintError(f"{path}.matchLabelKeys[{j}]: expected a string, got {type(key).__name__}")
            if key in pod_labels:
                pairs[key] = pod_labels[key]
    return SpreadSelector(pairs, (compiled,))


def node_has_keys(labels: Labels, keys: Sequence[str]) -> bool:
    """nodeLabelsMatchSpreadConstraints: every constraint's topology key is a label of the node."""
    for key in keys:  # noqa: SIM110 - hot path
        if key not in labels:
            return False
    return True


def count_matching(info: NodeInfo, selector: SpreadSelector, namespace: str, seen: dict[LabelPairs, bool]) -> int:
    """countPodsMatchSelector (common.go:145): pods of the namespace on the node, not terminating (kubernetes
    #87621 bypasses them), matching the selector. ``seen`` is the selector's answer per label set, shared by
    the nodes of one count (NodeInfo.count_matching).

    An empty selector counts nothing (although it matches every pod, the incoming one included).
    """
    if selector.empty or selector.nothing:
        return 0
    return info.count_matching(namespace, selector.matches, seen)


class MatchCounts:
    """Memoised countPodsMatchSelector results per (namespace, selector), one count per node.

    A NodeInfo takes a new process-wide generation on every change (pods added or removed, node
    replaced) and clones keep it, so a count remembered with the NodeInfo's generation is exact. Pods of
    one workload share their selector, so consecutive requests (and the zone and hostname constraints
    of one request) mostly reuse counts instead of re-matching every pod of the cluster. For the rows of
    the snapshot's columns the memo is two arrays beside the columns (the generation each count was taken
    at, and the count), so that finding the stale nodes is one comparison with the generation column;
    nodes of other columns (a NodeList sent in full, preemption's what-if snapshots) are remembered by
    name. Only the ``capacity`` most recently used selectors are kept.

    Stale rows are counted node by node from each NodeInfo's label groups when they are few (a bind changed a
    node or two), and in bulk through the profile's :class:`~extender.cluster.pod_groups.PodGroups` when there
    are many (a selector not seen yet: every row is stale): the same count, by the cheaper route for the
    number of rows.
    """

    __slots__ = ("_tables", "capacity")

    def __init__(self, capacity: int = 32) -> None:
        self.capacity = capacity
        # A selector comes from a pod's spread constraints, which a request sends: bounded in bytes too.
        self._tables: BoundedMemo[tuple[str, tuple[Any, ...]], _SelectorMemo] = BoundedMemo(
            "spreading selectors", max_bytes=_SELECTOR_MEMO_BYTES, max_entries=capacity)

    def _memo(self, selector: SpreadSelector, namespace: str) -> _SelectorMemo:
        key = (namespace, selector.signature)
        memo = self._tables.get(key)
        if memo is None:
            memo = _SelectorMemo()
            self._tables.put(key, memo, len(repr(key)) + _SELECTOR_WEIGHT)
        return memo

    def counts(self, batch: NodeBatch, selector: SpreadSelector, namespace: str, rows_of: NodeColumns,
               groups: PodGroups) -> Int64Array:
        """count_matching for every node of the batch, through the memo. ``rows_of`` is the snapshot's
        columns: batches over them are memoised by row, others by node name. ``groups``: the profile's index
        of pods per label set, for counting many rows at once."""
        if batch.columns is not rows_of:
            memo = self._memo(selector, namespace)
            by_name = memo.by_name
            if len(by_name) + len(batch) > _MAX_NAMED_COUNTS:
                by_name.clear()  # names of nodes sent in full by requests: any number of distinct ones
            out = np.empty(len(batch), np.int64)
            seen = memo.answers()
            for i, info in enumerate(batch.nodes):
                entry = by_name.get(info.name)
                if entry is None or entry[0] != info.generation:
                    entry = by_name[info.name] = (info.generation, count_matching(info, selector, namespace, seen))
                out[i] = entry[1]
            return out
        return self.by_row(batch, selector, namespace, groups)[batch.rows]

    def by_row(self, batch: NodeBatch, selector: SpreadSelector, namespace: str, groups: PodGroups) -> Int64Array:
        """The counts of the memo by row of the batch's columns (the snapshot's), brought up to date for the batch's
        nodes: for a snapshot's every node, one array any batch of its nodes gathers from (until the cache changes).
        """
        memo = self._memo(selector, namespace)
        columns = batch.columns
        kept = memo.rows.follow(columns)
        if len(memo.counts) != columns.capacity or kept < len(memo.counts):
            counts = np.zeros(columns.capacity, np.int64)
            counts[:kept] = memo.counts[:kept]  # the columns grew: keep what is known
            memo.counts = counts
        rows = batch.rows
        stale = memo.rows.stale(batch)
        if len(stale) > _BULK_ROWS and not (selector.empty or selector.nothing):
            stale_rows = rows[stale]
            groups.sync(NodeBatch.of_rows(columns, stale_rows))
            per_row = groups.pods_per_row(groups.matching(namespace, selector.matches), terminating=False)
            memo.counts[stale_rows] = per_row[stale_rows]
            memo.rows.generations[stale_rows] = batch.column("generation")[stale]
        else:
            seen = memo.answers()
            for i in stale.tolist():
                row = rows[i]
                info = columns.infos[row]  # the row's node, without gathering the whole batch's
                assert info is not None
                memo.counts[row] = count_matching(info, selector, namespace, seen)
                memo.rows.generations[row] = info.generation
        return memo.counts


#: Above this many stale rows a count goes through the pod-group index (a check per label set of the
#: namespace and one bincount) rather than node by node (a check per label set of each node).
_BULK_ROWS = 64


#: The memo's byte budget, and what one selector's counts weigh beside its key (two arrays over the columns).
_SELECTOR_MEMO_BYTES = 8 * 1024 * 1024
_SELECTOR_WEIGHT = 2048
#: Counts kept by node name for one selector (nodes that are not rows of the snapshot's columns).
_MAX_NAMED_COUNTS = 20_000
#: Label sets whose answer one selector keeps (about 100 bytes each, beside _SELECTOR_WEIGHT).
_MAX_ANSWERS = 1_024


class _SelectorMemo:
    """One selector's counts: by row of the snapshot's columns (each taken at the generation ``rows`` holds),
    and by node name for other nodes; and the selector's answer per pod label set met so far."""

    __slots__ = ("_answers", "by_name", "counts", "rows")

    def __init__(self) -> None:
        self.rows = RowGenerations()
        self.counts: Int64Array = np.zeros(0, np.int64)
        self.by_name: dict[str, tuple[int, int]] = {}
        self._answers: dict[LabelPairs, bool] = {}

    def answers(self) -> dict[LabelPairs, bool]:
        """Whether the selector matches each label set, kept from count to count: the node a bind changed is
        counted again with lookups, not by matching each of its pods' label sets again. A label set's answer
        never changes (the memo is the selector's); the map is started afresh past _MAX_ANSWERS sets (pods
        with labels of their own, a StatefulSet's pod name, make a set each)."""
        if len(self._answers) > _MAX_ANSWERS:
            self._answers = {}
        return self._answers


# ---------------------------------------------------------------------------------- default selector


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    """schema.ParseGroupVersion: "" and "/" are the empty version, "v" is core, "g/v" a group; else an error."""
    if api_version in ("", "/"):
        return "", ""
    slashes = api_version.count("/")
    if slashes == 0:
        return "", api_version
    if slashes == 1:
        group, version = api_version.split("/")
        return group, version
    return None


_RC_KIND: Final = ("", "v1", "ReplicationController")
_RS_KIND: Final = ("apps", "v1", "ReplicaSet")
_SS_KIND: Final = ("apps", "v1", "StatefulSet")


def _string_map(obj: Any) -> dict[str, str] | None:
    """A label set (map[string]string) from a raw object; None when absent or not a string map."""
    if not isinstance(obj, Mapping):
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in obj.items()):
        return None
    return dict(obj)


_SELECTOR_MEMO = "topology_spread.default_selector"
_TEMPLATE_SELECTORS = 4096
_TEMPLATE_SELECTORS_BYTES = 4 * 1024 * 1024
_TemplateKey = tuple[str, frozenset[tuple[str, str]], tuple[str, ...] | None]


class DefaultSelectors:
    """helper.DefaultSelector over a snapshot's raw objects, with Services indexed per namespace.

    The index is rebuilt only when the snapshot's Service mapping is a different object: the cache
    replaces (never mutates) the mappings of a snapshot whenever objects change.
    """

    __slots__ = ("_by_template", "_index", "_objects", "_services")

    def __init__(self) -> None:
        self._services: object = None
        self._index: dict[str, list[dict[str, str]]] = {}
        # Selectors by what they are made of (namespace, labels, controller), for the snapshot objects they
        # were made from: the replicas of one template share theirs. Keyed by request data: bounded in bytes.
        self._objects: tuple[object, ...] = ()
        self._by_template: BoundedMemo[_TemplateKey, tuple[tuple[object, ...], SpreadSelector]] = BoundedMemo(
            "default spreading selectors", max_bytes=_TEMPLATE_SELECTORS_BYTES, max_entries=_TEMPLATE_SELECTORS)

    def _service_selectors(self, snapshot: Snapshot, namespace: str) -> list[dict[str, str]]:
        services = snapshot.kind("Service")
        if services is not self._services:
            index: dict[str, list[dict[str, str]]] = {}
            for svc in services.values():
                meta = svc.get("metadata") or {}
                spec = svc.get("spec") or {}
                if not isinstance(meta, Mapping) or not isinstance(spec, Mapping):
                    continue
                # Services with a nil selector match nothing, not everything (spread.go:105).
                selector = _string_map(spec.get("selector"))
                if selector is None:
                    continue
                index.setdefault(str(meta.get("namespace") or "default"), []).append(selector)
            self._services, self._index = services, index
        return self._index.get(namespace, [])

    def selector_for(self, pod: PodRecord, snapshot: Snapshot) -> SpreadSelector:
        """The pod's default selector (spread.go:37): matching Services' selectors, then its controller's.

        Kept with the pod's record for as long as the snapshot's mappings of the kinds it is made from
        (Services and controllers) are the same objects: the cache replaces a kind's mapping whenever an object
        of that kind changes, and only then. PreFilter and PreScore both ask for it."""
        sources = _selector_sources(snapshot)
        held: tuple[tuple[object, ...], SpreadSelector] | None = pod.memo.get(_SELECTOR_MEMO)
        if held is not None and _same(held[0], sources):
            return held[1]
        if not _same(self._objects, sources):
            self._objects = sources
            self._by_template.clear()
        owner = _controller_of(pod.raw)
        controller = None if owner is None else tuple(str(owner.get(f) or "") for f in ("apiVersion", "kind", "name"))
        key = (pod.namespace, frozenset(pod.labels.items()), controller)
        shared = self._by_template.get(key)
        if shared is not None and _same(shared[0], sources):  # (checked again: a caller on another thread)
            selector = shared[1]
        else:
            selector = self._selector_for(pod, snapshot)
            # The key's strings, and the selector's copy of the labels it kept.
            weight = 2 * sum(len(k) + len(v) for k, v in pod.labels.items()) + len(pod.namespace) \
                + sum(map(len, controller or ()))
            self._by_template.put(key, (sources, selector), weight)
        pod.memo[_SELECTOR_MEMO] = (sources, selector)
        return selector

    def _selector_for(self, pod: PodRecord, snapshot: Snapshot) -> SpreadSelector:
        label_set: dict[str, str] = {}
        labels = pod.labels
        for selector in self._service_selectors(snapshot, pod.namespace):
            if all(labels.get(k) == v for k, v in selector.items()):
                label_set.update(selector)
        owner = _controller_of(pod.raw)
        if owner is None:
            return SpreadSelector(label_set)
        gv = _parse_group_version(str(owner.get("apiVersion") or ""))
        if gv is None:
            return SpreadSelector(label_set)
        gvk = (gv[0], gv[1], str(owner.get("kind") or ""))
        key = f"{pod.namespace}/{owner.get('name') or ''}"
        if gvk == _RC_KIND:
            rc = snapshot.kind("ReplicationController").get(key)
            if rc is not None:
                # labels.Merge: the controller's values win over the Services' for a shared key.
                label_set.update(_string_map(_spec(rc).get("selector")) or {})
            return SpreadSelector(label_set)
        if gvk in (_RS_KIND, _SS_KIND):
            kind = "ReplicaSet" if gvk == _RS_KIND else "StatefulSet"
            obj = snapshot.kind(kind).get(key)
            if obj is not None:
                raw_selector = _spec(obj).get("selector")
                try:
                    other = compile_label_selector(raw_selector) if isinstance(raw_selector, Mapping) else None
                except SelectorError:
                    other = None  # an unparsable controller selector is ignored (spread.go:74)
                # A nil selector has no requirements to add (Nothing().Requirements() is not ok).
                if other is not None and not other.matches_nothing:
                    return SpreadSelector(label_set, (other,))
        return SpreadSelector(label_set)


#: The kinds a default selector is made from.
_SELECTOR_KINDS = ("Service", "ReplicationController", "ReplicaSet", "StatefulSet")


def _selector_sources(snapshot: Snapshot) -> tuple[object, ...]:
    """The snapshot's mappings of the kinds a default selector is made from (compared by identity)."""
    return tuple(snapshot.kind(kind) for kind in _SELECTOR_KINDS)


def _same(held: tuple[object, ...], sources: tuple[object, ...]) -> bool:
    return len(held) == len(sources) and all(a is b for a, b in zip(held, sources, strict=True))


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _controller_of(raw: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """metav1.GetControllerOfNoCopy: the first owner reference with controller: true."""
    meta = raw.get("metadata")
    if not isinstance(meta, Mapping):
        return None
    refs = meta.get("ownerReferences")
    if not isinstance(refs, list):
        return None
    for ref in refs:
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return ref
    return None


# ----------------------------------------------------------------------------------- Go float maths

_LN2_HI: Final = 6.93147180369123816490e-01
_LN2_LO: Final = 1.90821492927058770002e-10
_L1: Final = 6.666666666666735130e-01
_L2: Final = 3.999999999940941908e-01
_L3: Final = 2.857142874366239149e-01
_L4: Final = 2.222219843214978396e-01
_L5: Final = 1.818357216161805012e-01
_L6: Final = 1.531383769920937332e-01
_L7: Final = 1.479819860511658591e-01
_HALF_SQRT2: Final = 7.07106781186547524401e-01


@lru_cache(maxsize=4096)
def go_log(x: float) -> float:
    """Go's math.Log bit for bit, for finite x > 0 (Python's libm log differs in the last bit for ~1% of
    integers, which can flip a rounded score).

    kube-scheduler runs on amd64, where math.Log is math/log_amd64.s: the FreeBSD algorithm of
    math/log.go in plain SSE2 double operations (no fused multiply-add), so the same operations in the
    same order in Python give the same bits.
    """
    f1, ki = math.frexp(x)
    # The assembly's "cmpnlt" reduces when f1 <= sqrt(2)/2 (log.go says <; they differ only at equality).
    if f1 <= _HALF_SQRT2:
        f1 *= 2.0
        ki -= 1
    f = f1 - 1.0
    k = float(ki)
    s = f / (2.0 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def go_round(x: float) -> int:
    """Go's math.Round: half away from zero (Python's round() goes to even)."""
    whole = math.trunc(x)
    # x - trunc(x) is exact in binary floating point, so the comparison is too.
    if abs(x - whole) >= 0.5:
        whole += 1 if x > 0 else -1
    return int(whole)
