"""End-to-end: pods as the real kube-apiserver writes them decode to what the general JSON path keeps.

The service reads pods through extender.kubeapi.podcodec (straight into the kept fields) and its first
list through extender.kubeapi.liststream (one response from the watch cache, cut into parts between
items). Here pods with the unusual parts a scheduler reads (init and sidecar containers, overhead from a
RuntimeClass, resource claims, affinity, tolerations, every kind of volume, host ports, a status with a
pending resize) are created in a real apiserver, then listed three ways: streamed in tiny parts, page by
page, and as one plain GET decoded by orjson and trimmed by slim_pod. All three must be equal, byte for
byte once encoded (same fields, same order).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import orjson
import pytest
from controlplane import ControlPlane, Obj, TestCluster

from extender.cluster.records import SlimPod, slim_pod
from extender.kubeapi import config as kubeconfig
from extender.kubeapi.client import RESOURCES, KubeClient

pytestmark = pytest.mark.e2e

CONTAINER = {"name": "app", "image": "registry.example/app:1", "env": [{"name": "A", "value": "b"}],
             "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
             "ports": [{"containerPort": 8080, "hostPort": 18080, "protocol": "TCP"}],
             "volumeMounts": [{"name": "cfg", "mountPath": "/cfg"}]}


def odd_pods(ns: str) -> list[Obj]:
    """Pods with every part of a pod the scheduler reads, and the parts it drops."""
    affinity = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "odd"}}, "topologyKey": "kubernetes.io/hostname"}]},
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": {
            "labelSelector": {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
            "topologyKey": "zone", "namespaces": [ns]}}]},
    }
    volumes = [
        {"name": "cfg", "configMap": {"name": "cfg"}},
        {"name": "sec", "secret": {"secretName": "s"}},
        {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "data", "readOnly": True}},
        {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"metadata": {"labels": {"v": "1"}}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
        {"name": "host", "hostPath": {"path": "/tmp/x", "type": "DirectoryOrCreate"}},
        {"name": "dapi", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
    ]
    full: Obj = {
        "metadata": {"name": "odd-full", "namespace": ns, "labels": {"app": "odd", "tier": "web"},
                     "annotations": {"note": "dropped"}},
        "spec": {
            "runtimeClassName": "with-overhead",
            "priorityClassName": "e2e-high",
            "nodeSelector": {"disk": "ssd"},
            "affinity": affinity,
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"},
                            {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}],
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                           "labelSelector": {"matchLabels": {"app": "odd"}},
                                           "matchLabelKeys": ["pod-template-hash"]}],
            "initContainers": [
                {"name": "setup", "image": "registry.example/setup:1", "command": ["sh", "-c", "true"],
                 "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}},
                {"name": "sidecar", "image": "registry.example/side:1", "restartPolicy": "Always",
                 "resources": {"requests": {"cpu": "50m"}},
                 "ports": [{"containerPort": 9090, "hostPort": 19090, "hostIP": "127.0.0.1", "protocol": "UDP"}]},
            ],
            "containers": [CONTAINER, {"name": "second", "image": "registry.example/two:1",
                                       "resources": {"requests": {"example.com/gpu": "1"},
                                                     "limits": {"example.com/gpu": "1"}}}],
            "volumes": volumes,
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}],
            "hostNetwork": False,
        },
    }
    plain: Obj = {"metadata": {"name": "odd-plain", "namespace": ns},
                  "spec": {"containers": [{"name": "c", "image": "registry.example/c:1"}]}}
    pod_resources: Obj = {"metadata": {"name": "odd-pod-level", "namespace": ns, "labels": {"app": "odd"}},
                          "spec": {"resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                                   "containers": [{"name": "c", "image": "registry.example/c:1"}]}}
    return [full, plain, pod_resources]


async def list_three_ways(cp: ControlPlane, ns: str) -> tuple[list[Any], list[Any], list[Any]]:
    client = KubeClient(kubeconfig.load(str(cp.kubeconfig), None))
    # A label, not a namespace field selector: with the latter, this apiserver ends a paginated list
    # across namespaces after its first page.
    params = {"labelSelector": f"decoding-test={ns}"}
    try:
        client.list_part_bytes = 1  # cut after every item
        streamed = [i async for items, _, _ in client.list_pages(RESOURCES["Pod"], params=params, from_cache=True)
                    for i in items]
        paged = [i async for items, _, _ in client.list_pages(RESOURCES["Pod"], params=params, page_size=1)
                 for i in items]
        whole = await client.get("/api/v1/pods", params=params)
    finally:
        await client.aclose()
    general = [{**slim_pod(p), "kind": "Pod"} for p in whole["items"]]
    return streamed, paged, general


def by_name(pods: list[Any]) -> list[Any]:
    return sorted(pods, key=lambda p: p["metadata"]["name"])


def test_real_pods_decode_like_the_general_path(control_plane: ControlPlane, cluster: TestCluster) -> None:
    kube, ns = cluster.kube, cluster.ns
    kube.request("POST", "/apis/node.k8s.io/v1/runtimeclasses", {
        "metadata": {"name": "with-overhead"}, "handler": "runc",
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}}}, ok=(409,))
    for pod in odd_pods(ns):
        pod["metadata"]["labels"] = {**pod["metadata"].get("labels", {}), "decoding-test": ns}
        kube.post(f"/api/v1/namespaces/{ns}/pods", pod)
    # A status as a kubelet would write it: resized containers, a pending resize, conditions dropped.
    kube.merge_patch(f"/api/v1/namespaces/{ns}/pods/odd-full/status", {"status": {
        "phase": "Running", "startTime": "2026-01-01T00:00:00Z",
        "conditions": [{"type": "Ready", "status": "True"},
                       {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
        "containerStatuses": [{"name": "app", "image": "registry.example/app:1", "imageID": "", "ready": True,
                               "restartCount": 0, "started": True, "state": {"running": {}},
                               "allocatedResources": {"cpu": "200m", "memory": "64Mi"},
                               "resources": {"requests": {"cpu": "200m", "memory": "64Mi"}}}]}})

    # The streamed list reads the watch cache, which may trail the last writes by a moment (as an
    # informer's first list may): the watch that follows catches up. Wait for it to hold the status.
    deadline = time.monotonic() + 20
    while True:
        streamed, paged, general = asyncio.run(list_three_ways(control_plane, ns))
        if len(streamed) == 3 and by_name(streamed)[0]["status"].get("phase") == "Running":
            break
        assert time.monotonic() < deadline, f"the watch cache did not catch up: {len(streamed)} pods"
        time.sleep(0.2)
    assert len(general) == 3
    stored = by_name(general)
    assert stored[0]["spec"]["overhead"] == {"cpu": "250m", "memory": "120Mi"}  # admission filled it in
    assert [v["name"] for v in stored[0]["spec"]["volumes"]] == ["data", "eph", "host"]
    assert [c["type"] for c in stored[0]["status"]["conditions"]] == ["PodResizePending"]
    for decoded in (streamed, paged):
        assert all(type(p) is SlimPod for p in decoded)
        assert by_name(decoded) == stored
        assert [orjson.dumps(p) for p in by_name(decoded)] == [orjson.dumps(p) for p in stored]
