"""bench/hollow.py: the service with the engine's work left out answers as it documents (every known node
passes, unknown ones fail, every score 0) through the real HTTP path (its report: test_bench_report.py)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from bench.hollow import hollow_filter, hollow_prioritize
from extender.api.app import create_app
from extender.cli import build_scheduler
from extender.engine.scheduler import Scheduler

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
