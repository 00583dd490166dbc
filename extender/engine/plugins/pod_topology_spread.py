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
list rather than the candidates; Filter and Score are O(#constraints) dictionary lookups, except that
Score counts the node's own pods for a hostname constraint, as upstream does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

import numpy as np
import numpy.typing as npt

from extender.cluster.columns import BoolArray, Int64Array, NodeBatch, distinct, trunc_div
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
    """preFilterState reduced to what Filter needs, per constraint in order: the topology key, the
    matching pods per domain, and the largest count a domain may hold (maxSkew + global minimum -
    self-match), so that Filter is one lookup and one comparison per constraint."""

    __slots__ = ("checks", "constraints", "counts", "critical_min")

    def __init__(self, constraints: list[SpreadConstraint], counts: list[dict[str, int]], pod: PodRecord) -> None:
        self.constraints = constraints
        self.counts = counts
        # criticalPaths[i][0].MatchNum: however the domains are visited, it ends up holding the smallest
        # count, or MaxInt32 when there is no domain (filtering.go:104).
        self.critical_min = [min(per_domain.values(), default=MAX_INT32) for per_domain in counts]
        checks: list[tuple[str, dict[str, int], int]] = []
        for c, per_domain, lowest in zip(constraints, counts, self.critical_min, strict=True):
            # minMatchNum: with fewer eligible domains than minDomains the global minimum is 0 (filtering.go:55).
            if len(per_domain) < c.min_domains:
                lowest = 0
            self_match = 1 if c.selector.matches(pod.labels) else 0
            # Filter's test "matchNum + selfMatchNum - minMatchNum > maxSkew", rearranged.
            checks.append((c.topology_key, per_domain, c.max_skew + lowest - self_match))
        self.checks = tuple(checks)


class _ScoreState:
    """preScoreState: constraints, ignored nodes, per-domain counts and normalizing weights."""

    __slots__ = ("constraints", "counts", "ignored", "ignored_mask", "namespace", "require_all", "weights")

    def __init__(self, constraints: list[SpreadConstraint], counts: list[dict[str, int]], weights: list[float],
                 ignored: set[str], ignored_mask: BoolArray, namespace: str, require_all: bool) -> None:
        self.require_all = require_all
        self.constraints = constraints
        self.counts = counts
        self.weights = weights
        self.ignored = ignored
        # Over the nodes PreScore saw, in order: Score and NormalizeScore receive them in this order.
        self.ignored_mask = ignored_mask
        self.namespace = namespace


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

    def _eligible(self, pod: PodRecord, constraints: list[SpreadConstraint], batch: NodeBatch) -> list[BoolArray]:
        """matchNodeInclusionPolicies over a batch, per constraint: the nodes whose pods count.

        The pod's required node affinity is one column mask (parse errors are ignored for backwards
        compatibility, common.go:45: an invalid term simply never matches) and the taint check is evaluated
        once per distinct taint list. With the gate off, only nodes passing the affinity count at all.
        """
        gate = self.enable_node_inclusion_policy
        everywhere = np.ones(len(batch), np.bool_)
        affinity = everywhere
        if not gate or any(c.honor_affinity for c in constraints):
            affinity = required_mask(required_node_affinity(pod), batch)
        taints = everywhere
        if gate and any(c.honor_taints for c in constraints):
            tolerations, operators = pod.tolerations, self.enable_taint_comparison_operators
            taints = batch.by_taints(lambda listed: not listed or find_untolerated_taint(
                listed, tolerations, _DO_NOT_SCHEDULE_EFFECTS, enable_comparison_operators=operators) is None,
                np.bool_)
        if not gate:
            return [affinity for _ in constraints]
        return [(affinity if c.honor_affinity else everywhere) & (taints if c.honor_taints else everywhere)
                for c in constraints]

    def _domain_counts(self, batch: NodeBatch, key: str, counted: BoolArray, selector: SpreadSelector,
                       namespace: str, state: CycleState, missing: str | None) -> dict[str, int]:
        """Matching pods per value of ``key`` over the ``counted`` nodes of the batch, every value seen
        getting an entry even at 0. A node without the label is counted under ``missing`` (or not at all)."""
        codes = batch.label_codes(key).astype(np.int64) + 1  # 0: no such label
        if missing is None:
            counted = counted & (codes > 0)
        matching = self.match_counts.counts(batch, selector, namespace, state.snapshot.columns, self.pod_groups)
        chosen = codes[counted]
        sums = np.bincount(chosen, weights=matching[counted].astype(np.float64))
        seen = np.bincount(chosen)
        values = batch.columns.label_values.get(key, [])
        out: dict[str, int] = {}
        for code in seen.nonzero()[0].tolist():
            value = values[code - 1] if code else missing
            assert value is not None
            out[value] = out.get(value, 0) + int(sums[code])
        return out

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
        has_keys = np.ones(len(every), np.bool_)
        for c in constraints:
            has_keys &= every.label_codes(c.topology_key) >= 0
        counts = [self._domain_counts(every, c.topology_key, has_keys & eligible, c.selector, pod.namespace,
                                      state, None)
                  for c, eligible in zip(constraints, self._eligible(pod, constraints, every), strict=True)]
        state.data[_PREFILTER_KEY] = _FilterState(constraints, counts, pod)
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
            values = batch.columns.label_values.get(key, [])
            over = np.zeros(len(values) + 1, np.bool_)  # code -1 (no label) reads the last entry
            for code in distinct(codes).tolist():
                if code >= 0:
                    over[code] = per_domain.get(values[code], 0) > limit
            open_ = verdict == 0
            verdict[open_ & (codes < 0)] = 2
            verdict[open_ & over[codes]] = 1
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
        counts: list[dict[str, int]] = []
        for c in constraints:
            per_domain: dict[str, int] = {}
            if c.topology_key != LABEL_HOSTNAME:  # per-node counts are taken in Score
                values = candidates.columns.label_values.get(c.topology_key, [])
                # A missing label reads as "" (only possible without require_all).
                for code in distinct(candidates.label_codes(c.topology_key)[kept]).tolist():
                    per_domain[values[code] if code >= 0 else ""] = 0
            counts.append(per_domain)
        weights: list[float] = []
        for c, per_domain in zip(constraints, counts, strict=True):
            size = len(nodes) - len(ignored) if c.topology_key == LABEL_HOSTNAME else len(per_domain)
            weights.append(go_log(float(size + 2)))  # topologyNormalizingWeight

        if any(c.topology_key != LABEL_HOSTNAME for c in constraints):
            every = state.snapshot.all_nodes()
            counted = np.ones(len(every), np.bool_)
            if require_all:
                for c in constraints:
                    counted &= every.label_codes(c.topology_key) >= 0
            for c, per_domain, eligible in zip(constraints, counts, self._eligible(pod, constraints, every),
                                               strict=True):
                if c.topology_key == LABEL_HOSTNAME:
                    continue
                found = self._domain_counts(every, c.topology_key, counted & eligible, c.selector, pod.namespace,
                                            state, "")
                # Only domains of candidate nodes are counted (scoring.go:182).
                for value in per_domain:
                    per_domain[value] += found.get(value, 0)
        state.data[_PRESCORE_KEY] = _ScoreState(constraints, counts, weights, ignored, ignored_mask, pod.namespace,
                                                require_all)
        return None

    def score_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Int64Array:
        prepared: _ScoreState = state.data[_PRESCORE_KEY]
        total = np.zeros(len(batch), np.float64)
        ignored = np.zeros(len(batch), np.bool_)
        for c, per_domain, weight in zip(prepared.constraints, prepared.counts, prepared.weights, strict=True):
            codes = batch.label_codes(c.topology_key)
            if prepared.require_all:
                ignored |= codes < 0
            if c.topology_key == LABEL_HOSTNAME:
                # A hostname domain is the node itself: its pods are counted here (scoring.go:217).
                count = self.match_counts.counts(batch, c.selector, prepared.namespace, state.snapshot.columns,
                                                 self.pod_groups)
            else:
                values = batch.columns.label_values.get(c.topology_key, [])
                table = np.zeros(len(values) + 1, np.int64)
                for code in distinct(codes).tolist():
                    if code >= 0:
                        table[code] = per_domain.get(values[code], 0)
                count = table[codes]
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
