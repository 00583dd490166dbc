"""Chaos: kube-scheduler schedules through our filter, prioritize and bind while the extender is SIGKILLed.

The real kube-apiserver and kube-scheduler (pinned release); our service on the live cache
(``serve --kubeconfig``) registered with filter, prioritize and bind (nodeCacheCapable, not ignorable).
300 pods are created in three waves; during the first two the extender is killed with SIGKILL once some of
the wave is bound, while the rest is still being created and scheduled (a bind may be cut off between the
Binding and the answer), and restarted on the same port once the wave is created. Then every pod must be
bound exactly once (one node each, which the apiserver never changes), no node holds more than its
allocatable, and nothing is left assumed: the restarted service's cache, once the watch has caught up,
equals the apiserver's (per-node requests and pod counts) with no assumed pod.
"""

from __future__ import annotations

import contextlib
import os
import signal
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

import pytest
from controlplane import ControlPlane, ExtenderConfig, KubeClient, StartScheduler, TestCluster
from live_helpers import (
    NODE_LOCAL_PROFILE,
    REQUESTS,
    LiveService,
    LiveServices,
    _quantity,
    check_pod_counts,
    pods_by_node,
    poll,
    wait_converged,
)

pytestmark = pytest.mark.e2e

NODES = 10
NODE_CPU, NODE_MEMORY = "16", "16Gi"
WAVES = 3
PODS_PER_WAVE = 100
KILL_AFTER_BOUND = 25  # of a wave: the kill lands while the rest of the wave is being scheduled



def sigkill(svc: LiveService) -> None:
    """SIGKILL the service's process group: no graceful shutdown, in-flight binds cut off."""
    assert svc.process is not None
    svc.process.stopped = True
    with contextlib.suppress(ProcessLookupError):
        os.killpg(svc.process.pid, signal.SIGKILL)
    svc.process.popen.wait(10)


def bound_count(kube: KubeClient, ns: str) -> int:
    return sum(len(names) for node, names in pods_by_node(kube, ns).items() if node)


def test_pods_are_bound_exactly_once_while_the_extender_is_killed_twice(
    control_plane: ControlPlane,
    kube: KubeClient,
    cluster: TestCluster,
    live_services: LiveServices,  # before start_scheduler: the scheduler is stopped first
    start_scheduler: StartScheduler,
    tmp_path: Path,
) -> None:
    svc = live_services.start(control_plane.kubeconfig)
    svc.wait_ready()
    nodes = [f"chaos-n{i}" for i in range(NODES)]
    for name in nodes:
        cluster.node(name, cpu=NODE_CPU, memory=NODE_MEMORY, pods=110)
    wait_converged(kube, {"service": svc.diffs}, timeout=30)
    start_scheduler([ExtenderConfig(svc.url, filter_verb="filter", prioritize_verb="prioritize", bind_verb="bind",
                                    node_cache_capable=True, weight=1, http_timeout="5s")])

    def create(wave: int, worker: int) -> None:
        client = control_plane.client()
        try:
            for i in range(wave * PODS_PER_WAVE + worker, (wave + 1) * PODS_PER_WAVE, 4):
                cpu, mem = REQUESTS[i % len(REQUESTS)]
                client.create_pod(cluster.ns, f"c{i:03d}", cpu=cpu, memory=mem)
        finally:
            client.close()

    kills = 0
    at_kill: list[int] = []  # pods of the wave bound when the extender died
    for wave in range(WAVES):
        # The wave is created while it is being scheduled, and the kill lands in the middle of both.
        with ThreadPoolExecutor(max_workers=4) as pool:
            creating = [pool.submit(create, wave, w) for w in range(4)]
            if wave < WAVES - 1:
                target = wave * PODS_PER_WAVE + KILL_AFTER_BOUND
                poll(f"{target} pods bound", lambda target=target: bound_count(kube, cluster.ns) >= target,
                     timeout=60, interval=0.05)
                at_kill.append(bound_count(kube, cluster.ns) - wave * PODS_PER_WAVE)
                sigkill(svc)
                kills += 1
            for future in creating:
                future.result()
        if wave < WAVES - 1:
            # Same port: kube-scheduler's urlPrefix does not change.
            svc = LiveService(tmp_path, control_plane.kubeconfig, NODE_LOCAL_PROFILE, port=svc.port)
            live_services.started.append(svc)
            svc.start()
            svc.wait_ready()
    assert kills == 2
    print(f"\nof each wave of {PODS_PER_WAVE}, bound when the extender was killed: {at_kill}")
    assert all(bound < PODS_PER_WAVE for bound in at_kill), at_kill  # killed mid-wave, not after it

    total = WAVES * PODS_PER_WAVE

    def all_bound() -> dict[str, list[str]] | None:
        placed = pods_by_node(kube, cluster.ns)
        return placed if "" not in placed and sum(map(len, placed.values())) == total else None

    placed = poll(f"all {total} pods bound", all_bound, timeout=150, interval=0.5)
    assert set(placed) <= set(nodes), sorted(placed)
    names = [name for pods in placed.values() for name in pods]
    assert len(names) == len(set(names)) == total  # each pod on exactly one node

    # No node over its allocatable, from the apiserver's own objects.
    used: dict[str, list[Decimal]] = {name: [Decimal(0), Decimal(0), Decimal(0)] for name in nodes}
    for pod in kube.get(f"/api/v1/namespaces/{cluster.ns}/pods")["items"]:
        totals = used[pod["spec"]["nodeName"]]
        totals[2] += 1
        for container in pod["spec"]["containers"]:
            requests = (container.get("resources") or {}).get("requests") or {}
            totals[0] += _quantity(requests.get("cpu", "0"))
            totals[1] += _quantity(requests.get("memory", "0"))
    for name, (cpu, memory, count) in used.items():
        assert cpu <= _quantity(NODE_CPU) and memory <= _quantity(NODE_MEMORY) and count <= 110, (name, cpu, memory)

    # The last service's cache equals the apiserver once the watch has caught up: nothing is left assumed.
    view = wait_converged(kube, {"service": svc.diffs}, timeout=60)
    assert view.counts()["assumed_pods"] == 0
    status, ready = svc.readyz()
    assert status == 200 and ready["cache"]["assumed_pods"] == 0, ready["cache"]
    check_pod_counts(svc, kube, view)
