"""Run cases through the Karmada oracle and through ours (library, ``extender place``, HTTP); compare.

Compared per case: the target clusters with their replicas (in name order: the order of
``spec.clusters`` carries no meaning, and upstream's follows its informer's and Go maps' order), the
error text, the ``clusterAffinities`` term
used, and each filtered cluster's reasons as a set (the oracle runs every filter plugin on its own).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"


class OracleUnavailable(RuntimeError):
    """The oracle binary cannot be built (no Go toolchain, or the build failed)."""


def oracle_path() -> Path:
    """Build (or find cached) the oracle; raises :class:`OracleUnavailable` with the reason."""
    override = os.environ.get("KARMADA_ORACLE")
    if override:
        return Path(override)
    try:
        done = subprocess.run([str(BUILD)], capture_output=True, text=True, check=False)
    except OSError as err:
        raise OracleUnavailable(str(err)) from err
    if done.returncode != 0:
        raise OracleUnavailable(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "build failed")
    return Path(done.stdout.strip().splitlines()[-1])


def run_oracle(binary: Path, cases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One oracle process for many cases (JSON lines in, JSON lines out)."""
    payload = "".join(json.dumps({k: v for k, v in c.items() if k != "category"}) + "\n" for c in cases)
    done = subprocess.run([str(binary)], input=payload, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"oracle failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if len(answers) != len(cases):
        raise RuntimeError(f"oracle answered {len(answers)} of {len(cases)} cases")
    return answers


def normalize(answer: dict[str, Any]) -> dict[str, Any]:
    """The comparable part of an answer (oracle's or ours)."""
    filtered = answer.get("filtered") or {}
    return {
        "clusters": sorted((t["name"], int(t["replicas"])) for t in answer.get("clusters") or []),
        "error": answer.get("error", ""),
        "filtered": {name: sorted(set(reasons)) for name, reasons in sorted(filtered.items()) if reasons},
    }


def ours_library(case: dict[str, Any]) -> dict[str, Any]:
    """Our answer through the library (``extender.multicluster.schedule``)."""
    from extender.multicluster import ModelError, parse_binding, parse_cluster, schedule
    from extender.multicluster.model import parse_placement

    try:
        clusters = [parse_cluster(c) for c in case["clusters"]]
        binding = parse_binding(case["binding"])
        placement = parse_placement(case["placement"]) if case.get("placement") is not None else None
    except ModelError as err:
        return {"clusters": [], "filtered": {}, "error": f"input: {err}"}
    result = schedule(clusters, binding, placement)
    body = result.as_dict()
    body["affinityName"] = result.affinity_name
    return body


def _write_files(case: dict[str, Any], root: Path) -> list[str]:
    """The case as the files ``extender place`` reads; returns its arguments."""
    (root / "clusters.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": case["clusters"]}))
    (root / "binding.json").write_text(json.dumps(case["binding"]))
    cluster_scoped = case["binding"].get("kind") == "ClusterResourceBinding"
    policy = {"apiVersion": "policy.karmada.io/v1alpha1",
              "kind": "ClusterPropagationPolicy" if cluster_scoped else "PropagationPolicy",
              "metadata": {"name": "p"} if cluster_scoped else {"name": "p", "namespace": "default"},
              "spec": {"placement": case["placement"]}}
    (root / "policy.json").write_text(json.dumps(policy))
    return ["--clusters", str(root / "clusters.json"), "--binding", str(root / "binding.json"),
            "--policy", str(root / "policy.json"), "-o", "json"]


def _place_answer(code: int, out: str, err: str) -> dict[str, Any]:
    if code == 2:
        return {"clusters": [], "filtered": {}, "error": f"input: {err.strip()}"}
    body: dict[str, Any] = json.loads(out)
    return body


def ours_cli(case: dict[str, Any]) -> dict[str, Any]:
    """Our answer through ``extender place -o json``'s command function (in-process, from files)."""
    import argparse

    from extender.multicluster.cli import cmd_place

    with tempfile.TemporaryDirectory() as tmp:
        argv = _write_files(case, Path(tmp))
        args = argparse.Namespace(clusters=argv[1], binding=argv[3], policy=argv[5], output="json")
        out, err = io.StringIO(), io.StringIO()
        code = cmd_place(args, out, err)
        return _place_answer(code, out.getvalue(), err.getvalue())


