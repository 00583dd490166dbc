"""Generate the bundled demo cluster: a deterministic 33-node, 3-zone cluster worth explaining.

Run: python scripts/gen_demo_cluster.py > extender/data/demo-cluster.yaml   (config/demo-cluster.yaml links to it)
"""

from __future__ import annotations

import random
import sys
from typing import Any

import yaml

ZONES = ("zone-a", "zone-b", "zone-c")
REGION = "demo-1"
IMAGES = {
    "registry.example.com/web:1.4": 120 * 1024 * 1024,
    "registry.example.com/api:2.0": 240 * 1024 * 1024,
    "docker.io/library/nginx:1.27": 190 * 1024 * 1024,
    "docker.io/library/redis:7.4": 117 * 1024 * 1024,
    "docker.io/library/postgres:16": 430 * 1024 * 1024,
    "registry.example.com/ml-trainer:0.9": 3 * 1024 * 1024 * 1024,
    "registry.k8s.io/pause:3.10": 750 * 1024,
}
SHAPES = {  # instance type -> (cpu, memory Gi, pods, ephemeral Gi)
    "m.small": ("4", 16, 58, 100),
    "m.large": ("8", 32, 110, 200),
    "c.xlarge": ("16", 32, 110, 200),
    "r.xlarge": ("16", 128, 110, 400),
    "g.xlarge": ("16", 64, 110, 400),
}


def node(name: str, zone: str, shape: str, *, taints: list[dict[str, str]] | None = None,
         unschedulable: bool = False, extra_labels: dict[str, str] | None = None, images: list[str] | None = None,
         gpus: int = 0) -> dict[str, Any]:
    cpu, mem, pods, eph = SHAPES[shape]
    allocatable = {"cpu": cpu, "memory": f"{mem}Gi", "pods": str(pods), "ephemeral-storage": f"{eph}Gi",
                   "hugepages-2Mi": "0"}
    if gpus:
        allocatable["example.com/gpu"] = str(gpus)
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/region": REGION,
        "topology.kubernetes.io/zone": zone,
        "node.kubernetes.io/instance-type": shape,
        **(extra_labels or {}),
    }
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
        spec["taints"] = [*spec.get("taints", []),
                          {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-node-{name}", "resourceVersion": "1", "labels": labels},
        "spec": spec,
        "status": {
            "capacity": dict(allocatable),
            "allocatable": allocatable,
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "MemoryPressure", "status": "False"},
                           {"type": "DiskPressure", "status": "False"}, {"type": "PIDPressure", "status": "False"}],
            "images": [{"names": [img], "sizeBytes": IMAGES[img]} for img in (images or [])],
        },
    }


def pod(name: str, namespace: str, node_name: str, app: str, image: str, cpu: str, memory: str, *,
        host_port: int | None = None, anti_affinity: bool = False, owner: str | None = None,
        gpus: int = 0, tolerations: list[dict[str, str]] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": app, "image": image,
        "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"memory": memory}},
    }
    if gpus:
        container["resources"]["requests"]["example.com/gpu"] = str(gpus)
        container["resources"]["limits"]["example.com/gpu"] = str(gpus)
    if host_port:
        container["ports"] = [{"containerPort": host_port, "hostPort": host_port, "protocol": "TCP"}]
    spec: dict[str, Any] = {"nodeName": node_name, "containers": [container], "schedulerName": "default-scheduler"}
    if anti_affinity:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}
    if tolerations:
        spec["tolerations"] = tolerations
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-pod-{namespace}-{name}",
                            "labels": {"app": app}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                                    "uid": f"uid-rs-{owner}", "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Running"}}


BOUND = {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}


def volume_pod(name: str, node_name: str, volumes: list[dict[str, Any]]) -> dict[str, Any]:
    """A running pod using volumes (small requests, on zone-c nodes that the README's examples do not show)."""
    out = pod(name, "data", node_name, "storage-user", "docker.io/library/postgres:16", "50m", "64Mi")
    out["spec"]["volumes"] = volumes
    return out


