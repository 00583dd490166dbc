"""Seeded scheduling-scenario generator for the differential oracle.

``generate(seed, features)`` returns one scenario ``{"id", "objects", "pod"}``:
a cluster (Namespaces, Nodes, assigned Pods, Services and controllers) and an
incoming Pod, all as JSON-ready dicts in the form the apiserver would store
them (valid, with the defaulting that matters for scheduling applied: container
requests defaulted from limits, port protocols, label-key merges of
matchLabelKeys, ...). The output depends only on the seed and the features.

It has no dependency on the ``extender`` package. Run it alone to look at
scenarios: ``python tests/oracle/scenarios.py --seed 7 --count 2``.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields, replace
from typing import Any

Obj = dict[str, Any]

KI, MI, GI = 1 << 10, 1 << 20, 1 << 30
GPU = "example.com/gpu"
HUGE = "hugepages-2Mi"
EPH = "ephemeral-storage"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
HOSTNAME = "kubernetes.io/hostname"
RACK = "example.com/rack"  # a topology key that some nodes lack
GEN = "example.com/cpu-gen"  # an integer label, for Gt/Lt
DISK = "disktype"
NAMESPACES = {"default": {"env": "prod"}, "team-a": {"team": "a", "env": "prod"}, "team-b": {"team": "b", "env": "dev"}}
APPS = ["web", "api", "db", "cache", "batch"]
TIERS = ["frontend", "backend"]
VERSIONS = ["v1", "v2"]
TAINT_KEYS = {"dedicated": ["gpu", "infra", ""], "team": ["a", "b"], "example.com/maintenance": [""]}
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
HOST_PORTS = [80, 443, 8080, 9000]
# (repository, tag or None, size in bytes); a pod image without a tag means ":latest".
IMAGES = [
    ("registry.example/app/web", "1.0", 120 * MI),
    ("registry.example/app/api", "2.3", 450 * MI),
    ("registry.example/app/db", "15", 900 * MI),
    ("registry.example/app/cache", "7", 30 * MI),
    ("registry.example/ml/trainer", "cuda12", 3 * GI),
    ("registry.example/tools/busybox", "latest", 4 * MI),
    ("registry.example/tools/pause", "3.10", 700 * KI),
    ("nginx", "latest", 190 * MI),
    ("redis", "7.2", 140 * MI),
    ("docker.io/library/postgres", "16", 400 * MI),
    ("registry.example:5000/team/tool", "latest", 60 * MI),  # a registry port, and ":latest" implied
]

# Which plugins each feature matters to (see Features.for_plugins).
FEATURE_PLUGINS: dict[str, set[str]] = {
    "taints": {"TaintToleration", "PodTopologySpread", "NodeUnschedulable"},
    "unschedulable": {"NodeUnschedulable"},
    "node_name": {"NodeName"},
    "node_selector": {"NodeAffinity", "PodTopologySpread"},
    "node_affinity": {"NodeAffinity", "PodTopologySpread"},
    "host_ports": {"NodePorts"},
    "extended_resources": {"NodeResourcesFit", "NodeResourcesBalancedAllocation"},
    "init_containers": {"NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality", "NodePorts"},
    "sidecars": {"NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality", "NodePorts"},
    "overhead": {"NodeResourcesFit", "NodeResourcesBalancedAllocation"},
    "pod_level_resources": {"NodeResourcesFit", "NodeResourcesBalancedAllocation"},
    "images": {"ImageLocality"},
    "pod_affinity": {"InterPodAffinity"},
    "topology_spread": {"PodTopologySpread"},
    "controllers": {"PodTopologySpread"},
    "volumes": {"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone"},
    "dra": {"DynamicResources"},
    "declared_features": {"NodeDeclaredFeatures"},
    "version_differences": {"ImageLocality", "NodeResourcesFit", "NodeResourcesBalancedAllocation", "InterPodAffinity",
                            "NodeName", "NodeAffinity", "VolumeBinding", "NodeVolumeLimits", "DynamicResources",
                            "NodeDeclaredFeatures"},
    "priorities": {"DefaultPreemption"},
}
CSI = "csi.example.com"
GCE_CSI = "pd.csi.storage.gke.io"  # in-tree gcePersistentDisk volumes migrate to it
PD_NAMES = ["pd-1", "pd-2", "pd-3"]


@dataclass(frozen=True)
class Features:
    """Switches for what generated scenarios may contain.

    Turn a feature off while the engine does not handle it yet; ``parse``
    reads a spec such as ``"all,-sidecars,-overhead"`` (env ``ORACLE_FEATURES``).
    """

    taints: bool = True
    unschedulable: bool = True
    node_name: bool = True
    node_selector: bool = True
    node_affinity: bool = True
    host_ports: bool = True
    extended_resources: bool = True
    init_containers: bool = True
    sidecars: bool = True
    overhead: bool = True
    pod_level_resources: bool = True
    images: bool = True
    pod_affinity: bool = True
    topology_spread: bool = True
    controllers: bool = True
    volumes: bool = True
    dra: bool = True
    declared_features: bool = True
    version_differences: bool = True
    priorities: bool = True
    terminal_pods: bool = True
    edge_cases: bool = True
    odd_quantities: bool = True

    @classmethod
    def names(cls) -> list[str]:
        """All feature names."""
        return [f.name for f in fields(cls)]

    @classmethod
    def parse(cls, spec: str | None) -> Features:
        """Parse ``"all"``/``"none"`` followed by ``+name``/``-name``/``name`` items."""
        feats = cls()
        if not spec:
            return feats
        for raw in spec.split(","):
            item = raw.strip()
            if not item:
                continue
            if item in ("all", "none"):
                feats = cls(**{n: item == "all" for n in cls.names()})
                continue
            on = not item.startswith("-")
            name = item.lstrip("+-")
            if name not in cls.names():
                raise ValueError(f"unknown scenario feature {name!r}; known: {', '.join(cls.names())}")
            feats = replace(feats, **{name: on})
        return feats

    def for_plugins(self, plugins: Iterable[str]) -> Features:
        """Turn off features that matter to none of ``plugins``."""
        enabled = set(plugins)
        changes = {name: False for name, pls in FEATURE_PLUGINS.items() if not pls & enabled}
        return replace(self, **changes)


# ---------------------------------------------------------------- quantities


def cpu(milli: int, rng: random.Random, odd: bool) -> str:
    """A CPU quantity for ``milli`` millicores, in one of its valid spellings."""
    forms = [f"{milli}m"]
    if milli % 1000 == 0:
        forms += [str(milli // 1000)] * 2
    elif milli % 100 == 0:
        forms.append(f"{milli / 1000:g}")
    if odd and milli % 1000 == 0 and milli:
        forms += [f"{milli // 1000}e0", f"{milli * 1000}u", f"{milli * 1000000}n"]
    # No sub-millicore forms: the apiserver rounds every resource quantity up to milli scale.
    return rng.choice(forms)


def mem(n: int, rng: random.Random, odd: bool, fractional: bool = False) -> str:
    """A byte quantity for ``n`` bytes, in one of its valid spellings."""
    if odd and fractional and n and rng.random() < 0.08:
        return f"{n - 1}.5"  # a fractional byte: Value() rounds it up to n
    forms = [str(n)]
    for suffix, unit in (("Ki", KI), ("Mi", MI), ("Gi", GI)):
        if n and n % unit == 0:
            forms += [f"{n // unit}{suffix}"] * 2
    if odd:
        for suffix, unit in (("k", 10**3), ("M", 10**6), ("G", 10**9)):
            if n and n % unit == 0:
                forms.append(f"{n // unit}{suffix}")
        for exp in (3, 6, 9):
            if n and n % 10**exp == 0:
                forms.append(f"{n // 10**exp}e{exp}")
    return rng.choice(forms)


# ---------------------------------------------------------------- the generator


@dataclass
class _Node:
    name: str
    labels: dict[str, str]
    alloc: dict[str, int]  # cpu in milli, others in units
    used: dict[str, int]
    pods: int
    taints: list[Obj]
    images: list[str]  # "repo:tag"
    unschedulable: bool = False


class _Gen:
    def __init__(self, seed: int, feats: Features) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.f = feats
        self.odd = feats.odd_quantities
        self.nodes: list[_Node] = []
        self.pods: list[Obj] = []
        self.uid = 0
        self.pod_host_ports: set[tuple[str, str, int]] = set()  # of the pod being generated
        self.storage: list[Obj] = []  # StorageClasses, CSINodes, PVs, PVCs
        self.rwop_in_use: list[tuple[str, str]] = []  # (namespace, claim) of RWOP claims used by pods

    # -- helpers
    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def next_uid(self, prefix: str) -> str:
        self.uid += 1
        return f"{prefix}-{self.seed}-{self.uid}"

    def qty(self, res: str, value: int, fractional: bool = False) -> str:
        if res == "cpu":
            return cpu(value, self.rng, self.odd)
        return mem(value, self.rng, self.odd, fractional=fractional and res in ("memory", EPH))

    def rlist(self, values: dict[str, int], fractional: bool = False) -> dict[str, str]:
        """Quantities; ``fractional`` allows fractional bytes (node status only: in a pod
        they would break request <= limit, which compares exact values)."""
        return {k: self.qty(k, v, fractional) for k, v in values.items()}

    # -- cluster
    def scenario(self) -> Obj:
        rng = self.rng
        n_nodes = rng.randint(3, 30) if not self.chance(0.3) else rng.randint(3, 8)
        regions = ["region-1", "region-2"][: rng.randint(1, 2)]
        zones = [(r, f"{r}{z}") for r in regions for z in "abc"[: rng.randint(1, 3)]]
        objects: list[Obj] = [self.namespace(ns, labels) for ns, labels in NAMESPACES.items()]
        for i in range(n_nodes):
            self.nodes.append(self.node(i, rng.choice(zones)))
        if self.f.edge_cases and self.chance(0.15):
            self.nodes.append(self.zero_node(n_nodes, rng.choice(zones)))
        controllers = self.controllers() if self.f.controllers else []
        if self.f.volumes:
            self.storage_base()
        n_pods = rng.randint(0, 4 * len(self.nodes))
        for _ in range(n_pods):
            self.existing_pod()
        if self.f.terminal_pods:
            self.stray_pods()
        pod = self.incoming_pod()
        objects += [self.node_obj(n) for n in self.nodes]
        objects += controllers
        objects += self.storage
        objects += self.pods
        if self.f.dra:
            # A generator of its own, so that scenarios without DRA stay exactly as they were.
            objects += _DRAGen(self.seed, [n.name for n in self.nodes], self.f.edge_cases).add(pod, objects)
        if self.f.declared_features:
            _declared_features(self.seed, objects, pod)
        if self.f.dra:
            _deallocatable_claim(self.seed, objects, pod)
        if self.f.priorities:
            _priorities(self.seed, objects, pod)
        return {"id": f"seed-{self.seed}", "objects": objects, "pod": pod}

    def namespace(self, name: str, labels: dict[str, str]) -> Obj:
        return {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "uid": f"ns-{name}", "labels": {"kubernetes.io/metadata.name": name, **labels}},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        }

    def node(self, i: int, zone: tuple[str, str]) -> _Node:
        rng = self.rng
        name = f"node-{i:02d}"
        labels = {
            HOSTNAME: name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": rng.choice(["amd64", "amd64", "arm64"]),
        }
        if not (self.f.edge_cases and self.chance(0.05)):  # a few nodes lack the zone labels
            labels[REGION] = zone[0]
            labels[ZONE] = zone[1]
        if self.chance(0.7):
            labels[RACK] = f"rack-{rng.randint(1, 4)}"
        labels[GEN] = str(rng.randint(1, 9))
        if self.chance(0.6):
            labels[DISK] = rng.choice(["ssd", "hdd"])
        cores = rng.choice([1, 2, 4, 4, 8, 8, 16, 32])
        alloc = {
            "cpu": cores * 1000 - rng.choice([0, 0, 100, 250, 500]) * (cores > 1),
            "memory": cores * rng.choice([2, 4, 4, 8]) * GI - rng.choice([0, 256 * MI, 512 * MI]),
            "pods": rng.choice([110, 110, 32, 16, 8, 4]),
            EPH: rng.choice([20, 50, 100]) * GI,
        }
        if self.f.extended_resources:
            if self.chance(0.3):
                alloc[GPU] = rng.choice([0, 1, 2, 4, 8])
            if self.chance(0.3):
                alloc[HUGE] = rng.choice([0, 64, 256, 1024]) * MI
        taints: list[Obj] = []
        if self.f.taints and self.chance(0.35):
            for key in rng.sample(sorted(TAINT_KEYS), rng.randint(1, 2)):
                taint = {"key": key, "effect": rng.choice(EFFECTS)}
                value = rng.choice(TAINT_KEYS[key])
                if value:
                    taint["value"] = value
                taints.append(taint)
        images: list[str] = []
        if self.f.images:
            images = [f"{r}:{t}" for r, t, _ in rng.sample(IMAGES, rng.randint(0, 6))]
        node = _Node(name, labels, alloc, {}, 0, taints, images)
        if self.f.unschedulable and self.chance(0.08):
            node.unschedulable = True
            node.taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
        return node

    def zero_node(self, i: int, zone: tuple[str, str]) -> _Node:
        labels = {HOSTNAME: f"node-{i:02d}", REGION: zone[0], ZONE: zone[1], GEN: "1", "kubernetes.io/os": "linux"}
        alloc = {"cpu": 0, "memory": 0, "pods": self.rng.choice([0, 110]), EPH: 0}
        return _Node(f"node-{i:02d}", labels, alloc, {}, 0, [], [])

    def node_obj(self, n: _Node) -> Obj:
        labels = dict(n.labels)
        alloc = self.rlist({k: v for k, v in n.alloc.items() if k != "pods"}, fractional=True)
        alloc["pods"] = str(n.alloc["pods"])
        capacity = dict(alloc)
        if n.alloc["cpu"] % 1000:
            capacity["cpu"] = str((n.alloc["cpu"] + 999) // 1000)
        spec: Obj = {}
        if n.unschedulable:
            spec["unschedulable"] = True
        if n.taints:
            spec["taints"] = n.taints
        status: Obj = {
            "capacity": capacity,
            "allocatable": alloc,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
        }
        if n.images:
            sizes = {f"{r}:{t}": s for r, t, s in IMAGES}
            status["images"] = [
                {"names": self.image_names(img), "sizeBytes": sizes[img] + self.rng.choice([0, 0, 0, 4096])}
                for img in n.images
            ]
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n.name, "uid": f"node-uid-{n.name}", "labels": labels},
            "spec": spec,
            "status": status,
        }

    def image_names(self, img: str) -> list[str]:
        names = [img]
        if self.chance(0.3):
            names.insert(0, _digest(img))
        if img.startswith("nginx:") or img.startswith("redis:"):
            names.append("docker.io/library/" + img)
        return names

    def controllers(self) -> list[Obj]:
        rng = self.rng
        out: list[Obj] = []
        for i in range(rng.randint(0, 3)):
            ns = rng.choice(list(NAMESPACES))
            sel = {"app": rng.choice(APPS)}
            if self.chance(0.3):
                sel["tier"] = rng.choice(TIERS)
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {"name": f"svc-{i}", "namespace": ns, "uid": f"svc-{self.seed}-{i}"},
                    "spec": {
                        "selector": sel,
                        "type": "ClusterIP",
                        "clusterIP": f"10.96.{i}.{rng.randint(2, 250)}",
                        "clusterIPs": [],
                        "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}],
                        "sessionAffinity": "None",
                        "internalTrafficPolicy": "Cluster",
                    },
                }
            )
            out[-1]["spec"]["clusterIPs"] = [out[-1]["spec"]["clusterIP"]]
        for i in range(rng.randint(0, 2)):
            kind = rng.choice(["ReplicaSet", "ReplicationController", "StatefulSet"])
            ns = rng.choice(list(NAMESPACES))
            labels = {"app": rng.choice(APPS), "tier": rng.choice(TIERS)}
            meta = {"name": f"{kind.lower()}-{i}", "namespace": ns, "uid": f"ctl-{self.seed}-{i}"}
            template = {"metadata": {"labels": labels}, "spec": _template_spec()}
            if kind == "ReplicationController":
                out.append(
                    {
                        "apiVersion": "v1",
                        "kind": kind,
                        "metadata": {**meta, "labels": labels},
                        "spec": {"replicas": 2, "selector": labels, "template": template},
                    }
                )
                continue
            spec: Obj = {"replicas": 2, "selector": {"matchLabels": labels}, "template": template}
            if kind == "StatefulSet":
                spec.update(
                    {
                        "serviceName": "svc",
                        "podManagementPolicy": "OrderedReady",
                        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                        "revisionHistoryLimit": 10,
                        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
                    }
                )
            out.append({"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": spec})
        return out

    # -- pods
    def labels(self) -> dict[str, str]:
        rng = self.rng
        out = {"app": rng.choice(APPS)}
        if self.chance(0.6):
            out["tier"] = rng.choice(TIERS)
        if self.chance(0.4):
            out["version"] = rng.choice(VERSIONS)
        return out

    def requests(self, big: bool) -> dict[str, int]:
        """Requests of one container (cpu milli, bytes, units)."""
        rng = self.rng
        req: dict[str, int] = {}
        if self.chance(0.85):
            req["cpu"] = rng.choice([10, 50, 100, 250, 500, 1000, 1500] + ([2000, 4000] if big else []))
        if self.chance(0.85):
            req["memory"] = rng.choice([32, 64, 128, 256, 512, 1024] + ([2048, 4096] if big else [])) * MI
        if self.f.extended_resources:
            if self.chance(0.15):
                req[EPH] = rng.choice([1, 2, 5]) * GI
            if self.chance(0.03):
                req[GPU] = rng.choice([1, 1, 2])
            if self.chance(0.025) and ("cpu" in req or "memory" in req):
                req[HUGE] = rng.choice([2, 64, 128]) * MI
        if self.f.edge_cases and self.chance(0.03):
            req["cpu"] = 0  # an explicit zero is not replaced by the non-zero default
        return req

    def container(self, name: str, big: bool, ports: bool) -> tuple[Obj, dict[str, int], dict[str, int]]:
        """A container and its requests, in stored form (requests defaulted from limits)."""
        rng = self.rng
        req = self.requests(big)
        limits: dict[str, int] = {}
        for k, v in req.items():
            if k in (GPU, HUGE):  # not overcommittable: limit = request
                limits[k] = v
            elif self.chance(0.3):
                limits[k] = v * rng.choice([1, 1, 2])
        if "memory" not in req and self.chance(0.1):  # a limit alone: the apiserver copies it to requests
            limits["memory"] = req["memory"] = rng.choice([128, 512]) * MI
        resources: Obj = {}
        if req:
            resources["requests"] = self.rlist(req)
        if limits:
            resources["limits"] = self.rlist(limits)
        c: Obj = {"name": name, "image": self.pod_image(), "resources": resources}
        if ports and self.f.host_ports and self.chance(0.25):
            c["ports"] = self.ports()
        c["terminationMessagePath"] = "/dev/termination-log"
        c["terminationMessagePolicy"] = "File"
        image = c["image"]
        c["imagePullPolicy"] = "Always" if image.endswith(":latest") or ":" not in image else "IfNotPresent"
        return c, req, limits

    def pod_image(self) -> str:
        repo, tag, _ = self.rng.choice(IMAGES)
        if tag == "latest" and self.chance(0.5):
            return repo
        if not self.f.images:
            return f"{repo}:{tag}"
        if repo in ("nginx", "redis") and self.chance(0.3):
            return f"docker.io/library/{repo}:{tag}"
        if self.chance(0.08):
            return _digest(f"{repo}:{tag}")  # by digest: matches only nodes that list the digest
        return f"{repo}:{tag}"

    def ports(self) -> list[Obj]:
        rng = self.rng
        out = []
        for _ in range(rng.randint(1, 2)):
            port = rng.choice(HOST_PORTS)
            proto = rng.choice(["TCP", "TCP", "UDP", "SCTP"])
            ip = rng.choice(["", "", "0.0.0.0", "127.0.0.1", "10.0.0.1"])
            if (proto, ip, port) in self.pod_host_ports:  # the apiserver rejects duplicates within a pod
                continue
            self.pod_host_ports.add((proto, ip, port))
            p: Obj = {"containerPort": port + rng.choice([0, 1000]), "hostPort": port, "protocol": proto}
            if ip:
                p["hostIP"] = ip
            out.append(p)
        return out

    def pod_spec(self, incoming: bool) -> tuple[Obj, dict[str, int]]:
        """Containers, init containers and overhead; returns the spec and the pod's effective requests."""
        rng = self.rng
        spec: Obj = {"containers": []}
        total: dict[str, int] = {}
        max_limit: dict[str, int] = {}
        self.pod_host_ports = set()
        for i in range(rng.choice([1, 1, 2, 3])):
            c, eff, lim = self.container(f"c{i}", incoming and self.chance(0.3), ports=True)
            spec["containers"].append(c)
            for k, v in lim.items():
                max_limit[k] = max(max_limit.get(k, 0), v)
            for k, v in eff.items():
                total[k] = total.get(k, 0) + v
        init_peak: dict[str, int] = {}
        sidecars: dict[str, int] = {}
        if self.f.init_containers or self.f.sidecars:
            for i in range(rng.randint(0, 2) if self.chance(0.35) else 0):
                sidecar = self.f.sidecars and (not self.f.init_containers or self.chance(0.4))
                c, eff, lim = self.container(f"init{i}", incoming and self.chance(0.5), ports=sidecar)
                for k, v in lim.items():
                    max_limit[k] = max(max_limit.get(k, 0), v)
                if sidecar:
                    c["restartPolicy"] = "Always"
                spec.setdefault("initContainers", []).append(c)
                for k in set(eff) | set(sidecars):
                    v = eff.get(k, 0) + sidecars.get(k, 0)
                    init_peak[k] = max(init_peak.get(k, 0), v)
                if sidecar:
                    for k, v in eff.items():
                        sidecars[k] = sidecars.get(k, 0) + v
        for k, v in sidecars.items():
            total[k] = total.get(k, 0) + v
        for k, v in init_peak.items():
            total[k] = max(total.get(k, 0), v)
        if self.f.overhead and self.chance(0.1):
            over = {"cpu": rng.choice([50, 250]), "memory": rng.choice([64, 120]) * MI}
            spec["runtimeClassName"] = "kata"
            spec["overhead"] = self.rlist(over)
            for k, v in over.items():
                total[k] = total.get(k, 0) + v
        if self.f.pod_level_resources and self.chance(0.05) and not spec.get("overhead") and HUGE not in max_limit:
            self.pod_level(spec, total, max_limit)
        spec.update(
            {
                "restartPolicy": "Always",
                "terminationGracePeriodSeconds": 30,
                "dnsPolicy": "ClusterFirst",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "enableServiceLinks": True,
                "priority": 0,
            }
        )
        return spec, total

    def pod_level(self, spec: Obj, total: dict[str, int], max_limit: dict[str, int]) -> None:
        """Pod-level requests and limits (cpu, memory), valid against the containers'."""
        req: dict[str, int] = {}
        lim: dict[str, int] = {}
        for k, unit in (("cpu", 100), ("memory", 64 * MI)):
            req[k] = total.get(k, 0) + self.rng.choice([0, 1, 4]) * unit
            if req[k] == 0:
                req[k] = unit
            limit_floor = max(max_limit.get(k, 0), req[k])
            lim[k] = limit_floor + self.rng.choice([0, 2]) * unit
            total[k] = req[k]
        spec["resources"] = {"requests": self.rlist(req), "limits": self.rlist(lim)}

    def existing_pod(self) -> None:
        rng = self.rng
        node = rng.choice(self.nodes)
        ns = rng.choice(list(NAMESPACES))
        name = f"pod-{len(self.pods)}"
        spec, total = self.pod_spec(incoming=False)
        fits = all(node.used.get(k, 0) + v <= node.alloc.get(k, 0) for k, v in total.items())
        if not fits and not self.chance(0.1):  # keep clusters mostly not overcommitted
            return
        spec["nodeName"] = node.name
        labels = self.labels()
        if self.f.pod_affinity and self.chance(0.2):
            spec["affinity"] = self.pod_affinity(labels, ns, existing=True)
        if self.f.taints and node.taints:
            spec["tolerations"] = [{"operator": "Exists"}]
        if self.f.volumes and self.chance(0.2):
            spec["volumes"] = [self.existing_volume(ns, node)]
        for k, v in total.items():
            node.used[k] = node.used.get(k, 0) + v
        node.pods += 1
        self.pods.append(self.pod_obj(name, ns, labels, spec, phase="Running"))

    def stray_pods(self) -> None:
        """Pods the scheduler must ignore (terminal, pending) or count specially (terminating)."""
        rng = self.rng
        for i in range(rng.randint(0, 2)):
            kind = rng.choice(["Succeeded", "Failed", "Pending", "terminating"])
            spec, total = self.pod_spec(incoming=False)
            labels = self.labels()
            if kind == "Pending":
                self.pods.append(self.pod_obj(f"pending-{i}", "default", labels, spec, phase="Pending"))
                continue
            node = rng.choice(self.nodes)
            spec["nodeName"] = node.name
            if kind == "terminating":  # still holds its resources
                for k, v in total.items():
                    node.used[k] = node.used.get(k, 0) + v
            pod = self.pod_obj(
                f"{kind.lower()}-{i}",
                rng.choice(list(NAMESPACES)),
                labels,
                spec,
                phase="Running" if kind == "terminating" else kind,
            )
            if kind == "terminating":
                pod["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
                pod["metadata"]["deletionGracePeriodSeconds"] = 30
            self.pods.append(pod)

    def pod_obj(self, name: str, ns: str, labels: dict[str, str], spec: Obj, phase: str) -> Obj:
        self.merge_label_keys(spec, labels)
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": self.next_uid("pod"), "labels": labels},
            "spec": spec,
            "status": {"phase": phase, "qosClass": _qos(spec)},
        }

    # -- incoming pod
    def incoming_pod(self) -> Obj:
        rng = self.rng
        ns = rng.choice(["default", "default", "team-a", "team-b"])
        labels = self.labels()
        spec, total = self.pod_spec(incoming=True)
        if self.f.edge_cases and self.chance(0.12):
            self.exact_fit(spec, total)
        if self.f.node_selector and self.chance(0.25):
            spec["nodeSelector"] = self.node_selector()
        affinity: Obj = {}
        if self.f.node_affinity and self.chance(0.4):
            affinity["nodeAffinity"] = self.node_affinity()
        if self.f.pod_affinity and self.chance(0.4):
            affinity.update(self.pod_affinity(labels, ns, existing=False))
        if affinity:
            spec["affinity"] = affinity
        if self.f.taints and self.chance(0.5):
            spec["tolerations"] = self.tolerations()
        if self.f.topology_spread and self.chance(0.4):
            spec["topologySpreadConstraints"] = self.spread(labels)
        if self.f.volumes and self.chance(0.25):
            spec["volumes"] = [self.incoming_volume(ns, i) for i in range(self.rng.choice([1, 1, 2]))]
        if self.f.node_name and self.chance(0.06):
            spec["nodeName"] = rng.choice([n.name for n in self.nodes] + ["node-missing"])
        return self.pod_obj("incoming", ns, labels, spec, phase="Pending")

    def exact_fit(self, spec: Obj, total: dict[str, int]) -> None:
        """Make the pod's cpu and memory requests exactly the free amount on one node."""
        node = self.rng.choice(self.nodes)
        c = spec["containers"][0]
        if spec.get("initContainers") or spec.get("overhead") or spec.get("resources") or len(spec["containers"]) > 1:
            return
        free = {k: node.alloc.get(k, 0) - node.used.get(k, 0) for k in ("cpu", "memory")}
        if min(free.values()) <= 0:
            return
        c["resources"] = {"requests": self.rlist(free)}
        total.clear()
        total.update(free)

    def node_selector(self) -> dict[str, str]:
        node = self.rng.choice(self.nodes)
        keys = [k for k in node.labels if k != HOSTNAME]
        sel = {k: node.labels[k] for k in self.rng.sample(keys, min(len(keys), self.rng.choice([1, 1, 2])))}
        if self.chance(0.08):
            sel[DISK] = "nvme"  # matches no node
        return sel

    def requirement(self) -> Obj:
        rng = self.rng
        node = rng.choice(self.nodes)
        key = rng.choice([ZONE, REGION, DISK, GEN, RACK, "kubernetes.io/arch", HOSTNAME])
        op = rng.choice(["In", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
        if op in ("Gt", "Lt"):
            return {"key": GEN, "operator": op, "values": [str(rng.randint(0, 9))]}
        if op == "DoesNotExist":
            return {"key": rng.choice([RACK, DISK, "example.com/none"]), "operator": op}
        if op == "Exists":
            return {"key": key, "operator": op}
        values = sorted({n.labels.get(key, "none") for n in rng.sample(self.nodes, min(2, len(self.nodes)))})
        if node.labels.get(key) and self.chance(0.5):
            values = sorted({*values, node.labels[key]})
        return {"key": key, "operator": op, "values": values}

    def node_term(self) -> Obj:
        rng = self.rng
        term: Obj = {}
        if self.chance(0.15):
            names = [n.name for n in rng.sample(self.nodes, 1)]
            term["matchFields"] = [{"key": "metadata.name", "operator": rng.choice(["In", "NotIn"]), "values": names}]
        if not term or self.chance(0.5):
            term["matchExpressions"] = [self.requirement() for _ in range(rng.randint(1, 2))]
        return term

    def node_affinity(self) -> Obj:
        rng = self.rng
        out: Obj = {}
        if self.chance(0.45):
            out["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [self.node_term() for _ in range(rng.randint(1, 2))]
            }
        if not out or self.chance(0.6):
            out["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": rng.randint(1, 100), "preference": self.node_term()} for _ in range(rng.randint(1, 3))
            ]
        return out

    def tolerations(self) -> list[Obj]:
        rng = self.rng
        out: list[Obj] = []
        for _ in range(rng.randint(1, 3)):
            kind = rng.random()
            effect = rng.choice(["", "", *EFFECTS])
            if kind < 0.1:
                tol: Obj = {"operator": "Exists"}  # empty key: tolerates everything
                if effect:
                    tol["effect"] = effect
            elif kind < 0.2:
                tol = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
            elif kind < 0.5:
                tol = {"key": rng.choice(sorted(TAINT_KEYS)), "operator": "Exists"}
                if effect:
                    tol["effect"] = effect
            else:
                key = rng.choice(sorted(TAINT_KEYS))
                tol = {"key": key, "value": rng.choice(TAINT_KEYS[key])}
                if self.chance(0.5):
                    tol["operator"] = "Equal"  # else left empty: Equal is implied
                if not tol["value"]:
                    del tol["value"]
                if effect:
                    tol["effect"] = effect
            if tol.get("effect") == "NoExecute" and self.chance(0.3):
                tol["tolerationSeconds"] = 300
            out.append(tol)
        return out

    def selector(self, labels: dict[str, str]) -> Obj:
        rng = self.rng
        if self.chance(0.5):
            return {"matchLabels": {"app": labels["app"] if self.chance(0.5) else rng.choice(APPS)}}
        op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist"])
        key = rng.choice(["app", "tier", "version"])
        values = {"app": APPS, "tier": TIERS, "version": VERSIONS}[key]
        req: Obj = {"key": key, "operator": op}
        if op in ("In", "NotIn"):
            req["values"] = sorted(rng.sample(values, rng.randint(1, 2)))
        return {"matchExpressions": [req]}

    def affinity_term(self, labels: dict[str, str], existing: bool) -> Obj:
        rng = self.rng
        term: Obj = {
            "labelSelector": self.selector(labels),
            "topologyKey": rng.choice([HOSTNAME, HOSTNAME, ZONE, REGION, RACK]),
        }
        r = rng.random()
        if r < 0.2:
            term["namespaces"] = sorted(rng.sample(list(NAMESPACES), rng.randint(1, 2)))
        elif r < 0.3:
            term["namespaceSelector"] = {}
        elif r < 0.45:
            term["namespaceSelector"] = {"matchLabels": {"env": rng.choice(["prod", "dev"])}}
            if self.chance(0.3):
                term["namespaces"] = ["team-b"]
        if not existing and self.chance(0.1):
            key = rng.choice(["version", "tier"])
            sel = term["labelSelector"]
            if key not in {*sel.get("matchLabels", {}), *(e["key"] for e in sel.get("matchExpressions", []))}:
                term["matchLabelKeys" if self.chance(0.5) else "mismatchLabelKeys"] = [key]
        return term

    def pod_affinity(self, labels: dict[str, str], ns: str, existing: bool) -> Obj:
        rng = self.rng
        out: Obj = {}
        for kind in ("podAffinity", "podAntiAffinity"):
            part: Obj = {}
            if self.chance(0.35 if kind == "podAntiAffinity" and existing else 0.15):
                part["requiredDuringSchedulingIgnoredDuringExecution"] = [self.affinity_term(labels, existing)]
            if self.chance(0.4):
                part["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": rng.randint(1, 100), "podAffinityTerm": self.affinity_term(labels, existing)}
                    for _ in range(rng.randint(1, 2))
                ]
            if part:
                out[kind] = part
        if not out:
            out["podAntiAffinity"] = {
                "requiredDuringSchedulingIgnoredDuringExecution": [self.affinity_term(labels, existing)]
            }
        return out

    def spread(self, labels: dict[str, str]) -> list[Obj]:
        rng = self.rng
        out: list[Obj] = []
        seen: set[tuple[str, str]] = set()
        for _ in range(rng.randint(1, 2)):
            key = rng.choice([ZONE, HOSTNAME, REGION, RACK])
            when = rng.choice(["DoNotSchedule", "ScheduleAnyway"])
            if (key, when) in seen:
                continue
            seen.add((key, when))
            c: Obj = {"maxSkew": rng.choice([1, 1, 2, 3]), "topologyKey": key, "whenUnsatisfiable": when}
            if self.chance(0.9):
                c["labelSelector"] = self.selector(labels)
            if when == "DoNotSchedule" and self.chance(0.2):
                c["minDomains"] = rng.randint(1, 5)
            if self.chance(0.25):
                c["nodeAffinityPolicy"] = rng.choice(["Honor", "Ignore"])
            if self.chance(0.25):
                c["nodeTaintsPolicy"] = rng.choice(["Honor", "Ignore"])
            if "labelSelector" in c and self.chance(0.15):
                sel_keys = set(c["labelSelector"].get("matchLabels", {})) | {
                    e["key"] for e in c["labelSelector"].get("matchExpressions", [])
                }
                keys = [k for k in ("version", "tier") if k not in sel_keys]
                if keys:
                    c["matchLabelKeys"] = keys[:1]
            out.append(c)
        return out

    # -- storage
    def storage_base(self) -> None:
        """StorageClasses and CSINodes."""
        rng = self.rng
        for name, prov, mode in (
            ("csi-wffc", CSI, "WaitForFirstConsumer"),
            ("csi-immediate", CSI, "Immediate"),
            ("local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer"),
        ):
            self.storage.append(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "StorageClass",
                    "metadata": {"name": name, "uid": f"sc-{name}"},
                    "provisioner": prov,
                    "reclaimPolicy": "Delete",
                    "volumeBindingMode": mode,
                }
            )
        for n in self.nodes:
            if not self.chance(0.8):
                continue
            drivers: list[Obj] = [{"name": CSI, "nodeID": n.name, "topologyKeys": [ZONE]}]
            if self.chance(0.8):
                drivers[0]["allocatable"] = {"count": rng.randint(1, 4)}
            if self.chance(0.4):
                drivers.append({"name": GCE_CSI, "nodeID": n.name, "allocatable": {"count": rng.randint(1, 3)}})
            self.storage.append(
                {
                    "apiVersion": "storage.k8s.io/v1",
                    "kind": "CSINode",
                    "metadata": {"name": n.name, "uid": f"csinode-{n.name}"},
                    "spec": {"drivers": drivers},
                }
            )

    def pv(self, name: str, sc: str, size_gi: int, mode: str, node: _Node | None, claim: Obj | None) -> None:
        """A PersistentVolume; ``node`` pins it (local: hostname; csi: the node's zone)."""
        spec: Obj = {
            "capacity": {"storage": f"{size_gi}Gi"},
            "accessModes": [mode],
            "persistentVolumeReclaimPolicy": "Delete" if sc != "local" else "Retain",
            "storageClassName": sc,
            "volumeMode": "Filesystem",
        }
        labels: dict[str, str] = {}
        if sc == "local":
            assert node is not None
            spec["local"] = {"path": f"/mnt/disks/{name}"}
            spec["nodeAffinity"] = _node_affinity(HOSTNAME, node.name)
        else:
            spec["csi"] = {"driver": CSI, "volumeHandle": name}
            if node is not None and ZONE in node.labels:
                if self.chance(0.5):
                    spec["nodeAffinity"] = _node_affinity(ZONE, node.labels[ZONE])
                if self.chance(0.6):
                    labels = {ZONE: node.labels[ZONE], REGION: node.labels[REGION]}
        meta: Obj = {"name": name, "uid": f"pv-{self.seed}-{name}"}
        if labels:
            meta["labels"] = labels
        status = {"phase": "Available"}
        if claim is not None:
            meta["annotations"] = {"pv.kubernetes.io/bound-by-controller": "yes"}
            spec["claimRef"] = {
                "kind": "PersistentVolumeClaim",
                "namespace": claim["metadata"]["namespace"],
                "name": claim["metadata"]["name"],
                "uid": claim["metadata"]["uid"],
                "apiVersion": "v1",
            }
            status = {"phase": "Bound"}
        self.storage.append(
            {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": spec, "status": status}
        )

    def pvc(self, ns: str, name: str, sc: str, size_gi: int, mode: str, volume: str | None) -> Obj:
        """A PersistentVolumeClaim, bound to ``volume`` when given."""
        claim: Obj = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": ns, "uid": f"pvc-{self.seed}-{ns}-{name}"},
            "spec": {
                "accessModes": [mode],
                "resources": {"requests": {"storage": f"{size_gi}Gi"}},
                "storageClassName": sc,
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Pending"},
        }
        if volume is not None:
            claim["metadata"]["annotations"] = {
                "pv.kubernetes.io/bind-completed": "yes",
                "pv.kubernetes.io/bound-by-controller": "yes",
            }
            claim["spec"]["volumeName"] = volume
            claim["status"] = {"phase": "Bound", "accessModes": [mode], "capacity": {"storage": f"{size_gi}Gi"}}
        self.storage.append(claim)
        return claim

    def bound_claim(self, ns: str, name: str, mode: str, node: _Node | None) -> None:
        claim = self.pvc(ns, name, "csi-wffc", 10, mode, f"pv-{ns}-{name}")
        self.pv(f"pv-{ns}-{name}", "csi-wffc", 10, mode, node, claim)

    def existing_volume(self, ns: str, node: _Node) -> Obj:
        """A volume of a pod bound to ``node``: a bound CSI claim (maybe RWOP) or a GCE PD."""
        i = len(self.storage)
        if self.chance(0.3):
            return {
                "name": "disk",
                "gcePersistentDisk": {
                    "pdName": self.rng.choice(PD_NAMES),
                    "fsType": "ext4",
                    "readOnly": self.chance(0.3),
                },
            }
        mode = "ReadWriteOncePod" if self.chance(0.3) else "ReadWriteOnce"
        name = f"data-{i}"
        self.bound_claim(ns, name, mode, node)
        if mode == "ReadWriteOncePod":
            self.rwop_in_use.append((ns, name))
        return {"name": "data", "persistentVolumeClaim": {"claimName": name}}

    def incoming_volume(self, ns: str, idx: int) -> Obj:
        """A volume of the incoming pod, of one of the kinds the volume plugins treat differently."""
        rng = self.rng
        vol_name = f"vol{idx}"
        claim = f"claim-{idx}"
        kinds = "bound bound bound local local dynamic dynamic dynamic immediate missing rwop rwop gce gce lost-pv"
        kind = rng.choice(kinds.split())
        if kind == "rwop" and not [c for c in self.rwop_in_use if c[0] == ns]:
            kind = "bound"
        if kind == "gce":
            return {
                "name": vol_name,
                "gcePersistentDisk": {"pdName": rng.choice(PD_NAMES), "fsType": "ext4", "readOnly": self.chance(0.3)},
            }
        if kind == "rwop":
            claim = rng.choice([c for c in self.rwop_in_use if c[0] == ns])[1]
        elif kind == "bound":
            self.bound_claim(ns, claim, "ReadWriteOnce", rng.choice(self.nodes) if self.chance(0.7) else None)
        elif kind == "lost-pv":
            self.pvc(ns, claim, "csi-wffc", 10, "ReadWriteOnce", f"pv-gone-{idx}")
        elif kind == "local":
            size = rng.choice([5, 10, 50])
            self.pvc(ns, claim, "local", size, "ReadWriteOnce", None)
            for j, node in enumerate(rng.sample(self.nodes, min(len(self.nodes), rng.randint(0, 4)))):
                self.pv(f"local-{idx}-{j}", "local", rng.choice([5, 10, 20]), "ReadWriteOnce", node, None)
        elif kind == "dynamic":
            self.pvc(ns, claim, "csi-wffc", 10, "ReadWriteOnce", None)
        elif kind == "immediate":
            self.pvc(ns, claim, "csi-immediate", 10, "ReadWriteOnce", None)
        # "missing": the claim does not exist
        return {"name": vol_name, "persistentVolumeClaim": {"claimName": claim}}

    def merge_label_keys(self, spec: Obj, labels: dict[str, str]) -> None:
        """What the apiserver does on create with matchLabelKeys/mismatchLabelKeys."""
        aff = spec.get("affinity", {})
        for kind in ("podAffinity", "podAntiAffinity"):
            part = aff.get(kind, {})
            terms = list(part.get("requiredDuringSchedulingIgnoredDuringExecution", []))
            terms += [t["podAffinityTerm"] for t in part.get("preferredDuringSchedulingIgnoredDuringExecution", [])]
            for term in terms:
                for field, op in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn")):
                    for key in term.get(field, []):
                        if key in labels and "labelSelector" in term:
                            term["labelSelector"].setdefault("matchExpressions", []).append(
                                {"key": key, "operator": op, "values": [labels[key]]}
                            )
        for c in spec.get("topologySpreadConstraints", []):
            for key in c.get("matchLabelKeys", []):
                if key in labels and "labelSelector" in c:
                    c["labelSelector"].setdefault("matchExpressions", []).append(
                        {"key": key, "operator": "In", "values": [labels[key]]}
                    )


def _node_affinity(key: str, value: str) -> Obj:
    return {
        "required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}]}
    }


def _digest(img: str) -> str:
    """A stable digest reference for an image ("repo:tag" -> "repo@sha256:...")."""
    return f"{img.rsplit(':', 1)[0]}@sha256:{zlib.crc32(img.encode()):064x}"


def _template_spec() -> Obj:
    """A pod template's spec as stored (defaulted)."""
    container = {
        "name": "c",
        "image": "nginx:1.27",
        "imagePullPolicy": "IfNotPresent",
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    return {
        "containers": [container],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
        "securityContext": {},
    }


def _qos(spec: Obj) -> str:
    conts = spec["containers"] + spec.get("initContainers", [])
    res = [c.get("resources", {}) for c in conts]
    if not any(r.get("requests") or r.get("limits") for r in res) and not spec.get("resources"):
        return "BestEffort"
    guaranteed = all(
        set(r.get("limits", {})) >= {"cpu", "memory"} and r.get("requests", {}) == r.get("limits", {}) for r in res
    )
    return "Guaranteed" if guaranteed else "Burstable"


# -- Dynamic Resource Allocation -------------------------------------------------------------------
GPU_DRIVER = "gpu.example.com"
NIC_DRIVER = "nic.example.com"
GPU_MODELS = [("a100", "40Gi"), ("h100", "80Gi"), ("l4", "24Gi")]
# CEL selectors of requests: ones that match some devices, ones that match none, ones that fail at runtime.
DRA_SELECTORS = [
    f'device.attributes["{GPU_DRIVER}"].model == "a100"',
    f'device.attributes["{GPU_DRIVER}"].model in ["h100", "l4"]',
    f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("30Gi")) >= 0',
    f'device.attributes["{GPU_DRIVER}"].index % 2 == 0',
    f'"{GPU_DRIVER}/numa" in device.attributes["{GPU_DRIVER}"] || device.attributes["{GPU_DRIVER}"].model == "l4"',
    f'device.attributes["{GPU_DRIVER}"].model == "b200"',  # matches nothing
    f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("1Ti")) > 0',  # matches nothing
]
DRA_BAD_SELECTORS = [
    f'device.attributes["{GPU_DRIVER}"].missing == "x"',  # no such key at runtime
]
DEVICE_TAINT = {"key": "example.com/unhealthy", "value": "true", "effect": "NoSchedule"}
DRA_GPU = "example.com/dra-gpu"  # an extended resource a DeviceClass may stand for
DRA_CLASSES = ["gpu.example.com", "gpu-large.example.com", "nic.example.com"]


