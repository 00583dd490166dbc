"""Builders for Kubernetes objects in tests (in the spirit of upstream's st.MakePod / makeNode)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any

_uids = itertools.count(1)


def make_node(name: str, cpu: str | int = "4", memory: str | int = "16Gi", pods: str | int = "110", *,
              labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None,
              unschedulable: bool = False, extra: dict[str, str | int] | None = None,
              images: list[tuple[list[str], int]] | None = None, resource_version: str = "") -> dict[str, Any]:
    """A Node with allocatable cpu/memory/pods (and extra resources)."""
    allocatable: dict[str, Any] = {"cpu": str(cpu), "memory": str(memory)}
    if pods is not None:
        allocatable["pods"] = str(pods)
    for key, val in (extra or {}).items():
        allocatable[key] = str(val)
    meta: dict[str, Any] = {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}}
    if resource_version:
        meta["resourceVersion"] = resource_version
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    status: dict[str, Any] = {"allocatable": allocatable, "capacity": dict(allocatable)}
    if images:
        status["images"] = [{"names": names, "sizeBytes": size} for names, size in images]
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec, "status": status}


def make_pod(name: str = "", namespace: str = "default", *, node: str = "",
             requests: list[dict[str, Any]] | None = None,
             labels: dict[str, str] | None = None, tolerations: list[dict[str, Any]] | None = None,
             host_ports: list[int | tuple[int, str, str]] | None = None, spec: dict[str, Any] | None = None,
             uid: str | None = None, phase: str = "") -> dict[str, Any]:
    """A Pod with one container per entry of ``requests`` (like upstream's repeated ``.Req(...)``).

    ``requests=None`` gives one container without requests; ``requests=[]`` gives no container at all,
    like upstream's bare ``st.MakePod().Obj()``.
    """
    name = name or f"pod-{next(_uids)}"
    containers = [{"name": f"c{i}", "image": "pause", "resources": {"requests": {k: str(v) for k, v in r.items()}}}
                  for i, r in enumerate(requests or [])]
    if requests is None:
        containers = [{"name": "c0", "image": "pause"}]
    for port in host_ports or []:
        number, protocol, ip = port if isinstance(port, tuple) else (port, "TCP", "")
        entry: dict[str, Any] = {"containerPort": number, "hostPort": number, "protocol": protocol}
        if ip:
            entry["hostIP"] = ip
        containers[0].setdefault("ports", []).append(entry)
    pod_spec: dict[str, Any] = {"containers": containers}
    if node:
        pod_spec["nodeName"] = node
    if tolerations:
        pod_spec["tolerations"] = tolerations
    pod_spec.update(spec or {})
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}"}
    if labels:
        meta["labels"] = labels
    pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec}
    if phase:
        pod["status"] = {"phase": phase}
    return pod


def random_labelled_pod(rng: random.Random, serial: int, namespaces: Sequence[str], nodes: Sequence[str],
                        templates: Sequence[dict[str, str]], terminating: float) -> dict[str, Any]:
    """A pod named p<serial> (uid-<serial>) in a random namespace, on a random node, with a random template's
    labels; being deleted with probability ``terminating`` (for the pod-counting indexes' random tests)."""
    raw = make_pod(f"p{serial}", rng.choice(namespaces), node=rng.choice(nodes), labels=dict(rng.choice(templates)),
                   uid=f"uid-{serial}")
    if rng.random() < terminating:
        raw["metadata"]["deletionTimestamp"] = "2026-11-25T00:00:00Z"
    return raw
