"""``extender plan``: the command's outputs (table, JSON, report files, export) and its one-line errors."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import orjson
import pytest
from plan_helpers import WEB, write

from extender.cli import main

PNG = b"\x89PNG\r\n\x1a\n"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["plan", *argv])
        except SystemExit as exit_:  # argparse's usage errors
            code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    return write(tmp_path, "plan.yaml", {
        "seed": 2, "workload": [{"file": str(WEB), "replicas": 200}],
        "pools": {"web": {"like": "zone-a-07", "pricePerHour": 0.1}},
        "prices": [{"matchLabels": {"node.kubernetes.io/instance-type": "m.large"}, "perHour": 0.1}],
        "variants": [{"name": "today"}, {"name": "zone b lost", "zonesLost": ["zone-b"]},
                     {"name": "sweep", "addNodes": {"web": [0, 4]}}],
        "search": {"pool": "web", "max": 16, "variants": ["zone b lost"]}})


def test_the_table_json_and_report(plan: Path, tmp_path: Path) -> None:
    code, table, err = _run(str(plan), "--engine", "serial", "--report", str(tmp_path / "report"))
    assert code == 0 and err == ""  # no progress bar: stderr is not a terminal
    assert "VARIANT" in table and "zone b lost" in table and "sweep (web +4)" in table
    assert "smallest count of pool web that places everything" in table
    report = tmp_path / "report"
    for chart in ("placed-vs-nodes.png", "utilization.png", "pending-reasons.png"):
        assert (report / chart).read_bytes().startswith(PNG)
    page = (report / "report.html").read_text()
    assert page.count("data:image/png;base64,") == 3 and "zone b lost" in page
    body: dict[str, Any] = orjson.loads((report / "plan.json").read_bytes())
    [search] = body["searches"]
    assert search["found"] is not None and search["verified"]["belowFound"]["pending"] > 0
    code, text, _ = _run(str(plan), "--engine", "serial", "-o", "json", "--placements")
    again = orjson.loads(text)
    assert code == 0 and again["variants"][0]["placements"] and again["searches"] == body["searches"]


def test_export_writes_simulates_inputs(plan: Path, tmp_path: Path) -> None:
    code, command, _ = _run(str(plan), "--export", "zone b lost", str(tmp_path / "v"))
    assert code == 0 and command.startswith("extender simulate --cluster ")
    assert {p.name for p in (tmp_path / "v").iterdir()} == {"cluster.json", "pods.json", "config.json"}
    assert "--seed 2" in command


@pytest.mark.parametrize(("argv", "message"), [
    (["missing.yaml"], "extender: missing.yaml: No such file or directory"),
    (["{plan}", "--workers", "0"], "extender: --workers: expected at least 1, got 0"),
    (["{plan}", "--address", "tcp://x:1"], "extender: --address is for --engine ray or dask"),
    (["{plan}", "--cluster", "nowhere.yaml"], "extender: cluster: nowhere.yaml: no such file or directory"),
    (["{plan}", "--cluster", "c.yaml", "--kubeconfig", "k"], "extender: --cluster (a dump) and --kubeconfig"),
    (["{plan}", "--export", "nope", "out"], "extender: --export: no variant named 'nope'"),
])
def test_errors_are_one_line_and_exit_2(plan: Path, argv: list[str], message: str) -> None:
    code, out, err = _run(*(a.replace("{plan}", str(plan)) for a in argv))
    assert code == 2 and out == "" and err.startswith(message) and err.count("\n") == 1


def test_a_variant_that_cannot_run_is_refused_before_any_worker_starts(tmp_path: Path) -> None:
    disabled = {"plugins": {"multiPoint": {"disabled": [{"name": "ImageLocality"}]}}}
    plan = write(tmp_path, "plan.yaml", {"workload": [{"file": str(WEB)}], "variants": [
        {"name": "ok"}, {"name": "bad weights", "profile": disabled, "weights": {"ImageLocality": 2}}]})
    code, _, err = _run(str(plan), "--engine", "process")
    assert code == 2 and "variant 'bad weights': weights: ImageLocality is not a score plugin of profile" in err
    plan = write(tmp_path, "plan.yaml", {"workload": [{"file": str(WEB)}], "variants": [
        {"name": "typo", "weights": {"NoSuchPlugin": 2}}]})
    code, _, err = _run(str(plan))
    assert code == 2 and "variant 'typo': unknown plugin 'NoSuchPlugin'" in err
    # A gate of 1.37 only (the configuration is valid for auto, which is 1.37 on the demo cluster) cannot be set
    # for a variant that runs 1.36: kube-scheduler v1.36.3 would refuse it the same way.
    config = write(tmp_path, "config.yaml", {"featureGates": {"InPlacePodVerticalScalingSchedulerPreemption": True}})
    plan = write(tmp_path, "plan.yaml", {"workload": [{"file": str(WEB)}], "config": str(config), "variants": [
        {"name": "newest"}, {"name": "older", "kubernetesVersion": "1.36"}]})
    code, _, err = _run(str(plan))
    assert code == 2 and err == ("extender: variant 'older': unrecognized feature gate: "
                                 "InPlacePodVerticalScalingSchedulerPreemption\n")
