"""bench/watch_cpu.py's status updates: the first is one the scheduler reads, the churn after it is not.

The ``--status-updates`` figures compare the first status of a running pod (a change the cache must apply)
with the updates after it (readiness flipping, restarts counted), read as changes no scheduling decision
depends on. These tests pin that reading, through the same trimming the cache applies to what it holds.
"""

from __future__ import annotations

import copy
from typing import Any

from bench.cluster import incoming_pods
from bench.watch_cpu import kubelet_status
from extender.cluster.records import slim_pod


def running(update: int) -> dict[str, Any]:
    """The plain incoming pod, bound, after the kubelet's status update ``update``, as the cache trims it."""
    pod = copy.deepcopy(incoming_pods()["plain"])
    pod["spec"]["nodeName"] = "node-00000"
    pod["status"] = kubelet_status(pod, update)["status"]
    return dict(slim_pod(pod, intern=False))


def test_the_first_status_changes_what_the_scheduler_reads() -> None:
    pod = copy.deepcopy(incoming_pods()["plain"])
    pod["spec"]["nodeName"] = "node-00000"
    assert dict(slim_pod(pod, intern=False)) != running(0)
    assert running(0)["status"]["phase"] == "Running"


def test_the_updates_after_it_change_nothing_the_scheduler_reads() -> None:
    first = running(0)
    for update in range(1, 6):
        assert running(update) == first, update
        # ...while the objects themselves differ, so the apiserver sends each as a MODIFIED event.
        assert kubelet_status(incoming_pods()["plain"], update) != kubelet_status(incoming_pods()["plain"], update - 1)
