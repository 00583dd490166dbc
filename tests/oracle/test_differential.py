"""Differential test: the engine against upstream's plugins, for each supported release (k8s.io/kubernetes
v1.36.3 and v1.37.2; ``ORACLE_VERSIONS`` narrows it, e.g. "1.37").

For each release, generates ``ORACLE_SCENARIOS`` scenarios (default 200) from seed ``ORACLE_SEED``
(default 0), plus ``ORACLE_PROFILE_SCENARIOS`` (default 100) that each come with a
random profile, ``ORACLE_DRA_SCORING_SCENARIOS`` (default 60) whose pod requests a
DRA-backed extended resource under a profile that scores it, and ``ORACLE_PRIORITY_SCENARIOS`` (default
100) whose pods have priorities and budgets, runs them through that release's Go oracle (one process) and
through ``extender.engine.explain.explain_objects`` following that release, and compares every plugin
the engine's profile enables: per node the filter verdict (Skip counts as Success)
and reasons, feasibility, each score plugin's raw, normalized and weighted score,
and the total. ``ORACLE_GATE_SCENARIOS`` (default 40) more run each release with the alpha gates that change a
default-profile plugin turned on (``GATE_RUNS``). ``ORACLE_FEATURES`` restricts the scenarios (see
``scenarios.Features``). Without Go the tests skip, except under CI=true, where
they fail.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from itertools import count, islice
from pathlib import Path
from typing import Any

import pytest
from oracle_harness import (
    OracleUnavailable,
    build_oracle,
    differential,
    env_int,
    scenario_features,
    versions_to_test,
)
from scenarios import dra_scoring_profile, generate, generate_profile, has_priorities, requests_dra_backed_resource

pytestmark = pytest.mark.oracle
MAX_SHOWN = 5


def _unavailable(why: str) -> None:
    """Skip, or fail under CI=true: CI must never silently skip the differential test."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"differential oracle unavailable under CI: {why}", pytrace=False)
    pytest.skip(f"differential oracle unavailable: {why}")


def _oracle_or_skip(version: str) -> Path | None:
    try:
        return build_oracle(version)
    except OracleUnavailable as err:
        _unavailable(str(err))
    return None


VERSIONS = versions_to_test()
# Alpha gates (off by default) that change a default-profile plugin or add one, turned on per release.
GATE_RUNS = {
    "1.36": {},
    "1.37": {"InPlacePodVerticalScalingSchedulerPreemption": True, "InterPodAffinityHostnameFastPath": True},
}


def test_generator_is_deterministic() -> None:
    """The same seed gives the same scenario; different seeds differ."""
    assert generate(11) == generate(11)
    assert generate(11) != generate(12)


