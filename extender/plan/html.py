"""``--report DIR``: ``plan.json``, the charts and ``report.html`` (one self-contained page: the charts are
embedded, so the file can be mailed or attached to a ticket as it is)."""

from __future__ import annotations

import base64
from html import escape
from pathlib import Path

from extender.plan.charts import draw_all
from extender.plan.report import render_json
from extender.plan.runner import PlanResult
from extender.plan.search import SearchResult

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f3f3; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; }
.pending { color: #a40; }
"""


def _cell(value: object) -> str:
    return f"<td>{escape(str(value))}</td>"


def _search_row(search: SearchResult) -> str:
    found = "not found" if search.found is None else str(search.found)
    below = search.below_found
    proof = "-" if below is None else f"{below.pending} pending with {search.found - 1 if search.found else 0}"
    cost = "-" if search.at_found is None or search.at_found.cost_per_hour is None \
        else f"{search.at_found.cost_per_hour:.2f}"
    return "<tr>" + "".join(_cell(c) for c in (search.variant, search.pool, found, proof, cost,
                                                "yes" if search.monotone else "no",
                                                ", ".join(map(str, sorted(search.tried))))) + "</tr>"


def render_html(result: PlanResult, charts: list[Path]) -> str:
    """The report page."""
    rows = []
    for v in result.variants:
        reasons = "; ".join(f"{n} {r}" for r, n in list(v.pending_reasons.items())[:3])
        usage = [f"{v.utilization[r].percent:.1f}" if r in v.utilization else "-" for r in ("cpu", "memory", "pods")]
        cost = "-" if v.cost_per_hour is None else f"{v.cost_per_hour:.2f}"
        rows.append("<tr>" + "".join(_cell(c) for c in (v.name, v.nodes, f"{v.placed}/{v.pods}", v.pending, *usage,
                                                        cost)) + f"<td class=pending>{escape(reasons)}</td></tr>")
    parts = [f"<!doctype html><html><head><meta charset=utf-8><title>extender plan</title><style>{_STYLE}</style>"
             "</head><body>",
             "<h1>Capacity plan</h1>",
             f"<p>Base cluster {escape(result.base)} ({result.base_nodes} nodes); {result.workload_pods} workload "
             f"pods; {len(result.variants)} variant(s); {result.simulations} simulations on {escape(result.engine)} "
             f"({result.workers} worker(s)) in {result.seconds:.1f}s.</p>",
             "<h2>Variants</h2><table><tr><th>variant</th><th>nodes</th><th>placed</th><th>pending</th><th>cpu %</th>"
             "<th>memory %</th><th>pods %</th><th>cost/h</th><th>pending reasons</th></tr>", *rows, "</table>"]
    if result.searches:
        parts += ["<h2>Smallest pool that places everything</h2><table><tr><th>variant</th><th>pool</th>"
                  "<th>smallest count</th><th>one fewer</th><th>cost/h</th><th>monotone</th><th>counts tried</th></tr>",
                  *(_search_row(s) for s in result.searches), "</table>"]
    if result.multicluster:
        parts.append("<h2>Multi-cluster placement</h2><table><tr><th>variant</th><th>binding</th><th>placed</th>"
                     "<th>clusters</th><th>error</th></tr>")
        for mc in result.multicluster:
            for b in mc.bindings:
                where = ", ".join(f"{name} {n}" for name, n in sorted(b.clusters.items()))
                parts.append("<tr>" + "".join(_cell(c) for c in (mc.variant, b.binding, f"{b.placed}/{b.replicas}",
                                                                 where, b.error)) + "</tr>")
        parts.append("</table>")
    if result.variants:
        zones = sorted({z for v in result.variants for z in v.zones})
        parts.append("<h2>CPU and memory requested per zone (%)</h2><table><tr><th>variant</th>"
                     + "".join(f"<th>{escape(z)}</th>" for z in zones) + "</tr>")
        for v in result.variants:
            cells = []
            for zone in zones:
                in_zone = v.zones.get(zone, {})
                cpu, memory = in_zone.get("cpu"), in_zone.get("memory")
                cells.append("-" if cpu is None or memory is None else f"{cpu.percent:.0f} / {memory.percent:.0f}")
            parts.append("<tr>" + "".join(_cell(c) for c in (v.name, *cells)) + "</tr>")
        parts.append("</table>")
    for chart in charts:
        data = base64.b64encode(chart.read_bytes()).decode()
        parts.append(f'<h2>{escape(chart.stem.replace("-", " ").capitalize())}</h2>'
                     f'<img alt="{escape(chart.stem)}" src="data:image/png;base64,{data}">')
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_report(result: PlanResult, folder: Path) -> Path:
    """Write plan.json, the charts and report.html into ``folder``; returns the page's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plan.json").write_text(render_json(result))
    charts = draw_all(result, folder)
    page = folder / "report.html"
    page.write_text(render_html(result, charts))
    return page
