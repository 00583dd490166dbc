"""A whole plan: build the context once, check every variant, simulate them all, then search.

:func:`build_context` turns a plan and a base cluster into the :class:`PlanContext` workers receive (the
workload expanded, the scheduler profile chosen); :func:`check_plan` finds every error before any worker
starts; :func:`run_plan` runs the variants in one batch on an engine, then the smallest-count searches in
rounds (:mod:`.search`), and adds the multi-cluster placements (:mod:`.multicluster`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extender.cluster.dump import DumpError, load_yaml_file
from extender.plan.base import BaseCluster
from extender.plan.engines import Engine
from extender.plan.evaluate import PlanContext, ReleaseSettings, Task, check_variant
from extender.plan.multicluster import MultiClusterResult, run_multicluster
from extender.plan.planfile import Plan, PlanError
from extender.plan.results import VariantResult
from extender.plan.search import SearchResult, smallest_counts
from extender.plan.variants import BaseIndex
from extender.plan.workload import expand_workload


@dataclass
class PlanResult:
    """Every variant's result (in plan order), the searches, and how the run went."""

    variants: list[VariantResult] = field(default_factory=list)
    searches: list[SearchResult] = field(default_factory=list)
    multicluster: list[MultiClusterResult] = field(default_factory=list)
    engine: str = ""
    workers: int = 0
    simulations: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # the workers' CPU for every simulation
    base: str = ""
    base_nodes: int = 0
    workload_pods: int = 0

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        return {
            "base": {"source": self.base, "nodes": self.base_nodes}, "workloadPods": self.workload_pods,
            "variants": [v.as_dict() for v in self.variants],
            "searches": [s.as_dict() for s in self.searches],
            "multicluster": [m.as_dict() for m in self.multicluster],
            "run": {"engine": self.engine, "workers": self.workers, "simulations": self.simulations,
                    "seconds": round(self.seconds, 3), "cpuSeconds": round(self.cpu_seconds, 3)},
        }


def scheduler_profile(config: str | None, name: str | None
                      ) -> tuple[dict[str, Any], tuple[str, ...], str | None, ReleaseSettings]:
    """The chosen profile of a configuration file in KubeSchedulerConfiguration shape, with the file's
    imports, folder, kubernetesVersion and feature gates (no file: upstream's default profile, auto)."""
    from extender.config import ConfigError, load_config

    try:
        # Validates the file (imports, every profile, version and gates) with the service's own messages.
        loaded = load_config(config)
    except (ConfigError, ValueError) as err:
        raise PlanError(f"config: {err}") from err
    settings = ReleaseSettings(loaded.kubernetes_version, dict(loaded.feature_gates))
    if config is None:
        if name not in (None, "default-scheduler"):
            raise PlanError(f"profile: no profile named {name!r} without a config file; "
                            "profiles: ['default-scheduler']")
        return {}, (), None, settings
    try:
        doc = load_yaml_file(Path(config))
    except DumpError as err:
        raise PlanError(f"config: {err}") from err
    doc = doc if isinstance(doc, Mapping) else {}
    specs = doc.get("profiles") or [{}]
    names = [str(s.get("schedulerName", "default-scheduler")) for s in specs]
    chosen = names[0] if name is None else name
    if chosen not in names:
        raise PlanError(f"profile: no profile named {chosen!r} in {config}; profiles: {names}")
    return dict(specs[names.index(chosen)]), tuple(doc.get("imports") or ()), str(Path(config).parent), settings


def build_context(plan: Plan, base: BaseCluster) -> PlanContext:
    """The context every worker receives (the workload expanded against the base cluster's objects)."""
    profile, imports, imports_base, settings = scheduler_profile(plan.config, plan.profile)
    workload = expand_workload(plan.workload, base.objects)
    return PlanContext(base, plan, workload, profile, imports, imports_base, settings)


def check_plan(context: PlanContext) -> None:
    """Every variant (and every search's largest step) checked against the base cluster: PlanError if any
    cannot run, before any worker starts."""
    index = BaseIndex.of(context.base.objects)
    for variant in context.plan.variants:
        check_variant(context, index, variant)
    search = context.plan.search
    if search is not None:
        for variant in context.plan.variants:
            if not search.variants or variant.name in search.variants:
                check_variant(context, index, variant.with_nodes(search.pool, search.max))


def run_plan(context: PlanContext, engine: Engine, *, keep_placements: bool = False,
             progress: Callable[[int], None] | None = None) -> PlanResult:
    """Run every variant and search of the plan on a started engine."""
    started = time.perf_counter()
    plan = context.plan
    result = PlanResult(engine=engine.name, workers=engine.workers, base=context.base.source,
                        base_nodes=len(context.base.nodes()), workload_pods=len(context.workload.pods))
    count = 0

    def run(tasks: Sequence[Task]) -> list[VariantResult]:
        nonlocal count
        count += len(tasks)
        results = engine.run(tasks, progress)
        result.cpu_seconds += sum(r.cpu_seconds for r in results)
        return results

    if context.workload.pods:
        result.variants = run([Task(v, keep_placements) for v in plan.variants])
    search = plan.search
    if search is not None and result.variants:
        chosen = [(v, r) for v, r in zip(plan.variants, result.variants, strict=True)
                  if not search.variants or v.name in search.variants]
        result.searches = smallest_counts([v for v, _ in chosen], [r for _, r in chosen], search.pool, search.max,
                                          search.points_per_round, run, keep_placements)
    if plan.multicluster is not None:
        result.multicluster = run_multicluster(plan.multicluster, plan.variants)
    result.simulations = count
    result.seconds = time.perf_counter() - started
    return result
