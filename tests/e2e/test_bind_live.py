"""End-to-end: kube-scheduler binds through our extender's bindVerb; our service runs on the live cache.

kube-scheduler (pinned release) calls our filter, prioritize and bind verbs with nodeCacheCapable; our
service, started with ``--kubeconfig``, resolves node names from its list/watch cache, assumes each pod
it binds and creates the Binding through the apiserver. No kubelet runs, so bound pods stay Pending:
placement is read from spec.nodeName.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from controlplane import ControlPlane, ExtenderConfig, KubeClient, StartScheduler, TestCluster
from live_helpers import REQUESTS, LiveServices, check_pod_counts, pods_by_node, poll, wait_converged

pytestmark = pytest.mark.e2e

NODES = 8
PODS = 200



def test_bind_verb_on_the_live_cache(
    control_plane: ControlPlane,
    kube: KubeClient,
    cluster: TestCluster,
    live_services: LiveServices,  # before start_scheduler: the scheduler is stopped first
    start_scheduler: StartScheduler,
) -> None:
    """200 pods with mixed requests on 8 nodes: every pod is bound by our service exactly once
    (extender_binds_total{outcome="bound"} == 200, no bind error, no FailedScheduling), and once the watch
    has confirmed the bindings our per-node aggregates (requested CPU and memory, pod counts, read through
    /filter probes) equal the sums over the pods the apiserver has on each node."""
    svc = live_services.start(control_plane.kubeconfig)
    svc.wait_ready()
    for i in range(NODES):
        cluster.node(f"bind-n{i}", cpu="16", memory="32Gi")
    wait_converged(kube, {"service": svc.diffs}, timeout=30)
    start_scheduler([ExtenderConfig(svc.url, filter_verb="filter", prioritize_verb="prioritize", bind_verb="bind",
                                    node_cache_capable=True, weight=1)])

    def create(worker: int) -> None:
        client = control_plane.client()
        try:
            for i in range(worker, PODS, 8):
                cpu, mem = REQUESTS[i % len(REQUESTS)]
                client.create_pod(cluster.ns, f"p{i:03d}", cpu=cpu, memory=mem)
        finally:
            client.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        for future in [pool.submit(create, w) for w in range(8)]:
            future.result()

    def all_bound() -> dict[str, list[str]] | None:
        placed = pods_by_node(kube, cluster.ns)
        return placed if "" not in placed and sum(map(len, placed.values())) == PODS else None

    placed = poll(f"all {PODS} pods bound", all_bound, timeout=120, interval=0.5)
    assert set(placed) <= {f"bind-n{i}" for i in range(NODES)}, sorted(placed)

    view = wait_converged(kube, {"service": svc.diffs}, timeout=30)
    assert svc.metric("extender_binds_total", outcome="bound") == PODS
    assert svc.metric("extender_binds_total", outcome="error") == 0
    failures = kube.get(f"/api/v1/namespaces/{cluster.ns}/events", fieldSelector="reason=FailedScheduling")
    assert not failures.get("items"), [e.get("message") for e in failures["items"]]
    assert view.counts()["assigned_pods"] >= PODS and view.counts()["assumed_pods"] == 0
    check_pod_counts(svc, kube, view)
