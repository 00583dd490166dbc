"""Explain: for one pod, every node's verdict from each filter plugin and each score plugin's raw,
normalised and weighted score, the total and the 0..10 answer; and the outcome kube-scheduler's
scheduling cycle would reach with that profile.

The per-node JSON shape is shared with the differential oracle (tests/oracle), which prints the same for
upstream's plugins, so that the two can be compared field by field. ``outcome`` adds what an operator asks
("why is my pod Pending?"), worded as upstream words it:

- ``Unschedulable``: no node passes; ``message`` is FitError's "0/N nodes are available: ..." (the
  PreFilter rejection, or the sorted histogram of each node's first rejecting plugin's reasons);
- ``SchedulerError``: the cycle fails with an Error status (a PreFilter, Filter or Score plugin failing on
  the pod), ``message`` being the status upstream's runtime returns, which kube-scheduler writes into the
  pod's PodScheduled condition with reason SchedulerError. With a single feasible node upstream never
  scores, so a score failure then does not stop scheduling (it is still reported as ``scoreError``);
- ``Schedulable``: the feasible nodes, the best ones with their score breakdown, and the nodes tied at
  the top total (kube-scheduler picks one of them at random).

A pod already bound is explained as it was when scheduled: without spec.nodeName and with its own usage
taken off its node (``bound`` says so).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from extender.cluster.cache import ClusterCache
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord, RecordError
from extender.cluster.snapshot import Snapshot
from extender.engine.framework import CycleState
from extender.engine.mapping import map_scores
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.simulate import fit_error_message, prefilter_narrowing

BEST_NODES = 3
DEFAULT_SCHEDULER_NAME = "default-scheduler"
SCHEDULABLE, UNSCHEDULABLE, SCHEDULER_ERROR = "Schedulable", "Unschedulable", "SchedulerError"
PASSING_CODES = ("Success", "Skip")


def scheduler_name(raw_pod: Mapping[str, Any]) -> str:
    """spec.schedulerName, defaulted as the apiserver does."""
    spec = raw_pod.get("spec")
    name = spec.get("schedulerName") if isinstance(spec, Mapping) else None
    return name if isinstance(name, str) and name else DEFAULT_SCHEDULER_NAME


def choose_framework(frameworks: Mapping[str, Framework], default: str, raw_pod: Mapping[str, Any],
                     profile: str | None = None) -> tuple[Framework, str | None]:
    """The profile that would run the pod, and a note when that is not the pod's own scheduler.

    An explicit ``profile`` wins (KeyError if there is none of that name). Otherwise, as kube-scheduler
    picks a profile by spec.schedulerName, the profile of that name; if this extender has none, the
    default profile, with a note saying so.
    """
    if profile is not None:
        return frameworks[profile], None
    wanted = scheduler_name(raw_pod)
    if wanted in frameworks:
        return frameworks[wanted], None
    return frameworks[default], (f"no profile here is named after the pod's schedulerName {wanted!r}; "
                                 f"explained with the default profile {default!r}")


def explain(framework: Framework, snapshot: Snapshot, raw_pod: Mapping[str, Any],
            node_names: Sequence[str] | None = None, *, nodes: Sequence[NodeInfo] | None = None) -> dict[str, Any]:
    """Explain a pod against a snapshot: all nodes, the named ones in that order, or ``nodes`` as given."""
    try:
        pod = PodRecord(raw_pod)
    except RecordError as err:
        return {"error": f"Pod: {err}", "prefilter": {}, "nodes": {}}
    unknown: list[str] = []
    if nodes is not None:
        candidates = list(nodes)
    elif node_names is None:
        candidates = list(snapshot.node_list)
    else:
        candidates = [snapshot.node_infos[n] for n in node_names if n in snapshot.node_infos]
        unknown = [n for n in node_names if n not in snapshot.node_infos]
    state = CycleState(snapshot)
    out = framework.explain(state, pod, candidates)
    score_error: str | None = out.pop("error", None)
    out["error"] = None
    out["pod"] = pod.key
    out["profile"] = framework.name
    out["schedulerName"] = scheduler_name(raw_pod)
    out["unknown_nodes"] = unknown
    feasible = [name for name, entry in out["nodes"].items() if entry["feasible"]]
    if score_error is None:
        totals = [out["nodes"][name]["total"] for name in feasible]
        mapped = map_scores(totals, state.score_weight, framework.profile.score_mapping,
                            framework.profile.max_score)
        for name, score in zip(feasible, mapped, strict=True):
            out["nodes"][name]["extender_score"] = score
    out["outcome"] = outcome(out, len(candidates), score_error, state.prefilter_nodes)
    return out


def outcome(result: Mapping[str, Any], num_nodes: int, score_error: str | None,
            prefilter_nodes: Mapping[str, frozenset[str]] | None = None) -> dict[str, Any]:
    """What the scheduling cycle concludes, from an explanation's PreFilter and per-node verdicts.

    ``prefilter_nodes`` are the node sets PreFilter plugins narrowed the cycle to (PreFilterResult):
    upstream runs no Filter on the other nodes and counts each of them under one absent-node status.
    """
    for entry in (result.get("prefilter") or {}).values():
        if entry["code"] == "Error":
            return {"status": SCHEDULER_ERROR, "message": ", ".join(entry["reasons"]), "feasibleNodes": []}
        if entry["code"] not in PASSING_CODES:
            return {"status": UNSCHEDULABLE, "feasibleNodes": [], "reasons": dict.fromkeys(entry["reasons"], num_nodes),
                    "message": fit_error_message(num_nodes, (), ", ".join(entry["reasons"]))}
    allowed, reason = prefilter_narrowing(prefilter_nodes or {})
    if allowed is not None and not allowed:
        return {"status": UNSCHEDULABLE, "feasibleNodes": [], "reasons": {reason: num_nodes},
                "message": fit_error_message(num_nodes, (), reason)}
    outside = (reason,)
    nodes: Mapping[str, Any] = result.get("nodes") or {}
    first_rejections: list[Sequence[str]] = []
    for name, entry in nodes.items():
        if allowed is not None and name not in allowed:
            first_rejections.append(outside)
            continue
        # Upstream stops at a node's first rejecting plugin: only that plugin's reasons count.
        rejection = next((v for v in entry["filters"].values() if v["code"] not in PASSING_CODES), None)
        if rejection is None:
            continue
        if rejection["code"] == "Error":
            return {"status": SCHEDULER_ERROR, "message": ", ".join(rejection["reasons"]), "feasibleNodes": []}
        first_rejections.append(rejection["reasons"])
    histogram: dict[str, int] = {}
    for reasons in first_rejections:
        for reason in reasons:
            histogram[reason] = histogram.get(reason, 0) + 1
    feasible = [name for name, entry in nodes.items() if entry["feasible"]]
    base: dict[str, Any] = {"feasibleNodes": feasible, "reasons": dict(sorted(histogram.items()))}
    if not feasible:
        return {"status": UNSCHEDULABLE, **base, "message": fit_error_message(num_nodes, first_rejections)}
    if score_error is not None:
        base["scoreError"] = score_error
        if len(feasible) > 1:
            return {"status": SCHEDULER_ERROR, **base, "message": score_error}
    ranked = sorted(feasible, key=lambda name: (-nodes[name]["total"], name))
    top = nodes[ranked[0]]["total"]
    best = [{"node": name, "total": nodes[name]["total"], "score": nodes[name].get("extender_score"),
             "scores": nodes[name]["scores"]} for name in ranked[:BEST_NODES]]
    message = f"{len(feasible)}/{num_nodes} nodes are feasible"
    return {"status": SCHEDULABLE, **base, "message": message, "best": best,
            "tiedAtTop": [name for name in ranked if nodes[name]["total"] == top]}


def explain_existing(framework: Framework, snapshot: Snapshot, raw_pod: Mapping[str, Any],
                     node_names: Sequence[str] | None = None) -> dict[str, Any]:
    """Explain a pod that exists in the cluster; a bound pod as it was when it was scheduled."""
    spec = raw_pod.get("spec")
    node = spec.get("nodeName") if isinstance(spec, Mapping) else None
    if not isinstance(node, str) or not node:
        return explain(framework, snapshot, raw_pod, node_names)
    assert isinstance(spec, Mapping)
    pending = {**raw_pod, "spec": {k: v for k, v in spec.items() if k != "nodeName"}}
    result = explain(framework, _without_pod(snapshot, node, raw_pod), pending, node_names)
    result["bound"] = {"node": node, "message": f"already bound to {node}: explained as when it was scheduled, "
                                                f"without its own usage of {node}"}
    return result


def _without_pod(snapshot: Snapshot, node: str, raw_pod: Mapping[str, Any]) -> Snapshot:
    """A snapshot in which ``node`` no longer holds the pod (the shared snapshot is left as it is)."""
    info = snapshot.get(node)
    if info is None:
        return snapshot
    try:
        key = PodRecord(raw_pod).cache_key
    except RecordError:
        return snapshot
    placed = [p for p in info.pods if p.cache_key == key]
    if not placed:
        return snapshot
    trial = info.clone()
    for pod in placed:
        trial.remove_pod(pod)
    return Snapshot.from_node_infos((trial if n.name == node else n for n in snapshot.node_list), snapshot.objects)


class PodNotFound(LookupError):
    """The pod to explain is not in the cache; the message says which and why that may be."""


def find_cached(cache: ClusterCache, namespace: str, name: str) -> tuple[Mapping[str, Any], bool]:
    """A pod the cache holds (pending, assumed or bound) as its kept fields, and whether it is only assumed."""
    pod = cache.find_pod(namespace, name)
    if pod is None:
        raise PodNotFound(f"pod {namespace}/{name} is not in the extender's cache "
                          "(unknown, deleted, or terminated: Succeeded and Failed pods are not kept)")
    return pod.raw, bool(pod.node_name) and cache.is_assumed(pod.cache_key)


def explain_found(frameworks: Mapping[str, Framework], default: str, snapshot: Snapshot, raw_pod: Mapping[str, Any],
                  assumed: bool = False, profile: str | None = None,
                  node_names: Sequence[str] | None = None) -> dict[str, Any]:
    """Explain a pod found in the cluster with the profile that would run it (see choose_framework)."""
    framework, note = choose_framework(frameworks, default, raw_pod, profile)
    result = explain_existing(framework, snapshot, raw_pod, node_names)
    if note and not result.get("error"):
        result["note"] = note
    if assumed and "bound" in result:
        result["bound"]["message"] += " (assumed by this extender's bind, not yet confirmed by the apiserver)"
    return result


def explain_cached(frameworks: Mapping[str, Framework], default: str, cache: ClusterCache, namespace: str,
                   name: str, profile: str | None = None) -> dict[str, Any]:
    """Explain a pod the cache holds (pending, assumed or bound), by namespace and name."""
    raw, assumed = find_cached(cache, namespace, name)
    return explain_found(frameworks, default, cache.snapshot(), raw, assumed, profile)


def frozen(snapshot: Snapshot) -> Snapshot:
    """The same nodes, objects and DRA view in a snapshot of its own, which later refreshes of the cache's
    snapshot leave as it is (they replace entries of the shared one in place): for explaining off the cache's
    thread. The NodeInfos are shared: the cache never changes one once it is in a snapshot."""
    return Snapshot.from_node_infos(snapshot.node_list, snapshot.objects, snapshot.dra)


def explain_objects(objects: Iterable[Mapping[str, Any]], pod: Mapping[str, Any],
                    profile: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Explain a pod against a list of raw objects, with a KubeSchedulerConfiguration-shaped profile."""
    cache = ClusterCache()
    cache.load(objects)
    framework = Framework(build_profile(profile))
    return explain(framework, cache.snapshot(), pod)


