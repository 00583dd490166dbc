"""Filter plugins: which member clusters may run the workload at all, with upstream's reasons.

Upstream: ``pkg/scheduler/framework/plugins/`` of karmada-io/karmada, one plugin per class here:

* ``apienablement``: the cluster serves the resource's ``apiVersion``/``kind``
  (``status.apiEnablements``).  A cluster already in ``spec.clusters`` always passes, so a missing API
  never removes scheduled replicas;
* ``tainttoleration``: ``NoSchedule``/``NoExecute`` cluster taints must be tolerated by
  ``placement.clusterTolerations``; a cluster already in ``spec.clusters`` passes (the taint manager,
  not the scheduler, evicts from it);
* ``clusteraffinity``: ``placement.clusterAffinity``, or the ``clusterAffinities`` term being tried
  (``status.schedulerObservingAffinityName``); with ``overflowAffinities`` (v1.18) a workload's cluster
  passes when it matches the primary group or any overflow tier (a non-workload's only the primary);
* ``spreadconstraint``: a cluster lacks the provider, region or zones spread on;
* ``clustereviction``: the cluster is the source of a ``gracefulEvictionTasks`` entry.

``cluster_matches`` is ``pkg/util/selector.go`` ``ClusterMatches``: ``exclude`` first, then the label
selector, the field selector (``zone`` against ``spec.zones``: In needs one zone listed, NotIn none of
them; ``provider``/``region`` as a node-selector requirement on those fields), then ``clusterNames``.

Upstream runs the filter plugins in its registry's (map) order and stops at the first rejection, so a
cluster failing two filters is counted under either reason from one run to the next; here every plugin
runs, in the order of :data:`FILTER_PLUGINS` (the declaration order of ``NewInTreeRegistry``), so a
cluster reports all its reasons, and the first one stands for the cluster in the "0/N clusters are
available" summary (the oracle in ``tests/karmada`` fixes upstream's order to the same one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Final, Protocol

from extender.kube.taints import EFFECT_NO_EXECUTE, EFFECT_NO_SCHEDULE, find_untolerated_taint
from extender.multicluster.budget import charge
from extender.multicluster.model import (
    PROVIDER_FIELD,
    REGION_FIELD,
    SPREAD_BY_PROVIDER,
    SPREAD_BY_REGION,
    SPREAD_BY_ZONE,
    ZONE_FIELD,
    Cluster,
    ClusterAffinity,
    ClusterAffinityTerm,
    FieldRequirement,
    Placement,
    ResourceBinding,
)

__all__ = [
    "FILTER_PLUGINS",
    "APIEnablement",
    "ClusterAffinityFilter",
    "ClusterEviction",
    "FilterContext",
    "FilterPlugin",
    "SpreadConstraintFilter",
    "TaintToleration",
    "active_term",
    "cluster_matches",
    "overflow_tiers",
    "run_filters",
]

_FILTER_EFFECTS: Final = frozenset({EFFECT_NO_SCHEDULE, EFFECT_NO_EXECUTE})


def _match_zones(req: FieldRequirement, zones: Sequence[str]) -> bool:
    """Upstream ``matchZones``."""
    if req.operator == "In":
        return any(zone in req.values for zone in zones)
    if req.operator == "NotIn":
        return not any(zone in req.values for zone in zones)
    if req.operator == "Exists":
        return bool(zones)
    if req.operator == "DoesNotExist":
        return not zones
    return False


def _match_fields(affinity: ClusterAffinity, cluster: Cluster) -> bool:
    for req in affinity.field_selector or ():
        if req.key == ZONE_FIELD and not _match_zones(req, cluster.zones):
            return False
    if affinity.field_nodes is None:
        return True
    fields: dict[str, str] = {}
    if cluster.provider:
        fields[PROVIDER_FIELD] = cluster.provider
    if cluster.region:
        fields[REGION_FIELD] = cluster.region
    return affinity.field_nodes.matches(fields, "")


def cluster_matches(cluster: Cluster, affinity: ClusterAffinity) -> bool:
    """Upstream ``util.ClusterMatches``: does ``cluster`` satisfy every part of ``affinity``."""
    charge(2 * (1 + len(affinity.field_selector or ()) + _label_terms(affinity)), "matching clusters to affinities")
    if cluster.name in affinity.excluded or affinity.matches_nothing:
        return False
    if affinity.label_selector is not None and not affinity.label_selector.matches(cluster.labels):
        return False
    if affinity.field_selector is not None and not _match_fields(affinity, cluster):
        return False
    return not affinity.cluster_names or cluster.name in affinity.names


def _label_terms(affinity: ClusterAffinity) -> int:
    selector = affinity.label_selector
    return len(selector.requirements) if selector is not None else 0


@dataclass(frozen=True, slots=True)
class FilterContext:
    """What the filters read: the binding (with its placement) and the affinity term being tried."""

    binding: ResourceBinding
    placement: Placement
    affinity_name: str = ""


def active_term(ctx: FilterContext) -> ClusterAffinityTerm | None:
    """The ``clusterAffinities`` term in use, when ``clusterAffinity`` is not set."""
    if ctx.placement.cluster_affinity is not None:
        return None
    return ctx.placement.term(ctx.affinity_name)


def overflow_tiers(ctx: FilterContext, clusters: Sequence[Cluster]) -> dict[str, int] | None:
    """Each cluster's tier (0 = primary group) when the active term has overflow affinities.

    A cluster in several tiers belongs to the first; ``None`` when overflow is not in use.
    """
    term = active_term(ctx)
    if term is None or not term.has_overflow:
        return None
    tiers: dict[str, int] = {}
    for cluster in clusters:
        for index, affinity in enumerate(term.tiers):
            if cluster_matches(cluster, affinity):
                tiers[cluster.name] = index
                break
    return tiers


class FilterPlugin(Protocol):
    """A filter: ``None`` when the cluster fits, else the reason it does not."""

    name: ClassVar[str]

    def filter(self, ctx: FilterContext, cluster: Cluster) -> str | None:
        """Check one cluster."""
        ...


class APIEnablement:
    """Upstream ``APIEnablement``: the cluster serves the workload's API."""

    name: ClassVar[str] = "APIEnablement"
    REASON: ClassVar[str] = "cluster(s) did not have the API resource"

    def filter(self, ctx: FilterContext, cluster: Cluster) -> str | None:
        """Clusters in the current result always pass; others must list the API."""
        if ctx.binding.target_contains(cluster.name):
            return None
        resource = ctx.binding.resource
        return None if cluster.serves(resource.api_version, resource.kind) else self.REASON


