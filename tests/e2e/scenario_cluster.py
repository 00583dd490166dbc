"""A generated scenario (tests/oracle/scenarios.py) made real in a kube-apiserver, and cleared afterwards.

The generator writes objects as the apiserver stores them, status included. Here they are created
through the API: each object, then its status through the status subresource (nodes, pods, volumes,
claims, budgets); pods already being deleted are created and then deleted with a grace period (no kubelet
ever confirms), claims being deleted keep a finalizer. The UIDs the apiserver gives replace the
generator's wherever an object names another (a PersistentVolume's claimRef, a claim's owner), and the
incoming pod is created behind a scheduling gate: its claims (owned by it, so created after it) and its
status are written first, then the gate is lifted and kube-scheduler schedules it.

Existing pods get ``terminationGracePeriodSeconds: 0`` (irrelevant to scheduling): a pod preempted by
kube-scheduler is then gone at once, as a kubelet would confirm it, and the preemptor can land.
"""

from __future__ import annotations

import copy
import hashlib
import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from controlplane import ApiError, KubeClient, Obj

GATE = "e2e.example.com/scenario-ready"
OUR_NAMESPACES = ("team-a", "team-b")  # "default" always exists
# Where each kind lives: (collection path, namespaced). Order of creation is the order of this table.
KINDS: dict[str, tuple[str, bool]] = {
    "Namespace": ("/api/v1/namespaces", False),
    "PriorityClass": ("/apis/scheduling.k8s.io/v1/priorityclasses", False),
    "Node": ("/api/v1/nodes", False),
    "CSINode": ("/apis/storage.k8s.io/v1/csinodes", False),
    "StorageClass": ("/apis/storage.k8s.io/v1/storageclasses", False),
    "PersistentVolumeClaim": ("/api/v1/namespaces/{ns}/persistentvolumeclaims", True),
    "PersistentVolume": ("/api/v1/persistentvolumes", False),
    "Service": ("/api/v1/namespaces/{ns}/services", True),
    "ReplicationController": ("/api/v1/namespaces/{ns}/replicationcontrollers", True),
    "ReplicaSet": ("/apis/apps/v1/namespaces/{ns}/replicasets", True),
    "StatefulSet": ("/apis/apps/v1/namespaces/{ns}/statefulsets", True),
    "PodDisruptionBudget": ("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets", True),
    "DeviceClass": ("/apis/resource.k8s.io/v1/deviceclasses", False),
    "ResourceSlice": ("/apis/resource.k8s.io/v1/resourceslices", False),
    "ResourceClaim": ("/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims", True),
    "Pod": ("/api/v1/namespaces/{ns}/pods", True),
}
WITH_STATUS = {"Node", "PersistentVolume", "PersistentVolumeClaim", "PodDisruptionBudget", "ResourceClaim", "Pod"}


def collection(kind: str, namespace: str = "default") -> str:
    """The API path of a kind's collection (in a namespace for namespaced kinds)."""
    path, _ = KINDS[kind]
    return path.format(ns=namespace)


def item_path(obj: Mapping[str, Any]) -> str:
    """The API path of one object."""
    meta = obj["metadata"]
    return f"{collection(obj['kind'], meta.get('namespace') or 'default')}/{meta['name']}"


@dataclass
class Loaded:
    """A scenario in the apiserver: its incoming pod (gated) and the UIDs the apiserver gave."""

    namespace: str
    pod_name: str
    uids: dict[str, str] = field(default_factory=dict)  # the generator's UID -> the apiserver's


def _for_create(obj: Mapping[str, Any], uids: Mapping[str, str]) -> Obj:
    """The object without what the apiserver sets itself, references rewritten to real UIDs."""
    out = copy.deepcopy(dict(obj))
    meta = out["metadata"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                "generation"):
        meta.pop(key, None)
    for ref in meta.get("ownerReferences") or []:
        ref["uid"] = uids.get(ref.get("uid", ""), ref.get("uid", ""))
    claim_ref = (out.get("spec") or {}).get("claimRef")
    if isinstance(claim_ref, dict) and claim_ref.get("uid"):
        claim_ref["uid"] = uids.get(claim_ref["uid"], claim_ref["uid"])
    out.pop("status", None)
    return out


