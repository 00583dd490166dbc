"""Cluster selection under spread constraints: group the feasible clusters, then pick the best set.

Upstream: ``pkg/scheduler/core/spreadconstraint/`` of karmada-io/karmada (``group_clusters.go``,
``select_clusters.go``, ``select_clusters_by_cluster.go``, ``select_clusters_by_region.go``,
``select_groups.go``, ``util.go``).

* Every feasible cluster gets its score and its available replicas *plus the replicas it already holds*;
  clusters are ordered by overflow tier (v1.18), score descending, available replicas descending, name.
* Groups are built for the zone, region and provider constraints present; a group's score is
  ``calcGroupScore``: for Divided, ``min(sum of available, target) * 1000 + average score`` over the
  fewest leading clusters that reach ``ceil(replicas / minGroups)`` and the cluster ``minGroups``; for
  Duplicated, ``clusters able to hold all replicas * 1000 + their average score``.
* Selection supports the ``region`` and ``cluster`` constraints only (zone and provider constraints
  filter and group, but do not select; a placement without either gets upstream's error):

  - by cluster: the first ``maxGroups`` clusters; when they cannot hold the replicas, the tail is swapped,
    from the last one backwards, for the leftover cluster with the most available replicas above it;
  - by region: a depth-first search over regions (sorted by cluster count ascending, score descending,
    name) finds every set within the region ``[minGroups, maxGroups]`` holding at least the cluster
    ``minGroups``; the heaviest (score, then clusters, then search order) wins unless one of its prefixes
    is also feasible.  Each chosen region gives its best cluster, the rest is filled by score and
    capacity up to the cluster ``maxGroups``.
* Static weights ignore spread constraints; Duplicated selection ignores capacity.

A Duplicated group in which no cluster can hold all replicas scores 0, as upstream's.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from extender.multicluster.budget import WorkLimitError, charge
from extender.multicluster.model import (
    DIVIDED,
    DUPLICATED,
    SPREAD_BY_CLUSTER,
    SPREAD_BY_PROVIDER,
    SPREAD_BY_REGION,
    SPREAD_BY_ZONE,
    WEIGHTED,
    Cluster,
    Placement,
    ResourceBinding,
    SpreadConstraint,
    TargetCluster,
)

__all__ = [
    "INVALID_REPLICAS",
    "ClusterDetail",
    "GroupClusters",
    "GroupInfo",
    "SelectError",
    "group_clusters",
    "select_best_clusters",
    "select_groups",
    "should_ignore_spread_constraint",
]

INVALID_REPLICAS: Final = -1
_WEIGHT_UNIT: Final = 1000

Calculator = Callable[[Sequence[Cluster], ResourceBinding], list[TargetCluster]]


class SelectError(Exception):
    """No cluster set satisfies the spread constraints; the message is upstream's."""


@dataclass(slots=True)
class ClusterDetail:
    """Upstream ``ClusterDetailInfo`` (plus the overflow tier)."""

    cluster: Cluster
    score: int
    available: int
    tier: int = 0

    @property
    def name(self) -> str:
        """The cluster's name."""
        return self.cluster.name


@dataclass(slots=True)
class Group:
    """A zone, region or provider with its clusters (in global order) and comprehensive score."""

    name: str
    clusters: list[ClusterDetail] = field(default_factory=list)
    available: int = 0
    score: int = 0


@dataclass(slots=True)
class GroupClusters:
    """Upstream ``GroupClustersInfo``: the global cluster order and the groups by topology."""

    clusters: list[ClusterDetail]
    zones: dict[str, Group] = field(default_factory=dict)
    regions: dict[str, Group] = field(default_factory=dict)
    providers: dict[str, Group] = field(default_factory=dict)


def _sort_key(detail: ClusterDetail) -> tuple[int, int, int, str]:
    return (detail.tier, -detail.score, -detail.available, detail.name)


def should_ignore_spread_constraint(placement: Placement) -> bool:
    """Static weights (or a Weighted division without any weight preference) ignore spread constraints."""
    rs = placement.replica_scheduling
    return (rs is not None and rs.scheduling_type == DIVIDED and rs.division_preference == WEIGHTED
            and (not rs.weight_preference_set or (bool(rs.static_weights) and not rs.dynamic_weight)))


def _ignore_available_resource(placement: Placement) -> bool:
    rs = placement.replica_scheduling
    return rs is None or rs.scheduling_type == DUPLICATED


def _topology_ignored(placement: Placement) -> bool:
    constraints = placement.spread_constraints
    if not constraints or (len(constraints) == 1 and constraints[0].spread_by_field == SPREAD_BY_CLUSTER):
        return True
    return should_ignore_spread_constraint(placement)


