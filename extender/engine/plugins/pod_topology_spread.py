"""PodTopologySpread: spread pods over topology domains (upstream plugins/podtopologyspread, v1.36.3).

Filter enforces the pod's ``DoNotSchedule`` constraints, Score prefers nodes whose domains hold fewer
matching pods under its ``ScheduleAnyway`` constraints. A pod without constraints gets the profile's
default constraints (PodTopologySpreadArgs: ``System`` gives hostname maxSkew 3 and zone maxSkew 5, both
ScheduleAnyway), with the selector deduced from the Services and controller selecting it; no selector,
no defaults.

Feature gates are those of v1.36 by default: NodeInclusionPolicyInPodTopologySpread (GA, locked on),
MatchLabelKeysInPodTopologySpread (beta, on; the scheduler merges ``matchLabelKeys`` itself, in
addition to the apiserver's admission-time merge, which is harmless since both AND the same pairs), and
TaintTolerationComparisonOperators (alpha, off). minDomains has no gate any more. The class attributes
below mirror upstream's ``enable*`` fields so that tests can port the gate-off cases.

Counting (PreFilter, PreScore) reads every node of the snapshot, as upstream reads the snapshot's node
list rather than the candidates. Upstream's map of matching pods per topology value is held as an array over
the value codes of the snapshot's columns (:class:`_Domains`, a LabelCounts and its domains), so that Filter
and Score gather their nodes' counts by label code, a hostname topology's one domain per node included;
Score counts the node's own pods for a hostname constraint, as upstream does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

import numpy as np
import numpy.typing as npt

from extender.cluster.columns import (
    BoolArray,
    Int64Array,
    IntpArray,
    LabelCounts,
    NodeBatch,
    NodeColumns,
    distinct,
    trunc_div,
)
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import (
    MAX_NODE_SCORE,
    SKIP,
    Code,
    CycleState,
    FilterPlugin,
    ScorePlugin,
    Status,
    Verdicts,
    unresolvable,
    unschedulable,
)
from extender.engine.plugins.node_affinity import required_mask, required_node_affinity
from extender.engine.plugins.topology_spread_common import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    MAX_INT32,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    ConstraintError,
    DefaultSelectors,
    MatchCounts,
    SpreadConstraint,
    SpreadSelector,
    build_constraints,
    go_log,
)
from extender.engine.profile import ProfileError
from extender.engine.registry import register
from extender.engine.template_memo import TemplateMemo
from extender.kube.selectors import (
    SelectorError,
    label_key_errors,
)
from extender.kube.taints import find_untolerated_taint

ERR_REASON_CONSTRAINTS_NOT_MATCH: Final = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH: Final = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

SYSTEM_DEFAULTING: Final = "System"
LIST_DEFAULTING: Final = "List"

_PREFILTER_KEY: Final = "PreFilterPodTopologySpread"
_PRESCORE_KEY: Final = "PreScorePodTopologySpread"
_ROW_COUNTS: Final = "PodTopologySpread matching pods by row"
_CONSTRAINTS_PATH: Final = "spec.topologySpreadConstraints"
_DEFAULTS_PATH: Final = "PodTopologySpread args.defaultConstraints"
_DO_NOT_SCHEDULE_EFFECTS: Final = frozenset({"NoSchedule", "NoExecute"})
_ARG_KEYS: Final = frozenset({"defaultConstraints", "defaultingType", "apiVersion", "kind"})

# A pod's own constraints of one action, compiled once per template (extender.engine.template_memo): PreFilter
# and PreScore both ask for them, for every replica. Bounded: requests send any text.
_COMPILED = TemplateMemo(
    "compiled topology spread constraints", max_bytes=4 * 1024 * 1024, max_entries=4096, weight=8,
    errors=(ConstraintError, SelectorError))

# Verdicts are immutable; sharing them keeps Filter allocation-free.
_NOT_MATCH: Final = unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
_MISSING_LABEL: Final = unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)


class _FilterState:
    """preFilterState reduced to what Filter needs, per constraint in order: the topology key, the matching
    pods per domain, and the largest count a domain may hold (maxSkew + global minimum - self-match), so that
    Filter is one gather and one comparison per constraint."""

    __slots__ = ("checks", "constraints", "critical_min", "domains")

    def __init__(self, constraints: list[SpreadConstraint], domains: list[_Domains], pod: PodRecord) -> None:
        self.constraints = constraints
        self.domains = domains
        # criticalPaths[i][0].MatchNum: however the domains are visited, it ends up holding the smallest
        # count, or MaxInt32 when there is no domain (filtering.go:104).
        self.critical_min = [d.lowest() for d in domains]
        checks: list[tuple[str, _Domains, int]] = []
        for c, counted, lowest in zip(constraints, domains, self.critical_min, strict=True):
            # minMatchNum: with fewer eligible domains than minDomains the global minimum is 0 (filtering.go:55).
            if counted.size() < c.min_domains:
                lowest = 0
            self_match = 1 if c.selector.matches(pod.labels) else 0
            # Filter's test "matchNum + selfMatchNum - minMatchNum > maxSkew", rearranged.
            checks.append((c.topology_key, counted, c.max_skew + lowest - self_match))
        self.checks = tuple(checks)

    @property
    def counts(self) -> list[dict[str, int]]:
        """upstream's TpPairToMatchNum, per constraint: matching pods per domain (0 for a domain without any)."""
        return [d.by_value() for d in self.domains]