class TaintToleration:
    """Upstream ``TaintToleration``: NoSchedule/NoExecute taints need a toleration."""

    name: ClassVar[str] = "TaintToleration"

    def filter(self, ctx: FilterContext, cluster: Cluster) -> str | None:
        """Skip clusters already scheduled to; otherwise report the first untolerated taint."""
        if ctx.binding.target_contains(cluster.name):
            return None
        charge(len(cluster.taints) * len(ctx.placement.tolerations), "checking taints against tolerations")
        taint = find_untolerated_taint(cluster.taints, ctx.placement.tolerations, _FILTER_EFFECTS)
        return None if taint is None else f"cluster(s) had untolerated taint {{{taint}}}"


class ClusterAffinityFilter:
    """Upstream ``ClusterAffinity`` filter (its score is always 0, see :mod:`.scoring`)."""

    name: ClassVar[str] = "ClusterAffinity"
    REASON: ClassVar[str] = "cluster(s) did not match the placement cluster affinity constraint"

    def filter(self, ctx: FilterContext, cluster: Cluster) -> str | None:
        """Match ``clusterAffinity`` or the active term (any of its tiers); no affinity matches all."""
        if ctx.placement.cluster_affinity is not None:
            groups: Sequence[ClusterAffinity] = (ctx.placement.cluster_affinity,)
        else:
            term = ctx.placement.term(ctx.affinity_name)
            if term is None:
                return None
            # Overflow tiers hold compute capacity: only workloads overflow into them.
            groups = term.tiers if ctx.binding.is_workload else (term.affinity,)
        return None if any(cluster_matches(cluster, g) for g in groups) else self.REASON


class SpreadConstraintFilter:
    """Upstream ``SpreadConstraint`` filter: the fields spread on must be set on the cluster."""

    name: ClassVar[str] = "SpreadConstraint"

    def filter(self, ctx: FilterContext, cluster: Cluster) -> str | None:
        """The first constraint whose field the cluster lacks gives the reason."""
        for constraint in ctx.placement.spread_constraints:
            by = constraint.spread_by_field
            if by == SPREAD_BY_PROVIDER and not cluster.provider:
                return "cluster(s) did not have provider property"
            if by == SPREAD_BY_REGION and not cluster.region:
                return "cluster(s) did not have region property"
            if by == SPREAD_BY_ZONE and not cluster.zones:
                return "cluster(s) did not have zones property"
        return None


class ClusterEviction:
    """Upstream ``ClusterEviction``: a cluster being evicted from takes no new replicas."""

    name: ClassVar[str] = "ClusterEviction"
    REASON: ClassVar[str] = "cluster(s) is in the process of eviction"

    def filter(self, ctx: FilterContext, cluster: Cluster) -> str | None:
        """Reject the source cluster of any graceful eviction task."""
        if ctx.binding.evicting_from(cluster.name):
            return self.REASON
        return None


#: Every in-tree filter, in the order of upstream's registry listing.
FILTER_PLUGINS: Final[tuple[FilterPlugin, ...]] = (
    APIEnablement(),
    TaintToleration(),
    ClusterAffinityFilter(),
    SpreadConstraintFilter(),
    ClusterEviction(),
)


def run_filters(ctx: FilterContext, clusters: Sequence[Cluster],
                plugins: Sequence[FilterPlugin] = FILTER_PLUGINS) -> tuple[list[Cluster], dict[str, list[str]]]:
    """Feasible clusters (input order) and, for the others, every reason given.

    Clusters being deleted are skipped silently, as upstream's ``findClustersThatFit`` does; they do
    not appear among the reasons either.
    """
    feasible: list[Cluster] = []
    reasons: dict[str, list[str]] = {}
    for cluster in clusters:
        if cluster.deleting:
            continue
        charge(2 * len(plugins), "filtering clusters")
        found = [reason for plugin in plugins if (reason := plugin.filter(ctx, cluster)) is not None]
        if found:
            reasons[cluster.name] = found
        else:
            feasible.append(cluster)
    return feasible, reasons


def reason_counts(reasons: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """How many clusters each first reason rejected (the histogram of upstream's ``FitError``)."""
    counts: dict[str, int] = {}
    for found in reasons.values():
        if found:
            counts[found[0]] = counts.get(found[0], 0) + 1
    return counts
