"""The terminal report and the JSON document of a plan's result."""

from __future__ import annotations

from typing import Any

import orjson

from extender.plan.runner import PlanResult
from extender.plan.search import SearchResult


def _cost(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows, strict=True)]
    right = [i > 0 for i in range(len(header))]
    out = []
    for row in [header, *rows]:
        cells = [str(c).rjust(w) if r else str(c).ljust(w) for c, w, r in zip(row, widths, right, strict=True)]
        out.append("  ".join(cells).rstrip())
    return out


def _search_line(search: SearchResult) -> str:
    if search.found is None:
        pending = search.tried.get(max(search.tried), 0)
        return f"  {search.variant}: no count of {search.pool} up to {search.max} places everything " \
               f"({pending} pods still pending at {max(search.tried)})"
    line = f"  {search.variant}: {search.found} more {search.pool} node(s)"
    at, below = search.at_found, search.below_found
    if at is not None:
        line += f" place all {at.pods} pods"
        if at.cost_per_hour is not None:
            line += f" ({_cost(at.cost_per_hour)}/h)"
    if below is not None:
        line += f"; with {search.found - 1}: {below.pending} pending"
        if below.pending_reasons:
            reason, count = next(iter(below.pending_reasons.items()))
            line += f" ({count} {reason})"
    if not search.monotone:
        line += "  [not monotone: see -o json 'tried']"
    return line


def render_table(result: PlanResult) -> str:
    """Variants as rows (pods placed and pending, utilization, cost), then the searches and the reasons."""
    lines = [f"plan on {result.base} ({result.base_nodes} nodes): {result.workload_pods} workload pods, "
             f"{len(result.variants)} variant(s)"]
    if result.variants:
        header = ["VARIANT", "NODES", "PLACED", "PENDING", "CPU%", "MEM%", "PODS%", "COST/H"]
        rows = [[v.name, str(v.nodes), f"{v.placed}/{v.pods}", str(v.pending),
                 f"{v.utilization['cpu'].percent:.1f}" if "cpu" in v.utilization else "-",
                 f"{v.utilization['memory'].percent:.1f}" if "memory" in v.utilization else "-",
                 f"{v.utilization['pods'].percent:.1f}" if "pods" in v.utilization else "-",
                 _cost(v.cost_per_hour)] for v in result.variants]
        lines += ["", *_table(header, rows)]
    if result.searches:
        search = result.searches[0]
        lines += ["", f"smallest count of pool {search.pool} that places everything (searched up to {search.max}):"]
        lines += [_search_line(s) for s in result.searches]
    pending = [v for v in result.variants if v.pending_reasons]
    if pending:
        lines += ["", "pending pods by principal reason (the one that rejected the most nodes)"]
        for variant in pending:
            reasons = ", ".join(f"{count} {reason}" for reason, count in list(variant.pending_reasons.items())[:3])
            more = len(variant.pending_reasons) - 3
            lines.append(f"  {variant.name}: {reasons}" + (f", and {more} more" if more > 0 else ""))
    if result.multicluster:
        lines += ["", "multi-cluster placement (replicas per member cluster)"]
    for mc in result.multicluster:
        for b in mc.bindings:
            where = ", ".join(f"{name} {n}" for name, n in sorted(b.clusters.items())) or "-"
            lines.append(f"  {mc.variant}: {b.binding} {b.placed}/{b.replicas}: {where}"
                         + (f"  ({b.error})" if b.error else ""))
    lines += ["", f"{result.simulations} simulations on {result.engine} ({result.workers} worker(s)) "
                  f"in {result.seconds:.1f}s ({result.cpu_seconds:.1f}s of CPU)"]
    return "\n".join(lines) + "\n"


def render_json(result: PlanResult) -> str:
    """The whole result as indented JSON."""
    body: dict[str, Any] = result.as_dict()
    return orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n"