class _ScoreState:
    """preScoreState: constraints, ignored nodes, per-domain counts and normalizing weights."""

    __slots__ = ("constraints", "domains", "ignored", "ignored_mask", "namespace", "require_all", "weights")

    def __init__(self, constraints: list[SpreadConstraint], domains: list[_Domains | None], weights: list[float],
                 ignored: set[str], ignored_mask: BoolArray, namespace: str, require_all: bool) -> None:
        self.require_all = require_all
        self.constraints = constraints
        self.domains = domains  # None for a hostname constraint: Score counts the node's own pods
        self.weights = weights
        self.ignored = ignored
        # Over the nodes PreScore saw, in order: Score and NormalizeScore receive them in this order.
        self.ignored_mask = ignored_mask
        self.namespace = namespace

    @property
    def counts(self) -> list[dict[str, int]]:
        """upstream's TopologyValueToPodCounts, per constraint ({} for hostname)."""
        return [d.by_value() if d is not None else {} for d in self.domains]


class _Domains:
    """One constraint's topology domains and the matching pods in each, counted over the snapshot's nodes.

    ``pods`` holds the counts by value code of the key in the snapshot's columns (Filter and Score gather it by
    their nodes' codes); pods on counted nodes without the key are ``missing`` (upstream's value "", whose
    domain they share with nodes labelled with an empty value: see _slots). The domains (a domain exists at 0
    pods) are ``slots`` of ``columns``: codes of the key shifted by one, 0 for nodes without it. For PreFilter
    they are the values of the nodes counted; for PreScore those of the candidates."""

    __slots__ = ("columns", "missing", "pods", "slots")

    def __init__(self, pods: LabelCounts, missing: int, slots: IntpArray, columns: NodeColumns) -> None:
        self.pods = pods
        self.missing = missing
        self.slots = slots
        self.columns = columns

    def size(self) -> int:
        """How many domains there are."""
        return len(self.slots)

    def lowest(self) -> int:
        """The smallest count of a domain (MaxInt32 without any)."""
        if not len(self.slots):
            return MAX_INT32
        assert self.columns is self.pods.columns
        by_slot = np.concatenate((np.array([self.missing], np.int64), self.pods.counts))
        return int(by_slot[self.slots].min())

    def on(self, batch: NodeBatch) -> Int64Array:
        """The count of each node's domain (0 for a node without the key, or of a value with no pods)."""
        key, pods = self.pods.key, self.pods
        if self.missing and batch.columns is not pods.columns and "" not in pods.columns._label_codes.get(key, {}):
            # Nodes of other columns (a NodeList sent in full) labelled with an empty value: their domain holds
            # the pods of the snapshot's nodes without the key.
            return batch.label_table(key, {**pods, "": self.missing})
        return batch.label_table(key, pods)

    def by_value(self) -> dict[str, int]:
        """The counts by domain value ("" for nodes without the key)."""
        key, pods = self.pods.key, self.pods
        values = self.columns.label_values.get(key, [])
        empty_coded = "" in pods.columns._label_codes.get(key, {})
        out: dict[str, int] = {}
        for slot in self.slots.tolist():
            value = values[slot - 1] if slot else ""
            out[value] = self.missing if value == "" and not empty_coded else pods.get(value, 0)
        return out