def ours_process(case: dict[str, Any]) -> dict[str, Any]:
    """Our answer from a real ``python -m extender place -o json`` process."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = _write_files(case, Path(tmp))
        done = subprocess.run([sys.executable, "-m", "extender", "place", *argv], capture_output=True, text=True,
                              check=False, cwd=HERE.parents[1])
        if done.returncode not in (0, 1, 2):
            return {"clusters": [], "filtered": {}, "error": f"exit {done.returncode}: {done.stderr[-500:]}"}
        return _place_answer(done.returncode, done.stdout, done.stderr)


class HTTPClient:
    """``POST /multicluster/schedule`` on the real router, in-process."""

    def __init__(self) -> None:
        from fastapi import FastAPI
        from fastapi.testclient import TestClient

        from extender.multicluster.routes import build_multicluster_router

        app = FastAPI()
        app.include_router(build_multicluster_router(lambda: []))
        self.client = TestClient(app)

    def __call__(self, case: dict[str, Any]) -> dict[str, Any]:
        """Our answer through the HTTP route."""
        body = {"binding": case["binding"], "policy": case["placement"], "clusters": case["clusters"]}
        response = self.client.post("/multicluster/schedule", json=body)
        answer: dict[str, Any] = response.json()
        if response.status_code != 200:
            answer["error"] = f"input: HTTP {response.status_code}: {answer.get('error')}"
        return answer


@dataclass
class Outcome:
    """The comparison of one case on one interface."""

    seed: int
    category: str
    interface: str
    agree: bool
    diffs: list[str] = field(default_factory=list)


def _rejection_matches(problems: Sequence[dict[str, str]], message: str) -> bool:
    """Our input error names one of the webhook's problems: its field (below ``placement``) and detail."""
    for problem in problems:
        where = problem["field"].removeprefix("placement")
        if where in message and problem["detail"] in message:
            return True
    return False


def compare(seed: int, category: str, interface: str, oracle: dict[str, Any], ours: dict[str, Any]) -> Outcome:
    """Field-by-field comparison; ``diffs`` says what differs.

    A placement karmada-webhook rejects must be rejected by us as bad input naming one of its problems
    (ours stops at the first; the field and the detail must both appear).
    """
    if oracle.get("invalid"):
        error = ours.get("error", "")
        if error.startswith("input:") and _rejection_matches(oracle["invalid"], error):
            return Outcome(seed, category, interface, True)
        return Outcome(seed, category, interface, False,
                       [f"webhook rejects: {[p['error'] for p in oracle['invalid']]} vs ours {error!r}"])
    want, got = normalize(oracle), normalize(ours)
    diffs = [f"{key}: karmada {want[key]!r} vs ours {got[key]!r}" for key in want if want[key] != got[key]]
    if interface == "library" and oracle.get("affinityName", "") != ours.get("affinityName", ""):
        diffs.append(f"affinityName: karmada {oracle.get('affinityName')!r} vs ours {ours.get('affinityName')!r}")
    return Outcome(seed, category, interface, not diffs, diffs)


def run_cases(binary: Path, seeds: Iterable[int], *, interfaces: Sequence[str] = ("library",),
              every: int = 1) -> list[Outcome]:
    """Generate, run both sides, compare; CLI and HTTP run on every ``every``-th seed only, a real
    ``extender place`` process on every ``20 * every``-th."""
    from karmada_cases import generate

    seed_list = list(seeds)
    cases = [generate(s) for s in seed_list]
    answers = run_oracle(binary, cases)
    http = HTTPClient() if "http" in interfaces else None
    outcomes = []
    for i, (seed, case, answer) in enumerate(zip(seed_list, cases, answers, strict=True)):
        outcomes.append(compare(seed, case["category"], "library", answer, ours_library(case)))
        if i % every:
            continue
        if "cli" in interfaces:
            outcomes.append(compare(seed, case["category"], "cli", answer, ours_cli(case)))
        if http is not None:
            outcomes.append(compare(seed, case["category"], "http", answer, http(case)))
        if "process" in interfaces and i % (every * 20) == 0:
            outcomes.append(compare(seed, case["category"], "process", answer, ours_process(case)))
    return outcomes