def _runtime_class(kube: KubeClient, overhead: Mapping[str, Any]) -> str:
    """A RuntimeClass carrying exactly this pod overhead (the RuntimeClass admission plugin requires a pod's
    overhead to be its class's); returns its name."""
    name = "e2e-" + hashlib.sha256(json.dumps(overhead, sort_keys=True).encode()).hexdigest()[:12]
    kube.request("POST", "/apis/node.k8s.io/v1/runtimeclasses",
                 {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name},
                  "handler": "runc", "overhead": {"podFixed": dict(overhead)}}, ok=(409,))
    return name


def _unmerge_label_keys(spec: Obj) -> None:
    """The generator writes pods as stored, with matchLabelKeys/mismatchLabelKeys merged into the selectors;
    a create must not carry them twice (the apiserver merges them again)."""
    affinity = spec.get("affinity") or {}
    terms: list[Obj] = []
    for kind in ("podAffinity", "podAntiAffinity"):
        part = affinity.get(kind) or {}
        terms += part.get("requiredDuringSchedulingIgnoredDuringExecution") or []
        terms += [t["podAffinityTerm"] for t in part.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
    terms += spec.get("topologySpreadConstraints") or []
    for term in terms:
        keys = {*(term.get("matchLabelKeys") or []), *(term.get("mismatchLabelKeys") or [])}
        selector = term.get("labelSelector")
        if keys and selector and selector.get("matchExpressions"):
            kept = [e for e in selector["matchExpressions"] if e.get("key") not in keys]
            if kept:
                selector["matchExpressions"] = kept
            else:
                del selector["matchExpressions"]


def _pod_for_create(pod: Mapping[str, Any], uids: Mapping[str, str], incoming: bool,
                    kube: KubeClient | None = None) -> Obj:
    out = _for_create(pod, uids)
    spec = out["spec"]
    _unmerge_label_keys(spec)
    if spec.get("overhead") and kube is not None:
        spec["runtimeClassName"] = _runtime_class(kube, spec["overhead"])
    if incoming:
        spec["schedulingGates"] = [{"name": GATE}]
    else:
        spec["terminationGracePeriodSeconds"] = 0
        if not spec.get("nodeName"):
            # A pending pod of the scenario is not kube-scheduler's to place: it only has to be there.
            spec["schedulerName"] = "e2e-nobody"
    return out


def load(kube: KubeClient, scenario: Mapping[str, Any]) -> Loaded:
    """Create every object of the scenario, statuses included, and the incoming pod behind a gate."""
    objects: list[Mapping[str, Any]] = list(scenario["objects"])
    pod = scenario["pod"]
    loaded = Loaded(pod["metadata"].get("namespace") or "default", pod["metadata"]["name"])
    uids = loaded.uids
    incoming_uid = pod["metadata"].get("uid", "")
    owned_by_pod = [o for o in objects if any(r.get("uid") == incoming_uid
                                              for r in o["metadata"].get("ownerReferences") or [])]
    rest = [o for o in objects if o not in owned_by_pod]
    # Pods need their namespace's default ServiceAccount, which no controller makes here: a scenario that names
    # no Namespace object (its pods in "default") must not depend on an earlier test having made it.
    for namespace in {loaded.namespace, *(o["metadata"].get("namespace") or "default" for o in objects
                                          if o["kind"] == "Pod")}:
        kube.ensure_namespace(namespace)
    for kind in KINDS:
        for obj in rest:
            if obj["kind"] == kind:
                _create(kube, obj, uids)
    created = kube.post(collection("Pod", loaded.namespace), _pod_for_create(pod, uids, incoming=True, kube=kube))
    uids[incoming_uid] = created["metadata"]["uid"]
    for obj in owned_by_pod:
        _create(kube, obj, uids)
    if pod.get("status", {}).get("resourceClaimStatuses"):
        _put_status(kube, {**created, "status": {**created.get("status", {}),
                                                 "resourceClaimStatuses": pod["status"]["resourceClaimStatuses"]}})
    return loaded


def _create(kube: KubeClient, obj: Mapping[str, Any], uids: dict[str, str]) -> None:
    kind = obj["kind"]
    meta = obj["metadata"]
    if kind == "Namespace":  # labels matter (namespaceSelector): "default" gets the scenario's too
        kube.ensure_namespace(meta["name"])  # with its default ServiceAccount (no controller makes it here)
        # Claims with adminAccess are only admitted in namespaces labelled for it (no plugin reads the label).
        labels = {**(meta.get("labels") or {}), "resource.kubernetes.io/admin-access": "true"}
        kube.request("PATCH", f"{collection(kind)}/{meta['name']}", {"metadata": {"labels": labels}},
                     content_type="application/merge-patch+json")
        return
    body = _pod_for_create(obj, uids, incoming=False, kube=kube) if kind == "Pod" else _for_create(obj, uids)
    if kind == "Service":  # the apiserver allocates the address from its own range
        body["spec"] = {k: v for k, v in body["spec"].items() if k not in ("clusterIP", "clusterIPs")}
    if kind == "ResourceClaim" and meta.get("deletionTimestamp") and not body["metadata"].get("finalizers"):
        body["metadata"]["finalizers"] = ["e2e.example.com/hold"]
    created = kube.post(collection(kind, meta.get("namespace") or "default"), body)
    if meta.get("uid"):
        uids[meta["uid"]] = created["metadata"]["uid"]
    status = obj.get("status")
    if kind in WITH_STATUS and status:
        if kind == "Node":
            # TaintNodesByCondition adds node.kubernetes.io/not-ready at creation: set the taints again.
            created = kube.request("PUT", item_path(created), {**created, "spec": {**created.get("spec", {}),
                                                                                  "taints": obj["spec"].get("taints")}})
        # The apiserver's own status fields (a pod's QoS class, immutable) stay; the scenario's go over them.
        merged = {**(created.get("status") or {}), **_rewritten_status(status, uids)}
        if kind == "Pod":
            merged["qosClass"] = (created.get("status") or {}).get("qosClass")
        _put_status(kube, {**created, "status": merged})
    if meta.get("deletionTimestamp"):
        grace = meta.get("deletionGracePeriodSeconds", 30)
        kube.request("DELETE", item_path(created), {"apiVersion": "v1", "kind": "DeleteOptions",
                                                    "gracePeriodSeconds": grace})


def _rewritten_status(status: Mapping[str, Any], uids: Mapping[str, str]) -> Obj:
    out = copy.deepcopy(dict(status))
    for ref in out.get("reservedFor") or []:
        ref["uid"] = uids.get(ref.get("uid", ""), ref.get("uid", ""))
    return out


def _put_status(kube: KubeClient, obj: Mapping[str, Any]) -> None:
    kube.request("PUT", item_path(obj) + "/status", dict(obj))


def ungate(kube: KubeClient, loaded: Loaded) -> None:
    """Lift the incoming pod's scheduling gate: kube-scheduler takes it from here."""
    kube.request("PATCH", f"{collection('Pod', loaded.namespace)}/{loaded.pod_name}",
                 {"spec": {"schedulingGates": None}}, content_type="application/merge-patch+json")


# Deleted at once, without waiting for a garbage collector (none runs here) to orphan dependents.
DELETE_NOW = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0, "propagationPolicy": "Background"}