def _slots(codes: npt.NDArray[np.int32], key: str, columns: NodeColumns) -> npt.NDArray[np.int32]:
    """Codes of ``key`` shifted by one, a node without the key reading as the empty value: the empty value's own
    slot where a node carries it (upstream keys both by the value ""), else slot 0."""
    slots: npt.NDArray[np.int32] = codes + 1
    empty = columns._label_codes.get(key, {}).get("")
    if empty is not None:
        slots[slots == 0] = empty + 1
    return slots


@register
class PodTopologySpread(FilterPlugin, ScorePlugin):
    """Hard constraints filter (skew and missing topology labels), soft constraints score (fewer is better)."""

    name = "PodTopologySpread"
    skips_deferred_resize = True  # v1.37 PreFilter: Skip a deferred resize (see Plugin)
    prefilter_reads_pods = True  # upstream updates its PreFilter state through AddPod/RemovePod
    columnar = True

    # v1.36 feature gates (pkg/scheduler/framework/plugins/feature): upstream's tests flip them per case.
    enable_node_inclusion_policy: ClassVar[bool] = True
    enable_match_label_keys: ClassVar[bool] = True
    enable_taint_comparison_operators: ClassVar[bool] = False

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        self.default_constraints, self.system_defaulted = _parse_args(self.args)
        self.default_selectors = DefaultSelectors()
        self.match_counts = MatchCounts()
        # The default constraints parsed per action (and gates): they carry no selector (validation forbids
        # one; each pod's is deduced), so they read nothing of the pod.
        self._parsed_defaults: dict[tuple[str, bool, bool], list[SpreadConstraint]] = {}

    # ---- constraints ---------------------------------------------------------------------------
    def _constraints(self, state: CycleState, pod: PodRecord, action: str) -> list[SpreadConstraint]:
        """getConstraints / initPreScoreState: the pod's own constraints of one action, else the defaults."""
        own = _own_constraints(pod)
        if own:
            label_keys, inclusion = self.enable_match_label_keys, self.enable_node_inclusion_policy

            def source() -> tuple[list[Any], Mapping[str, str] | None]:
                # What compiling reads beside the gates (in the key): the constraints, and the pod's labels only
                # through matchLabelKeys.
                keyed = label_keys and any(isinstance(c, Mapping) and "matchLabelKeys" in c for c in own)
                return own, pod.labels if keyed else None

            return _COMPILED.compiled(
                pod, f"pod_topology_spread.{action}.{label_keys:d}{inclusion:d}", source,
                lambda: build_constraints(own, pod.labels, action, path=_CONSTRAINTS_PATH,
                                          match_label_keys=label_keys, node_inclusion_policy=inclusion))
        # buildDefaultConstraints (common.go:62): defaults of this action, only when a selector exists.
        parsed = (action, self.enable_match_label_keys, self.enable_node_inclusion_policy)
        defaults = self._parsed_defaults.get(parsed)
        if defaults is None:
            defaults = self._parsed_defaults[parsed] = build_constraints(
                self.default_constraints, {}, action, path=_DEFAULTS_PATH, match_label_keys=parsed[1],
                node_inclusion_policy=parsed[2])
        if not defaults:
            return []
        selector = self.default_selectors.selector_for(pod, state.snapshot)
        if selector.empty:
            return []
        return [SpreadConstraint(c.max_skew, c.topology_key, selector, c.min_domains, c.honor_affinity,
                                 c.honor_taints) for c in defaults]

    def _eligible(self, pod: PodRecord, constraints: list[SpreadConstraint],
                  batch: NodeBatch) -> list[BoolArray | None]:
        """matchNodeInclusionPolicies over a batch, per constraint: the nodes whose pods count (None: every node).

        The pod's required node affinity is one column mask (parse errors are ignored for backwards
        compatibility, common.go:45: an invalid term simply never matches) and the taint check is evaluated
        once per distinct taint list. With the gate off, only nodes passing the affinity count at all.
        """
        gate = self.enable_node_inclusion_policy
        affinity: BoolArray | None = None
        if not gate or any(c.honor_affinity for c in constraints):
            required = required_node_affinity(pod)
            if not required.empty:
                affinity = required_mask(required, batch)
        taints: BoolArray | None = None
        if gate and any(c.honor_taints for c in constraints):
            tolerations, operators = pod.tolerations, self.enable_taint_comparison_operators
            taints = batch.by_taints(lambda listed: not listed or find_untolerated_taint(
                listed, tolerations, _DO_NOT_SCHEDULE_EFFECTS, enable_comparison_operators=operators) is None,
                np.bool_, key=("PodTopologySpread", tolerations, operators))
        if not gate:
            return [affinity for _ in constraints]
        return [_both(affinity if c.honor_affinity else None, taints if c.honor_taints else None)
                for c in constraints]

    def _domains(self, every: NodeBatch, key: str, counted: BoolArray | None, selector: SpreadSelector,
                 namespace: str, state: CycleState, domains: tuple[IntpArray, NodeColumns] | None) -> _Domains:
        """Matching pods per value of ``key`` over the ``counted`` nodes of ``every`` (None: all of them).

        The domains are the values of the counted nodes, or those given (the candidates': slots of their
        columns)."""
        columns = every.columns
        slots = _slots(every.label_codes(key), key, columns)
        if columns is state.snapshot.columns:
            by_row = self.match_counts.by_row(every, selector, namespace, self.pod_groups)
            # A hostname constraint's Score with the same selector reads them too.
            state.data.setdefault(_ROW_COUNTS, {})[(selector, namespace)] = by_row
            matching = by_row[every.rows]
        else:
            matching = self.match_counts.counts(every, selector, namespace, state.snapshot.columns, self.pod_groups)
        if counted is not None:
            slots, matching = slots[counted], matching[counted]
        pods = np.bincount(slots, weights=matching, minlength=len(columns.label_values.get(key, ())) + 1)
        if domains is None:
            domains = (distinct(slots), columns)
        return _Domains(LabelCounts(columns, key, pods[1:].astype(np.int64)), int(pods[0]), *domains)

    # ---- filtering -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        try:
            constraints = self._constraints(state, pod, DO_NOT_SCHEDULE)
            if not constraints:
                return SKIP
        except (ConstraintError, SelectorError) as err:
            return Status(Code.ERROR, str(err))
        # Upstream counts over all nodes of the snapshot (PreFilter receives the full node list), not
        # only over the candidates the extender was sent; only nodes with every topology key count.
        every = state.snapshot.all_nodes()
        has_keys = every.label_codes(constraints[0].topology_key) >= 0
        for c in constraints[1:]:
            has_keys &= every.label_codes(c.topology_key) >= 0
        domains = [self._domains(every, c.topology_key, has_keys if eligible is None else has_keys & eligible,
                                 c.selector, pod.namespace, state, None)
                   for c, eligible in zip(constraints, self._eligible(pod, constraints, every), strict=True)]
        state.data[_PREFILTER_KEY] = _FilterState(constraints, domains, pod)
        return None

    def filter_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Verdicts:
        prepared: _FilterState | None = state.data.get(_PREFILTER_KEY)
        if prepared is None:
            return Verdicts(np.ones(len(batch), np.int64),
                            (Status(Code.ERROR, f'reading "{_PREFILTER_KEY}" from cycleState: not found'),))
        verdict = np.zeros(len(batch), np.int64)
        # Constraints in order: the first one violated decides the reason (filtering.go:329).
        for key, per_domain, limit in prepared.checks:
            codes = batch.label_codes(key)
            over = per_domain.on(batch) > limit  # a domain without pods counts 0
            open_ = verdict == 0
            verdict[open_ & (codes < 0)] = 2
            verdict[open_ & over & (codes >= 0)] = 1
        return Verdicts(verdict, (_NOT_MATCH, _MISSING_LABEL))

    # ---- scoring -------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        all_nodes = state.snapshot.node_list
        if not all_nodes:
            return SKIP
        try:
            # Only non-system-default spreading needs every topology label on a node (scoring.go:142), so
            # that nodes without a zone label still get hostname spreading.
            require_all = bool(_own_constraints(pod)) or not self.system_defaulted
            constraints = self._constraints(state, pod, SCHEDULE_ANYWAY)
            if not constraints:
                return SKIP
        except (ConstraintError, SelectorError) as err:
            return Status(Code.ERROR, str(err))
        candidates = state.batch_of(nodes)
        ignored_mask = np.zeros(len(candidates), np.bool_)
        if require_all:
            for c in constraints:
                ignored_mask |= candidates.label_codes(c.topology_key) < 0
        kept = ~ignored_mask
        ignored = {nodes[i].name for i in ignored_mask.nonzero()[0].tolist()}
        every = state.snapshot.all_nodes()
        counted: BoolArray | None = None
        if require_all:
            counted = every.label_codes(constraints[0].topology_key) >= 0
            for c in constraints[1:]:
                counted &= every.label_codes(c.topology_key) >= 0
        domains: list[_Domains | None] = []
        weights: list[float] = []
        eligible_masks: list[BoolArray | None] | None = None
        for i, c in enumerate(constraints):
            key = c.topology_key
            if key == LABEL_HOSTNAME:  # per-node counts are taken in Score
                domains.append(None)
                weights.append(go_log(float(len(nodes) - len(ignored) + 2)))  # topologyNormalizingWeight
                continue
            # The candidates' domains (a missing label reads as "", only possible without require_all): only
            # their counts are kept (scoring.go:182), and their number weighs the constraint.
            own = distinct(_slots(candidates.label_codes(key), key, candidates.columns)[kept])
            weights.append(go_log(float(len(own) + 2)))
            if eligible_masks is None:
                eligible_masks = self._eligible(pod, constraints, every)
            eligible = eligible_masks[i]
            domains.append(self._domains(every, key, _both(counted, eligible), c.selector, pod.namespace, state,
                                         (own, candidates.columns)))
        state.data[_PRESCORE_KEY] = _ScoreState(constraints, domains, weights, ignored, ignored_mask, pod.namespace,
                                                require_all)
        return None

    def score_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Int64Array:
        prepared: _ScoreState = state.data[_PRESCORE_KEY]
        total = np.zeros(len(batch), np.float64)
        ignored = np.zeros(len(batch), np.bool_)
        for c, domains, weight in zip(prepared.constraints, prepared.domains, prepared.weights, strict=True):
            codes = batch.label_codes(c.topology_key)
            if prepared.require_all:
                ignored |= codes < 0
            if domains is None:
                # A hostname domain is the node itself: its pods are counted here (scoring.go:217), or read from
                # the counts PreScore brought up to date for the same selector over every node.
                by_row = state.data.get(_ROW_COUNTS, {}).get((c.selector, prepared.namespace)) \
                    if batch.columns is state.snapshot.columns else None
                count = by_row[batch.rows] if by_row is not None else self.match_counts.counts(
                    batch, c.selector, prepared.namespace, state.snapshot.columns, self.pod_groups)
            else:
                count = domains.on(batch)
            # scoreForCount: float64 arithmetic in this exact order (scoring.go:225); a node without the
            # label adds nothing for this constraint.
            term = count.astype(np.float64) * weight + float(c.max_skew - 1)
            total = np.where(codes >= 0, total + term, total)
        rounded = _go_round(total)
        rounded[ignored] = 0  # the nodes PreScore ignored: those lacking a topology key it required
        return rounded

    def normalize(self, state: CycleState, pod: PodRecord, scores: list[int]) -> None:
        scores[:] = self.normalize_batch(state, pod, np.array(scores, np.int64)).tolist()

    def normalize_batch(self, state: CycleState, pod: PodRecord, scores: Int64Array) -> Int64Array:
        prepared: _ScoreState | None = state.data.get(_PRESCORE_KEY)
        if prepared is None:
            return scores
        mask = prepared.ignored_mask
        kept = scores[~mask]
        highest = max(int(kept.max()), 0) if len(kept) else 0
        if highest == 0:
            out = np.full(len(scores), MAX_NODE_SCORE, np.int64)
        else:
            lowest = int(kept.min())
            # Fewer matching pods is better: MaxNodeScore * (max + min - s) / max (scoring.go:265).
            out = trunc_div(MAX_NODE_SCORE * (highest + lowest - scores), highest)
        out[mask] = 0
        return out


