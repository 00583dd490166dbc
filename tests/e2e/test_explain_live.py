"""End to end: "why is my pod Pending?" on a real kube-apiserver, answered as kube-scheduler answers it.

A real kube-scheduler (v1.36.3, no extender) schedules the test's pods; its PodScheduled condition is the
reference. ``extender explain NAME`` (reading the cluster once from the kubeconfig) and ``GET
/explain/{namespace}/{name}`` of ``extender serve --kubeconfig`` (from its live cache) must say the same
thing: the same FitError message for a pending pod, and for a pod kube-scheduler bound, that it is bound and
that its node fits it once its own usage is left out. ``extender simulate --kubeconfig`` places pods on a
snapshot of the cluster and writes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from controlplane import REPO, ControlPlane, KubeClient, StartScheduler, TestCluster
from live_helpers import LiveServices, poll

pytestmark = pytest.mark.e2e

TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}



def extender(*args: str, kubeconfig: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The ``extender`` command; with ``kubeconfig``, only through $KUBECONFIG (the current context)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    if kubeconfig is not None:
        env["KUBECONFIG"] = str(kubeconfig)
    return subprocess.run([sys.executable, "-m", "extender", *args], capture_output=True, text=True, cwd=REPO,
                          env=env, timeout=120)


def explain_json(*args: str, kubeconfig: Path | None = None) -> dict[str, Any]:
    done = extender("explain", *args, "-o", "json", kubeconfig=kubeconfig)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def no_claims(version: str) -> str:
    """What v1.36.3's DynamicResources PostFilter says first for a pod without claims (v1.37.2 says nothing)."""
    return "" if version == "1.37" else "no new claims to deallocate, "


def not_helpful_3(version: str) -> str:
    """The PostFilter words after FitError when preemption cannot help on any of 3 nodes."""
    return no_claims(version) + "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."


def test_pending_and_bound_pods_are_explained_as_kube_scheduler_decides(
        control_plane: ControlPlane, cluster: TestCluster, kube: KubeClient, start_scheduler: StartScheduler,
        live_services: LiveServices) -> None:
    ns = cluster.ns
    cluster.node("small-1", cpu="1", memory="4Gi")
    cluster.node("small-2", cpu="1", memory="4Gi")
    cluster.node("infra", cpu="8", memory="16Gi", taints=[TAINT])
    cluster.pod("big", cpu="2", memory="1Gi")
    start_scheduler([])
    condition = cluster.wait_unschedulable("big")

    # The CLI, reading the cluster once through the current context of $KUBECONFIG.
    pending = explain_json("-n", ns, "big", kubeconfig=control_plane.kubeconfig)
    assert pending["pod"] == f"{ns}/big" and pending["profile"] == "default-scheduler"
    assert "bound" not in pending
    assert pending["outcome"]["status"] == "Unschedulable"
    # The whole PodScheduled message: FitError, then what the PostFilter plugins said.
    assert pending["outcome"]["message"] == ("0/3 nodes are available: 1 node(s) had untolerated taint(s), "
                                             f"2 Insufficient cpu. {not_helpful_3(control_plane.version)}")
    assert pending["outcome"]["message"] == condition
    table = extender("explain", "-n", ns, "big", "--kubeconfig", str(control_plane.kubeconfig))
    assert table.returncode == 0 and table.stdout.rstrip().splitlines()[-1] == pending["outcome"]["message"]

    # A DaemonSet's kind of pod, pinned to one node by metadata.name: kube-scheduler filters that node only.
    kube.post(f"/api/v1/namespaces/{ns}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pinned", "namespace": ns},
        "spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["small-1"]}]}]}}},
            "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "2"}}}]}})
    pinned_condition = cluster.wait_unschedulable("pinned")
    pinned = explain_json("-n", ns, "pinned", kubeconfig=control_plane.kubeconfig)
    assert pinned["outcome"]["message"] == ("0/3 nodes are available: 1 Insufficient cpu, "
                                            "2 node(s) didn't satisfy plugin(s) [NodeAffinity]. "
                                            + not_helpful_3(control_plane.version))
    assert pinned["outcome"]["message"] == pinned_condition
    kube.delete_pod(ns, "pinned")

    # A node that takes it exactly: kube-scheduler binds the pod there.
    cluster.node("exact", cpu="2", memory="4Gi")
    assert cluster.wait_scheduled("big") == "exact"
    bound = explain_json("-n", ns, "big", "--kubeconfig", str(control_plane.kubeconfig))
    assert bound["bound"]["node"] == "exact"
    # Its node is full with it; left out of its own usage, it fits there again, and only there.
    assert bound["nodes"]["exact"]["feasible"]
    assert bound["outcome"]["status"] == "Schedulable" and bound["outcome"]["feasibleNodes"] == ["exact"]

    # The running service answers the same from its live cache.
    svc = live_services.start(control_plane.kubeconfig, config=None)
    svc.wait_ready()
    cluster.pod("huge", cpu="16", memory="1Gi")
    huge_condition = cluster.wait_unschedulable("huge")

    def explained(name: str) -> dict[str, Any] | None:
        resp = httpx.get(f"{svc.url}/explain/{ns}/{name}", timeout=10)
        return resp.json() if resp.status_code == 200 else None

    huge = poll("the service to see pod huge", lambda: explained("huge"), timeout=20)
    assert huge["outcome"]["message"] == ("0/4 nodes are available: 1 node(s) had untolerated taint(s), "
                                          f"3 Insufficient cpu. {no_claims(control_plane.version)}preemption: 0/4 "
                                          "nodes are available: 4 Preemption is not helpful for scheduling.")
    assert huge["outcome"]["message"] == huge_condition
    served_bound = explained("big")
    assert served_bound is not None and served_bound["bound"]["node"] == "exact"
    assert served_bound["outcome"]["feasibleNodes"] == ["exact"]
    assert httpx.get(f"{svc.url}/profiles/legacy/explain/{ns}/huge", timeout=10).json()["profile"] == "legacy"
    missing = httpx.get(f"{svc.url}/explain/{ns}/nope", timeout=10)
    assert missing.status_code == 404 and f"pod {ns}/nope is not in the extender's cache" in missing.json()["Error"]
    # And the CLI says so for a pod the apiserver does not have.
    gone = extender("explain", "-n", ns, "nope", "--kubeconfig", str(control_plane.kubeconfig))
    assert gone.returncode == 2 and gone.stderr == f"extender: apiserver: pod {ns}/nope not found\n"


