"""End to end: the web view's API on the live cache of ``extender serve --kubeconfig`` against a real
kube-apiserver. A pending pod appears in the list, is explained, and a what-if that makes it fit changes
nothing in the cluster (the browser tests click through the same page on a dump)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from controlplane import ControlPlane, KubeClient, TestCluster
from live_helpers import LiveServices, poll

pytestmark = pytest.mark.e2e

TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}



def test_the_web_view_explains_a_live_pending_pod_and_its_what_if_writes_nothing(
        control_plane: ControlPlane, cluster: TestCluster, kube: KubeClient, live_services: LiveServices) -> None:
    ns = cluster.ns
    cluster.node("ui-small", cpu="1", memory="4Gi")
    cluster.node("ui-infra", cpu="8", memory="16Gi", taints=[TAINT])
    cluster.pod("waiting", cpu="2", memory="1Gi")
    svc = live_services.start(control_plane.kubeconfig, config=None)
    svc.wait_ready()
    page = httpx.get(f"{svc.url}/ui/", timeout=10)
    assert page.status_code == 200 and "Why Pending?" in page.text

    def listed() -> list[str] | None:
        pods = httpx.get(f"{svc.url}/ui/api/pods", params={"q": ns}, timeout=10).json()["pods"]
        names = [p["name"] for p in pods]
        return names if "waiting" in names else None

    assert poll("the service to list pod waiting", listed, timeout=20) == ["waiting"]
    overview = httpx.get(f"{svc.url}/ui/api/overview", timeout=10).json()
    assert overview["source"] == "apiserver" and overview["ready"] is True
    explained = httpx.get(f"{svc.url}/explain/{ns}/waiting", timeout=30).json()
    assert explained["outcome"]["status"] == "Unschedulable"
    assert explained["nodes"]["ui-infra"]["filters"]["TaintToleration"]["code"] == "UnschedulableAndUnresolvable"

    before: dict[str, Any] = {n: kube.get(f"/api/v1/nodes/{n}")["metadata"]["resourceVersion"]
                              for n in ("ui-small", "ui-infra")}
    yaml_text = httpx.get(f"{svc.url}/ui/api/pods/{ns}/waiting", timeout=10).json()["yaml"]
    answer = httpx.post(f"{svc.url}/ui/api/whatif", timeout=60, json={
        "pod": yaml_text, "changes": [{"op": "untaint", "node": "ui-infra", "taint": TAINT}]}).json()
    assert answer["explain"]["outcome"]["status"] == "Schedulable"
    assert answer["explain"]["outcome"]["feasibleNodes"] == ["ui-infra"]
    # Nothing was written: the nodes are as they were, the pod is still pending and still explained as before.
    assert {n: kube.get(f"/api/v1/nodes/{n}")["metadata"]["resourceVersion"] for n in before} == before
    assert kube.get("/api/v1/nodes/ui-infra")["spec"]["taints"] == [TAINT]
    assert not kube.get(f"/api/v1/namespaces/{ns}/pods/waiting")["spec"].get("nodeName")
    assert httpx.get(f"{svc.url}/explain/{ns}/waiting", timeout=30).json()["outcome"] == explained["outcome"]