class _DRAGen:
    """DRA objects for a scenario: DeviceClasses, ResourceSlices per node (GPUs with attributes and
    capacity, partitions of a GPU through shared counters, tainted devices, NICs), claims allocated
    on other nodes, and the incoming pod's claims (by name, from templates, shared, prioritized lists,
    admin access, selectors that match, fail and error, and the edge cases behind each reason)."""

    def __init__(self, seed: int, nodes: list[str], edge_cases: bool) -> None:
        self.rng = random.Random(seed * 104729 + 3)
        self.seed = seed
        self.nodes = nodes
        self.edge = edge_cases
        self.objects: list[Obj] = []
        self.devices: dict[str, list[str]] = {}  # node -> GPU device names
        self.shared: dict[str, list[tuple[str, str]]] = {}  # node -> (multi-allocatable GPU, its memory)
        self.n = 0

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def uid(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}-{self.seed}-dra-{self.n}"

    def add(self, pod: Obj, cluster: list[Obj]) -> list[Obj]:
        if not self.chance(0.35):
            return []
        for obj in cluster:  # a few nodes offer the DRA-backed extended resource through a device plugin
            if obj["kind"] == "Node" and self.chance(0.15):
                amount = str(self.rng.choice([0, 2, 4]))
                obj["status"]["allocatable"][DRA_GPU] = obj["status"]["capacity"][DRA_GPU] = amount
        self.classes()
        for node in self.nodes:
            if self.chance(0.6):
                self.gpu_slices(node)
            if self.chance(0.2):
                self.nic_slice(node)
        for node, devices in self.devices.items():
            shared = dict(self.shared.get(node, []))
            for device in devices:
                if device in shared:
                    for _ in range(self.rng.choice([0, 1, 2])):  # shares of it already handed out
                        self.shared_claim(node, device)
                elif self.chance(0.25):
                    self.allocated_claim(node, device)
        self.incoming(pod)
        return self.objects

    def classes(self) -> None:
        def klass(name: str, expr: str | None) -> Obj:
            spec: Obj = {}
            if expr is not None:
                spec["selectors"] = [{"cel": {"expression": expr}}]
            return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                    "metadata": {"name": name, "uid": self.uid("class")}, "spec": spec}

        gpu_class = klass("gpu.example.com", f'device.driver == "{GPU_DRIVER}"')
        if self.chance(0.6):  # DRA-backed extended resource (the DRAExtendedResource feature)
            gpu_class["spec"]["extendedResourceName"] = DRA_GPU
        self.objects.append(gpu_class)
        self.objects.append(klass("gpu-large.example.com", f'device.driver == "{GPU_DRIVER}" && '
                                  f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'))
        self.objects.append(klass("nic.example.com", f'device.driver == "{NIC_DRIVER}"'))
        if self.chance(0.5):
            self.objects.append(klass("any.example.com", None))

    def slice_obj(self, node: str, driver: str, name: str, count: int, spec: Obj) -> Obj:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": name, "uid": self.uid("slice")},
                "spec": {"driver": driver, "nodeName": node,
                         "pool": {"name": node, "generation": 1, "resourceSliceCount": count}, **spec}}

    def gpu_slices(self, node: str) -> None:
        rng = self.rng
        devices: list[Obj] = []
        names: list[str] = []
        partitioned = self.chance(0.3)
        for i in range(rng.randint(1, 4)):
            model, memory = rng.choice(GPU_MODELS)
            attrs: Obj = {"model": {"string": model}, "index": {"int": i},
                          "driverVersion": {"version": rng.choice(["1.2.3", "2.0.0"])}}
            if self.chance(0.5):
                attrs["numa"] = {"int": i // 2}
            device: Obj = {"name": f"gpu-{i}", "attributes": attrs, "capacity": {"memory": {"value": memory}}}
            if self.chance(0.12):
                device["taints"] = [{**DEVICE_TAINT, "timeAdded": "2026-01-01T00:00:00Z"}]
            elif self.chance(0.1):  # attached on demand: the scheduler waits for the driver in PreBind
                device["bindsToNode"] = True
                device["bindingConditions"] = ["example.com/attached"]
                device["bindingFailureConditions"] = ["example.com/attach-failed"]
            elif self.chance(0.15):  # shared by consumed capacity
                device["allowMultipleAllocations"] = True
                self.shared.setdefault(node, []).append((f"gpu-{i}", memory))
                device["capacity"]["memory"]["requestPolicy"] = {
                    "default": "10Gi", "validRange": {"min": "5Gi", "step": "5Gi"}}
            devices.append(device)
            names.append(f"gpu-{i}")
        if partitioned:
            # One physical GPU offered whole or as two halves: all three consume the same counters.
            for part, share in (("gpu-p-full", "80Gi"), ("gpu-p-0", "40Gi"), ("gpu-p-1", "40Gi")):
                consumes = [{"counterSet": "gpu-p", "counters": {"memory": {"value": share}}}]
                devices.append({"name": part, "attributes": {"model": {"string": "h100"}, "index": {"int": 9}},
                                "capacity": {"memory": {"value": share}}, "consumesCounters": consumes})
                names.append(part)
        count = 2 if partitioned else 1
        self.objects.append(self.slice_obj(node, GPU_DRIVER, f"{node}-gpu", count, {"devices": devices}))
        if partitioned:
            counters = {"sharedCounters": [{"name": "gpu-p", "counters": {"memory": {"value": "80Gi"}}}]}
            self.objects.append(self.slice_obj(node, GPU_DRIVER, f"{node}-gpu-counters", count, counters))
        self.devices[node] = names

    def nic_slice(self, node: str) -> None:
        devices = [{"name": f"nic-{i}", "attributes": {"speed": {"int": self.rng.choice([10, 100])}}}
                   for i in range(self.rng.randint(1, 2))]
        self.objects.append(self.slice_obj(node, NIC_DRIVER, f"{node}-nic", 1, {"devices": devices}))

    def claim_obj(self, ns: str, name: str, requests: list[Obj], extra_spec: Obj | None = None,
                  owner: Obj | None = None) -> Obj:
        meta: Obj = {"name": name, "namespace": ns, "uid": self.uid("claim")}
        if owner is not None:
            meta["ownerReferences"] = [owner]
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
                "spec": {"devices": {"requests": requests, **(extra_spec or {})}}}

    def allocate(self, claim: Obj, node: str, results: list[Obj], consumer: str) -> None:
        claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
        claim["status"] = {
            "allocation": {
                "devices": {"results": results},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
            },
            "reservedFor": [{"resource": "pods", "name": consumer, "uid": self.uid("pod")}],
        }

    def allocated_claim(self, node: str, device: str) -> None:
        ns = self.rng.choice(list(NAMESPACES))
        name = f"used-{node}-{device}"
        request = {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount",
                                              "count": 1}}
        claim = self.claim_obj(ns, name, [request])
        self.allocate(claim, node, [{"request": "gpu", "driver": GPU_DRIVER, "pool": node, "device": device}],
                      f"user-{device}")
        self.objects.append(claim)

    def shared_claim(self, node: str, device: str) -> None:
        """A claim holding a share of a multi-allocatable GPU: its share ID and the memory it consumed."""
        self.n += 1
        share = f"00000000-0000-4000-8000-{self.seed % 10**6:06d}{self.n:06d}"
        consumed = self.rng.choice(["10Gi", "15Gi", "20Gi"])
        request = {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount",
                                              "count": 1, "capacity": {"requests": {"memory": consumed}}}}
        claim = self.claim_obj(self.rng.choice(list(NAMESPACES)), f"share-{node}-{device}-{self.n}", [request])
        self.allocate(claim, node, [{"request": "gpu", "driver": GPU_DRIVER, "pool": node, "device": device,
                                     "shareID": share, "consumedCapacity": {"memory": consumed}}], f"user-{self.n}")
        self.objects.append(claim)

    def exact(self, klass: str | None = None) -> Obj:
        rng = self.rng
        exact: Obj = {"deviceClassName": klass or rng.choice(["gpu.example.com", "gpu.example.com",
                                                               "gpu-large.example.com"])}
        if self.chance(0.1):
            exact["allocationMode"] = "All"
        else:
            exact["allocationMode"] = "ExactCount"
            exact["count"] = rng.choice([1, 1, 1, 2])
        if self.chance(0.45):
            pool = DRA_SELECTORS + (DRA_BAD_SELECTORS if self.edge and self.chance(0.2) else [])
            exact["selectors"] = [{"cel": {"expression": rng.choice(pool)}}]
        if self.chance(0.25):
            exact["tolerations"] = [{"key": DEVICE_TAINT["key"], "operator": "Exists", "effect": "NoSchedule"}]
        if self.chance(0.12):
            exact["capacity"] = {"requests": {"memory": rng.choice(["5Gi", "10Gi", "12Gi", "30Gi"])}}
        if self.edge and self.chance(0.04):
            exact["deviceClassName"] = "missing.example.com"
        return exact

    def requests(self) -> tuple[list[Obj], Obj]:
        rng = self.rng
        requests: list[Obj] = []
        for r in range(rng.choice([1, 1, 2])):
            if self.chance(0.25):
                subs = []
                for j, klass in enumerate(rng.sample(["gpu-large.example.com", "gpu.example.com", "nic.example.com"],
                                                     rng.randint(2, 3))):
                    sub = {"name": f"alt{j}", **self.exact(klass)}
                    if sub.get("allocationMode") == "All":
                        sub["allocationMode"], sub["count"] = "ExactCount", 1
                    subs.append(sub)
                requests.append({"name": f"req{r}", "firstAvailable": subs})
            elif self.chance(0.1):
                requests.append({"name": f"req{r}", "exactly": {**self.exact("nic.example.com")}})
            else:
                exact = self.exact()
                if self.chance(0.08):
                    exact["adminAccess"] = True
                requests.append({"name": f"req{r}", "exactly": exact})
        extra: Obj = {}
        if len(requests) > 1 and self.chance(0.3):
            extra["constraints"] = [{"matchAttribute": f"{GPU_DRIVER}/model"}]
        return requests, extra

    def incoming(self, pod: Obj) -> None:
        rng = self.rng
        meta = pod["metadata"]
        ns, pod_name, pod_uid = meta["namespace"], meta["name"], meta["uid"]
        owner = {"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": pod_uid,
                 "controller": True, "blockOwnerDeletion": True}
        pod_claims: list[Obj] = []
        statuses: list[Obj] = []
        for i in range(rng.choice([1, 1, 1, 2])):
            entry = f"claim-{i}"
            how = rng.random()
            if how < 0.4:  # a claim by name, created beside the pod
                name = f"incoming-claim-{i}"
                requests, extra = self.requests()
                self.objects.append(self.claim_obj(ns, name, requests, extra))
                pod_claims.append({"name": entry, "resourceClaimName": name})
            elif how < 0.75:  # from a template: the claim the controller generated for the pod
                name = f"incoming-{entry}-x{i}"
                requests, extra = self.requests()
                self.objects.append(self.claim_obj(ns, name, requests, extra, owner=owner))
                pod_claims.append({"name": entry, "resourceClaimTemplateName": f"template-{i}"})
                statuses.append({"name": entry, "resourceClaimName": name})
            elif how < 0.9 and self.devices:  # shared: already allocated on a node for another pod
                node = rng.choice(sorted(self.devices))
                device = rng.choice(self.devices[node])
                name = f"shared-{i}"
                request = {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                                      "allocationMode": "ExactCount", "count": 1}}
                claim = self.claim_obj(ns, name, [request])
                result = {"request": "gpu", "driver": GPU_DRIVER, "pool": node, "device": device}
                binding = self.chance(0.35)
                if binding:  # a device that waits for its driver before the pod may bind
                    result["bindingConditions"] = ["example.com/attached"]
                    result["bindingFailureConditions"] = ["example.com/attach-failed"]
                self.allocate(claim, node, [result], "other")
                if binding and self.chance(0.7):
                    cond_type = rng.choice(["example.com/attached", "example.com/attach-failed"])
                    claim["status"]["devices"] = [{
                        "driver": GPU_DRIVER, "pool": node, "device": device,
                        "conditions": [{"type": cond_type, "status": rng.choice(["True", "False"]),
                                        "reason": "Driver", "message": "", "observedGeneration": 0,
                                        "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]
                self.objects.append(claim)
                pod_claims.append({"name": entry, "resourceClaimName": name})
            elif self.edge:
                kind = rng.choice(["missing", "no-status", "not-owner", "deleting"])
                if kind == "missing":
                    pod_claims.append({"name": entry, "resourceClaimName": f"missing-{i}"})
                elif kind == "no-status":
                    pod_claims.append({"name": entry, "resourceClaimTemplateName": f"template-{i}"})
                elif kind == "not-owner":
                    name = f"foreign-{i}"
                    requests, extra = self.requests()
                    self.objects.append(self.claim_obj(ns, name, requests, extra))
                    pod_claims.append({"name": entry, "resourceClaimTemplateName": f"template-{i}"})
                    statuses.append({"name": entry, "resourceClaimName": name})
                else:
                    name = f"deleting-{i}"
                    requests, extra = self.requests()
                    claim = self.claim_obj(ns, name, requests, extra)
                    claim["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
                    claim["metadata"]["finalizers"] = ["example.com/hold"]
                    self.objects.append(claim)
                    pod_claims.append({"name": entry, "resourceClaimName": name})
        if self.chance(0.4):
            klass = rng.choice([*DRA_CLASSES, "any.example.com"])
            name = DRA_GPU if self.chance(0.6) else f"deviceclass.resource.kubernetes.io/{klass}"
            container = rng.choice(pod["spec"]["containers"] + pod["spec"].get("initContainers", []))
            resources = container.setdefault("resources", {})
            amount = str(rng.choice([1, 1, 2, 3]))
            resources.setdefault("requests", {})[name] = amount
            resources.setdefault("limits", {})[name] = amount
            if self.chance(0.5):
                pod_claims = pod_claims if self.chance(0.5) else []
                statuses = [st for st in statuses if any(st["name"] == c["name"] for c in pod_claims)]
        if pod_claims:
            pod["spec"]["resourceClaims"] = pod_claims
        if statuses:
            pod["status"]["resourceClaimStatuses"] = statuses


# Node declared features (component-helpers/nodedeclaredfeatures): the registry, plus a name it lacks.
DECLARED_FEATURES = ["ExtendWebSocketsToKubelet", "InPlacePodLevelResourcesVerticalScaling",
                     "InPlacePodVerticalScalingInitContainers", "RestartAllContainersOnContainerExits",
                     "UserNamespacesHostNetworkSupport", "ZzNotRegistered"]


def _declared_features(seed: int, objects: list[Obj], pod: Obj) -> None:
    """Nodes declare (sorted) features; some incoming pods need RestartAllContainersOnContainerExits."""
    rng = random.Random(seed * 7907 + 11)
    if rng.random() >= 0.3:
        return
    for obj in objects:
        if obj["kind"] == "Node" and rng.random() < 0.7:
            obj["status"]["declaredFeatures"] = sorted(rng.sample(DECLARED_FEATURES, rng.randint(1, 4)))
    if rng.random() < 0.6:
        containers = pod["spec"]["containers"]
        target = containers[rng.randrange(len(containers))]
        target["restartPolicy"] = "Never"
        target["restartPolicyRules"] = [{"action": "RestartAllContainers",
                                         "exitCodes": {"operator": "In", "values": [42]}}]


# What differs between the supported kube-scheduler releases, generated from a random stream of its own (so that
# the other content of a seed stays as it was): see docs/versions.md.
_VERSION_STREAM = 104729


class _VersionExtras:
    """Content where v1.36 and v1.37 decide differently (docs/versions.md), valid in the given release's API."""

    def __init__(self, seed: int, version: str) -> None:
        self.rng = random.Random(seed * _VERSION_STREAM + 3)
        self.version = version

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def add(self, objects: list[Obj], pod: Obj) -> None:
        nodes = [o for o in objects if o["kind"] == "Node"]
        pods = [o for o in objects if o["kind"] == "Pod" and o["spec"].get("nodeName")]
        if self.chance(0.2):
            self.image_volumes(pod, nodes)
        if pods and self.chance(0.3):
            for existing in self.rng.sample(pods, max(1, len(pods) // 4)):
                self.resized(existing)
        if self.chance(0.12):
            self.namespace_selector(pod)
        if nodes and self.chance(0.06):
            self.pinned_with_affinity(pod, nodes)
        if self.chance(0.3):
            objects.extend(self.storage_capacity(objects))
        if self.version == "1.37" and self.chance(0.1):
            self.bind_mount_options(pod, nodes)
        if self.version == "1.37" and pods and self.chance(0.1):
            self.deferred_resize(pod, self.rng.choice(pods), nodes)

    def image_volumes(self, pod: Obj, nodes: list[Obj]) -> None:
        """ImageLocality counts image volumes among the pod's images in v1.37 (not in v1.36)."""
        images = [names["names"][0] for n in nodes for names in n["status"].get("images", [])] or ["nginx:latest"]
        volumes = pod["spec"].setdefault("volumes", [])
        for i in range(self.rng.randint(1, 2)):
            volumes.append({"name": f"image-vol-{i}", "image": {"reference": self.rng.choice(images),
                                                                 "pullPolicy": "IfNotPresent"}})

    def resized(self, pod: Obj) -> None:
        """An in-place resize in the status: v1.36 takes the max per container, v1.37 the max of the totals."""
        statuses = []
        for c in pod["spec"]["containers"]:
            requests = (c.get("resources") or {}).get("requests") or {}
            entry: Obj = {"name": c["name"], "image": c["image"], "imageID": "", "ready": True, "restartCount": 0,
                          "state": {"running": {"startedAt": "2025-01-01T00:00:00Z"}}}
            if requests and self.chance(0.8):
                entry["allocatedResources"] = {k: self._scaled(k, v) for k, v in requests.items()}
            if self.chance(0.7):
                entry["resources"] = {"requests": {k: self._scaled(k, v) for k, v in requests.items()}} \
                    if requests and self.chance(0.8) else {}
            statuses.append(entry)
        pod["status"]["containerStatuses"] = statuses
        if self.chance(0.4):
            reason = self.rng.choice(["Infeasible", "Deferred"])
            pod["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": reason}]

    def _scaled(self, resource: str, quantity: str) -> str:
        """The quantity scaled up or down, in whole milli-cpu or bytes (others as they are)."""
        factor = self.rng.choice([0.5, 1.5, 2, 3])
        value = _parse_quantity(quantity)
        if value is None or resource not in ("cpu", "memory"):
            return quantity
        if resource == "cpu":
            return f"{max(1, int(value * 1000 * factor))}m"
        return str(max(1, int(value * factor)))

    def namespace_selector(self, pod: Obj) -> None:
        """A namespace selector that the empty label set satisfies: in v1.36 it stays in force beside the names it
        selects (so it matches pods of every namespace); v1.37 replaces it by the names."""
        affinity = pod["spec"].setdefault("affinity", {})
        kind = self.rng.choice(["podAffinity", "podAntiAffinity"])
        selector = self.rng.choice([
            {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["b"]}]},
            {"matchExpressions": [{"key": "env", "operator": "DoesNotExist"}]},
            {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]},
        ])
        term = {"labelSelector": {"matchLabels": {"app": self.rng.choice(APPS)}}, "namespaceSelector": selector,
                "topologyKey": self.rng.choice([ZONE, HOSTNAME])}
        part = affinity.setdefault(kind, {})
        if self.chance(0.5):
            part.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            part.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": self.rng.randint(1, 100), "podAffinityTerm": term})

    def pinned_with_affinity(self, pod: Obj, nodes: list[Obj]) -> None:
        """spec.nodeName and a metadata.name affinity: v1.37's NodeName PreFilterResult meets NodeAffinity's."""
        names = [n["metadata"]["name"] for n in nodes]
        pod["spec"]["nodeName"] = self.rng.choice(names)
        wanted = self.rng.sample(names, min(len(names), self.rng.randint(1, 3)))
        # One value per requirement (the apiserver's rule for metadata.name); the terms are ORed.
        pod["spec"].setdefault("affinity", {})["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
                                  for name in wanted]}}

    def storage_capacity(self, objects: list[Obj]) -> list[Obj]:
        """The CSI driver tracks capacity (VolumeBinding scores it in v1.37) and may require to be installed on the
        node (NodeVolumeLimits with VolumeLimitScaling, v1.37)."""
        if not any(o["kind"] == "StorageClass" for o in objects):
            return []
        zones = sorted({n["metadata"]["labels"][ZONE] for n in objects
                        if n["kind"] == "Node" and ZONE in n["metadata"]["labels"]})
        driver: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                       "metadata": {"name": CSI, "uid": "csidriver-1"},
                       "spec": {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": self.chance(0.8),
                                "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": False,
                                "volumeLifecycleModes": ["Persistent"], "seLinuxMount": False}}
        if self.version == "1.37":  # VolumeLimitScaling: beta and on (defaulted to false); off in 1.36 (dropped)
            driver["spec"]["preventPodSchedulingIfMissing"] = self.chance(0.5)
        out = [driver]
        for i, zone in enumerate(zones):
            if self.chance(0.8):
                capacity: Obj = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                                 "metadata": {"name": f"capacity-{i}", "namespace": "default", "uid": f"cap-{i}"},
                                 "storageClassName": "csi-wffc",
                                 "nodeTopology": {"matchLabels": {ZONE: zone}},
                                 "capacity": f"{self.rng.choice([5, 10, 20, 40, 100])}Gi"}
                out.append(capacity)
        return out

    def deferred_resize(self, pod: Obj, bound: Obj, nodes: list[Obj]) -> None:
        """See _deferred_resize."""
        _deferred_resize(self, pod, bound, nodes)

    def bind_mount_options(self, pod: Obj, nodes: list[Obj]) -> None:
        """A volume mount with bindMountOptions needs the VolumeBindMountOptions declared feature (v1.37)."""
        spec = pod["spec"]
        spec.setdefault("volumes", []).append({"name": "scratch", "emptyDir": {}})
        spec["containers"][0].setdefault("volumeMounts", []).append(
            {"name": "scratch", "mountPath": "/scratch", "bindMountOptions": [self.rng.choice(["noexec", "nodev"])]})
        for node in nodes:
            if self.chance(0.5):
                declared = set(node["status"].get("declaredFeatures", [])) | {"VolumeBindMountOptions"}
                node["status"]["declaredFeatures"] = sorted(declared)


