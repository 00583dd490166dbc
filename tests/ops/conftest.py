"""Fixtures for the operations tests: a PKI, and a real etcd + kube-apiserver for the tests marked e2e.

The control plane comes from the end-to-end harness (``tests/e2e/controlplane.py``, binaries built by
``tests/k8s/build``); this directory starts its own for the session. Where Go is missing the e2e tests
skip, and with CI=true they fail instead. A failed e2e test gets the tails of the logs of the processes
it started.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))

from controlplane import ControlPlane, ControlPlaneUnavailable, KubeClient, build_binaries, unavailable
from ops_support import Pki, make_pki


@pytest.fixture(scope="session")
def ops_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where logs, certificates and etcd data go (EXTENDER_E2E_WORKDIR/ops when set)."""
    fixed = os.environ.get("EXTENDER_E2E_WORKDIR")
    if fixed:
        path = Path(fixed) / "ops"
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("ops")


@pytest.fixture(scope="session")
def pki(ops_workdir: Path) -> Pki:
    """A CA, a server certificate for 127.0.0.1, a client certificate and a stranger's one."""
    return make_pki(ops_workdir / "pki")


@pytest.fixture(scope="session")
def ops_control_plane(ops_workdir: Path) -> Iterator[ControlPlane]:
    """etcd + kube-apiserver v1.36.3 for the session."""
    try:
        bin_dir = build_binaries(ops_workdir / "build.log")
    except ControlPlaneUnavailable as exc:
        unavailable(str(exc))
    cp = ControlPlane(bin_dir, ops_workdir / "controlplane")
    try:
        cp.start()
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def ops_kube(ops_control_plane: ControlPlane) -> Iterator[KubeClient]:
    """An admin client of the session's apiserver."""
    client = ops_control_plane.client()
    yield client
    client.close()