def _constraint(placement: Placement, by: str) -> SpreadConstraint | None:
    found = None
    for constraint in placement.spread_constraints:
        if constraint.spread_by_field == by:
            found = constraint  # the last one wins, as in upstream's map
    return found


def _group_score_duplicated(clusters: Sequence[ClusterDetail], binding: ResourceBinding) -> int:
    valid = [c for c in clusters if c.available >= binding.replicas]
    if not valid:
        return 0
    return len(valid) * _WEIGHT_UNIT + sum(c.score for c in valid) // len(valid)


def _group_score(clusters: Sequence[ClusterDetail], binding: ResourceBinding, placement: Placement,
                 min_groups: int) -> int:
    """Upstream ``calcGroupScore``."""
    if placement.scheduling_type == DUPLICATED:
        return _group_score_duplicated(clusters, binding)
    target = math.ceil(float(binding.replicas) / float(min_groups))
    cluster_min = 0
    for constraint in placement.spread_constraints:
        if constraint.spread_by_field == SPREAD_BY_CLUSTER:
            cluster_min = constraint.min_groups
    cluster_min = max(cluster_min, min_groups)
    total_available = total_score = valid = 0
    for c in clusters:
        total_available += c.available
        total_score += c.score
        valid += 1
        if valid >= cluster_min and total_available >= target:
            break
    if total_available < target:
        return total_available * _WEIGHT_UNIT + total_score // len(clusters)
    return target * _WEIGHT_UNIT + total_score // valid


def group_clusters(scores: Mapping[str, int], clusters: Sequence[Cluster], binding: ResourceBinding,
                   placement: Placement, calculator: Calculator,
                   tiers: Mapping[str, int] | None = None) -> GroupClusters:
    """Upstream ``GroupClustersWithScore``."""
    charge(len(clusters), "grouping clusters")
    available = calculator(clusters, binding)
    details = [
        ClusterDetail(c, scores.get(c.name, 0), a.replicas + binding.assigned_replicas_for(a.name),
                      (tiers or {}).get(c.name, 0))
        for c, a in zip(clusters, available, strict=True)
    ]
    details.sort(key=_sort_key)
    info = GroupClusters(details)
    if _topology_ignored(placement):
        return info
    for by, target, key in (
        (SPREAD_BY_ZONE, info.zones, lambda c: c.zones),
        (SPREAD_BY_REGION, info.regions, lambda c: (c.region,) if c.region else ()),
        (SPREAD_BY_PROVIDER, info.providers, lambda c: (c.provider,) if c.provider else ()),
    ):
        constraint = _constraint(placement, by)
        if constraint is None:
            continue
        for detail in details:
            for name in key(detail.cluster):
                group = target.setdefault(name, Group(name))
                group.clusters.append(detail)
                group.available += detail.available
        for group in target.values():
            group.score = _group_score(group.clusters, binding, placement, constraint.min_groups)
    return info


def _select_by_available(candidates: list[ClusterDetail], need_count: int, need_replicas: int) -> list[ClusterDetail]:
    """Upstream ``selectClustersByAvailableResource``: from the last chosen cluster backwards, swap each one
    for the first leftover cluster with the most available replicas, if that is more, until the chosen ones
    hold ``need_replicas``.

    Upstream rescans the leftovers and re-adds the chosen ones for every swap; a running sum and a heap of
    the leftovers (most available first, then the earliest position) give the same swaps in O(n log n).
    """
    chosen = candidates[:need_count]
    rest = candidates[need_count:]
    held = sum(c.available for c in chosen)
    best_rest = [(-c.available, i) for i, c in enumerate(rest)]
    heapq.heapify(best_rest)
    index = len(chosen) - 1
    while held < need_replicas and index >= 0:
        if best_rest and -best_rest[0][0] > chosen[index].available:
            _, position = best_rest[0]
            held += rest[position].available - chosen[index].available
            chosen[index], rest[position] = rest[position], chosen[index]
            heapq.heapreplace(best_rest, (-rest[position].available, position))
        index -= 1
    return chosen if held >= need_replicas else []


def _by_cluster(constraint: SpreadConstraint, info: GroupClusters, need_replicas: int) -> list[Cluster]:
    total = len(info.clusters)
    if total < constraint.min_groups:
        raise SelectError("the number of feasible clusters is less than spreadConstraint.MinGroups")
    need = min(constraint.max_groups, total)
    if need_replicas == INVALID_REPLICAS:
        chosen = info.clusters[:need]
    else:
        chosen = _select_by_available(list(info.clusters), need, need_replicas)
        if not chosen:
            raise SelectError(f"no enough resource when selecting {need} clusters")
    return [c.cluster for c in chosen]