def stored_in_v137(objects: list[Obj]) -> None:
    """What v1.37's apiserver adds on create: StatefulSets' rollingUpdate.maxUnavailable defaults to 1
    (MaxUnavailableStatefulSet is on by default)."""
    for obj in objects:
        if obj["kind"] == "StatefulSet":
            rolling = obj["spec"].get("updateStrategy", {}).get("rollingUpdate")
            if rolling is not None and "maxUnavailable" not in rolling:
                rolling["maxUnavailable"] = 1


def _deferred_resize(extras: _VersionExtras, pod: Obj, bound: Obj, nodes: list[Obj]) -> None:
    """A bound pod asks for more than it has (a resize the kubelet deferred) and is the pod to schedule: with
    InPlacePodVerticalScalingSchedulerPreemption, v1.37 filters only its node, by what it asks beyond what the
    node counts for it (its own copy, which the cache already holds); some nodes disable resize preemption
    (spec.podPreemptionPolicy)."""
    for c in bound["spec"]["containers"]:
        requests = (c.get("resources") or {}).get("requests")
        if requests:
            c["resources"]["requests"] = {k: extras._scaled(k, v) for k, v in requests.items()}
            limits = c["resources"].get("limits") or {}
            for k in list(limits):
                if k in ("cpu", "memory") and k in c["resources"]["requests"]:
                    limits[k] = c["resources"]["requests"][k]
    bound["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}]
    pod.clear()
    pod.update(copy.deepcopy(bound))
    for node in nodes:
        if extras.chance(0.3):
            node["spec"]["podPreemptionPolicy"] = {"disableResizePreemption": ["autoscaler"]}


def _parse_quantity(quantity: str) -> float | None:
    """A quantity's value (binary and decimal suffixes), None for forms this helper does not read."""
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3,
             "M": 1e6, "G": 1e9, "T": 1e12}
    for suffix in sorted(units, key=len, reverse=True):
        if quantity.endswith(suffix):
            try:
                return float(quantity[: -len(suffix)]) * units[suffix]
            except ValueError:
                return None
    try:
        return float(quantity)
    except ValueError:
        return None


