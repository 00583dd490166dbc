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

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import NodeRecord, PodRecord
from extender.engine.framework import (
    MAX_NODE_SCORE,
    SKIP,
    Code,
    CycleState,
    FilterPlugin,
    ScorePlugin,
    Status,
    go_div,
    unresolvable,
    unschedulable,
)
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
    build_constraints,
    go_log,
    go_round,
    node_has_keys,
)
from extender.engine.profile import ProfileError
from extender.engine.registry import register
from extender.kube.selectors import (
    RequiredNodeAffinity,
    SelectorError,
    compile_required_node_affinity,
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

    __slots__ = ("constraints", "counts", "ignored", "ignored_mask", "namespace", "terms", "weights")

    def __init__(self, constraints: list[SpreadConstraint], counts: list[dict[str, int]], weights: list[float],
                 tables: list[dict[str, tuple[int, int]]], ignored: set[str], ignored_mask: list[bool],
                 namespace: str) -> None:
        self.constraints = constraints
        self.counts = counts
        self.weights = weights
        self.ignored = ignored
        # The nodes PreScore saw, in order: NormalizeScore receives their scores in this order.
        self.ignored_mask = ignored_mask
        self.namespace = namespace
        self.terms = tuple(
            (c.topology_key, c.topology_key == LABEL_HOSTNAME, c.selector, per_domain, table, weight,
             float(c.max_skew - 1))
            for c, per_domain, table, weight in zip(constraints, counts, tables, weights, strict=True)
        )


class _Inclusion:
    """matchNodeInclusionPolicies, evaluated at most once per node for the whole constraint list."""

    __slots__ = ("affinity", "comparison_operators", "pod")

    def __init__(self, pod: PodRecord, affinity: RequiredNodeAffinity, comparison_operators: bool) -> None:
        self.pod = pod
        self.affinity = affinity
        self.comparison_operators = comparison_operators

    def affinity_ok(self, node: NodeRecord) -> bool:
        # Parse errors of the required affinity are ignored for backwards compatibility (common.go:45):
        # an invalid term simply never matches.
        return self.affinity.matches(node.labels, node.name)

    def taints_ok(self, node: NodeRecord) -> bool:
        if not node.taints:
            return True
        return find_untolerated_taint(node.taints, self.pod.tolerations, _DO_NOT_SCHEDULE_EFFECTS,
                                      enable_comparison_operators=self.comparison_operators) is None


@register
class PodTopologySpread(FilterPlugin, ScorePlugin):
    """Hard constraints filter (skew and missing topology labels), soft constraints score (fewer is better)."""

    name = "PodTopologySpread"

    # v1.36 feature gates (pkg/scheduler/framework/plugins/feature): upstream's tests flip them per case.
    enable_node_inclusion_policy: ClassVar[bool] = True
    enable_match_label_keys: ClassVar[bool] = True
    enable_taint_comparison_operators: ClassVar[bool] = False

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        self.default_constraints, self.system_defaulted = _parse_args(self.args)
        self.default_selectors = DefaultSelectors()
        self.match_counts = MatchCounts()

    # ---- constraints ---------------------------------------------------------------------------
    def _constraints(self, state: CycleState, pod: PodRecord, action: str) -> list[SpreadConstraint]:
        """getConstraints / initPreScoreState: the pod's own constraints of one action, else the defaults."""
        own = _own_constraints(pod)
        if own:
            return build_constraints(own, pod.labels, action, path=_CONSTRAINTS_PATH,
                                     match_label_keys=self.enable_match_label_keys,
                                     node_inclusion_policy=self.enable_node_inclusion_policy)
        # buildDefaultConstraints (common.go:62): defaults of this action, only when a selector exists.
        defaults = build_constraints(self.default_constraints, pod.labels, action, path=_DEFAULTS_PATH,
                                     match_label_keys=self.enable_match_label_keys,
                                     node_inclusion_policy=self.enable_node_inclusion_policy)
        if not defaults:
            return []
        selector = self.default_selectors.selector_for(pod, state.snapshot)
        if selector.empty:
            return []
        return [SpreadConstraint(c.max_skew, c.topology_key, selector, c.min_domains, c.honor_affinity,
                                 c.honor_taints) for c in defaults]

    def _inclusion(self, pod: PodRecord) -> _Inclusion:
        return _Inclusion(pod, compile_required_node_affinity(pod.raw), self.enable_taint_comparison_operators)

    # ---- filtering -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        try:
            constraints = self._constraints(state, pod, DO_NOT_SCHEDULE)
            if not constraints:
                return SKIP
            inclusion = self._inclusion(pod)
        except (ConstraintError, SelectorError) as err:
            return Status(Code.ERROR, str(err))
        counts: list[dict[str, int]] = [{} for _ in constraints]
        keys = [c.topology_key for c in constraints]
        gate = self.enable_node_inclusion_policy
        any_affinity = gate and any(c.honor_affinity for c in constraints)
        any_taints = gate and any(c.honor_taints for c in constraints)
        namespace = pod.namespace
        memo = self.match_counts
        tables = [memo.table(c.selector, namespace) for c in constraints]
        counted = list(zip(constraints, counts, tables, strict=True))
        # Upstream counts over all nodes of the snapshot (PreFilter receives the full node list), not
        # only over the candidates the extender was sent.
        for info in state.snapshot.node_list:
            node = info.node
            assert node is not None
            labels = node.labels
            if not gate and not inclusion.affinity_ok(node):
                continue  # gate off: spreading only over nodes that pass the pod's node affinity
            if not node_has_keys(labels, keys):
                continue
            affinity_ok = inclusion.affinity_ok(node) if any_affinity else True
            taints_ok = inclusion.taints_ok(node) if any_taints else True
            for c, per_domain, table in counted:
                if gate and ((c.honor_affinity and not affinity_ok) or (c.honor_taints and not taints_ok)):
                    continue
                value = labels[c.topology_key]
                # The memo lookup is inlined: this loop runs for every node of the cluster.
                entry = table.get(info.name)
                if entry is not None and entry[0] == info.generation:
                    matching = entry[1]
                else:
                    matching = memo.count(table, info, c.selector, namespace)
                # Every eligible domain gets an entry, even with no matching pod: minDomains counts them.
                per_domain[value] = per_domain.get(value, 0) + matching
        state.data[_PREFILTER_KEY] = _FilterState(constraints, counts, pod)
        return None

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        prepared: _FilterState | None = state.data.get(_PREFILTER_KEY)
        if prepared is None:
            return Status(Code.ERROR, f'reading "{_PREFILTER_KEY}" from cycleState: not found')
        record = node.node
        assert record is not None
        labels = record.labels
        # Constraints in order: the first one violated decides the reason (filtering.go:329).
        for key, per_domain, limit in prepared.checks:
            value = labels.get(key)
            if value is None:
                return _MISSING_LABEL
            if per_domain.get(value, 0) > limit:
                return _NOT_MATCH
        return None

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
            inclusion = self._inclusion(pod)
        except (ConstraintError, SelectorError) as err:
            return Status(Code.ERROR, str(err))
        keys = [c.topology_key for c in constraints]
        counts: list[dict[str, int]] = [{} for _ in constraints]
        ignored: set[str] = set()
        ignored_mask: list[bool] = []
        for info in nodes:
            node = info.node
            assert node is not None
            labels = node.labels
            if require_all and not node_has_keys(labels, keys):
                ignored.add(node.name)
                ignored_mask.append(True)
                continue
            ignored_mask.append(False)
            for c, per_domain in zip(constraints, counts, strict=True):
                if c.topology_key != LABEL_HOSTNAME:  # per-node counts are taken in Score
                    # A missing label reads as "" (only possible without require_all).
                    per_domain.setdefault(labels.get(c.topology_key, ""), 0)
        weights: list[float] = []
        for c, per_domain in zip(constraints, counts, strict=True):
            size = len(nodes) - len(ignored) if c.topology_key == LABEL_HOSTNAME else len(per_domain)
            weights.append(go_log(float(size + 2)))  # topologyNormalizingWeight

        gate = self.enable_node_inclusion_policy
        any_affinity = gate and any(c.honor_affinity for c in constraints)
        any_taints = gate and any(c.honor_taints for c in constraints)
        namespace = pod.namespace
        memo = self.match_counts
        counted = [(c, per_domain, memo.table(c.selector, namespace))
                   for c, per_domain in zip(constraints, counts, strict=True) if c.topology_key != LABEL_HOSTNAME]
        if counted:
            for info in all_nodes:
                node = info.node
                assert node is not None
                labels = node.labels
                if not gate and not inclusion.affinity_ok(node):
                    continue
                if require_all and not node_has_keys(labels, keys):
                    continue
                affinity_ok = inclusion.affinity_ok(node) if any_affinity else True
                taints_ok = inclusion.taints_ok(node) if any_taints else True
                for c, per_domain, table in counted:
                    if gate and ((c.honor_affinity and not affinity_ok) or (c.honor_taints and not taints_ok)):
                        continue
                    value = labels.get(c.topology_key, "")
                    # Only domains of candidate nodes are counted (scoring.go:182).
                    if value in per_domain:
                        entry = table.get(info.name)
                        if entry is not None and entry[0] == info.generation:
                            per_domain[value] += entry[1]
                        else:
                            per_domain[value] += memo.count(table, info, c.selector, namespace)
        tables = [memo.table(c.selector, namespace) for c in constraints]
        state.data[_PRESCORE_KEY] = _ScoreState(constraints, counts, weights, tables, ignored, ignored_mask,
                                                namespace)
        return None

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        prepared: _ScoreState = state.data[_PRESCORE_KEY]
        record = node.node
        assert record is not None
        if record.name in prepared.ignored:
            return 0
        labels = record.labels
        total = 0.0
        for key, hostname, selector, per_domain, table, weight, skew_offset in prepared.terms:
            value = labels.get(key)
            if value is None:
                continue
            if hostname:
                # A hostname domain is the node itself: its pods are counted here (scoring.go:217).
                count = MatchCounts.count(table, node, selector, prepared.namespace)
            else:
                count = per_domain.get(value, 0)
            # scoreForCount: float64 arithmetic in this exact order, then math.Round (scoring.go:225).
            total += float(count) * weight + skew_offset
        return go_round(total)

    def normalize(self, state: CycleState, pod: PodRecord, scores: list[int]) -> None:
        prepared: _ScoreState | None = state.data.get(_PRESCORE_KEY)
        if prepared is None:
            return
        mask = prepared.ignored_mask
        lowest: int | None = None
        highest = 0
        for i, score in enumerate(scores):
            if mask[i]:
                continue
            if lowest is None or score < lowest:
                lowest = score
            if score > highest:
                highest = score
        for i, score in enumerate(scores):
            if mask[i]:
                scores[i] = 0
            elif highest == 0:
                scores[i] = MAX_NODE_SCORE
            else:
                assert lowest is not None
                # Fewer matching pods is better: MaxNodeScore * (max + min - s) / max (scoring.go:265).
                scores[i] = go_div(MAX_NODE_SCORE * (highest + lowest - score), highest)


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