def clear(kube: KubeClient, timeout: float = 30.0) -> None:
    """Remove what scenarios create (finalizers too: no controller runs here to honour them), and wait until
    it is gone."""
    paths = [collection(kind, ns) for ns in ("default", *OUR_NAMESPACES)
             for kind in ("Pod", "ResourceClaim", "PersistentVolumeClaim", "Service", "ReplicationController",
                          "ReplicaSet", "StatefulSet", "PodDisruptionBudget")]
    paths += [collection(kind) for kind in ("PersistentVolume", "ResourceSlice", "DeviceClass", "CSINode",
                                            "StorageClass", "Node", "PriorityClass")]
    deadline = time.monotonic() + timeout
    while True:
        left = sum(_clear_collection(kube, path) for path in paths)
        if not left:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{left} objects of the last scenario are still there after {timeout:.0f}s")
        time.sleep(0.1)


def _clear_collection(kube: KubeClient, path: str) -> int:
    """Delete what a collection holds; how many objects it still held."""
    try:
        items = kube.get(path).get("items") or []
    except ApiError:
        return 0
    items = [i for i in items if not (path.endswith("priorityclasses")
                                      and i["metadata"]["name"].startswith(("system-", "e2e-")))]
    for item in items:  # the system's priority classes, and those the e2e session made for other tests, stay
        meta = item["metadata"]
        if meta.get("finalizers"):
            kube.request("PATCH", f"{path}/{meta['name']}", {"metadata": {"finalizers": None}},
                         content_type="application/merge-patch+json", ok=(404,))
        kube.request("DELETE", f"{path}/{meta['name']}", DELETE_NOW, ok=(404,))
    return len(items)