def generate(seed: int, features: Features | None = None, version: str = "1.36") -> Obj:
    """One scenario, a pure function of ``seed``, ``features`` and the release its API is for."""
    features = features or Features()
    scenario = _Gen(seed, features).scenario()
    if features.version_differences:
        _VersionExtras(seed, version).add(scenario["objects"], scenario["pod"])
    if version == "1.37":
        stored_in_v137(scenario["objects"])
    return scenario


def _deallocatable_claim(seed: int, objects: list[Obj], pod: Obj) -> None:
    """Sometimes one of the incoming pod's claims by name is already allocated on a node and reserved for no
    pod, and that node is often cordoned: DynamicResources' PostFilter deallocates such a claim when no node
    fits. A generator of its own keeps the other scenarios as they were."""
    rng = random.Random(seed * 6053 + 7)
    if rng.random() >= 0.3:
        return
    by_name = {(o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objects
               if o["kind"] == "ResourceClaim"}
    ns = pod["metadata"]["namespace"]
    named = [by_name[(ns, c["resourceClaimName"])] for c in pod["spec"].get("resourceClaims", [])
             if "resourceClaimName" in c and (ns, c["resourceClaimName"]) in by_name
             and "status" not in by_name[(ns, c["resourceClaimName"])]
             and "deletionTimestamp" not in by_name[(ns, c["resourceClaimName"])]["metadata"]]
    used = {(r["pool"], r["device"]) for o in by_name.values()
            for r in ((o.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", [])}
    free = [(o["spec"]["nodeName"], d["name"]) for o in objects if o["kind"] == "ResourceSlice"
            and o["spec"]["driver"] == GPU_DRIVER for d in o["spec"].get("devices", [])
            if "consumesCounters" not in d and not d.get("allowMultipleAllocations")
            and (o["spec"]["nodeName"], d["name"]) not in used]
    if not named or not free:
        return
    claim = rng.choice(named)
    node, device = rng.choice(free)
    request = {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount",
                                          "count": 1}}
    claim["spec"] = {"devices": {"requests": [request]}}
    claim["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    # Allocated as kube-scheduler allocates (with the time: v1.36.3's PreBind cannot reserve a claim whose
    # allocation lacks it, as it then adds one and the apiserver refuses the changed allocation).
    claim["status"] = {"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": GPU_DRIVER, "pool": node, "device": device}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
        "allocationTimestamp": "2026-01-01T00:00:00Z"}}
    if rng.random() < 0.7:  # its node is cordoned: nothing else rules it out
        for obj in objects:
            if obj["kind"] == "Node" and obj["metadata"]["name"] == node and not obj["spec"].get("unschedulable"):
                obj["spec"]["unschedulable"] = True
                obj["spec"]["taints"] = [*obj["spec"].get("taints", []),
                                         {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]


# Priority classes of generated pods: (name, value, preemption policy).
PRIORITY_CLASSES = [("low", 100, "PreemptLowerPriority"), ("mid", 1000, "PreemptLowerPriority"),
                    ("high", 10000, "PreemptLowerPriority"), ("polite", 5000, "Never")]


def _priorities(seed: int, objects: list[Obj], pod: Obj) -> None:
    """Sometimes pods have priorities (from PriorityClasses, as admission sets them), start times, and
    PodDisruptionBudgets guard some: what DefaultPreemption weighs when the incoming pod fits nowhere. A
    generator of its own keeps the other scenarios as they were."""
    rng = random.Random(seed * 7753 + 31)
    if rng.random() >= 0.4:
        return
    for name, value, policy in PRIORITY_CLASSES:
        objects.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                        "metadata": {"name": name, "uid": f"pc-{name}"}, "value": value, "preemptionPolicy": policy})

    def prioritise(target: Obj, choices: list[tuple[str, int, str]]) -> None:
        name, value, policy = rng.choice(choices)
        target["spec"].update({"priorityClassName": name, "priority": value, "preemptionPolicy": policy})

    existing = [o for o in objects if o["kind"] == "Pod" and o["spec"].get("nodeName")]
    for i, obj in enumerate(existing):
        if rng.random() < 0.7:
            prioritise(obj, PRIORITY_CLASSES[:3])
        # Distinct start times (kube-scheduler gives a pod without one "now", which makes orders unstable).
        obj["status"]["startTime"] = f"2026-01-01T{i // 60:02d}:{i % 60:02d}:00Z"
    prioritise(pod, [PRIORITY_CLASSES[0], *PRIORITY_CLASSES[1:3] * 3, PRIORITY_CLASSES[3]])
    if rng.random() < 0.5:
        _needs_eviction(rng, objects, pod, existing)
    for i in range(rng.randint(0, 3)):
        ns = rng.choice(list(NAMESPACES))
        selector: Obj = {"matchLabels": {"app": rng.choice(APPS)}}
        if rng.random() < 0.3:
            selector = {"matchExpressions": [{"key": "tier", "operator": "In", "values": [rng.choice(TIERS)]}]}
        matched = [o["metadata"]["name"] for o in existing if o["metadata"]["namespace"] == ns]
        allowed = rng.choice([0, 0, 1, 2])
        status: Obj = {"disruptionsAllowed": allowed, "currentHealthy": 2, "desiredHealthy": 2 - allowed,
                       "expectedPods": 2, "observedGeneration": 1}
        if matched and rng.random() < 0.3:
            status["disruptedPods"] = {rng.choice(matched): "2026-01-01T00:00:00Z"}
        spec: Obj = {"selector": selector}
        if rng.random() < 0.5:
            spec["minAvailable"] = 1
        else:
            spec["maxUnavailable"] = 1
        objects.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                        "metadata": {"name": f"pdb-{i}", "namespace": ns, "uid": f"pdb-{seed}-{i}", "generation": 1},
                        "spec": spec, "status": status})


