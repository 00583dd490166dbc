"""Hooks shared by every test directory: a failed test that started processes (etcd, kube-apiserver,
kube-scheduler, our service) gets the tails of their logs in its report."""

from __future__ import annotations

import sys
import time
from collections.abc import Generator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "e2e"))

from controlplane import ManagedProcess

_started_key = pytest.StashKey[float]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Note when the test started, to pick the logs that belong to it."""
    item.stash[_started_key] = time.monotonic()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the tails of the process logs to a failed test's report."""
    report: pytest.TestReport = yield
    if report.failed and ManagedProcess.registry:
        started = item.stash.get(_started_key, 0.0)
        for p in ManagedProcess.registry:
            crashed = not p.alive() and not p.stopped
            if p.started_at >= started or crashed:
                report.sections.append((f"{p.name} log tail ({p.log_path})", p.tail(40)))
            elif p.alive():  # processes shared by the session (etcd, kube-apiserver): a short tail
                report.sections.append((f"{p.name} log tail ({p.log_path})", p.tail(8)))
    return report
