"""Differential test: multi-cluster placement against Karmada v1.18.2's own scheduler.

Generates ``KARMADA_ORACLE_CASES`` cases (default 2000) from seed ``KARMADA_ORACLE_SEED`` (default 0),
runs them through the Go oracle (one process) and through the library; every
``KARMADA_ORACLE_EVERY``-th case (default 10) also through ``extender place``'s command and
``POST /multicluster/schedule``, and every 20th of those through a real ``extender place`` process.
Target clusters, replicas, error texts, the affinity term used and every filtered cluster's reasons
must agree.  Without Go the tests skip, except under CI=true, where they fail.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from karmada_cases import CATEGORIES, generate
from karmada_harness import OracleUnavailable, normalize, oracle_path, ours_library, run_cases, run_oracle

pytestmark = pytest.mark.karmada_oracle
MAX_SHOWN = 5


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    return int(raw) if raw.strip() else default


def _oracle() -> Path:
    """The oracle binary; skip, or fail under CI=true: CI must never silently skip this test."""
    try:
        return oracle_path()
    except OracleUnavailable as err:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"Karmada oracle unavailable under CI: {err}", pytrace=False)
        pytest.skip(f"Karmada oracle unavailable: {err}")


def test_generator_is_deterministic_and_covers_every_category() -> None:
    assert generate(11) == generate(11)
    assert generate(11) != generate(12)
    assert {generate(s)["category"] for s in range(len(CATEGORIES))} == set(CATEGORIES)


def test_library_cli_http_and_process_agree_with_karmada() -> None:
    binary = _oracle()
    count, seed = _env_int("KARMADA_ORACLE_CASES", 2000), _env_int("KARMADA_ORACLE_SEED", 0)
    every = _env_int("KARMADA_ORACLE_EVERY", 10)
    outcomes = run_cases(binary, range(seed, seed + count), interfaces=("library", "cli", "http", "process"),
                         every=every)
    bad = [o for o in outcomes if not o.agree]
    shown = "\n".join(f"seed {o.seed} [{o.category}/{o.interface}]: " + "; ".join(o.diffs) for o in bad[:MAX_SHOWN])
    failing = sorted({o.seed for o in bad})
    assert not bad, (f"{len(bad)} of {len(outcomes)} comparisons disagree with Karmada v1.18.2 "
                     f"(seeds {failing[:50]}); rerun one with "
                     f"`python tests/karmada/run_many.py --seed N --count 1 -v`\n{shown}")
    assert sum(o.interface == "library" for o in outcomes) == count


def _case(clusters: list[dict[str, Any]], placement: dict[str, Any], replicas: int,
          current: tuple[tuple[str, int], ...] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default",
                                         "name": "app"},
                            "replicas": replicas, "replicaRequirements": {"resourceRequest": {}},
                            "clusters": [{"name": n, "replicas": r} for n, r in current]}
    return {"clusters": clusters, "placement": placement,
            "binding": {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
                        "metadata": {"name": "app", "namespace": "default"}, "spec": spec,
                        "status": {"lastScheduledTime": "2026-01-01T00:00:00Z"} if current else {}}}


def _pods_cluster(name: str, pods: int, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": name},
            "spec": spec, "status": {
                "apiEnablements": [{"groupVersion": "apps/v1", "resources": [{"name": "deployments",
                                                                               "kind": "Deployment"}]}],
                "resourceSummary": {"allocatable": {"pods": str(pods)}}}}


DYNAMIC = {"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted",
           "weightPreference": {"dynamicWeight": "AvailableReplicas"}}


def test_oracle_answers_upstreams_own_table() -> None:
    """The oracle reproduces rows of v1.18.2's assignment_test.go and a not-ready taint with no toleration."""
    binary = _oracle()
    scale_up = _case([_pods_cluster(f"member{i}", 10) for i in (1, 2, 3)], {"replicaScheduling": DYNAMIC}, 24,
                     (("member1", 2), ("member2", 4), ("member3", 6)))
    not_ready = _case([_pods_cluster("member1", 10, taints=[{"key": "cluster.karmada.io/not-ready",
                                                              "effect": "NoExecute"}])],
                      {"replicaScheduling": DYNAMIC}, 1)
    answers = run_oracle(binary, [scale_up, not_ready])
    assert sorted((t["name"], t["replicas"]) for t in answers[0]["clusters"]) == [
        ("member1", 6), ("member2", 8), ("member3", 10)]
    assert answers[1]["error"] == ("0/1 clusters are available: 1 cluster(s) had untolerated taint "
                                   "{cluster.karmada.io/not-ready:NoExecute}.")
    for case, answer in zip((scale_up, not_ready), answers, strict=True):
        assert normalize(ours_library(case)) == normalize(answer)