@dataclass(slots=True)
class GroupInfo:
    """Upstream ``GroupInfo`` of the region search: ``value`` clusters, ``weight`` the group score."""

    name: str
    value: int
    weight: int


@dataclass(slots=True)
class _Path:
    id: int
    groups: list[GroupInfo]
    weight: int
    value: int


#: Search steps allowed in the region search even without a work budget; upstream has no bound (many
#: regions could hang it).
MAX_SEARCH_STEPS: Final = 2_000_000
#: Budget steps one step of the region search costs (it builds and compares paths).
_SEARCH_STEP_COST: Final = 20


def _find_feasible_paths(groups: list[GroupInfo], min_c: int, max_c: int, target: int) -> list[_Path]:
    groups = sorted(groups, key=lambda g: (g.value, -g.weight, g.name))
    paths: list[_Path] = []
    stack: list[GroupInfo] = []
    counter = [0]
    steps = [0]

    def dfs(total: int, begin: int) -> None:
        steps[0] += 1
        charge(_SEARCH_STEP_COST, f"the search over combinations of {len(groups)} regions, up to {max_c} at a time")
        if steps[0] > MAX_SEARCH_STEPS:
            raise WorkLimitError(f"too many region combinations to search ({len(groups)} regions, up to {max_c} "
                                 "at a time); lower the region maxGroups")
        if total >= target and min_c <= len(stack) <= max_c:
            counter[0] += 1
            chosen = sorted(stack, key=lambda g: (-g.weight, g.name))
            paths.append(_Path(counter[0], chosen, sum(g.weight for g in chosen), sum(g.value for g in chosen)))
            return
        if len(stack) >= max_c:
            return
        for i in range(begin, len(groups)):
            stack.append(groups[i])
            dfs(total + groups[i].value, i + 1)
            stack.pop()

    dfs(0, 0)
    return paths


def _is_prefix(path: _Path, sub: _Path) -> bool:
    if len(sub.groups) >= len(path.groups):
        return False
    return all(path.groups[i].name == g.name for i, g in enumerate(sub.groups))


def select_groups(groups: list[GroupInfo], min_c: int, max_c: int, target: int) -> list[GroupInfo]:
    """Upstream ``selectGroups``: the best feasible set of groups, or none."""
    if not groups:
        return []
    paths = _find_feasible_paths(groups, min_c, max_c, target)
    if not paths:
        return []
    if len(paths) == 1:
        return paths[0].groups
    paths.sort(key=lambda p: (-p.weight, -p.value, p.id))
    final = paths[0]
    for path in paths[1:]:
        if _is_prefix(final, path):
            final = path
    return final.groups


def _by_region(constraints: Mapping[str, SpreadConstraint], info: GroupClusters) -> list[Cluster]:
    region_c = constraints[SPREAD_BY_REGION]
    cluster_c = constraints.get(SPREAD_BY_CLUSTER, SpreadConstraint())
    if len(info.regions) < region_c.min_groups:
        raise SelectError("the number of feasible region is less than spreadConstraint.MinGroups")
    groups = [GroupInfo(r.name, len(r.clusters), r.score) for r in info.regions.values()]
    chosen = select_groups(groups, region_c.min_groups, region_c.max_groups, cluster_c.min_groups)
    if not chosen:
        raise SelectError("the number of clusters is less than the cluster spreadConstraint.MinGroups")
    selected: list[Cluster] = []
    candidates: list[ClusterDetail] = []
    for group in chosen:
        region = info.regions[group.name]
        selected.append(region.clusters[0].cluster)
        candidates.extend(region.clusters[1:])
    need = min(len(candidates) + len(selected), cluster_c.max_groups)
    rest = need - len(selected)
    if rest > 0:
        candidates.sort(key=_sort_key)
        selected.extend(c.cluster for c in candidates[:rest])
    return selected


def select_best_clusters(placement: Placement, info: GroupClusters, need_replicas: int) -> list[Cluster]:
    """Upstream ``SelectBestClusters``; raises :class:`SelectError` with upstream's message."""
    if not placement.spread_constraints or should_ignore_spread_constraint(placement):
        return [c.cluster for c in info.clusters]
    if _ignore_available_resource(placement):
        need_replicas = INVALID_REPLICAS
    by_field = {c.spread_by_field: c for c in placement.spread_constraints}
    if SPREAD_BY_REGION in by_field:
        return _by_region(by_field, info)
    if SPREAD_BY_CLUSTER in by_field:
        return _by_cluster(by_field[SPREAD_BY_CLUSTER], info, need_replicas)
    raise SelectError("just support cluster and region spread constraint")
