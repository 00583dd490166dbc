"""Multi-cluster placement in the Karmada model: where a workload's replicas go across member clusters.

Given Karmada's own objects (``Cluster``, ``PropagationPolicy`` placement, ``ResourceBinding``), the
pipeline answers what karmada-scheduler would write into ``ResourceBinding.spec.clusters``:

snapshot -> filter (:mod:`.filters`) -> score (:mod:`.scoring`) -> select groups (:mod:`.spread`)
-> assign replicas (:mod:`.division`, capacity from :mod:`.estimator`), driven by :mod:`.scheduler`.

Objects are parsed once into records by :mod:`.model` (errors name the field); :mod:`.dump` reads them
from files, :mod:`.cli` adds ``extender place`` and :mod:`.routes` serves ``POST /multicluster/schedule``.

Upstream is karmada-io/karmada ``pkg/scheduler`` (see ``README`` of ``config/multicluster`` and each
module's docstring for the files and versions followed).
"""

from __future__ import annotations

from extender.multicluster.model import (
    Cluster,
    ModelError,
    Placement,
    ResourceBinding,
    TargetCluster,
    parse_binding,
    parse_cluster,
    parse_placement_source,
)
from extender.multicluster.scheduler import PlacementResult, schedule

__all__ = [
    "Cluster",
    "ModelError",
    "Placement",
    "PlacementResult",
    "ResourceBinding",
    "TargetCluster",
    "parse_binding",
    "parse_cluster",
    "parse_placement_source",
    "schedule",
]
