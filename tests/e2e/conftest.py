"""Fixtures for the end-to-end tests: a real etcd + kube-apiserver per session,
a kube-scheduler and our extender service per test.

Every test runs against each pinned release (``k8s_version``: v1.36.3 and v1.37.2; EXTENDER_E2E_VERSIONS
narrows it, e.g. "1.37"), one control plane per release; our extender is started on a dump that records that
release's version, so it follows the same release.

Where Go is missing the tests skip with a message saying how to enable them;
with CI=true they fail instead. The binaries are built on first use by
tests/k8s/build (its output goes to ``<workdir>/build.log``). Each process's
output is kept in a log file, and the tails of the logs of the processes a
failed test used are attached to its report.

Set EXTENDER_E2E_WORKDIR to keep the logs and data in a fixed directory.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pytest

# Importable as top-level modules whatever pytest's import mode (no __init__.py here).
sys.path.insert(0, str(Path(__file__).resolve().parent))

from controlplane import (
    HOW_TO_ENABLE,
    ON_CI,
    ControlPlane,
    ControlPlaneUnavailable,
    ExtenderConfig,
    ExtenderService,
    KubeClient,
    Obj,
    Scheduler,
    StartExtender,
    StartScheduler,
    TestCluster,
    build_binaries,
    e2e_versions,
    extender_cli_present,
    scheduler_configuration,
    unavailable,
    write_dump,
)
from live_helpers import LiveServices

# --------------------------------------------------------------------------- failure reports






# --------------------------------------------------------------------------- session: binaries, control plane


@pytest.fixture(scope="session")
def e2e_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where logs, certificates and etcd data go."""
    fixed = os.environ.get("EXTENDER_E2E_WORKDIR")
    if fixed:
        path = Path(fixed)
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("e2e")


@pytest.fixture(scope="session", params=e2e_versions())
def k8s_version(request: pytest.FixtureRequest) -> str:
    """The release the test runs against ("1.36", "1.37"): each test runs once per release."""
    return str(request.param)


@pytest.fixture(scope="session")
def k8s_bin(e2e_workdir: Path, k8s_version: str) -> Path:
    """The directory with etcd, kube-apiserver, kube-scheduler and wirecheck of the release (built if needed)."""
    try:
        return build_binaries(e2e_workdir / "build.log", k8s_version)
    except ControlPlaneUnavailable as exc:
        unavailable(str(exc))


@pytest.fixture(scope="session")
def wirecheck(k8s_bin: Path) -> Path:
    """The wirecheck binary."""
    return k8s_bin / "wirecheck"


@pytest.fixture(scope="session")
def control_plane(k8s_bin: Path, e2e_workdir: Path, k8s_version: str) -> Iterator[ControlPlane]:
    """etcd + kube-apiserver of the release, for every test of that release."""
    cp = ControlPlane(k8s_bin, e2e_workdir / f"controlplane-{k8s_version}", k8s_version)
    try:
        cp.start()
        client = cp.client()
        client.ensure_priority_class("e2e-low", 10)
        client.ensure_priority_class("e2e-high", 1000)
        client.close()
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def kube(control_plane: ControlPlane) -> Iterator[KubeClient]:
    """An admin client of the apiserver."""
    client = control_plane.client()
    yield client
    client.close()


# --------------------------------------------------------------------------- per test


@pytest.fixture
def live_services(tmp_path: Path) -> Iterator[LiveServices]:
    """Factory of our service on a kubeconfig (``extender serve --kubeconfig``); every instance is stopped
    after the test."""
    services = LiveServices(tmp_path)
    yield services
    services.stop_all()


@pytest.fixture
def cluster(kube: KubeClient, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TestCluster]:
    """A namespace of our own in the session's apiserver; pods and nodes are deleted after the test."""
    slug = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:40].strip("-")
    ns = f"e2e-{slug}-{int(time.time() * 1000) % 100000}"
    tc = TestCluster(kube, ns, tmp_path)
    try:
        yield tc
    finally:
        tc.cleanup()


@pytest.fixture
def start_scheduler(control_plane: ControlPlane, cluster: TestCluster, tmp_path: Path) -> Iterator[StartScheduler]:
    """Factory: ``start_scheduler(extenders, profile=None)`` starts kube-scheduler and waits until ready.

    Any scheduler already started by the test is stopped first (one scheduler at
    a time: leader election is off). All are stopped after the test, before the
    test's nodes and pods are removed.
    """
    started: list[Scheduler] = []

    def start(extenders: Sequence[ExtenderConfig], profile: Obj | None = None, verbosity: int = 4) -> Scheduler:
        for s in started:
            s.stop()
        config = scheduler_configuration(control_plane.kubeconfig, extenders, profile)
        sched = Scheduler(control_plane, tmp_path / f"scheduler-{len(started)}", config, verbosity)
        started.append(sched)
        sched.wait_ready()
        return sched

    yield start
    for s in started:
        s.stop()


@pytest.fixture
def start_extender(tmp_path: Path, k8s_version: str) -> Iterator[StartExtender]:
    """Factory: ``start_extender(items, config=None)`` runs our service on a dump of ``items``.

    ``config`` is our service's YAML config (KubeSchedulerConfiguration-shaped
    profiles) as a dict. The dump records the release under test, which the service then follows
    (kubernetesVersion auto). Returns the running service; its ``url`` is the urlPrefix.
    """
    if not extender_cli_present():
        unavailable("extender/cli.py does not exist yet: the service cannot be started")
    services: list[ExtenderService] = []

    def start(items: Iterable[Obj], config: Obj | None = None) -> ExtenderService:
        dump = write_dump(tmp_path / f"extender-cluster-{len(services)}.json", items, k8s_version)
        svc = ExtenderService(tmp_path, dump, config)
        services.append(svc)
        return svc.start()

    yield start
    for s in services:
        s.stop()


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say how e2e tests get their binaries."""
    return [f"e2e: control plane from tests/k8s/build ({'CI: must not skip' if ON_CI else HOW_TO_ENABLE})"]