def _milli_cpu(quantity: str) -> int:
    """Millicores of a CPU quantity in the spellings ``cpu()`` writes."""
    for suffix, scale in (("m", 1), ("u", 1e-3), ("n", 1e-6)):
        if quantity.endswith(suffix):
            return int(float(quantity[:-1]) * scale)
    return int(float(quantity) * 1000)


def _needs_eviction(rng: random.Random, objects: list[Obj], pod: Obj, existing: list[Obj]) -> None:
    """Make the incoming pod ask for the CPU one node has free plus some of what lower-priority pods use
    there: only an eviction makes room (if nothing else rules the node out)."""
    spec = pod["spec"]
    if spec.get("resources") or spec.get("overhead") or spec.get("initContainers"):
        return
    nodes = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Node"}
    name = rng.choice(sorted(nodes))
    on_node = [o for o in existing if o["spec"]["nodeName"] == name and "deletionTimestamp" not in o["metadata"]]

    def cpu_of(p: Obj) -> int:
        containers = p["spec"]["containers"]
        return sum(_milli_cpu(c.get("resources", {}).get("requests", {}).get("cpu", "0")) for c in containers)

    lower = [p for p in on_node if p["spec"].get("priority", 0) < spec["priority"] and cpu_of(p)]
    if not lower:
        return
    free = _milli_cpu(nodes[name]["status"]["allocatable"]["cpu"]) - sum(cpu_of(p) for p in on_node)
    need = max(free, 0) + sum(cpu_of(p) for p in rng.sample(lower, rng.randint(1, len(lower)))) - 10 * (
        len(spec["containers"]) - 1)
    if need <= 0:
        return
    first, *others = spec["containers"]
    for c in others:  # the others ask for 10m each
        c.setdefault("resources", {}).setdefault("requests", {})["cpu"] = "10m"
        c["resources"].get("limits", {}).pop("cpu", None)
    resources = first.setdefault("resources", {})
    resources.setdefault("requests", {})["cpu"] = f"{need}m"
    if "cpu" in resources.get("limits", {}):
        resources["limits"]["cpu"] = f"{need}m"
    pod["status"]["qosClass"] = _qos(spec)


