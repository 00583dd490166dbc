"""A bounded load test on loopback: the real service process, 64 keep-alive clients, mixed verbs.

``bench/load.py`` drives the service on the demo cluster for EXTENDER_LOAD_SECONDS (10 by default) with
filter and prioritize over every node's name and a budget of distinct pods bound through filter + bind.
Every request must succeed; the latency percentiles per verb are printed (``-s`` shows them), not asserted.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from ops_support import DEMO_CLUSTER, Service, metric_value, running

REPO = Path(__file__).resolve().parents[2]
SECONDS = float(os.environ.get("EXTENDER_LOAD_SECONDS", "10"))
BINDS = 32


def load_module() -> ModuleType:
    """bench/load.py, imported by path (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_load", REPO / "bench" / "load.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_load"] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The service on the demo cluster (log level warning: one line per request would be the test)."""
    svc = Service(tmp_path_factory.mktemp("load"), ["--log-level", "warning"])
    with running(svc):
        yield svc


def test_sixty_four_keep_alive_clients_mixed_verbs_no_errors(service: Service) -> None:
    """64 clients for a fixed time: zero errors, every verb served, exactly the bind budget bound."""
    bench = load_module()
    names = bench.node_names(DEMO_CLUSTER)
    report = bench.run_load(service.url, names, concurrency=64, duration=SECONDS, binds=BINDS, seed=7)
    print("\n" + report.table())
    assert report.errors == 0, report.samples
    assert {verb: stats.count > 0 for verb, stats in report.verbs.items()} == {
        "filter": True, "prioritize": True, "bind": True}
    assert report.verbs["bind"].count == BINDS
    with service.client() as client:
        assert client.get("/healthz").status_code == 200
        metrics = client.get("/metrics").text
        assert client.get("/readyz").json()["cache"]["assumed_pods"] == BINDS
    assert metric_value(metrics, "extender_binds_total", outcome="bound") == BINDS
    served = sum(metric_value(metrics, "extender_requests_total", verb=v, code="200") for v in ("filter", "prioritize"))
    assert served == report.verbs["filter"].count + report.verbs["prioritize"].count
    assert metric_value(metrics, "extender_rejected_requests_total") == 0


def test_load_generator_refuses_non_loopback_targets() -> None:
    """The generator only ever aims at this machine."""
    bench = load_module()
    for url in ("http://10.0.0.1:8888", "http://example.com"):
        with pytest.raises(SystemExit):
            bench.check_loopback(url)
    bench.check_loopback("http://127.0.0.1:8888")
    bench.check_loopback("http://[::1]:8888")
