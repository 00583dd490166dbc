"""Workloads to pods, as their controllers would create them.

A plan's workload names Deployments, ReplicaSets, ReplicationControllers, StatefulSets, Jobs and Pods; the
scheduler only ever sees pods, so each controller is expanded into the pods it would create, with what its
controller puts on them that scheduling reads:

- **Deployment**: a ReplicaSet ``<deployment>-<pod-template-hash>`` whose selector and template carry the
  ``pod-template-hash`` label, and pods ``<replicaset>-<5 characters>`` owned by it. If the base cluster
  already holds a ReplicaSet owned by that Deployment, the newest one (highest
  ``deployment.kubernetes.io/revision``) is scaled instead: new pods join its existing ones, so that
  default spreading counts them together as it would.
- **ReplicaSet / ReplicationController**: pods ``<name>-<5 characters>`` owned by it.
- **StatefulSet**: pods ``<name>-<ordinal>`` with ``statefulset.kubernetes.io/pod-name``,
  ``apps.kubernetes.io/pod-index`` and ``controller-revision-hash`` labels, and one PersistentVolumeClaim
  ``<template>-<name>-<ordinal>`` per ``volumeClaimTemplates`` entry, mounted as the template's volume.
- **Job**: ``parallelism`` pods (at most ``completions``) ``<job>-<5 characters>`` (``<job>-<index>-...``
  for Indexed jobs, with the completion-index annotation and label), with the job-name and controller-uid
  labels.
- **Pod**: itself; with ``replicas: N``, N copies named ``<name>-<i>``.

The controller objects that scheduling plugins look up (default spreading reads the owner ReplicaSet's or
StatefulSet's selector; volume binding reads the claims) are returned beside the pods and added to each
variant's cluster. A workload entry's ``replicas`` is the number of pods to create (for a controller
already running in the cluster: how many more). Names and UIDs are derived from the objects, so every
run creates the same pods; the hash in ``pod-template-hash`` is computed from the template's JSON, not
from Go's dump of the object as the Deployment controller computes it, so its value differs, but it is
as stable and as distinct. Pods come in workload order, each controller's in index order.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from extender.plan.planfile import PlanError, WorkloadEntry

# k8s.io/apimachinery/pkg/util/rand: the alphabet of generated names and hashes (no vowels, no look-alikes).
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_UID_NAMESPACE = uuid.UUID("6f1d3b3e-5a4c-4c4e-9d0e-2f8a6b7c9d10")
CONTROLLER_KINDS = ("Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "Job")


@dataclass
class Workload:
    """The pods to place, in order, and the objects their controllers add to the cluster."""

    pods: list[dict[str, Any]] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)


def fnv32a(data: bytes) -> int:
    """The 32-bit FNV-1a hash (hash/fnv's New32a), as the controllers hash templates."""
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    """rand.SafeEncodeString: each character mapped into ALPHANUMS."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in text)


def template_hash(template: Mapping[str, Any]) -> str:
    """A pod-template-hash for a template: FNV-1a of its canonical JSON, encoded as the controller does."""
    return safe_encode(str(fnv32a(orjson.dumps(template, option=orjson.OPT_SORT_KEYS))))


def name_suffix(seed: str, index: int) -> str:
    """Five characters of ALPHANUMS standing for the apiserver's random generateName suffix."""
    value = fnv32a(f"{seed}/{index}".encode())
    out = []
    for _ in range(5):
        value, digit = divmod(value, len(ALPHANUMS))
        out.append(ALPHANUMS[digit])
    return "".join(out)


def stable_uid(kind: str, namespace: str, name: str) -> str:
    """A UID derived from the object's identity (the same on every run and every worker)."""
    return str(uuid.uuid5(_UID_NAMESPACE, f"{kind}/{namespace}/{name}"))


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _owner(kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = _meta(obj)
    return {"apiVersion": "batch/v1" if kind == "Job" else ("v1" if kind == "ReplicationController" else "apps/v1"),
            "kind": kind, "name": meta["name"], "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


class _Expander:
    """Expands one workload's objects; names must be unique across the whole workload."""

    def __init__(self, existing: Iterable[Mapping[str, Any]]) -> None:
        self.out = Workload()
        self.names: set[str] = set()
        # ReplicaSets of the base cluster by their owning Deployment (namespace, name).
        self.deployment_replicasets: dict[tuple[str, str], Mapping[str, Any]] = {}
        for obj in existing:
            if obj.get("kind") != "ReplicaSet":
                continue
            meta = _meta(obj)
            for ref in meta.get("ownerReferences") or []:
                if isinstance(ref, Mapping) and ref.get("kind") == "Deployment" and ref.get("controller"):
                    key = (str(meta.get("namespace") or "default"), str(ref.get("name")))
                    held = self.deployment_replicasets.get(key)
                    if held is None or _revision(obj) > _revision(held):
                        self.deployment_replicasets[key] = obj

    def fail(self, where: str, message: str) -> PlanError:
        return PlanError(f"{where}: {message}")

    def add_pod(self, pod: dict[str, Any], where: str) -> None:
        meta = pod["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        if key in self.names:
            raise self.fail(where, f"pod {key} would be created twice (rename one of the workloads)")
        self.names.add(key)
        self.out.pods.append(pod)

    def pod_from(self, template: Mapping[str, Any], namespace: str, name: str, owner: dict[str, Any] | None,
                 labels: Mapping[str, str] = {}, annotations: Mapping[str, str] = {}) -> dict[str, Any]:
        meta = dict(_meta(template))
        spec = copy.deepcopy(template.get("spec") or {})
        meta.update(name=name, namespace=namespace, uid=stable_uid("Pod", namespace, name))
        meta["labels"] = {**(meta.get("labels") or {}), **labels}
        if annotations:
            meta["annotations"] = {**(meta.get("annotations") or {}), **annotations}
        if owner is not None:
            meta["ownerReferences"] = [owner]
        for gone in ("generateName", "resourceVersion", "creationTimestamp"):
            meta.pop(gone, None)
        spec.pop("nodeName", None)
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}

    def expand(self, obj: Mapping[str, Any], replicas: int | None, where: str) -> None:
        kind = obj.get("kind")
        meta = _meta(obj)
        if not isinstance(meta.get("name"), str) or not meta.get("name"):
            raise self.fail(where, f"a {kind} without metadata.name")
        if kind == "Pod":
            self.expand_pod(obj, replicas, where)
            return
        if kind not in CONTROLLER_KINDS:
            raise self.fail(where, f"{kind} {meta.get('name')!r}: a workload holds "
                                   f"{', '.join(CONTROLLER_KINDS)} or Pod objects")
        spec = obj.get("spec")
        if not isinstance(spec, Mapping) or not isinstance(spec.get("template"), Mapping):
            raise self.fail(where, f"{kind} {meta['name']!r}: spec.template is required")
        obj = {**obj, "metadata": {**meta, "namespace": meta.get("namespace") or "default",
                                   "uid": meta.get("uid") or stable_uid(str(kind), meta.get("namespace") or "default",
                                                                        meta["name"])}}
        count = replicas if replicas is not None else _count(kind, spec, where, self)
        if kind == "Deployment":
            self.expand_deployment(obj, count, where)
        elif kind == "StatefulSet":
            self.expand_statefulset(obj, count, where)
        elif kind == "Job":
            self.expand_job(obj, count, where)
        else:
            self.out.objects.append(obj)
            self.replicas_of(obj, str(kind), count, where)

    def expand_pod(self, pod: Mapping[str, Any], replicas: int | None, where: str) -> None:
        meta = _meta(pod)
        namespace = str(meta.get("namespace") or "default")
        if replicas is None:
            self.add_pod(self.pod_from(pod, namespace, str(meta["name"]), None, annotations={}), where)
            owners = meta.get("ownerReferences")
            if owners:
                self.out.pods[-1]["metadata"]["ownerReferences"] = owners
            return
        for i in range(replicas):
            copy_ = self.pod_from(pod, namespace, f"{meta['name']}-{i}", None)
            if meta.get("ownerReferences"):
                copy_["metadata"]["ownerReferences"] = meta["ownerReferences"]
            self.add_pod(copy_, where)

    def replicas_of(self, owner: Mapping[str, Any], kind: str, count: int, where: str,
                    labels: Mapping[str, str] = {}) -> None:
        meta = _meta(owner)
        template = owner["spec"]["template"]
        ref = _owner(kind, owner)
        for i in range(count):
            name = f"{meta['name']}-{name_suffix(str(meta['uid']), i)}"
            self.add_pod(self.pod_from(template, str(meta["namespace"]), name, ref, labels), where)

    def expand_deployment(self, deployment: Mapping[str, Any], count: int, where: str) -> None:
        meta = _meta(deployment)
        namespace, name = str(meta["namespace"]), str(meta["name"])
        existing = self.deployment_replicasets.get((namespace, name))
        if existing is not None:
            rs_meta = _meta(existing)
            hash_ = str(((existing.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels", {})
                        .get("pod-template-hash") or (rs_meta.get("labels") or {}).get("pod-template-hash") or "")
            template = (existing.get("spec") or {}).get("template") or deployment["spec"]["template"]
            replicaset = {**existing, "spec": {**(existing.get("spec") or {}), "template": template}}
            replicaset["metadata"] = {**rs_meta, "namespace": namespace,
                                      "uid": rs_meta.get("uid") or stable_uid("ReplicaSet", namespace,
                                                                              str(rs_meta.get("name")))}
            self.replicas_of(replicaset, "ReplicaSet", count, where,
                             {"pod-template-hash": hash_} if hash_ else {})
            return
        spec = deployment["spec"]
        template = copy.deepcopy(spec["template"])
        hash_ = template_hash(template)
        template.setdefault("metadata", {}).setdefault("labels", {})["pod-template-hash"] = hash_
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})["pod-template-hash"] = hash_
        rs_name = f"{name}-{hash_}"
        replicaset = {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": rs_name, "namespace": namespace, "uid": stable_uid("ReplicaSet", namespace, rs_name),
                         "labels": dict(template["metadata"]["labels"]),
                         "annotations": {"deployment.kubernetes.io/revision": "1"},
                         "ownerReferences": [_owner("Deployment", deployment)]},
            "spec": {"replicas": count, "selector": selector, "template": template},
        }
        self.out.objects.append(replicaset)
        self.replicas_of(replicaset, "ReplicaSet", count, where)

    def expand_statefulset(self, sts: Mapping[str, Any], count: int, where: str) -> None:
        meta = _meta(sts)
        namespace, name = str(meta["namespace"]), str(meta["name"])
        spec = sts["spec"]
        self.out.objects.append(dict(sts))
        revision = f"{name}-{template_hash(spec['template'])}"
        selector_labels = dict((spec.get("selector") or {}).get("matchLabels") or {})
        ref = _owner("StatefulSet", sts)
        for i in range(count):
            pod_name = f"{name}-{i}"
            pod = self.pod_from(spec["template"], namespace, pod_name, ref, {
                "controller-revision-hash": revision, "statefulset.kubernetes.io/pod-name": pod_name,
                "apps.kubernetes.io/pod-index": str(i)})
            pod["spec"]["hostname"] = pod_name
            if spec.get("serviceName"):
                pod["spec"]["subdomain"] = spec["serviceName"]
            volumes = [v for v in pod["spec"].get("volumes") or [] if isinstance(v, Mapping)]
            for template in spec.get("volumeClaimTemplates") or []:
                claim_meta = _meta(template)
                claim = f"{claim_meta.get('name')}-{name}-{i}"
                self.out.objects.append({
                    "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                    "metadata": {"name": claim, "namespace": namespace,
                                 "uid": stable_uid("PersistentVolumeClaim", namespace, claim),
                                 "labels": {**(claim_meta.get("labels") or {}), **selector_labels}},
                    "spec": copy.deepcopy(template.get("spec") or {}), "status": {"phase": "Pending"}})
                volumes = [v for v in volumes if v.get("name") != claim_meta.get("name")]
                volumes.append({"name": claim_meta.get("name"), "persistentVolumeClaim": {"claimName": claim}})
            if volumes:
                pod["spec"]["volumes"] = volumes
            self.add_pod(pod, where)

    def expand_job(self, job: Mapping[str, Any], count: int, where: str) -> None:
        meta = _meta(job)
        namespace, name, uid = str(meta["namespace"]), str(meta["name"]), str(meta["uid"])
        indexed = job["spec"].get("completionMode") == "Indexed"
        labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                  "controller-uid": uid, "job-name": name}
        ref = _owner("Job", job)
        for i in range(count):
            if indexed:
                pod = self.pod_from(job["spec"]["template"], namespace, f"{name}-{i}-{name_suffix(uid, i)}", ref,
                                    {**labels, "batch.kubernetes.io/job-completion-index": str(i)},
                                    {"batch.kubernetes.io/job-completion-index": str(i)})
            else:
                pod = self.pod_from(job["spec"]["template"], namespace, f"{name}-{name_suffix(uid, i)}", ref, labels)
            self.add_pod(pod, where)


