"""What-if: a pod edited as YAML, and cluster edits (cordon, uncordon, empty copies of a node, a taint
removed), applied to a copy of a snapshot.

Nothing here writes: the edited nodes are clones put into a snapshot of their own, and a simulation places
its pods in a cache of its own (``ClusterCache.of_snapshot``). The service's cache, its snapshot and the
cluster are left exactly as they were.

Cordoning sets ``spec.unschedulable`` and adds the ``node.kubernetes.io/unschedulable:NoSchedule`` taint, as
``kubectl cordon`` and the node lifecycle controller do between them; uncordoning takes both away. A copy
is a new node of the same shape (labels, taints, allocatable) named ``<node>-copy-<i>``: empty (no pods),
without the images its original had pulled, and without devices (ResourceSlices name their node).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from extender.cluster.cache import ClusterCache
from extender.cluster.dump import DumpError, load_yaml_documents
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import NodeRecord, PodRecord, RecordError
from extender.cluster.snapshot import Snapshot
from extender.engine.runtime import Framework
from extender.engine.simulate import Simulator

MAX_POD_YAML_BYTES = 1 << 20
MAX_CHANGES = 100
MAX_COPIES = 1000
MAX_REPLICAS = 1000
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
HOSTNAME_LABEL = "kubernetes.io/hostname"
OPERATIONS = ("cordon", "uncordon", "copy", "untaint")


class WhatIfError(ValueError):
    """A what-if that cannot be run: answered 400 with the message (and where in the YAML, when known)."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column

    def as_dict(self) -> dict[str, Any]:
        """The error answer's body."""
        out: dict[str, Any] = {"Error": str(self)}
        if self.line is not None:
            out["line"] = self.line
            out["column"] = self.column
        return out


def yaml_problem(err: DumpError, what: str) -> WhatIfError:
    """A YAML text that cannot be read, as one line naming where (and the line, for the editor to show)."""
    cause = err.__cause__
    mark = getattr(cause, "problem_mark", None) or getattr(cause, "context_mark", None)
    problem = getattr(cause, "problem", None)
    if mark is None or not problem:
        return WhatIfError(str(err))
    context, context_mark = getattr(cause, "context", None), getattr(cause, "context_mark", None)
    started = (f" ({context} at line {context_mark.line + 1}, column {context_mark.column + 1})"
               if context and context_mark is not None and context_mark is not mark else "")
    return WhatIfError(f"{what}: invalid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}{started}",
                       mark.line + 1, mark.column + 1)


def parse_pod_yaml(text: str) -> dict[str, Any]:
    """One Pod from YAML (or JSON) text, checked enough that explain answers about it rather than fails.

    A pod without a namespace is in ``default``; without a UID it gets one (the cache keys pods by UID).
    """
    if len(text.encode()) > MAX_POD_YAML_BYTES:
        raise WhatIfError(f"pod: the YAML is larger than {MAX_POD_YAML_BYTES} bytes")
    try:
        docs = [d for d in load_yaml_documents(text, "pod") if d is not None]
    except DumpError as err:
        raise yaml_problem(err, "pod") from err
    if len(docs) != 1:
        raise WhatIfError(f"pod: expected one Pod, found {len(docs)} YAML documents")
    pod = docs[0]
    if not isinstance(pod, dict):
        raise WhatIfError(f"pod: expected a Pod object, found a {type(pod).__name__}")
    if pod.get("kind", "Pod") != "Pod":
        raise WhatIfError(f"pod: kind is {pod.get('kind')!r}, expected Pod")
    meta = pod.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise WhatIfError("pod: metadata.name: a Pod needs a name")
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        raise WhatIfError("pod: spec: a Pod needs a spec (with containers)")
    if spec.get("nodeName"):
        raise WhatIfError("pod: spec.nodeName is set: kube-scheduler never schedules a pod that names its node; "
                          "remove it to ask where the pod would go")
    pod = {**pod, "kind": "Pod", "metadata": {"namespace": "default", **meta}}
    pod["metadata"].setdefault("uid", f"what-if-{pod['metadata']['namespace']}-{meta['name']}")
    try:
        PodRecord(pod)
    except RecordError as err:
        raise WhatIfError(f"pod: {err}") from err
    return pod


@dataclass(frozen=True, slots=True)
class Change:
    """One edit of the cluster copy: ``op`` on ``node`` (``count`` copies; the taint to remove)."""

    op: str
    node: str
    count: int = 0
    taint: tuple[str, str, str] = ("", "", "")  # key, value, effect

    def describe(self) -> str:
        """The edit in a few words, as the page lists it."""
        if self.op == "copy":
            return f"add {self.count} empty cop{'y' if self.count == 1 else 'ies'} of {self.node}"
        if self.op == "untaint":
            key, value, effect = self.taint
            return f"remove taint {key}{'=' + value if value else ''}:{effect} from {self.node}"
        return f"{self.op} {self.node}"


