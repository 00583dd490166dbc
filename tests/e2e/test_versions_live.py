"""End to end: the extender follows the Kubernetes version of the cluster it reads.

Each test runs against every pinned release (``k8s_version``). ``extender explain --kubeconfig`` and ``extender
serve --kubeconfig`` (kubernetesVersion auto) read the apiserver's /version and must answer with that release's
rules, which the real kube-scheduler of the same release confirms:

* the incoming pod's pod anti-affinity term selects namespaces with a selector the empty label set satisfies
  (``team DoesNotExist``). kube-scheduler v1.36.3 keeps that selector in force beside the namespaces it picked
  and so counts a matching pod in any namespace; v1.37.2 replaces it by the namespaces it picked
  (interpodaffinity/plugin.go). On the one node, next to such a pod in a namespace labelled ``team``, the pod is
  unschedulable under v1.36 and scheduled under v1.37;
* a pod whose bound volume is of a CSI driver that asks to keep pods off nodes without it
  (``preventPodSchedulingIfMissing``), on a node without it: VolumeLimitScaling, on by default from v1.37,
  makes NodeVolumeLimits reject the node ("<driver> CSI driver is not installed on the node"); v1.36 schedules
  the pod.
"""

from __future__ import annotations

import zlib

import httpx
import pytest
from controlplane import K8S_VERSIONS, ControlPlane, KubeClient, StartScheduler, TestCluster
from live_helpers import LiveServices, poll
from test_explain_live import explain_json, extender

pytestmark = pytest.mark.e2e

ANTI_AFFINITY_MESSAGE = "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules."


def _incoming(namespace: str) -> dict[str, object]:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "incoming", "namespace": namespace,
                                                         "labels": {"app": "incoming"}},
        "spec": {
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app": "web"}},
                "namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]},
                "topologyKey": "kubernetes.io/hostname"}]}},
            "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m"}}}],
            "terminationGracePeriodSeconds": 0,
        },
    }


def test_explain_and_serve_follow_the_apiserver_version(
        control_plane: ControlPlane, cluster: TestCluster, kube: KubeClient, start_scheduler: StartScheduler,
        live_services: LiveServices, k8s_version: str) -> None:
    ns = cluster.ns
    labelled = f"{ns}-team"
    kube.request("POST", "/api/v1/namespaces", {"metadata": {"name": labelled, "labels": {"team": "a"}}},
                 ok=(409,))
    kube.request("POST", f"/api/v1/namespaces/{labelled}/serviceaccounts", {"metadata": {"name": "default"}},
                 ok=(409,))
    try:
        cluster.node("only", cpu="4", memory="8Gi")
        kube.create_pod(labelled, "web", cpu="100m", labels={"app": "web"}, node_name="only")
        kube.post(f"/api/v1/namespaces/{ns}/pods", _incoming(ns))
        start_scheduler([])
        tag = K8S_VERSIONS[k8s_version]

        explained = None
        if k8s_version == "1.36":
            condition = cluster.wait_unschedulable("incoming")
            explained = explain_json("-n", ns, "incoming", kubeconfig=control_plane.kubeconfig)
            # The whole PodScheduled message: FitError, then what v1.36.3's PostFilter plugins said.
            assert explained["outcome"]["fitError"] == ANTI_AFFINITY_MESSAGE
            assert explained["outcome"]["message"] == condition
        else:
            assert cluster.wait_scheduled("incoming") == "only"
            explained = explain_json("-n", ns, "incoming", kubeconfig=control_plane.kubeconfig)
            assert explained["bound"]["node"] == "only"
            assert explained["outcome"]["status"] == "Schedulable"
            assert explained["outcome"]["feasibleNodes"] == ["only"]
        assert explained["kubernetes"] == {"version": k8s_version, "upstream": tag, "setting": "auto",
                                           "source": "apiserver", "reported": tag, "warning": None,
                                           "featureGates": {}}
        # The table says which release's rules it used.
        table = extender("explain", "-n", ns, "incoming", "--kubeconfig", str(control_plane.kubeconfig))
        assert table.returncode == 0
        assert f"kube-scheduler {tag} rules (auto: apiserver reports {tag})" in table.stdout

        # The service reads /version before it lists anything, and answers with the same release.
        svc = live_services.start(control_plane.kubeconfig, config=None)
        svc.wait_ready()
        ready = httpx.get(f"{svc.url}/readyz", timeout=10).json()
        assert ready["kubernetesVersion"]["version"] == k8s_version
        assert ready["kubernetesVersion"]["source"] == "apiserver" and "warnings" not in ready
        served = poll("the service to explain the pod",
                      lambda: (r := httpx.get(f"{svc.url}/explain/{ns}/incoming", timeout=10)).status_code == 200
                      and r.json(), timeout=20)
        assert served["kubernetes"]["version"] == k8s_version
        assert served["outcome"]["status"] == explained["outcome"]["status"]
        metrics = httpx.get(f"{svc.url}/metrics", timeout=10).text
        assert (f'extender_kubernetes_version{{kubernetes_version="{k8s_version}",setting="auto",'
                f'source="apiserver",supported="true",upstream="{tag}"}} 1.0') in metrics
    finally:
        kube.delete_pods(labelled)


