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


# ---- Dynamic Resource Allocation ------------------------------------------------------------------------
GPU_DRIVER = "gpu.example.com"
DRA_NODES = ("zone-a-06", "zone-b-06", "zone-c-06")  # run the example GPU driver (m.large nodes)
DRA_EXTENDED_RESOURCE = "dra.example.com/gpu"  # the gpu.example.com class also stands for this resource


def device_class(name: str, expression: str, extended: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": expression}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": name, "uid": f"uid-class-{name}", "creationTimestamp": "2026-11-01T00:00:00Z"},
            "spec": spec}


def gpu_device(name: str, model: str, memory: str, index: int, **extra: Any) -> dict[str, Any]:
    return {"name": name,
            "attributes": {"model": {"string": model}, "index": {"int": index},
                           "driverVersion": {"version": "550.54.15"}},
            "capacity": {"memory": {"value": memory}}, **extra}


def gpu_slice(node_name: str, suffix: str, count: int, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-{suffix}", "uid": f"uid-slice-{node_name}-{suffix}"},
            "spec": {"driver": GPU_DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": count}, **spec}}


def resource_claim(name: str, namespace: str, requests: list[dict[str, Any]], *,
                   owner: tuple[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-claim-{namespace}-{name}",
                                "resourceVersion": "1", **meta}
    if owner:
        metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner[0], "uid": owner[1],
                                        "controller": True, "blockOwnerDeletion": True}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": metadata,
            "spec": {"devices": {"requests": requests}}}


def gpu_request(name: str = "gpu", klass: str = "gpu.example.com", count: int = 1, **extra: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": klass, "allocationMode": "ExactCount", "count": count,
                                      **extra}}


def allocate(claim: dict[str, Any], node_name: str, device: str, pods: list[tuple[str, str]]) -> dict[str, Any]:
    claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    claim["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": GPU_DRIVER, "pool": node_name, "device": device}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]},
        },
        "reservedFor": [{"resource": "pods", "name": name, "uid": uid} for name, uid in pods],
    }
    return claim