def storage_objects() -> list[dict[str, Any]]:
    """StorageClasses, PVs, PVCs, a CSINode and pods using them: every volume plugin has a reason to give."""
    zone_a_affinity = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}]}]}}
    objects: list[dict[str, Any]] = [
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local-static"},
         "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast-immediate"},
         "provisioner": "ebs.csi.example.com", "volumeBindingMode": "Immediate"},
        # A zone-a volume, bound: pods using it can only run in zone-a (VolumeZone, VolumeBinding).
        {"apiVersion": "v1", "kind": "PersistentVolume",
         "metadata": {"name": "pv-zone-a", "labels": {"topology.kubernetes.io/zone": "zone-a",
                                                      "topology.kubernetes.io/region": "demo-1"}},
         "spec": {"capacity": {"storage": "20Gi"}, "accessModes": ["ReadWriteOnce"],
                  "storageClassName": "local-static", "nodeAffinity": zone_a_affinity,
                  "claimRef": {"namespace": "data", "name": "orders-db"},
                  "csi": {"driver": "ebs.csi.example.com", "volumeHandle": "vol-zone-a"}},
         "status": {"phase": "Bound"}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "orders-db", "namespace": "data", "annotations": BOUND},
         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local-static", "volumeName": "pv-zone-a",
                  "resources": {"requests": {"storage": "20Gi"}}}, "status": {"phase": "Bound"}},
        # Unbound, Immediate binding: never scheduled until a volume is bound to it.
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "scratch", "namespace": "data"},
         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast-immediate",
                  "resources": {"requests": {"storage": "5Gi"}}}, "status": {"phase": "Pending"}},
        # Unbound, WaitForFirstConsumer, no provisioner and no volume large enough: nowhere to bind.
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "archive", "namespace": "data"},
         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local-static",
                  "resources": {"requests": {"storage": "500Gi"}}}, "status": {"phase": "Pending"}},
        # Bound to a volume that does not exist.
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "orphan", "namespace": "data", "annotations": BOUND},
         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local-static", "volumeName": "pv-gone",
                  "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Bound"}},
        # A ReadWriteOncePod claim already used by a pod.
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-ledger"},
         "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOncePod"],
                  "storageClassName": "local-static", "claimRef": {"namespace": "data", "name": "ledger"},
                  "csi": {"driver": "ebs.csi.example.com", "volumeHandle": "vol-ledger"}},
         "status": {"phase": "Bound"}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "ledger", "namespace": "data", "annotations": BOUND},
         "spec": {"accessModes": ["ReadWriteOncePod"], "storageClassName": "local-static", "volumeName": "pv-ledger",
                  "resources": {"requests": {"storage": "5Gi"}}}, "status": {"phase": "Bound"}},
        # A CSI volume on zone-c-08, whose CSINode allows one attachment of that driver.
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-metrics"},
         "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                  "storageClassName": "local-static", "claimRef": {"namespace": "data", "name": "metrics"},
                  "csi": {"driver": "ebs.csi.example.com", "volumeHandle": "vol-metrics"}},
         "status": {"phase": "Bound"}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "metrics", "namespace": "data", "annotations": BOUND},
         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local-static", "volumeName": "pv-metrics",
                  "resources": {"requests": {"storage": "5Gi"}}}, "status": {"phase": "Bound"}},
        {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "zone-c-08"},
         "spec": {"drivers": [{"name": "ebs.csi.example.com", "nodeID": "zone-c-08", "allocatable": {"count": 1}}]}},
        volume_pod("ledger-writer", "zone-c-07", [{"name": "l", "persistentVolumeClaim": {"claimName": "ledger"}}]),
        volume_pod("metrics-writer", "zone-c-08", [{"name": "m", "persistentVolumeClaim": {"claimName": "metrics"}}]),
        # An in-tree GCE persistent disk mounted read-write: no other pod may mount it on that node.
        volume_pod("legacy-disk-user", "zone-c-06", [{"name": "d", "gcePersistentDisk": {"pdName": "shared-disk"}}]),
    ]
    return objects


