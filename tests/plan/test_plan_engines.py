"""Results are identical on every engine: this process, a local process pool, a real local Ray instance and
a real Dask LocalCluster (two workers each, no mocks), for variants and for the smallest-pool search."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from plan_helpers import WEB, context_of, write, zoned_nodes

from extender.plan.engines import Engine, EngineError, make_engine
from extender.plan.evaluate import PlanContext
from extender.plan.runner import PlanResult, run_plan

VARIANTS: list[dict[str, Any]] = [
    {"name": "today"},
    {"name": "zone b lost", "zonesLost": ["zone-b"]},
    {"name": "zone c cordoned", "cordon": {"matchLabels": {"topology.kubernetes.io/zone": "zone-c"}}},
    {"name": "more web", "addNodes": {"web": [2, 4]}},
    {"name": "packed", "profile": {"pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}},
]


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Twelve nodes (72 cpu) and 90 one-cpu pods: every variant leaves pods pending, so both searches run
    # several rounds, and a simulation stays short enough for four engines in CI.
    folder = tmp_path_factory.mktemp("engines")
    cluster = write(folder, "cluster.yaml", {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}, *zoned_nodes(12)]})
    plan = write(folder, "plan.yaml", {
        "cluster": str(cluster), "seed": 5, "workload": [{"file": str(WEB), "replicas": 90}],
        "pools": {"web": {"like": "n001", "pricePerHour": 0.1}}, "variants": VARIANTS,
        "search": {"pool": "web", "max": 24, "variants": ["today", "zone b lost"], "pointsPerRound": 2}})
    return plan


@pytest.fixture(scope="module")
def context(plan_file: Path) -> PlanContext:
    return context_of(plan_file, plan_file.parent / "cluster.yaml")


def _comparable(result: PlanResult) -> dict[str, Any]:
    body = result.as_dict()
    del body["run"]  # engine name, workers and time
    return body


def _run(engine: Engine, context: PlanContext) -> PlanResult:
    with engine:
        engine.start(context)
        return run_plan(context, engine, keep_placements=True)


@pytest.fixture(scope="module")
def reference(context: PlanContext) -> dict[str, Any]:
    result = _run(make_engine("serial"), context)
    assert all(s.found and s.below_found for s in result.searches)  # both end inside the bound, above 0
    return _comparable(result)


@pytest.mark.parametrize("name", ["process", "ray", "dask"])
def test_an_engine_with_two_workers_gives_the_serial_answer(name: str, context: PlanContext,
                                                            reference: dict[str, Any]) -> None:
    engine = make_engine(name, workers=2)
    result = _run(engine, context)
    assert result.engine == name and result.workers == 2
    assert _comparable(result) == reference


def test_one_process_worker_gives_the_same_answer(context: PlanContext, reference: dict[str, Any]) -> None:
    assert _comparable(_run(make_engine("process", workers=1), context)) == reference


@pytest.fixture
def dask_scheduler() -> Iterator[str]:
    from dask.distributed import LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        yield str(cluster.scheduler_address)
    finally:
        cluster.close()


def test_dask_uses_a_running_scheduler_given_its_address(dask_scheduler: str, context: PlanContext,
                                                         reference: dict[str, Any]) -> None:
    engine = make_engine("dask", address=dask_scheduler)
    result = _run(engine, context)
    assert result.workers == 2  # the running cluster's workers
    assert _comparable(result) == reference


def test_an_unreachable_address_is_a_clear_error(context: PlanContext) -> None:
    from extender.plan.engines.dask_engine import DaskEngine

    engine = DaskEngine(None, "tcp://127.0.0.1:1", connect_timeout=2)
    with pytest.raises(EngineError, match="dask: cannot start or reach the scheduler"):
        engine.start(context)
    with pytest.raises(EngineError, match="--address is for --engine ray or dask"):
        make_engine("process", address="tcp://127.0.0.1:1")


def test_the_context_pickles_compactly(context: PlanContext, tmp_path: Path) -> None:
    import pickle

    from plan_helpers import DEMO

    from extender.plan.base import base_from_dump

    base = base_from_dump(str(DEMO))
    packed = pickle.dumps(base)
    assert len(packed) < len(pickle.dumps(list(base.objects))) / 3
    again = pickle.loads(packed)
    assert [dict(o) for o in again.objects] == [dict(o) for o in base.objects]
    assert context.base.source


@pytest.fixture
def ray_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A Ray head started apart (``ray start --head --block``, its own process group) with two CPUs.

    Token authentication is off on both ends: the token of a local instance started earlier on this
    machine (~/.ray/auth_token) is no business of this cluster's."""
    import os
    import shutil
    import signal
    import socket
    import subprocess
    import sys
    import tempfile
    import time

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ray = Path(sys.executable).with_name("ray")
    sessions = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # Ray's socket paths must stay under 108 bytes
    log = (tmp_path / "ray-head.log").open("w")
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    head = subprocess.Popen([str(ray), "start", "--head", "--block", "--num-cpus", "2", "--include-dashboard",
                             "false", "--port", str(port), "--node-ip-address", "127.0.0.1",
                             "--temp-dir", sessions],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while "Ray runtime started" not in (tmp_path / "ray-head.log").read_text():
            assert head.poll() is None and time.monotonic() < deadline, (tmp_path / "ray-head.log").read_text()
            time.sleep(1)
        yield f"127.0.0.1:{port}"
    finally:
        if head.poll() is None:
            os.killpg(head.pid, signal.SIGTERM)  # the head and everything it started, by their process group
            try:
                head.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(head.pid, signal.SIGKILL)
                head.wait()
        log.close()
        shutil.rmtree(sessions, ignore_errors=True)


def test_ray_uses_a_running_cluster_given_its_address(ray_head: str, plan_file: Path,
                                                      reference: dict[str, Any]) -> None:
    # The command itself, in a fresh process: a driver that has not joined another Ray instance before.
    import os
    import subprocess
    import sys

    import orjson

    done = subprocess.run([sys.executable, "-m", "extender", "plan", str(plan_file), "--engine", "ray", "--address",
                           ray_head, "-o", "json", "--placements"], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "RAY_AUTH_MODE": "disabled"})
    assert done.returncode == 0, done.stderr
    body = orjson.loads(done.stdout)
    assert body.pop("run")["workers"] == 2  # the running cluster's CPUs
    assert body == orjson.loads(orjson.dumps(reference))
