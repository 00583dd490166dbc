"""Score plugins: ClusterLocality (100 for a cluster already running the workload) and ClusterAffinity (0).

Upstream: ``pkg/scheduler/framework/plugins/clusterlocality/cluster_locality.go`` and
``clusteraffinity/cluster_affinity.go``; ``framework/runtime/framework.go`` sums plugin scores with
weight 1 (no weights are configured), so a cluster's total is 0 or 100.  ``MaxClusterScore`` is 100.

ClusterLocality gives 100 to every cluster listed in ``spec.clusters``, even one listed with 0 replicas.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final, Protocol

from extender.multicluster.model import Cluster, ResourceBinding

__all__ = ["MAX_CLUSTER_SCORE", "MIN_CLUSTER_SCORE", "SCORE_PLUGINS", "ClusterAffinityScore", "ClusterLocality",
           "ScorePlugin", "score_clusters"]

MAX_CLUSTER_SCORE: Final = 100
MIN_CLUSTER_SCORE: Final = 0


class ScorePlugin(Protocol):
    """A score plugin: 0..100 for one cluster."""

    name: ClassVar[str]

    def score(self, binding: ResourceBinding, cluster: Cluster) -> int:
        """Score one cluster."""
        ...


class ClusterLocality:
    """Favours clusters that already run the workload, so rescheduling moves as little as possible."""

    name: ClassVar[str] = "ClusterLocality"

    def score(self, binding: ResourceBinding, cluster: Cluster) -> int:
        """100 for a cluster listed in ``spec.clusters`` (whatever its replicas), else 0."""
        return MAX_CLUSTER_SCORE if binding.target_contains(cluster.name) else MIN_CLUSTER_SCORE


class ClusterAffinityScore:
    """The ClusterAffinity plugin's score extension point: always the minimum."""

    name: ClassVar[str] = "ClusterAffinity"

    def score(self, binding: ResourceBinding, cluster: Cluster) -> int:
        """Always 0."""
        return MIN_CLUSTER_SCORE


SCORE_PLUGINS: Final[tuple[ScorePlugin, ...]] = (ClusterAffinityScore(), ClusterLocality())


def score_clusters(binding: ResourceBinding, clusters: Sequence[Cluster],
                   plugins: Sequence[ScorePlugin] = SCORE_PLUGINS) -> dict[str, int]:
    """Each cluster's total score (the sum over plugins, weight 1)."""
    return {c.name: sum(p.score(binding, c) for p in plugins) for c in clusters}
