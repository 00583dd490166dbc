"""End-to-end: kube-scheduler preempts through our extender's preemptVerb.

Two nodes are full of low-priority pods; a high-priority pod fits nowhere. kube-scheduler's
DefaultPreemption picks candidate nodes and victims, sends them to our preempt verb (nodeCacheCapable:
victims by UID, resolved in our live cache), keeps the nodes we answer, evicts the victims, nominates the
node, and schedules the pod there once the victims are gone. Our profile also rejects node-b for this
pod (a required label), so the preemptor can only land on node-a: our answer decides the node.
"""

from __future__ import annotations

import pytest
from controlplane import ControlPlane, ExtenderConfig, KubeClient, StartScheduler, TestCluster
from live_helpers import LiveServices, poll, wait_converged

pytestmark = pytest.mark.e2e

# Our profile: upstream's filters, plus node affinity enforced by the profile: only "tier=gold" nodes.
GOLD_ONLY = {"profiles": [{"schedulerName": "default-scheduler", "pluginConfig": [{
    "name": "NodeAffinity", "args": {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]}]}}}}]}]}



def test_preemption_through_our_preempt_verb(
    control_plane: ControlPlane,
    kube: KubeClient,
    cluster: TestCluster,
    live_services: LiveServices,
    start_scheduler: StartScheduler,
) -> None:
    """The preemptor evicts a victim on the node our preempt answer keeps, and lands there."""
    kube.ensure_priority_class("e2e-low", 10)
    kube.ensure_priority_class("e2e-high", 1000)
    cluster.node("node-a", cpu="2", memory="4Gi", labels={"tier": "gold"})
    cluster.node("node-b", cpu="2", memory="4Gi", labels={"tier": "silver"})
    svc = live_services.start(control_plane.kubeconfig, config=GOLD_ONLY)
    svc.wait_ready()
    # Fill both nodes with low-priority pods, placed directly (no scheduler yet).
    for node in ("node-a", "node-b"):
        for i in range(2):
            kube.create_pod(cluster.ns, f"low-{node}-{i}", cpu="900m", memory="512Mi", node_name=node,
                            priority_class="e2e-low")
    # Compare counts only: the resource probes would be rejected on node-b by the profile itself.
    wait_converged(kube, {"service": lambda view: svc.diffs(view, probe=False)}, timeout=30)
    start_scheduler([ExtenderConfig(svc.url, filter_verb="filter", preempt_verb="preempt",
                                    node_cache_capable=True, weight=1)])
    cluster.pod("critical", cpu="1500m", memory="512Mi", priority_class="e2e-high")

    assert cluster.wait_scheduled("critical", timeout=60) == "node-a"
    remaining = {p["metadata"]["name"] for p in kube.get(f"/api/v1/namespaces/{cluster.ns}/pods")["items"]
                 if p["metadata"].get("deletionTimestamp") is None}
    # Victims only on node-a: our answer dropped node-b (not gold). Both node-a pods had to go: with one
    # evicted, 1100m would be free, short of the 1500m asked.
    assert {"low-node-b-0", "low-node-b-1"} <= remaining
    assert not {"low-node-a-0", "low-node-a-1"} & remaining
    assert poll("a preempt answer", lambda: svc.metric("extender_requests_total", verb="preempt",
                                                       profile="default-scheduler", code="200") or None,
                timeout=10) >= 1