def test_simulate_places_pods_on_the_live_cluster_and_writes_nothing(
        control_plane: ControlPlane, cluster: TestCluster, kube: KubeClient, tmp_path: Path) -> None:
    ns = cluster.ns
    cluster.node("sim-a", cpu="2", memory="4Gi")
    cluster.node("sim-b", cpu="2", memory="4Gi")
    cluster.pod("resident", cpu="1500m", memory="1Gi", node_name="sim-a")
    before = {n: kube.get(f"/api/v1/nodes/{n}")["metadata"]["resourceVersion"] for n in ("sim-a", "sim-b")}
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"new-{i}", "namespace": ns},
             "spec": {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1"}}}]}}
            for i in range(3)]
    pods_file = tmp_path / "pods.yaml"
    pods_file.write_text(yaml.safe_dump_all(pods))
    done = extender("simulate", "--pods", str(pods_file), "--kubeconfig", str(control_plane.kubeconfig),
                    "--seed", "1", "-o", "json")
    assert done.returncode == 1, done.stderr  # one of the three does not fit
    result = json.loads(done.stdout)
    # sim-a has 500m left (the resident pod counts): the first two go to sim-b, the third fits nowhere.
    assert [(p["pod"], p["node"]) for p in result["scheduled"]] == [(f"{ns}/new-0", "sim-b"), (f"{ns}/new-1", "sim-b")]
    [stuck] = result["unschedulable"]
    assert stuck["pod"] == f"{ns}/new-2"
    assert stuck["message"] == (f"0/2 nodes are available: 2 Insufficient cpu. {no_claims(control_plane.version)}"
                                "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.")
    # Nothing was written: no pod created, no node changed.
    listed = kube.get(f"/api/v1/namespaces/{ns}/pods").get("items") or []
    assert [p["metadata"]["name"] for p in listed] == ["resident"]
    assert {n: kube.get(f"/api/v1/nodes/{n}")["metadata"]["resourceVersion"] for n in before} == before
