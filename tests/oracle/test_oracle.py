"""Sanity checks of the Go oracle itself, built for each supported release: hand-written scenarios (known upstream
answers), generated objects valid and stored-form, and the engine's feature gate tables equal to the release's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from oracle_harness import VERSIONS, OracleUnavailable, build_oracle, run_oracle, versions_to_test
from scenarios import generate_many

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module", params=versions_to_test())
def version(request: pytest.FixtureRequest) -> str:
    """The release the oracle is built from ("1.36", "1.37")."""
    return str(request.param)


@pytest.fixture(scope="module")
def oracle(version: str) -> Path:
    """The built oracle binary (skip without Go, fail under CI=true)."""
    try:
        return build_oracle(version)
    except OracleUnavailable as err:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"oracle unavailable under CI: {err}", pytrace=False)
        pytest.skip(f"oracle unavailable: {err}")


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", **spec: Any) -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": spec,
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def pod(name: str, cpu: str | None = None, memory: str | None = None, **spec: Any) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    container = {"name": "c", "image": "nginx", "resources": {"requests": requests} if requests else {}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": name},
        "spec": {"containers": [container], **spec},
    }


def run(binary: Path, *scenarios: dict[str, Any]) -> list[dict[str, Any]]:
    return list(run_oracle(binary, scenarios))


def test_taint_and_unschedulable(oracle: Path) -> None:
    taint = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    sc = {
        "id": "t",
        "objects": [node("a", taints=taint), node("b"), node("c", unschedulable=True)],
        "pod": pod("p", "500m", "512Mi"),
    }
    (res,) = run(oracle, sc)
    assert res["error"] is None
    a, b, c = (res["nodes"][n] for n in "abc")
    assert a["filters"]["TaintToleration"] == {
        "code": "UnschedulableAndUnresolvable",
        "reasons": ["node(s) had untolerated taint(s)"],
    }
    assert c["filters"]["NodeUnschedulable"]["reasons"] == ["node(s) were unschedulable"]
    assert not a["feasible"] and b["feasible"] and not c["feasible"]
    assert a["scores"] == {} and b["scores"]["TaintToleration"]["normalized"] == 100
    assert res["prefilter"]["InterPodAffinity"]["code"] == "Skip"
    assert b["filters"]["InterPodAffinity"]["code"] == "Skip"


def test_least_allocated_and_balanced(oracle: Path) -> None:
    existing = pod("e", "1", "1Gi", nodeName="n")
    sc = {"id": "s", "objects": [node("n"), existing], "pod": pod("p", "500m", "512Mi")}
    (res,) = run(oracle, sc)
    scores = res["nodes"]["n"]["scores"]
    # cpu (4000-1500)*100/4000 = 62, memory (8Gi-1.5Gi)*100/8Gi = 81 -> (62+81)/2 = 71
    assert scores["NodeResourcesFit"] == {"raw": 71, "normalized": 71, "weighted": 71}
    # v1.36: 50 + (50 + with pod - without pod)/2 = 50 + (50 + 90.6 - 93.75)/2 -> 73
    assert scores["NodeResourcesBalancedAllocation"]["raw"] == 73
    assert scores["NodeAffinity"]["skipped"] is True


def test_fit_exactly_and_reasons(oracle: Path) -> None:
    existing = pod("e", "1", "1Gi", nodeName="n")
    exact = {"id": "exact", "objects": [node("n"), existing], "pod": pod("p", "3", "7Gi")}
    over = {"id": "over", "objects": [node("n", pods="1"), existing], "pod": pod("p", "3001m", "9Gi")}
    r_exact, r_over = run(oracle, exact, over)
    assert r_exact["nodes"]["n"]["filters"]["NodeResourcesFit"]["code"] == "Success"
    fit = r_over["nodes"]["n"]["filters"]["NodeResourcesFit"]
    assert fit["code"] == "UnschedulableAndUnresolvable"  # memory exceeds allocatable
    assert sorted(fit["reasons"]) == ["Insufficient cpu", "Insufficient memory", "Too many pods"]


def test_restricted_profile_and_weights(oracle: Path) -> None:
    profile = {
        "schedulerName": "default-scheduler",
        "plugins": {
            "multiPoint": {
                "enabled": [{"name": "NodeResourcesFit", "weight": 5}, {"name": "TaintToleration"}],
                "disabled": [{"name": "*"}],
            },
            "score": {"disabled": [{"name": "TaintToleration"}]},
            "preScore": {"disabled": [{"name": "TaintToleration"}]},
        },
        "pluginConfig": [
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
        ],
    }
    sc = {"id": "r", "objects": [node("n")], "pod": pod("p", "1", "2Gi"), "profile": profile}
    (res,) = run(oracle, sc)
    n = res["nodes"]["n"]
    assert set(n["filters"]) == {"NodeResourcesFit", "TaintToleration"}
    assert set(n["scores"]) == {"NodeResourcesFit"}
    # MostAllocated: cpu 1000*100/4000 = 25, memory 2Gi*100/8Gi = 25
    assert n["scores"]["NodeResourcesFit"] == {"raw": 25, "normalized": 25, "weighted": 125}
    assert n["total"] == 125


def test_prefilter_rejection(oracle: Path) -> None:
    spec: dict[str, Any] = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["a"]},
                                {"key": "metadata.name", "operator": "In", "values": ["b"]},
                            ]
                        }
                    ]
                }
            }
        }
    }
    sc = {"id": "pf", "objects": [node("a"), node("b")], "pod": pod("p", **spec)}
    (res,) = run(oracle, sc)
    assert res["prefilter"]["NodeAffinity"]["code"] == "UnschedulableAndUnresolvable"
    assert res["nodes"]["a"] == {"filters": {}, "feasible": False, "scores": {}, "total": 0}


def test_bad_lines_do_not_stop_the_stream(oracle: Path) -> None:
    bad = {"id": "bad", "objects": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "x"}, "spec": {"x": 1}}]}
    good = {"id": "good", "objects": [node("n")], "pod": pod("p")}
    r_bad, r_good = run(oracle, {**bad, "pod": pod("p")}, good)
    assert r_bad["id"] == "bad" and "unknown field" in r_bad["error"]
    assert r_good["error"] is None and r_good["nodes"]["n"]["feasible"]


def test_generated_objects_are_valid_and_defaulted(oracle: Path, version: str) -> None:
    """The apiserver's create validation accepts every generated object, and its v1
    defaulting changes nothing: the generator emits objects as they would be stored."""
    seeds = int(os.environ.get("ORACLE_VALIDATE_SCENARIOS", "300"))
    problems = []
    for res in run_oracle(oracle, generate_many(0, seeds, version=version), "-validate"):
        problems += [f"{res['id']}: {p}" for p in [res["error"], *res["invalid"]] if p]
        problems += [f"{res['id']}: defaulting changes {p}" for p in res["defaulted"]]
    assert not problems, "\n".join(problems[:20])


def test_gate_tables_are_the_release_s(oracle: Path, version: str) -> None:
    """extender/data/feature-gates-v1.<minor>.json is exactly what the release's kube-scheduler knows: every gate, its
    default, stage and lock, and the dependencies (regenerate: ``oracle -list-feature-gates``)."""
    import subprocess

    listed = orjson.loads(subprocess.run([str(oracle), "-list-feature-gates"], capture_output=True, check=True).stdout)
    shipped = orjson.loads((Path(__file__).resolve().parents[2] / "extender" / "data"
                            / f"feature-gates-v{version}.json").read_bytes())
    assert listed["version"] == VERSIONS[version]
    assert shipped == listed
