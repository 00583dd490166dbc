"""One variant, simulated: the work every engine's workers do.

A worker is given the :class:`PlanContext` once (the base cluster, the expanded workload, the plan's
settings and the scheduler profile) and builds the base cache from it once per kube-scheduler release
(:class:`BaseCaches`, :func:`install`). Each :class:`Task` then names a variant: the worker chooses the
variant's release (:func:`variant_release`), copies the base cache of that release, applies the variant's
changes, builds a fresh framework for the variant's profile and release (plugins keep per-cluster indexes,
so no framework is shared between variants) and runs :class:`extender.engine.simulate.Simulator` over the
displaced pods and the workload with the plan's seed: the same code, the same inputs and the same order as
``extender simulate`` on that variant, so the same placements.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extender.cluster.cache import ClusterCache
from extender.engine.profile import ProfileError, build_profile
from extender.engine.registry import RegistryError, import_plugin_module
from extender.engine.runtime import Framework
from extender.engine.simulate import Simulator
from extender.kube.gates import GateError
from extender.kube.release import Release, VersionError, parse_setting, release
from extender.plan.base import BaseCluster
from extender.plan.planfile import Plan, PlanError, Variant
from extender.plan.results import VariantResult, summarize
from extender.plan.variants import BaseIndex, Changes, apply_changes, changes_of, profile_spec
from extender.plan.workload import Workload


@dataclass(frozen=True)
class ReleaseSettings:
    """The plan's configuration file's ``kubernetesVersion`` (None: auto) and ``featureGates``."""

    kubernetes_version: int | None = None
    feature_gates: Mapping[str, bool] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class PlanContext:
    """What every worker needs, shipped once per worker."""

    base: BaseCluster
    plan: Plan
    workload: Workload
    profile: Mapping[str, Any]  # the plan's profile, in KubeSchedulerConfiguration shape
    imports: tuple[str, ...] = ()
    imports_base: str | None = None
    settings: ReleaseSettings = field(default_factory=ReleaseSettings)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass(frozen=True)
class Task:
    """One simulation to run: a variant, and whether to keep every pod's placement."""

    variant: Variant
    keep_placements: bool = False


class BaseCaches:
    """The base cluster as a cache per kube-scheduler release, each built (and snapshotted) once when a variant
    first needs it: what a cache computes itself (a resized pod's requests, device taints) follows its release."""

    def __init__(self, base: BaseCluster) -> None:
        self.base = base
        self._caches: dict[tuple[int, tuple[tuple[str, bool], ...]], ClusterCache] = {}

    def of(self, chosen: Release) -> ClusterCache:
        """The base cache following ``chosen`` (its minor and feature gates)."""
        key = (chosen.minor, tuple(sorted(chosen.gates.overrides.items())))
        cache = self._caches.get(key)
        if cache is None:
            cache = self._caches[key] = self.base.cache(chosen)
            cache.snapshot()
        return cache


@dataclass
class _Installed:
    context: PlanContext
    caches: BaseCaches
    index: BaseIndex


_installed: _Installed | None = None


def install(context: PlanContext) -> None:
    """Make ``context`` this process's plan (built once; installing the same context again does nothing)."""
    global _installed
    if _installed is not None and _installed.context.token == context.token:
        return
    for module in context.imports:
        import_plugin_module(module, None if context.imports_base is None else Path(context.imports_base))
    caches = BaseCaches(context.base)
    caches.of(plan_release(context))  # the release most variants follow, built before the first task
    _installed = _Installed(context, caches, BaseIndex.of(context.base.objects))


def installed_token() -> str | None:
    """The token of the context this process holds (None before install)."""
    return None if _installed is None else _installed.context.token


def plan_release(context: PlanContext) -> Release:
    """The release of a variant that names none (see :func:`variant_release`)."""
    return variant_release(context, Variant(""))