def _run(version: str, with_profiles: bool, dra_scoring: bool = False, gates: dict[str, bool] | None = None,
         priorities: bool = False) -> None:
    _oracle_or_skip(version)
    try:
        import extender.engine.explain  # noqa: F401
    except ImportError as exc:
        _unavailable(f"the engine's explain_objects cannot be imported: {exc}")
    spec = os.environ.get("ORACLE_FEATURES")
    feats = scenario_features(spec, version=version)
    seeds: Iterable[int]
    profile_for: Callable[[int], Any] | None = generate_profile if with_profiles else None
    if priorities:
        # Scenarios whose pods have priorities and budgets: preemption's dry run has victims to weigh.
        base = env_int("ORACLE_SEED", 0) + 3_000_000
        wanted = env_int("ORACLE_PRIORITY_SCENARIOS", 100)
        seeds = list(islice((s for s in count(base) if has_priorities(generate(s, feats, version))), wanted))
    elif dra_scoring:
        # Scenarios whose pod requests a DRA-backed extended resource, scored by a profile that counts
        # them in devices (too rare among random profiles to cover it well).
        base = env_int("ORACLE_SEED", 0) + 2_000_000
        wanted = env_int("ORACLE_DRA_SCORING_SCENARIOS", 60)
        seeds = list(islice((s for s in count(base) if requests_dra_backed_resource(generate(s, feats, version))),
                            wanted))
        profile_for = dra_scoring_profile
    elif gates:
        size, base = env_int("ORACLE_GATE_SCENARIOS", 40), env_int("ORACLE_SEED", 0) + 3_000_000
        seeds = range(base, base + size)
    elif with_profiles:
        size, base = env_int("ORACLE_PROFILE_SCENARIOS", 100), env_int("ORACLE_SEED", 0) + 1_000_000
        seeds = range(base, base + size)
    else:
        size, base = env_int("ORACLE_SCENARIOS", 200), env_int("ORACLE_SEED", 0)
        seeds = range(base, base + size)
    stats = differential(seeds, lambda s: generate(s, feats, version), profile_for=profile_for, version=version,
                         feature_gates=gates)

    problems: list[str] = []
    for seed, message in stats.oracle_errors[:MAX_SHOWN]:
        problems.append(f"oracle error on seed {seed} (generator/oracle bug): {message}")
    shown = 0
    for seed, mismatches in sorted(stats.failed_seeds.items()):
        if shown >= MAX_SHOWN:
            break
        shown += 1
        feat_env = f"ORACLE_FEATURES={spec!r} " if spec else ""
        flag = (" --dra-scoring" if dra_scoring else " --priorities" if priorities
                else " --profiles" if with_profiles else "")
        flag += f" --version {version}"
        if gates:
            flag += " --feature-gates " + ",".join(f"{k}={str(v).lower()}" for k, v in gates.items())
        problems.append(
            f"{mismatches[0]}  ({len(mismatches)} mismatches in this scenario)\n"
            f"    reproduce: {feat_env}python tests/oracle/run_many.py --seed {seed} --count 1 -v{flag}"
        )
    if problems:
        more = len(stats.failed_seeds) - shown
        summary = "\n".join(problems) + (f"\n... and {more} more failing seeds" if more > 0 else "")
        pytest.fail(f"engine disagrees with upstream:\n{summary}\n\n{stats.table()}", pytrace=False)


@pytest.mark.parametrize("version", VERSIONS)
def test_engine_matches_upstream(version: str) -> None:
    """Every compared plugin agrees with upstream on every generated scenario (default profile)."""
    _run(version, with_profiles=False)


@pytest.mark.parametrize("version", VERSIONS)
def test_engine_matches_upstream_with_plugin_args(version: str) -> None:
    """The same with a random profile per scenario: score weights and plugin args (scoring
    strategies, ignored resources, hardPodAffinityWeight, spreading defaults, addedAffinity)."""
    _run(version, with_profiles=True)


@pytest.mark.parametrize("version", VERSIONS)
def test_dra_backed_extended_resources_score_as_upstream(version: str) -> None:
    """NodeResourcesFit's strategies and BalancedAllocation count DRA-backed extended resources in
    devices where a node has no allocatable of them, as upstream does."""
    _run(version, with_profiles=True, dra_scoring=True)


@pytest.mark.parametrize("version", [v for v in VERSIONS if GATE_RUNS[v]])
def test_engine_matches_upstream_with_alpha_gates(version: str) -> None:
    """With the release's alpha gates that change a default-profile plugin turned on (kube-scheduler's
    --feature-gates, the engine's featureGates), the default profile still agrees."""
    _run(version, with_profiles=False, gates=GATE_RUNS[version])


@pytest.mark.parametrize("version", VERSIONS)
def test_preemption_and_the_whole_message_as_upstream(version: str) -> None:
    """Scenarios with priorities and PodDisruptionBudgets: the release's kube-scheduler's own cycle,
    DefaultPreemption's dry run included (victims, the node nominated, why preemption does not help), gives
    explain's PodScheduled message, nomination and victims."""
    _run(version, with_profiles=False, priorities=True)