def main() -> None:
    rng = random.Random(20261122)
    objects: list[dict[str, Any]] = []
    for ns in ("default", "shop", "data", "ml"):
        objects.append({"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}})
    nodes: list[dict[str, Any]] = []
    for zi, zone in enumerate(ZONES):
        for i in range(11):
            name = f"{zone}-{i:02d}"
            shape = ("m.small", "m.large", "m.large", "c.xlarge", "r.xlarge")[i % 5]
            kwargs: dict[str, Any] = {}
            labels = {"disktype": "ssd" if i % 3 else "hdd"}
            if i == 10:
                shape = "g.xlarge"
                kwargs["gpus"] = 4
                kwargs["taints"] = [{"key": "example.com/gpu", "value": "present", "effect": "NoSchedule"}]
                labels["accelerator"] = "example-gpu"
            elif i in (7, 8):
                labels["lifecycle"] = "spot"
                kwargs["taints"] = [{"key": "cloud.example.com/spot", "value": "true", "effect": "PreferNoSchedule"}]
            elif i == 9 and zi == 0:
                kwargs["taints"] = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
                labels["dedicated"] = "infra"
            if zi == 2 and i == 5:
                kwargs["unschedulable"] = True
            imgs = ["registry.k8s.io/pause:3.10", *rng.sample(sorted(IMAGES)[:5], k=1 + i % 3)]
            if i == 10:
                imgs.append("registry.example.com/ml-trainer:0.9")
            nodes.append(node(name, zone, shape, extra_labels=labels, images=sorted(set(imgs)), **kwargs))
    objects.extend(nodes)

    apps = [("web", "shop", "registry.example.com/web:1.4"), ("api", "shop", "registry.example.com/api:2.0"),
            ("cache", "data", "docker.io/library/redis:7.4"), ("db", "data", "docker.io/library/postgres:16")]
    counter = 0
    for n in nodes:
        name = n["metadata"]["name"]
        if n["spec"].get("unschedulable"):
            continue
        if name.endswith("-10"):
            objects.append(pod(f"trainer-{name}", "ml", name, "trainer", "registry.example.com/ml-trainer:0.9",
                               "6", "24Gi", gpus=2, tolerations=[{"key": "example.com/gpu", "operator": "Exists",
                                                                  "effect": "NoSchedule"}]))
            continue
        if name.endswith("-09") and name.startswith("zone-a"):
            continue  # the dedicated infra node is empty
        for _ in range(rng.randint(2, 6)):
            app, ns, image = rng.choice(apps)
            counter += 1
            cpu = rng.choice(["100m", "250m", "500m", "1", "1500m"])
            mem = rng.choice(["128Mi", "512Mi", "1Gi", "2Gi", "4Gi"])
            objects.append(pod(f"{app}-{counter:03d}", ns, name, app, image, cpu, mem,
                               owner=f"{app}-7d9f8b" if app in ("web", "api") else None))
    # A few host ports, anti-affinity pods and two nearly full nodes make the reasons visible.
    objects.append(pod("ingress-a", "default", "zone-a-01", "ingress", "docker.io/library/nginx:1.27", "200m",
                       "256Mi", host_port=443))
    objects.append(pod("ingress-b", "default", "zone-b-01", "ingress", "docker.io/library/nginx:1.27", "200m",
                       "256Mi", host_port=443))
    for i, n in enumerate(("zone-a-02", "zone-b-02", "zone-c-02")):
        objects.append(pod(f"db-primary-{i}", "data", n, "db-primary", "docker.io/library/postgres:16", "2", "8Gi",
                           anti_affinity=True))
    objects.append(pod("batch-big-1", "default", "zone-a-00", "batch", "registry.example.com/api:2.0", "3500m",
                       "12Gi"))
    objects.append(pod("batch-big-2", "default", "zone-b-00", "batch", "registry.example.com/api:2.0", "3800m",
                       "14Gi"))
    objects.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"},
                    "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    objects.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "cache", "namespace": "data"},
                    "spec": {"selector": {"app": "cache"}, "ports": [{"port": 6379}]}})
    objects.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "metadata": {"name": "web-7d9f8b", "namespace": "shop", "uid": "uid-rs-web-7d9f8b"},
                    "spec": {"replicas": 10, "selector": {"matchLabels": {"app": "web"}}}})
    # A pending pod, so that bind has something to place on the demo cluster.
    pending = pod("web-pending", "shop", "", "web", "registry.example.com/web:1.4", "500m", "1Gi",
                  owner="web-7d9f8b")
    del pending["spec"]["nodeName"]
    pending["status"] = {"phase": "Pending"}
    objects.append(pending)
    objects.extend(storage_objects())
    sys.stdout.write("# Generated by scripts/gen_demo_cluster.py: 33 nodes over 3 zones, with pods.\n")
    yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}, sys.stdout, sort_keys=False, width=120)


if __name__ == "__main__":
    main()