def generate_profile(seed: int) -> Obj:
    """A v1 KubeSchedulerProfile on top of the defaults: random score weights and plugin args
    (NodeResourcesFit strategies and resources, ignored resources, BalancedAllocation resources,
    hardPodAffinityWeight, PodTopologySpread defaulting, NodeAffinity addedAffinity)."""
    rng = random.Random(seed * 7919 + 17)
    chance = rng.random
    weights = {p: rng.randint(1, 5) for p in ("TaintToleration", "NodeAffinity", "NodeResourcesFit",
                                                   "PodTopologySpread", "InterPodAffinity",
                                                   "NodeResourcesBalancedAllocation", "ImageLocality")
               if chance() < 0.4}  # fmt: skip
    config: list[Obj] = []
    resources = [{"name": "cpu", "weight": rng.randint(1, 5)}, {"name": "memory", "weight": rng.randint(1, 5)}]
    for extra in (GPU, EPH, HUGE):
        if chance() < 0.25:
            resources.append({"name": extra, "weight": rng.randint(1, 5)})
    strategy: Obj = {"type": rng.choice(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])}
    if chance() < 0.7:
        strategy["resources"] = resources
    if strategy["type"] == "RequestedToCapacityRatio":
        points = sorted(rng.sample(range(0, 101), rng.randint(1, 3)))
        strategy["requestedToCapacityRatio"] = {
            "shape": [{"utilization": u, "score": rng.randint(0, 10)} for u in points]
        }
    fit: Obj = {"scoringStrategy": strategy}
    if chance() < 0.2:
        fit["ignoredResources"] = [GPU]
    elif chance() < 0.2:
        fit["ignoredResourceGroups"] = ["example.com"]
    config.append({"name": "NodeResourcesFit", "args": fit})
    if chance() < 0.4:
        balanced = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
        if chance() < 0.5:
            balanced.append({"name": rng.choice([GPU, EPH]), "weight": 1})
        config.append({"name": "NodeResourcesBalancedAllocation", "args": {"resources": balanced}})
    if chance() < 0.4:
        ipa: Obj = {"hardPodAffinityWeight": rng.choice([0, 1, 5, 100])}
        if chance() < 0.3:
            ipa["ignorePreferredTermsOfExistingPods"] = True
        config.append({"name": "InterPodAffinity", "args": ipa})
    if chance() < 0.3:
        constraints = []
        for key in rng.sample([ZONE, HOSTNAME, RACK], rng.randint(1, 2)):
            when = rng.choice(["ScheduleAnyway", "DoNotSchedule"])
            constraints.append({"maxSkew": rng.randint(1, 3), "topologyKey": key, "whenUnsatisfiable": when})
        spread = {"defaultingType": "List", "defaultConstraints": constraints}
        config.append({"name": "PodTopologySpread", "args": spread})
    if chance() < 0.2:
        term = {"matchExpressions": [{"key": GEN, "operator": "Gt", "values": [str(rng.randint(0, 5))]}]}
        added: Obj = {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 30, "preference": term}]}
        if chance() < 0.5:
            added["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
        config.append({"name": "NodeAffinity", "args": {"addedAffinity": added}})
    _dra_scoring_resources(seed, config)
    profile: Obj = {"schedulerName": "default-scheduler", "pluginConfig": config}
    if weights:
        profile["plugins"] = {"multiPoint": {"enabled": [{"name": p, "weight": w} for p, w in weights.items()]}}
    return profile


# Scoring resources a DeviceClass may stand for: the explicit extended resource name and the implicit
# names of the scenario's classes (any.example.com exists in some scenarios only; missing.example.com never).
DRA_SCORING_RESOURCES = [DRA_GPU, DRA_GPU, *(f"deviceclass.resource.kubernetes.io/{c}" for c in
                                             [*DRA_CLASSES, "any.example.com", "missing.example.com"])]
# BalancedAllocation only names classes without CEL selectors: v1.36.3 builds its scorer without a CEL
# cache, and kube-scheduler panics on the first device it must match against a class selector.
DRA_BALANCED_RESOURCES = [f"deviceclass.resource.kubernetes.io/{c}" for c in ("any.example.com",
                                                                              "missing.example.com")]


def _dra_scoring_resources(seed: int, config: list[Obj]) -> None:
    """Some profiles score DRA-backed extended resources too (NodeResourcesFit's strategy and
    BalancedAllocation), counted in devices where the node has no allocatable of them. A generator of
    its own keeps the rest of every profile as it was."""
    rng = random.Random(seed * 6151 + 29)
    for entry in config:
        if rng.random() >= 0.4:
            continue
        if entry["name"] == "NodeResourcesFit":
            names = rng.sample(DRA_SCORING_RESOURCES, rng.randint(1, 2))
            strategy = entry["args"]["scoringStrategy"]
            listed = strategy.setdefault("resources", [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}])
            listed.extend({"name": n, "weight": rng.randint(1, 5)} for n in dict.fromkeys(names)
                          if all(r["name"] != n for r in listed))
        elif entry["name"] == "NodeResourcesBalancedAllocation":
            names = rng.sample(DRA_BALANCED_RESOURCES, rng.randint(1, 2))
            listed = entry["args"]["resources"]
            listed.extend({"name": n, "weight": 1} for n in dict.fromkeys(names)
                          if all(r["name"] != n for r in listed))