def parse_changes(raw: Any) -> list[Change]:
    """The cluster edits of a what-if body: ``[{"op", "node", "count"?, "taint"?}]``."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise WhatIfError(f"changes: expected a list, got {type(raw).__name__}")
    if len(raw) > MAX_CHANGES:
        raise WhatIfError(f"changes: at most {MAX_CHANGES} edits, got {len(raw)}")
    changes: list[Change] = []
    for i, item in enumerate(raw):
        where = f"changes[{i}]"
        if not isinstance(item, Mapping):
            raise WhatIfError(f"{where}: expected an object")
        op, node = item.get("op"), item.get("node")
        if op not in OPERATIONS:
            raise WhatIfError(f"{where}.op: expected one of {list(OPERATIONS)}, got {op!r}")
        if not isinstance(node, str) or not node:
            raise WhatIfError(f"{where}.node: a node name is required")
        if op == "copy":
            count = item.get("count")
            if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_COPIES:
                raise WhatIfError(f"{where}.count: expected 1..{MAX_COPIES} copies, got {count!r}")
            changes.append(Change(op, node, count=count))
        elif op == "untaint":
            taint = item.get("taint")
            if not isinstance(taint, Mapping) or not isinstance(taint.get("key"), str) or not taint["key"]:
                raise WhatIfError(f"{where}.taint: expected {{key, value, effect}} of a taint of {node}")
            changes.append(Change(op, node, taint=(taint["key"], str(taint.get("value") or ""),
                                                   str(taint.get("effect") or ""))))
        else:
            changes.append(Change(op, node))
    return changes


def apply_changes(snapshot: Snapshot, changes: Sequence[Change]) -> tuple[Snapshot, list[str]]:
    """A new snapshot with the edits made on copies of the nodes, and the names of the nodes added.

    The snapshot given, its NodeInfos and their node objects are left untouched.
    """
    if not changes:
        return snapshot, []
    infos: dict[str, NodeInfo] = dict(snapshot.node_infos)
    added: list[str] = []
    for i, change in enumerate(changes):
        info = infos.get(change.node)
        if info is None or info.node is None:
            raise WhatIfError(f"changes[{i}]: node {change.node!r} is not in the cluster")
        raw = info.node.raw
        if change.op == "copy":
            for _ in range(change.count):
                name = _free_name(infos, f"{change.node}-copy-")
                infos[name] = NodeInfo(name, NodeRecord(_copy_of(raw, name)))
                added.append(name)
            continue
        if change.op == "untaint":
            edited = _without_taint(raw, change, i)
        else:
            edited = _cordoned(raw) if change.op == "cordon" else _uncordoned(raw)
        clone = info.clone()
        clone.set_node(NodeRecord(edited))
        infos[change.node] = clone
    return Snapshot.from_node_infos(infos.values(), snapshot.objects, snapshot.dra), added


def _free_name(infos: Mapping[str, NodeInfo], prefix: str) -> str:
    n = 1
    while f"{prefix}{n}" in infos:
        n += 1
    return f"{prefix}{n}"


def _spec(raw: Mapping[str, Any]) -> dict[str, Any]:
    spec = raw.get("spec")
    return dict(spec) if isinstance(spec, Mapping) else {}


def _taints(spec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [t for t in spec.get("taints") or [] if isinstance(t, Mapping)]


def _cordoned(raw: Mapping[str, Any]) -> dict[str, Any]:
    spec = _spec(raw)
    spec["unschedulable"] = True
    taints = _taints(spec)
    if not any(t.get("key") == UNSCHEDULABLE_TAINT and t.get("effect") == "NoSchedule" for t in taints):
        taints.append({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"})
    spec["taints"] = taints
    return {**raw, "spec": spec}


def _uncordoned(raw: Mapping[str, Any]) -> dict[str, Any]:
    spec = _spec(raw)
    spec.pop("unschedulable", None)
    spec["taints"] = [t for t in _taints(spec) if t.get("key") != UNSCHEDULABLE_TAINT]
    return {**raw, "spec": spec}


def _without_taint(raw: Mapping[str, Any], change: Change, index: int) -> dict[str, Any]:
    spec = _spec(raw)
    key, value, effect = change.taint
    taints = _taints(spec)
    kept = [t for t in taints if not (t.get("key") == key and str(t.get("value") or "") == value
                                      and (not effect or t.get("effect") == effect))]
    if len(kept) == len(taints):
        held = ", ".join(f"{t.get('key')}{'=' + str(t['value']) if t.get('value') else ''}:{t.get('effect')}"
                         for t in taints) or "none"
        raise WhatIfError(f"changes[{index}]: node {change.node!r} has no taint "
                          f"{key}{'=' + value if value else ''}:{effect or '*'} (its taints: {held})")
    spec["taints"] = kept
    return {**raw, "spec": spec}


def _copy_of(raw: Mapping[str, Any], name: str) -> dict[str, Any]:
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    labels = dict(meta.get("labels") or {})
    if HOSTNAME_LABEL in labels:
        labels[HOSTNAME_LABEL] = name
    status = raw.get("status") if isinstance(raw.get("status"), Mapping) else {}
    assert isinstance(status, Mapping)
    return {**raw, "metadata": {"name": name, "uid": f"what-if-{name}", "labels": labels},
            "status": {k: v for k, v in status.items() if k != "images"}}


def simulate_replicas(framework: Framework, snapshot: Snapshot, pod: Mapping[str, Any], replicas: int,
                      seed: int | None = None) -> dict[str, Any]:
    """Place ``replicas`` copies of a pod one by one on a private copy of the snapshot (``extender simulate``'s
    answer, its utilisation limited to the nodes that received pods)."""
    if not 1 <= replicas <= MAX_REPLICAS:
        raise WhatIfError(f"replicas: expected 1..{MAX_REPLICAS}, got {replicas}")
    meta = pod.get("metadata") or {}
    name = str(meta.get("name"))
    copies = [{**pod, "metadata": {**meta, "name": f"{name}-{i}", "uid": f"{meta.get('uid')}-{i}"}}
              for i in range(replicas)]
    cache = ClusterCache.of_snapshot(snapshot, framework.release)
    result = Simulator(framework, cache, seed=seed).run(copies).as_dict()
    before, after = result["utilization"]["before"], result["utilization"]["after"]
    changed = sorted(n for n in after if after[n] != before.get(n))
    result["utilization"] = {"before": {n: before[n] for n in changed if n in before},
                             "after": {n: after[n] for n in changed}}
    return result