def variant_release(context: PlanContext, variant: Variant) -> Release:
    """The kube-scheduler release a variant runs on, with the configuration file's feature gates: the variant's
    kubernetesVersion, else the plan's, else the configuration file's, else auto: the base cluster's version
    (the apiserver's /version, or what the dump records), else the newest supported release.

    Raises PlanError naming the variant when the version or a gate cannot be used."""
    wanted = variant.kubernetes_version or context.plan.kubernetes_version
    try:
        setting = context.settings.kubernetes_version if wanted is None else parse_setting(wanted)
        choice = context.base.version_choice(setting)
        return release(choice.minor, dict(context.settings.feature_gates), choice)
    except (VersionError, GateError) as err:
        where = f"variant {variant.name!r}: " if variant.name else ""
        raise PlanError(f"{where}{err}") from err


def kubernetes_version(context: PlanContext, variant: Variant) -> str:
    """The minor a variant runs on, "1.37"."""
    return variant_release(context, variant).name


def check_variant(context: PlanContext, index: BaseIndex, variant: Variant) -> Changes:
    """A variant's changes, after checking it can run (PlanError naming the variant otherwise)."""
    where = f"variant {variant.name!r}"
    chosen = variant_release(context, variant)
    spec = profile_spec(context.profile, variant, where)
    try:
        profile = build_profile(spec, path=f"{where}: profile", release=chosen)
        if variant.weights:
            bare = build_profile(profile_spec(context.profile, Variant(variant.name, profile=variant.profile), where),
                                 release=chosen)
            scoring = {name for name, _ in bare.scores}
            unknown = [name for name, _ in variant.weights if name not in scoring]
            if unknown:
                raise PlanError(f"{where}: weights: {', '.join(unknown)} is not a score plugin of profile "
                                f"{bare.name!r} (score plugins: {', '.join(sorted(scoring))})")
        framework = Framework(profile)
        Simulator(framework, ClusterCache(release=chosen), percentage_of_nodes_to_score=_percentage(context, variant))
    except (ProfileError, RegistryError, ValueError) as err:
        if isinstance(err, PlanError):
            raise
        raise PlanError(f"{where}: {err}") from err
    return changes_of(context.plan, index, variant)


def _percentage(context: PlanContext, variant: Variant) -> int | None:
    if variant.percentage_of_nodes_to_score is not None:
        return variant.percentage_of_nodes_to_score
    return context.plan.percentage_of_nodes_to_score


def run_variant(context: PlanContext, bases: BaseCaches, index: BaseIndex, task: Task) -> VariantResult:
    """Simulate one variant on a copy of the context's base cache for the variant's release."""
    started = time.process_time()
    variant = task.variant
    chosen = variant_release(context, variant)
    changes = changes_of(context.plan, index, variant)
    cache = bases.of(chosen).copy()
    apply_changes(cache, changes, context.workload.objects)
    profile = build_profile(profile_spec(context.profile, variant, variant.name), release=chosen)
    percentage = _percentage(context, variant)
    simulator = Simulator(Framework(profile), cache, seed=context.plan.seed, percentage_of_nodes_to_score=percentage)
    simulation = simulator.run(pods_to_place(context.workload, changes))
    pool_prices = {name: context.plan.pools[pool].price_per_hour for name, pool in changes.pool_of.items()}
    result = summarize(variant.name, simulation, cache, zone_label=context.plan.zone_label, prices=context.plan.prices,
                     pool_prices=pool_prices, keep_placements=task.keep_placements,
                     added=dict(changes.added_by_pool), removed=len(changes.removed), cordoned=len(changes.cordoned),
                     displaced=len(changes.displaced), lost=len(changes.lost), profile=profile.name,
                     seed=context.plan.seed, percentage_of_nodes_to_score=percentage,
                     kubernetes_version=chosen.name)
    result.cpu_seconds = time.process_time() - started
    return result


def pods_to_place(workload: Workload, changes: Changes) -> list[Mapping[str, Any]]:
    """The pods a variant places, in order: those its lost nodes' controllers re-create, then the workload."""
    return [*changes.displaced, *workload.pods]


def evaluate(task: Task) -> VariantResult:
    """Run a task on this process's installed context."""
    if _installed is None:
        raise RuntimeError("no plan installed in this worker")
    return run_variant(_installed.context, _installed.caches, _installed.index, task)


def evaluate_all(tasks: Sequence[Task]) -> list[VariantResult]:
    """Run several tasks in order (a worker's batch)."""
    return [evaluate(task) for task in tasks]