def _both(a: BoolArray | None, b: BoolArray | None) -> BoolArray | None:
    """Two node masks ANDed, None standing for every node."""
    if a is None:
        return b
    return a if b is None else a & b


def _go_round(values: npt.NDArray[np.float64]) -> Int64Array:
    """go_round over an array: half away from zero (x - trunc(x) is exact, so the comparison is too)."""
    whole = np.trunc(values)
    away = np.abs(values - whole) >= 0.5
    rounded: Int64Array = (whole + np.where(away, np.sign(values), 0.0)).astype(np.int64)
    return rounded


def _own_constraints(pod: PodRecord) -> list[Any]:
    raw = pod.spec.get("topologySpreadConstraints")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ConstraintError(f"{_CONSTRAINTS_PATH}: expected a list, got {type(raw).__name__}")
    return raw


def _parse_args(args: Mapping[str, Any]) -> tuple[tuple[Mapping[str, Any], ...], bool]:
    """PodTopologySpreadArgs, defaulted (defaults.go:225) and validated (validation_pluginargs.go:102).

    Returns the default constraints to apply and whether they are the system defaults.
    """
    prefix = "PodTopologySpread args"
    unknown = sorted(set(args) - _ARG_KEYS)
    if unknown:
        raise ProfileError(f"{prefix}: strict decoding error: unknown field(s) {', '.join(map(repr, unknown))}")
    defaulting = args.get("defaultingType") or SYSTEM_DEFAULTING
    raw_defaults = args.get("defaultConstraints")
    if raw_defaults is None:
        raw_defaults = []
    if not isinstance(raw_defaults, list):
        raise ProfileError(f"{prefix}.defaultConstraints: expected a list of topology spread constraints")
    errors: list[str] = []
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errors.append(f'defaultingType: Unsupported value: {defaulting!r}: supported values: "System", "List"')
    elif defaulting == SYSTEM_DEFAULTING and raw_defaults:
        errors.append('defaultingType: Invalid value: "System": when .defaultConstraints are not empty')
    seen: set[tuple[Any, Any]] = set()
    for i, c in enumerate(raw_defaults):
        path = f"defaultConstraints[{i}]"
        if not isinstance(c, Mapping):
            errors.append(f"{path}: expected an object")
            continue
        skew = c.get("maxSkew") or 0
        if isinstance(skew, bool) or not isinstance(skew, int):
            errors.append(f"{path}.maxSkew: expected an integer")
        elif skew <= 0:
            errors.append(f"{path}.maxSkew: Invalid value: {skew}: not in valid range (0, inf)")
        key = c.get("topologyKey") or ""
        if not isinstance(key, str):
            errors.append(f"{path}.topologyKey: expected a string")
        elif not key:
            errors.append(f"{path}.topologyKey: Required value: can not be empty")
        else:
            errors.extend(f"{path}.topologyKey: Invalid value: {key!r}: {msg}" for msg in label_key_errors(key))
        action = c.get("whenUnsatisfiable") or ""
        if not action:
            errors.append(f"{path}.whenUnsatisfiable: Required value: can not be empty")
        elif action not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
            errors.append(f'{path}.whenUnsatisfiable: Unsupported value: {action!r}: supported values: '
                          f'"DoNotSchedule", "ScheduleAnyway"')
        if c.get("labelSelector") is not None:
            errors.append(f"{path}.labelSelector: Forbidden: constraint must not define a selector, "
                          "as they deduced for each pod")
        pair = (key if isinstance(key, str) else repr(key), action if isinstance(action, str) else repr(action))
        if pair in seen:
            errors.append(f'defaultConstraints[{i}]: Duplicate value: "{{{pair[0]}, {pair[1]}}}"')
        seen.add(pair)
        min_domains = c.get("minDomains")
        if min_domains is not None and (isinstance(min_domains, bool) or not isinstance(min_domains, int)):
            errors.append(f"{path}.minDomains: expected an integer")
    if errors:
        raise ProfileError(f"{prefix}: " + "; ".join(errors))
    if defaulting == SYSTEM_DEFAULTING:
        return SYSTEM_DEFAULT_CONSTRAINTS, True
    return tuple(raw_defaults), False
