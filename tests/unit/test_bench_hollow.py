"""bench/hollow.py: the service with the engine's work left out answers as it documents (every known node
passes, unknown ones fail, every score 0) through the real HTTP path, and the throughput report shows it as
the ceiling of any engine behind the service."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from bench.hollow import hollow_filter, hollow_prioritize
from bench.run import main
from extender.api.app import create_app
from extender.cli import build_scheduler
from extender.engine.scheduler import Scheduler

ROOT = Path(__file__).resolve().parents[2]
POD = {"metadata": {"name": "p", "namespace": "default", "uid": "u-1", "resourceVersion": "1"},
       "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "900"}}}]}}


@pytest.fixture
def hollow(monkeypatch: pytest.MonkeyPatch) -> TestClient:
    monkeypatch.setattr(Scheduler, "filter", hollow_filter)
    monkeypatch.setattr(Scheduler, "prioritize", hollow_prioritize)
    scheduler, _ = build_scheduler(None, None)
    return TestClient(create_app(scheduler))


def test_every_known_node_passes_and_scores_zero(hollow: TestClient) -> None:
    names = ["zone-a-01", "zone-b-02", "no-such-node"]
    # 900 CPUs fit nowhere: the real filter would reject every node.
    answer = hollow.post("/filter", json={"Pod": POD, "NodeNames": names}).json()
    assert answer["NodeNames"] == ["zone-a-01", "zone-b-02"]
    assert list(answer["FailedNodes"]) == ["no-such-node"] and answer["Error"] == ""
    scores = hollow.post("/prioritize", json={"Pod": POD, "NodeNames": names[:2]}).json()
    assert scores == [{"Host": "zone-a-01", "Score": 0}, {"Host": "zone-b-02", "Score": 0}]


def test_the_report_shows_the_hollow_service_as_the_ceiling_of_any_engine(tmp_path: Path) -> None:
    results = json.loads((ROOT / "bench" / "RESULTS.json").read_text())
    runs = results["throughput"] if isinstance(results["throughput"], list) else [results["throughput"]]
    at_500 = next(tp for tp in runs if int(tp["nodes"]) == 500)
    at_500.update(null_pods_per_s=200.0, null_min=190.0, null_max=210.0, null_ratio_median=0.5,
                  null_ratio_min=0.45, null_ratio_max=0.55, hollow_pods_per_s=150.0, hollow_min=140.0,
                  hollow_max=160.0, hollow_ratio_median=0.375, hollow_cpu_ms_per_pod=2.5)
    source = tmp_path / "RESULTS.json"
    source.write_text(json.dumps(results))
    out = tmp_path / "RESULTS.md"
    assert main(["--report-only", str(source), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| ours with the engine hollowed out (--throughput-hollow, bench/hollow.py) | 150.0 | 140.0–160.0 |" in text
    assert "reached 38% of alone, 75% of the do-nothing extender" in text
    assert "The hollow service used 2.50 ms of CPU per pod" in text
