"""The scheduling pipeline: snapshot -> filter -> score -> select -> assign, as karmada-scheduler runs it.

Upstream: ``pkg/scheduler/core/generic_scheduler.go`` (``Schedule``), ``common.go`` (``SelectClusters``,
``AssignReplicas``) and ``pkg/scheduler/scheduler.go`` (``scheduleResourceBindingWithClusterAffinities``).

* With ``clusterAffinities`` the terms are tried in order from the one named in
  ``status.schedulerObservingAffinityName`` (the first term when that name is empty or unknown); the first
  term that schedules wins and becomes the observed name; when none does, the first term's error is
  the answer.
* No feasible cluster gives upstream's ``FitError``: ``0/N clusters are available: 2 cluster(s) ...``
  (reasons counted and sorted; N counts every cluster of the snapshot, deleting ones included).
* Select and assign errors are upstream's, word for word (``failed to select clusters: ...``,
  ``failed to assign replicas: failed to scale up: Clusters available replicas 7 are not enough to
  schedule.``); what each cluster can hold is in ``available`` (and ``extender place``'s table).

The answer carries the target clusters in upstream's order (candidates order for Duplicated and
non-workloads, names for divided replicas), every filtered cluster with its reasons, each candidate's
score, available replicas and tier for explaining, and the error (empty on success).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from extender.multicluster.division import AssignError, UnschedulableError, assign_replicas
from extender.multicluster.estimator import cal_available_replicas
from extender.multicluster.filters import FilterContext, overflow_tiers, reason_counts, run_filters
from extender.multicluster.model import Cluster, Placement, ResourceBinding, TargetCluster
from extender.multicluster.scoring import score_clusters
from extender.multicluster.spread import SelectError, group_clusters, select_best_clusters

__all__ = ["PlacementResult", "fit_error", "schedule"]

Calculator = Callable[[Sequence[Cluster], ResourceBinding], list[TargetCluster]]


@dataclass(slots=True)
class PlacementResult:
    """Where the replicas go, why the other clusters were left out, and the error if any."""

    clusters: list[TargetCluster] = field(default_factory=list)
    filtered: dict[str, list[str]] = field(default_factory=dict)
    error: str = ""
    #: The ``clusterAffinities`` term used ("" without clusterAffinities).
    affinity_name: str = ""
    scores: dict[str, int] = field(default_factory=dict)
    available: dict[str, int] = field(default_factory=dict)
    selected: list[str] = field(default_factory=list)
    tiers: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the workload was scheduled."""
        return not self.error

    def as_dict(self) -> dict[str, Any]:
        """The wire answer: ``{"clusters": [{"name", "replicas"}], "filtered": {...}, "error": ""}``."""
        return {
            "clusters": [{"name": t.name, "replicas": t.replicas} for t in self.clusters],
            "filtered": {name: list(reasons) for name, reasons in sorted(self.filtered.items())},
            "error": self.error,
        }


def fit_error(total: int, reasons: Mapping[str, Sequence[str]]) -> str:
    """Upstream ``FitError.Error()``: the count of clusters and a sorted histogram of reasons."""
    counts = reason_counts(reasons)
    if total == 0 or not counts:
        return f"0/{total} clusters are available: no cluster exists."
    histogram = sorted(f"{count} {reason}" for reason, count in counts.items())
    return f"0/{total} clusters are available: {', '.join(histogram)}."


def _schedule_once(clusters: Sequence[Cluster], binding: ResourceBinding, placement: Placement,
                   affinity_name: str, calculator: Calculator) -> PlacementResult:
    result = PlacementResult(affinity_name=affinity_name)
    ctx = FilterContext(binding, placement, affinity_name)
    feasible, result.filtered = run_filters(ctx, clusters)
    if not feasible:
        result.error = fit_error(len(clusters), result.filtered)
        return result
    result.scores = score_clusters(binding, feasible)
    tiers = overflow_tiers(ctx, feasible)
    info = group_clusters(result.scores, feasible, binding, placement, calculator, tiers)
    result.available = {d.name: d.available for d in info.clusters}
    result.tiers = dict(tiers or {})
    try:
        candidates = select_best_clusters(placement, info, binding.replicas)
    except SelectError as err:
        result.error = f"failed to select clusters: {err}"
        return result
    result.selected = [c.name for c in candidates]
    try:
        result.clusters = assign_replicas(candidates, binding, placement, calculator,
                                          tiers={c.name: tiers[c.name] for c in candidates} if tiers else None)
    except (UnschedulableError, AssignError) as err:
        result.error = f"failed to assign replicas: {err}"
    return result


def schedule(clusters: Sequence[Cluster], binding: ResourceBinding, placement: Placement | None = None, *,
             calculator: Calculator | None = None) -> PlacementResult:
    """Schedule ``binding`` onto ``clusters``: what karmada-scheduler would write to ``spec.clusters``.

    ``placement`` (a PropagationPolicy's) replaces the binding's own ``spec.placement`` when given;
    ``calculator`` replaces the general estimator (tests use it to fix available replicas).
    """
    placement = placement if placement is not None else binding.placement
    if placement is None:
        return PlacementResult(error="spec.placement: the binding has no placement and no policy was given")
    binding = replace(binding, placement=placement)
    calc = calculator if calculator is not None else cal_available_replicas
    # Upstream keeps clusters in its informer's (random) order; names give a reproducible one.
    snapshot = sorted(clusters, key=lambda c: c.name)
    if not placement.has_cluster_affinities:
        return _schedule_once(snapshot, binding, placement, "", calc)
    if not placement.cluster_affinities:
        # An empty clusterAffinities list: upstream's loop tries no term, reports no error and
        # writes nothing, so the binding keeps its clusters.
        return PlacementResult(clusters=list(binding.clusters))
    names = [term.name for term in placement.cluster_affinities]
    start = names.index(binding.observed_affinity_name) if binding.observed_affinity_name in names else 0
    first: PlacementResult | None = None
    for name in names[start:]:
        result = _schedule_once(snapshot, binding, placement, name, calc)
        if result.ok:
            return result
        if first is None:
            first = result
    assert first is not None
    return first