def enabled_plugins(profile: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The plugins a profile runs: ``{"filter": [names], "score": {name: weight}}``."""
    return build_profile(profile).summary()


def render_table(result: Mapping[str, Any]) -> str:
    """An aligned, human-readable table of an explanation, then its outcome (last, where a terminal shows it)."""
    if result.get("error"):
        return f"error: {result['error']}\n"
    lines: list[str] = []
    rejected = {name: entry for name, entry in (result.get("prefilter") or {}).items()
                if entry["code"] not in PASSING_CODES}
    if rejected:
        for name, entry in rejected.items():
            lines.append(f"PreFilter {name}: {entry['code']}: {', '.join(entry['reasons'])}")
        lines.append("")
        return "\n".join([*lines, *render_outcome(result)]) + "\n"
    nodes: Mapping[str, Any] = result.get("nodes") or {}
    score_plugins: list[str] = []
    for entry in nodes.values():
        for plugin in entry.get("scores", {}):
            if plugin not in score_plugins:
                score_plugins.append(plugin)
    header = ["NODE", "FITS", *[p for p in score_plugins], "TOTAL", "0..10", "REASONS"]
    rows: list[list[str]] = []
    for name, entry in sorted(nodes.items(), key=lambda kv: (not kv[1]["feasible"], -kv[1]["total"], kv[0])):
        reasons = [f"{plugin}: {', '.join(v['reasons'])}" for plugin, v in entry["filters"].items()
                   if v["code"] not in PASSING_CODES]
        cells = [name, "yes" if entry["feasible"] else "no"]
        for plugin in score_plugins:
            s = entry["scores"].get(plugin)
            cells.append("-" if s is None else ("skip" if s.get("skipped") else f"{s['raw']}/{s['normalized']}/"
                                                                                  f"{s['weighted']}"))
        cells += [str(entry["total"]) if entry["feasible"] and entry["scores"] else "-",
                  str(entry.get("extender_score", "-")), "; ".join(reasons)]
        rows.append(cells)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    for row in [header, *rows]:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])) + "  " + row[-1])
    lines.append("")
    lines.append("scores are raw/normalized/weighted; TOTAL is the weighted sum; 0..10 is the prioritize answer")
    lines.append("")
    lines.extend(render_outcome(result))
    return "\n".join(lines).rstrip() + "\n"


def render_outcome(result: Mapping[str, Any]) -> list[str]:
    """The explanation's conclusion in a few lines: pod and profile, binding, and the cycle's outcome."""
    lines: list[str] = []
    if result.get("pod"):
        lines.append(f"pod {result['pod']}: profile {result.get('profile')} "
                     f"(spec.schedulerName {result.get('schedulerName')})")
    if result.get("note"):
        lines.append(f"note: {result['note']}")
    if result.get("bound"):
        lines.append(result["bound"]["message"])
    found = result.get("outcome")
    if not found:
        return lines
    if found["status"] == SCHEDULER_ERROR:
        lines.append(f"the scheduling cycle fails ({SCHEDULER_ERROR}): {found['message']}")
    elif found["status"] == UNSCHEDULABLE:
        lines.append(found["message"])
    else:
        best = ", ".join(f"{b['node']} (total {b['total']})" for b in found["best"])
        lines.append(f"{found['message']}; best: {best}")
        if len(found["tiedAtTop"]) > 1:
            lines.append(f"kube-scheduler picks at random among the {len(found['tiedAtTop'])} nodes tied at the top")
        if found.get("scoreError"):
            lines.append(f"scoring fails ({found['scoreError']}), but with one feasible node upstream does not score")
    return lines
