"""Generated benchmark clusters: N nodes over 3 zones, ``pods_per_node`` assigned pods each, with
realistic object sizes (labels, owner references, several containers, tolerations, some affinity and
spread constraints), and a mix of incoming pods.

Deterministic for a given seed, so every figure in bench/RESULTS.md can be regenerated.
"""

from __future__ import annotations

import random
from typing import Any

ZONES = ("zone-a", "zone-b", "zone-c")
APPS = ("web", "api", "cache", "db", "worker", "batch", "ingest", "search")


def make_node(i: int, rng: random.Random) -> dict[str, Any]:
    """A node with status like a real kubelet reports (allocatable, conditions, images, addresses)."""
    zone = ZONES[i % 3]
    name = f"node-{i:05d}"
    cpu, mem = rng.choice([(8, 32), (16, 64), (32, 128), (64, 256)])
    labels = {
        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": "bench-1",
        "node.kubernetes.io/instance-type": f"m.{cpu}x", "pool": rng.choice(["general", "general", "highmem"]),
        "disktype": rng.choice(["ssd", "hdd"]),
    }
    taints = []
    if i % 50 == 0:
        taints.append({"key": "dedicated", "value": "infra", "effect": "NoSchedule"})
    if i % 7 == 0:
        taints.append({"key": "spot", "value": "true", "effect": "PreferNoSchedule"})
    images = [{"names": [f"registry.example.com/{app}@sha256:{'%064x' % (hash(app) & (2**256 - 1))}",
                         f"registry.example.com/{app}:1.{j}"], "sizeBytes": rng.randint(20, 900) * 2**20}
              for j, app in enumerate(rng.sample(APPS, 4))]
    alloc = {"cpu": f"{cpu * 1000 - 200}m", "memory": f"{mem - 1}Gi", "pods": "110",
             "ephemeral-storage": "95Gi", "hugepages-2Mi": "0"}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": str(1000 + i), "labels": labels,
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                     "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
        "spec": {"podCIDR": f"10.{i // 256}.{i % 256}.0/24", "providerID": f"bench://{name}", "taints": taints},
        "status": {
            "capacity": {**alloc, "cpu": str(cpu), "memory": f"{mem}Gi"}, "allocatable": alloc,
            "conditions": [{"type": t, "status": s, "reason": f"Kubelet{t}",
                            "lastHeartbeatTime": "2026-11-22T00:00:00Z"}
                           for t, s in (("Ready", "True"), ("MemoryPressure", "False"),
                                        ("DiskPressure", "False"), ("PIDPressure", "False"))],
            "addresses": [{"type": "InternalIP", "address": f"10.0.{i // 256}.{i % 256}"},
                          {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": "v1.36.3", "containerRuntimeVersion": "containerd://2.1.0",
                         "osImage": "Debian GNU/Linux 12", "kernelVersion": "6.1.0", "architecture": "amd64"},
            "images": images,
        },
    }


def make_pod(name: str, namespace: str, app: str, rng: random.Random, node: str = "",
             *, affinity: str = "", spread: bool = False) -> dict[str, Any]:
    """A pod like a Deployment's: two containers, a sidecar-ish second one, owner reference, labels."""
    containers = [
        {"name": app, "image": f"registry.example.com/{app}:1.{rng.randint(0, 3)}",
         "resources": {"requests": {"cpu": rng.choice(["50m", "100m", "250m", "500m"]),
                                    "memory": rng.choice(["64Mi", "128Mi", "256Mi", "512Mi"])},
                       "limits": {"memory": "1Gi"}},
         "ports": [{"containerPort": 8080, "protocol": "TCP"}],
         "env": [{"name": "APP", "value": app}, {"name": "ZONE", "value": "x"}]},
        {"name": "log-shipper", "image": "registry.example.com/shipper:2.1",
         "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}}},
    ]
    spec: dict[str, Any] = {
        "containers": containers, "schedulerName": "default-scheduler", "priority": 0,
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                         "tolerationSeconds": 300}],
    }
    if node:
        spec["nodeName"] = node
    labels = {"app": app, "tier": rng.choice(["frontend", "backend"]), "pod-template-hash": "7d9f8b6c5"}
    if affinity == "anti":
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}
    elif affinity == "preferred":
        spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "cache"}},
                                               "topologyKey": "topology.kubernetes.io/zone"}}]}}
    if spread:
        spec["topologySpreadConstraints"] = [{"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "ScheduleAnyway",
                                              "labelSelector": {"matchLabels": {"app": app}}}]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}", "labels": labels,
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-7d9f8b6c5",
                                          "uid": f"uid-rs-{app}", "controller": True}]},
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def generate(nodes: int, pods_per_node: int = 30, seed: int = 1) -> list[dict[str, Any]]:
    """Nodes, their assigned pods (1 in 20 with anti-affinity, 1 in 10 with spread), services, namespaces."""
    rng = random.Random(seed)
    objects: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}} for ns in ("default", "shop", "data")]
    for app in APPS:
        objects.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": app, "namespace": "shop"},
                        "spec": {"selector": {"app": app}}})
    serial = 0
    for i in range(nodes):
        node = make_node(i, rng)
        objects.append(node)
        for _ in range(pods_per_node):
            serial += 1
            app = rng.choice(APPS)
            affinity = "anti" if serial % 20 == 0 else ("preferred" if serial % 25 == 0 else "")
            objects.append(make_pod(f"{app}-{serial:07d}", "shop", app, rng, node["metadata"]["name"],
                                    affinity=affinity, spread=serial % 10 == 0))
    return objects


def incoming_pods(seed: int = 2) -> dict[str, dict[str, Any]]:
    """The benchmark's incoming pod mix: plain; node affinity + tolerations; pod anti-affinity; spread."""
    rng = random.Random(seed)
    plain = make_pod("incoming-plain", "shop", "web", rng)
    affinity = make_pod("incoming-affinity", "shop", "api", rng)
    affinity["spec"]["affinity"] = {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "pool", "operator": "In", "values": ["general"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "preference": {"matchExpressions": [
            {"key": "disktype", "operator": "In", "values": ["ssd"]}]}}]}}
    affinity["spec"]["tolerations"].append({"key": "dedicated", "operator": "Equal", "value": "infra",
                                            "effect": "NoSchedule"})
    anti = make_pod("incoming-anti", "shop", "db", rng, affinity="anti")
    spread = make_pod("incoming-spread", "shop", "worker", rng)
    spread["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "worker"}}},
        {"maxSkew": 3, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": {"matchLabels": {"app": "worker"}}}]
    return {"plain": plain, "affinity+tolerations": affinity, "anti-affinity": anti, "spread": spread}
