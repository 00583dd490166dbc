"""End-to-end: a pod with a ResourceClaim through the real kube-scheduler with our extender registered.

kube-scheduler runs its own DynamicResources plugin and writes the allocation in PreBind; our filter must
agree with it where both see the same devices, and can narrow the choice where our dump says less. Here
the apiserver has a GPU slice on both nodes, our service's dump only on node-b: our filter rejects node-a
("cannot allocate all claims"), the pod lands on node-b, and kube-scheduler allocates node-b's GPU.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from controlplane import ExtenderConfig, Obj, StartExtender, StartScheduler, TestCluster
from live_helpers import poll

pytestmark = pytest.mark.e2e

DRIVER = "gpu.example.com"
API = "/apis/resource.k8s.io/v1"


def device_class() -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "e2e-gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def gpu_slice(node: str) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"e2e-{node}-gpu"},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1,
                                                                   "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}},
                                  "capacity": {"memory": {"value": "40Gi"}}}]}}


def gpu_claim(namespace: str) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "gpu", "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "e2e-gpu.example.com", "allocationMode": "ExactCount", "count": 1}}]}}}


def claim_pod(namespace: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": namespace},
            "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu"}],
                     "terminationGracePeriodSeconds": 0}}


@pytest.fixture
def dra_objects(cluster: TestCluster) -> Iterator[list[Obj]]:
    """The class and both nodes' slices in the apiserver; removed afterwards (they are cluster-scoped)."""
    kube = cluster.kube
    created = [kube.post(f"{API}/deviceclasses", device_class()),
               kube.post(f"{API}/resourceslices", gpu_slice("node-a")),
               kube.post(f"{API}/resourceslices", gpu_slice("node-b"))]
    yield created
    kube.request("DELETE", f"{API}/namespaces/{cluster.ns}/resourceclaims/gpu", ok=(404,))
    for path in (f"{API}/resourceslices/e2e-node-a-gpu", f"{API}/resourceslices/e2e-node-b-gpu",
                 f"{API}/deviceclasses/e2e-gpu.example.com"):
        kube.request("DELETE", path, ok=(404,))


def _stripped(obj: Obj) -> Obj:
    """An apiserver object as our dump holds it (no resourceVersion: the dump is its own source)."""
    out: dict[str, Any] = {**obj, "metadata": {k: v for k, v in obj["metadata"].items()
                                               if k not in ("resourceVersion", "managedFields")}}
    return out


def test_pod_with_a_resource_claim_lands_where_both_schedulers_agree(
    cluster: TestCluster, start_extender: StartExtender, start_scheduler: StartScheduler, dra_objects: list[Obj]
) -> None:
    a = cluster.node("node-a")
    b = cluster.node("node-b")
    claim = cluster.kube.post(f"{API}/namespaces/{cluster.ns}/resourceclaims", gpu_claim(cluster.ns))
    klass, _slice_a, slice_b = dra_objects
    # Our dump: both nodes, the class, the claim, but node-b's slice only.
    svc = start_extender([_stripped(o) for o in (a, b, klass, slice_b, claim)])
    # What our filter says of the pod: node-a has no device in our view.
    answer = httpx.post(f"{svc.url}/filter", json={"Pod": claim_pod(cluster.ns), "NodeNames": ["node-a", "node-b"]},
                        timeout=10).json()
    assert answer["NodeNames"] == ["node-b"]
    assert answer["FailedAndUnresolvableNodes"] == {"node-a": "cannot allocate all claims"}
    start_scheduler([ExtenderConfig(svc.url, filter_verb="filter", node_cache_capable=True)])
    cluster.kube.post(f"/api/v1/namespaces/{cluster.ns}/pods", claim_pod(cluster.ns))
    assert cluster.wait_scheduled("trainer") == "node-b"

    def allocated() -> Obj | None:
        got = cluster.kube.get(f"{API}/namespaces/{cluster.ns}/resourceclaims/gpu")
        return (got.get("status") or {}).get("allocation")

    allocation = poll("claim allocation written by kube-scheduler", allocated, timeout=30)
    results = allocation["devices"]["results"]
    assert [(r["driver"], r["pool"], r["device"]) for r in results] == [(DRIVER, "node-b", "gpu-0")]