@dataclass
class PodHistory:
    """What happened to one pod as a watch saw it: each PodScheduled=False condition's reason and message
    (in order, repeats left out), its nominated node, and the node it was bound to. A pod whose binding
    waits in PreBind (devices with binding conditions) is nominated to its node without a failure."""

    failures: list[tuple[str, str]] = field(default_factory=list)
    node: str = ""
    nominated: str = ""
    deleted: bool = False


@contextmanager
def watch_pod(base_url: str, headers: Mapping[str, str], namespace: str, name: str) -> Iterator[PodHistory]:
    """Record a pod's scheduling conditions and binding from a watch, while the block runs."""
    history = PodHistory()
    stop = threading.Event()
    ready = threading.Event()

    def run() -> None:
        try:
            watch()
        except httpx.HTTPError:
            if not stop.is_set():
                raise

    def watch() -> None:
        params = {"watch": "1", "fieldSelector": f"metadata.name={name}", "allowWatchBookmarks": "false",
                  "timeoutSeconds": "600"}
        with httpx.Client(verify=False, headers=dict(headers), timeout=httpx.Timeout(5, read=None)) as client, \
                client.stream("GET", f"{base_url}/api/v1/namespaces/{namespace}/pods", params=params) as resp:
            ready.set()
            for line in resp.iter_lines():
                if stop.is_set():
                    return
                if not line:
                    continue
                event = json.loads(line)
                obj = event.get("object") or {}
                if event.get("type") == "DELETED":
                    history.deleted = True
                for cond in (obj.get("status") or {}).get("conditions") or []:
                    if cond.get("type") == "PodScheduled" and cond.get("status") == "False" \
                            and cond.get("reason") != "SchedulingGated":
                        seen = (str(cond.get("reason", "")), str(cond.get("message", "")))
                        if not history.failures or history.failures[-1] != seen:
                            history.failures.append(seen)
                history.nominated = (obj.get("status") or {}).get("nominatedNodeName") or history.nominated
                history.node = (obj.get("spec") or {}).get("nodeName") or history.node

    thread = threading.Thread(target=run, daemon=True, name=f"watch-{name}")
    thread.start()
    ready.wait(10)
    try:
        yield history
    finally:
        stop.set()


def wait_for(history: PodHistory, done: Any, timeout: float) -> bool:
    """Poll until ``done(history)`` or the timeout; whether it happened."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done(history):
            return True
        time.sleep(0.05)
    return bool(done(history))