def dra_scoring_profile(seed: int) -> Obj:
    """A profile whose NodeResourcesFit strategy always scores DRA-backed extended resources (the
    explicit name and a class's implicit one) beside cpu and memory, and whose BalancedAllocation scores
    a class without selectors (see DRA_BALANCED_RESOURCES)."""
    rng = random.Random(seed * 4243 + 5)
    implicit = f"deviceclass.resource.kubernetes.io/{rng.choice([*DRA_CLASSES, 'any.example.com'])}"
    resources = [{"name": n, "weight": rng.randint(1, 5)} for n in ("cpu", "memory", DRA_GPU, implicit)]
    strategy: Obj = {"type": rng.choice(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]),
                     "resources": resources}
    if strategy["type"] == "RequestedToCapacityRatio":
        points = sorted(rng.sample(range(0, 101), rng.randint(1, 3)))
        strategy["requestedToCapacityRatio"] = {
            "shape": [{"utilization": u, "score": rng.randint(0, 10)} for u in points]}
    balanced = [{"name": n, "weight": 1} for n in ("cpu", "memory", *DRA_BALANCED_RESOURCES)]
    return {"schedulerName": "default-scheduler", "pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}},
        {"name": "NodeResourcesBalancedAllocation", "args": {"resources": balanced}}]}