def dra_objects() -> list[dict[str, Any]]:
    """A GPU driver on three nodes (attributes, capacity, a partitionable GPU, a tainted GPU), device classes,
    claims in use and the claims the example pods (examples/pods/dra/, examples/pods/reasons/dra-*) name."""
    a, b, c = DRA_NODES
    objects: list[dict[str, Any]] = [
        device_class("gpu.example.com", f'device.driver == "{GPU_DRIVER}"', DRA_EXTENDED_RESOURCE),
        device_class("gpu-large.example.com", f'device.driver == "{GPU_DRIVER}" && '
                     f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'),
        # Four A100s; the last one is tainted unhealthy by the driver.
        gpu_slice(a, "gpu", 1, {"devices": [
            *(gpu_device(f"gpu-{i}", "a100", "40Gi", i) for i in range(3)),
            gpu_device("gpu-3", "a100", "40Gi", 3, taints=[{"key": "gpu.example.com/unhealthy", "value": "ecc",
                                                             "effect": "NoSchedule",
                                                             "timeAdded": "2026-11-20T08:00:00Z"}])]}),
        # Two H100s, and one H100 offered whole or as two halves (partitions share its counters).
        gpu_slice(b, "gpu", 2, {"devices": [
            gpu_device("gpu-0", "h100", "80Gi", 0), gpu_device("gpu-1", "h100", "80Gi", 1),
            *(gpu_device(part, "h100", share, 2, consumesCounters=[
                {"counterSet": "gpu-2-counters", "counters": {"memory": {"value": share}}}])
              for part, share in (("gpu-2", "80Gi"), ("gpu-2-half-0", "40Gi"), ("gpu-2-half-1", "40Gi")))]}),
        gpu_slice(b, "counters", 2, {"sharedCounters": [
            {"name": "gpu-2-counters", "counters": {"memory": {"value": "80Gi"}}}]}),
        # Two L4s.
        gpu_slice(c, "gpu", 1, {"devices": [gpu_device(f"gpu-{i}", "l4", "24Gi", i) for i in range(2)]}),
        # In use: an inference server on c's first L4, a notebook sharing b's first H100 with its sidecar job.
        allocate(resource_claim("inference-gpu", "ml", [gpu_request()]), c, "gpu-0",
                 [("inference-0", "uid-pod-ml-inference-0")]),
        allocate(resource_claim("shared-gpu", "ml", [gpu_request()]), b, "gpu-0",
                 [("notebook-0", "uid-pod-ml-notebook-0")]),
        # Claims of the example pods (examples/pods/dra/).
        resource_claim("single-gpu", "ml", [gpu_request()]),
        resource_claim("h100-gpu", "ml", [gpu_request(selectors=[{"cel": {
            "expression": f'device.attributes["{GPU_DRIVER}"].model == "h100"'}}])]),
        resource_claim("gpu-prioritized", "ml", [{"name": "gpu", "firstAvailable": [
            {"name": "two-h100", "deviceClassName": "gpu-large.example.com", "allocationMode": "ExactCount",
             "count": 2, "selectors": [{"cel": {"expression": f'device.attributes["{GPU_DRIVER}"].model == "h100"'}}]},
            {"name": "one-large", "deviceClassName": "gpu-large.example.com", "allocationMode": "ExactCount",
             "count": 1},
            {"name": "any", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}]}]),
        # Monitoring sees every GPU of a node without taking them (admin access: the namespace allows it).
        resource_claim("gpu-monitor", "ml", [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.example.com", "allocationMode": "All", "adminAccess": True}}]),
        resource_claim("trainer-template-gpu-x7k2p", "ml", [gpu_request(count=2)],
                       owner=("trainer-from-template", "uid-example-trainer-from-template"),
                       annotations={"resource.kubernetes.io/pod-claim-name": "gpu"}),
        # Claims of the reason examples (examples/pods/reasons/dra-*.yaml).
        resource_claim("fpga", "ml", [gpu_request("fpga", "fpga.example.com")]),
        resource_claim("eight-gpus", "ml", [gpu_request(count=8)]),
        resource_claim("retired-gpu", "ml", [gpu_request()], deletionTimestamp="2026-11-21T10:00:00Z",
                       finalizers=["resource.kubernetes.io/delete-protection"]),
        resource_claim("someone-elses-gpu", "ml", [gpu_request()], owner=("other-pod", "uid-pod-ml-other-pod")),
        resource_claim("bad-selector", "ml", [gpu_request(selectors=[{"cel": {
            "expression": f'device.attributes["{GPU_DRIVER}"].vendor == "example"'}}])]),
    ]
    return objects


def dra_pods() -> list[dict[str, Any]]:
    """The pods that hold the claims in use."""
    out = []
    for name, node_name, claim in (("inference-0", DRA_NODES[2], "inference-gpu"),
                                   ("notebook-0", DRA_NODES[1], "shared-gpu")):
        p = pod(name, "ml", node_name, name.split("-")[0], "registry.example.com/ml-trainer:0.9", "1", "4Gi")
        p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
        p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
        out.append(p)
    return out


def main() -> None:
    rng = random.Random(20261122)
    objects: list[dict[str, Any]] = []
    for ns in ("default", "shop", "data", "ml"):
        ns_labels = {"kubernetes.io/metadata.name": ns}
        if ns == "ml":  # admin access to devices is allowed in this namespace only
            ns_labels["resource.kubernetes.io/admin-access"] = "true"
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": ns_labels}})
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
            if name in DRA_NODES:
                labels["gpu.example.com/driver"] = "present"
            made = node(name, zone, shape, extra_labels=labels, images=sorted(set(imgs)), **kwargs)
            if zi == 0:  # zone-a's kubelets are newer: they declare the restart-all-containers feature
                made["status"]["declaredFeatures"] = ["RestartAllContainersOnContainerExits"]
            nodes.append(made)
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
    objects.extend(dra_objects())
    objects.extend(dra_pods())
    sys.stdout.write("# Generated by scripts/gen_demo_cluster.py: 33 nodes over 3 zones, with pods and a DRA GPU "
                     "driver.\n")
    yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}, sys.stdout, sort_keys=False, width=120)


if __name__ == "__main__":
    main()
