"""Helpers for the v1.12 (legacy) plugin tests: builders in the shape of upstream's test objects, and
runners that go through the public explain path with a profile holding just the plugin under test.

(Named test_legacy_* so that it lives beside the tests; it holds no test of its own beyond a smoke check.)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import Any

from extender.engine.explain import explain_objects

_ids = itertools.count(1)

Obj = dict[str, Any]


def node(name: str = "node", *, labels: Mapping[str, str] | None = None,
         allocatable: Mapping[str, Any] | None = None, taints: list[Obj] | None = None,
         conditions: list[tuple[str, str]] | None = None, images: list[tuple[list[str], int]] | None = None,
         annotations: Mapping[str, str] | None = None, unschedulable: bool = False) -> Obj:
    """A Node with exactly what is given (no implicit labels, allocatable as given)."""
    meta: Obj = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    spec: Obj = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    status: Obj = {}
    if allocatable is not None:
        status["allocatable"] = {k: str(v) for k, v in allocatable.items()}
        status["capacity"] = dict(status["allocatable"])
    if conditions:
        status["conditions"] = [{"type": t, "status": s} for t, s in conditions]
    if images:
        status["images"] = [{"names": names, "sizeBytes": size} for names, size in images]
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status}


def resources(cpu_m: int = 0, memory: int = 0, *, ephemeral: int = 0, pods: int = 0,
              scalars: Mapping[str, int] | None = None) -> Obj:
    """schedulercache.Resource.ResourceList(): cpu, memory, pods and ephemeral-storage always present."""
    out: Obj = {"cpu": f"{cpu_m}m", "memory": str(memory), "pods": str(pods), "ephemeral-storage": str(ephemeral)}
    for key, val in (scalars or {}).items():
        out[key] = str(val)
    return out


def container(requests: Mapping[str, Any] | None = None, *, limits: Mapping[str, Any] | None = None,
              image: str = "", ports: list[Obj] | None = None) -> Obj:
    """A container with the given requests/limits (absent when None)."""
    out: Obj = {"name": f"c{next(_ids)}", "image": image}
    res: Obj = {}
    if requests is not None:
        res["requests"] = {k: str(v) for k, v in requests.items()}
    if limits is not None:
        res["limits"] = {k: str(v) for k, v in limits.items()}
    if res:
        out["resources"] = res
    if ports:
        out["ports"] = ports
    return out


def pod(name: str = "", namespace: str = "default", *, node_name: str = "",
        containers: list[Obj] | None = None, init_containers: list[Obj] | None = None,
        labels: Mapping[str, str] | None = None, spec: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None) -> Obj:
    """A Pod (no container unless given), bound to ``node_name`` when set."""
    name = name or f"pod-{next(_ids)}"
    metadata: Obj = {"name": name, "namespace": namespace, "uid": f"uid-{name}-{next(_ids)}"}
    if labels:
        metadata["labels"] = dict(labels)
    metadata.update(meta or {})
    pod_spec: Obj = {"containers": containers or []}
    if init_containers:
        pod_spec["initContainers"] = init_containers
    if node_name:
        pod_spec["nodeName"] = node_name
    pod_spec.update(spec or {})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec}


def resource_pod(*usages: Obj, init: Iterable[Obj] = (), node_name: str = "") -> Obj:
    """newResourcePod / newResourceInitPod: one container per usage (requests only)."""
    return pod(node_name=node_name, containers=[container(u) for u in usages],
               init_containers=[container(u) for u in init] or None)


def obj(kind: str, name: str, namespace: str | None = "default", *, spec: Mapping[str, Any] | None = None,
        labels: Mapping[str, str] | None = None, annotations: Mapping[str, str] | None = None,
        **extra: Any) -> Obj:
    """Any other object (Service, ReplicaSet, PersistentVolume...)."""
    meta: Obj = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    out: Obj = {"apiVersion": "v1", "kind": kind, "metadata": meta}
    if spec is not None:
        out["spec"] = dict(spec)
    out.update(extra)
    return out


def profile(name: str, args: Mapping[str, Any] | None = None, *, score: bool = False) -> Obj:
    """A profile with just one plugin (as filter, or as score), all defaults disabled."""
    plugins: Obj = {"multiPoint": {"disabled": [{"name": "*"}]}}
    if score:
        plugins["score"] = {"enabled": [{"name": name, "weight": 1}]}
    else:
        plugins["filter"] = {"enabled": [{"name": name}]}
    out: Obj = {"plugins": plugins}
    if args is not None:
        out["pluginConfig"] = [{"name": name, "args": dict(args)}]
    return out


def explain(objects: Iterable[Obj], incoming: Obj, prof: Obj | None = None) -> Obj:
    """explain_objects, asserting that the pod was readable."""
    out = explain_objects(list(objects), incoming, prof)
    assert out.get("error") is None, out["error"]
    return out


def verdicts(name: str, incoming: Obj, objects: Iterable[Obj], args: Mapping[str, Any] | None = None
             ) -> dict[str, tuple[str, list[str]]]:
    """node -> (code, reasons) of one filter plugin (a PreFilter rejection applies to every node)."""
    objects = list(objects)
    out = explain(objects, incoming, profile(name, args))
    pre = out["prefilter"].get(name)
    if pre and pre["code"] not in ("Success", "Skip"):
        return {o["metadata"]["name"]: (pre["code"], pre["reasons"]) for o in objects if o["kind"] == "Node"}
    result = {n: (v["filters"][name]["code"], v["filters"][name]["reasons"]) for n, v in out["nodes"].items()}
    # The runtime words a filter Error as upstream's RunFilterPlugins does; compare the plugin's own message.
    prefix = f'running "{name}" filter plugin: '
    return {n: (code, [r.removeprefix(prefix) for r in reasons] if code == "Error" else reasons)
            for n, (code, reasons) in result.items()}


def fits(name: str, incoming: Obj, objects: Iterable[Obj], args: Mapping[str, Any] | None = None,
         node_name: str = "node") -> tuple[bool, list[str]]:
    """(fits, reasons) of one filter plugin on one node; an Error status raises."""
    code, reasons = verdicts(name, incoming, objects, args)[node_name]
    assert code in ("Success", "Skip", "Unschedulable"), (code, reasons)
    return code in ("Success", "Skip"), reasons


def scores(name: str, incoming: Obj, objects: Iterable[Obj], args: Mapping[str, Any] | None = None,
           *, raw: bool = False) -> dict[str, int]:
    """node -> normalised (or raw) score of one score plugin."""
    out = explain(objects, incoming, profile(name, args, score=True))
    return {n: entry["scores"][name]["raw" if raw else "normalized"] for n, entry in out["nodes"].items()}


def as_pod(raw: Mapping[str, Any]) -> Obj:
    """A Go test pod in its JSON form as a full object (a unique name and UID when it has none)."""
    meta = dict(raw.get("metadata") or {})
    meta.setdefault("name", f"p{next(_ids)}")
    meta["uid"] = f"uid-{next(_ids)}"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": dict(raw.get("spec") or {})}


def as_node(raw: Mapping[str, Any]) -> Obj:
    """A Go test node in its JSON form as a full object."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": dict(raw["metadata"]), "spec": dict(raw.get("spec") or {}),
            "status": dict(raw.get("status") or {})}


def make_node(name: str, milli_cpu: int, memory: int) -> Obj:
    """priorities' makeNode: allocatable cpu and memory only."""
    return node(name, allocatable={"cpu": f"{milli_cpu}m", "memory": memory})


def priority(name: str, incoming: Mapping[str, Any], nodes: Iterable[Obj], pods: Iterable[Mapping[str, Any]] = (),
             args: Mapping[str, Any] | None = None, others: Iterable[Obj] = ()) -> dict[str, int]:
    """host -> final score of one priority over all the given nodes, from Go-shaped pods."""
    objects = [*nodes, *(as_pod(p) for p in pods), *others]
    return scores(name, as_pod(incoming), objects, args)


def expected(entries: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """A HostPriorityList as host -> score."""
    return {e["host"]: e["score"] for e in entries}


def test_harness_smoke() -> None:
    assert verdicts("HostName", pod(spec={"nodeName": "a"}), [node("a"), node("b")]) == {
        "a": ("Success", []), "b": ("Unschedulable", ["node(s) didn't match the requested hostname"])}