def _revision(obj: Mapping[str, Any]) -> int:
    text = str((_meta(obj).get("annotations") or {}).get("deployment.kubernetes.io/revision") or "0")
    return int(text) if text.isdigit() else 0


def _count(kind: Any, spec: Mapping[str, Any], where: str, expander: _Expander) -> int:
    def field_(key: str, default: int) -> int:
        value = spec.get(key, default)
        if value is None:
            return default
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise expander.fail(where, f"{kind}: spec.{key}: expected a non-negative integer, got {value!r}")
        return value

    if kind == "Job":
        parallelism = field_("parallelism", 1)
        completions = spec.get("completions")
        return min(parallelism, field_("completions", parallelism)) if completions is not None else parallelism
    return field_("replicas", 1)


def expand_workload(entries: Iterable[WorkloadEntry], existing: Iterable[Mapping[str, Any]] = ()) -> Workload:
    """The pods of every workload entry in order, and the objects their controllers add.

    ``existing`` are the base cluster's objects (a Deployment already running is scaled, see above).
    """
    expander = _Expander(existing)
    for entry in entries:
        for i, obj in enumerate(entry.objects):
            where = entry.source if len(entry.objects) == 1 else f"{entry.source}: object {i}"
            if not isinstance(obj, Mapping):
                raise PlanError(f"{where}: expected a Kubernetes object")
            expander.expand(obj, entry.replicas, where)
    return expander.out