def test_a_csi_driver_missing_from_the_node_follows_the_release(
        control_plane: ControlPlane, cluster: TestCluster, kube: KubeClient, start_scheduler: StartScheduler,
        k8s_version: str) -> None:
    ns = cluster.ns
    driver = f"csi-{zlib.crc32(ns.encode()):08x}.example.com"  # a name of its own (at most 63 bytes)
    # The driver asks kube-scheduler to keep pods off nodes where it is missing (VolumeLimitScaling: on by
    # default in 1.37, off in 1.36, whose apiserver also drops the field); the node has no CSINode at all.
    kube.post("/apis/storage.k8s.io/v1/csidrivers", {
        "metadata": {"name": driver}, "spec": {"attachRequired": True, "preventPodSchedulingIfMissing": True}})
    try:
        cluster.node("plain", cpu="4", memory="8Gi")
        claim = kube.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", {
            "metadata": {"name": "data", "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": f"{ns}-pv",
                     "resources": {"requests": {"storage": "1Gi"}}}})
        kube.post("/api/v1/persistentvolumes", {
            "metadata": {"name": f"{ns}-pv"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                     "csi": {"driver": driver, "volumeHandle": "handle-1"},
                     "claimRef": {"namespace": ns, "name": "data", "uid": claim["metadata"]["uid"]}}})
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "writer", "namespace": ns},
               "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
                        "terminationGracePeriodSeconds": 0}}
        kube.post(f"/api/v1/namespaces/{ns}/pods", pod)
        start_scheduler([])
        explained = explain_json("-n", ns, "writer", kubeconfig=control_plane.kubeconfig)
        assert explained["kubernetes"]["version"] == k8s_version
        if k8s_version == "1.36":
            assert cluster.wait_scheduled("writer") == "plain"
            assert explained["bound"]["node"] == "plain" and explained["outcome"]["status"] == "Schedulable"
        else:
            message = f"0/1 nodes are available: 1 {driver} CSI driver is not installed on the node."
            condition = cluster.wait_unschedulable("writer")
            assert explained["outcome"]["fitError"] == message
            assert explained["outcome"]["message"] == condition
        # A configured version wins over the apiserver's: the other release's rules, said so.
        other = "1.36" if k8s_version == "1.37" else "1.37"
        forced = explain_json("-n", ns, "writer", "--kubernetes-version", other,
                              kubeconfig=control_plane.kubeconfig)
        assert forced["kubernetes"]["version"] == other and forced["kubernetes"]["source"] == "configuration"
        if other == "1.36":
            assert forced["outcome"]["status"] == "Schedulable"
    finally:
        kube.delete(f"/apis/storage.k8s.io/v1/csidrivers/{driver}")
        kube.delete(f"/api/v1/persistentvolumes/{ns}-pv")