def requests_dra_backed_resource(scenario: Obj) -> bool:
    """Whether the scenario has DeviceClasses and its pod requests a resource one may stand for."""
    if not any(obj["kind"] == "DeviceClass" for obj in scenario["objects"]):
        return False
    spec = scenario["pod"]["spec"]
    names = {name for c in spec["containers"] + spec.get("initContainers", [])
             for name in c.get("resources", {}).get("requests", {})}
    return any(n == DRA_GPU or n.startswith("deviceclass.resource.kubernetes.io/") for n in names)


def has_priorities(scenario: Obj) -> bool:
    """Whether the scenario's pods have priorities (and so preemption has victims to weigh)."""
    return any(obj["kind"] == "PriorityClass" for obj in scenario["objects"])


def generate_many(seed: int, count: int, features: Features | None = None, version: str = "1.36") -> Iterator[Obj]:
    """Scenarios for seeds ``seed, seed+1, ..., seed+count-1``."""
    for s in range(seed, seed + count):
        yield generate(s, features, version)


def main(argv: list[str] | None = None) -> int:
    """Print scenarios as JSON Lines (the oracle's input)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--features", default=None, help='e.g. "all,-sidecars" (default: all)')
    args = ap.parse_args(argv)
    feats = Features.parse(args.features)
    for sc in generate_many(args.seed, args.count, feats):
        sys.stdout.write(json.dumps(sc, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
