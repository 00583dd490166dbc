"""Explain: for one pod, every node's verdict from each filter plugin and each score plugin's raw,
normalised and weighted score, the total and the 0..10 answer.

The JSON shape is shared with the differential oracle (tests/oracle), which prints the same for
upstream's plugins, so that the two can be compared field by field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from extender.cluster.cache import ClusterCache
from extender.cluster.records import PodRecord, RecordError
from extender.cluster.snapshot import Snapshot
from extender.engine.framework import CycleState
from extender.engine.mapping import map_scores
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework


def explain(framework: Framework, snapshot: Snapshot, raw_pod: Mapping[str, Any],
            node_names: Sequence[str] | None = None) -> dict[str, Any]:
    """Explain a pod against a snapshot (all nodes, or the named ones in that order)."""
    try:
        pod = PodRecord(raw_pod)
    except RecordError as err:
        return {"error": f"Pod: {err}", "prefilter": {}, "nodes": {}}
    if node_names is None:
        nodes = list(snapshot.node_list)
        unknown: list[str] = []
    else:
        nodes = [snapshot.node_infos[n] for n in node_names if n in snapshot.node_infos]
        unknown = [n for n in node_names if n not in snapshot.node_infos]
    state = CycleState(snapshot)
    out = framework.explain(state, pod, nodes)
    out["error"] = None
    out["profile"] = framework.name
    out["unknown_nodes"] = unknown
    feasible = [name for name, entry in out["nodes"].items() if entry["feasible"]]
    totals = [out["nodes"][name]["total"] for name in feasible]
    mapped = map_scores(totals, state.score_weight, framework.profile.score_mapping,
                            framework.profile.max_score)
    for name, score in zip(feasible, mapped, strict=True):
        out["nodes"][name]["extender_score"] = score
    return out


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
    """An aligned, human-readable table of an explanation."""
    if result.get("error"):
        return f"error: {result['error']}\n"
    lines: list[str] = []
    rejected = {name: entry for name, entry in (result.get("prefilter") or {}).items()
                if entry["code"] not in ("Success", "Skip")}
    if rejected:
        for name, entry in rejected.items():
            lines.append(f"PreFilter {name}: {entry['code']}: {', '.join(entry['reasons'])}")
        return "\n".join(lines) + "\n"
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
                   if v["code"] not in ("Success", "Skip")]
        cells = [name, "yes" if entry["feasible"] else "no"]
        for plugin in score_plugins:
            s = entry["scores"].get(plugin)
            cells.append("-" if s is None else ("skip" if s.get("skipped") else f"{s['raw']}/{s['normalized']}/"
                                                                                  f"{s['weighted']}"))
        cells += [str(entry["total"]) if entry["feasible"] else "-",
                  str(entry.get("extender_score", "-")), "; ".join(reasons)]
        rows.append(cells)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    for row in [header, *rows]:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])) + "  " + row[-1])
    lines.append("")
    lines.append("scores are raw/normalized/weighted; TOTAL is the weighted sum; 0..10 is the prioritize answer")
    return "\n".join(lines).rstrip() + "\n"
