"""The plan's pictures (PNG, drawn with matplotlib's Agg backend: no display needed).

- ``placed-vs-nodes.png``: pods placed against the number of pool nodes added, one line per searched
  variant (every count the search simulated) and per swept variant family;
- ``utilization.png``: requested/allocatable cpu, memory and pods per variant;
- ``pending-reasons.png``: each variant's pending pods by reason (a pod counts under each of its reasons).

Long sweeps are cut to the first :data:`MAX_VARIANTS` variants in the bar charts (the JSON has them all).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from extender.plan.results import VariantResult, reason_totals
from extender.plan.runner import PlanResult

MAX_VARIANTS = 40
MAX_REASONS = 6
_SWEPT = re.compile(r"^(.*) \((.*)\)$")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt: Any, fig: Any, path: Path) -> bool:
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def placed_series(result: PlanResult) -> dict[str, list[tuple[int, int]]]:
    """Lines of (pool nodes added, pods placed): each search's points, and each family of swept variants."""
    series: dict[str, list[tuple[int, int]]] = {}
    for search in result.searches:
        series[f"{search.variant} (search, {search.pool})"] = [
            (count, search.pods - pending) for count, pending in sorted(search.tried.items())]
    families: dict[str, list[tuple[int, int]]] = {}
    for variant in result.variants:
        match = _SWEPT.match(variant.name)
        if match and variant.added:
            families.setdefault(match.group(1), []).append((sum(variant.added.values()), variant.placed))
    for family, points in families.items():
        if len(points) > 1:
            series[family] = sorted(points)
    return series


def _short(name: str, width: int = 28) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def draw_placed(result: PlanResult, path: Path) -> bool:
    """Pods placed against nodes added; False (nothing written) when no search or sweep gives a line."""
    series = placed_series(result)
    if not series:
        return False
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    totals = {f"{s.variant} (search, {s.pool})": s.pods for s in result.searches}
    for label, points in series.items():
        [line] = ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=_short(label, 40))
        total = totals.get(label, result.workload_pods)
        ax.axhline(total, color=line.get_color(), linestyle=":", linewidth=1)
    ax.set_xlabel("pool nodes added")
    ax.set_ylabel("pods placed (dotted: all of them)")
    ax.set_title("Pods placed against node count")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(plt, fig, path)


def draw_utilization(variants: Sequence[VariantResult], path: Path) -> bool:
    """Requested/allocatable per resource, grouped by variant."""
    shown = list(variants[:MAX_VARIANTS])
    if not shown:
        return False
    plt = _pyplot()
    resources = ("cpu", "memory", "pods")
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(shown) + 3), 4.5), dpi=100)
    width = 0.8 / len(resources)
    for i, resource in enumerate(resources):
        values = [v.utilization[resource].percent if resource in v.utilization else 0.0 for v in shown]
        ax.bar([x + (i - 1) * width for x in range(len(shown))], values, width, label=resource)
    ax.set_xticks(range(len(shown)), [_short(v.name) for v in shown], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("requested / allocatable (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Utilization per variant" + (f" (first {MAX_VARIANTS})" if len(variants) > MAX_VARIANTS else ""))
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return _save(plt, fig, path)


def draw_pending(variants: Sequence[VariantResult], path: Path) -> bool:
    """Pending pods per reason, stacked per variant; False when nothing is pending anywhere."""
    shown = list(variants[:MAX_VARIANTS])
    totals = reason_totals(shown)
    if not totals:
        return False
    plt = _pyplot()
    top = list(totals)[:MAX_REASONS]
    fig, ax = plt.subplots(figsize=(9, max(3, 0.35 * len(shown) + 1.5)), dpi=100)
    left = [0] * len(shown)
    for reason in [*top, "other"]:
        counts = [sum(c for r, c in v.pending_reasons.items() if r not in top) if reason == "other"
                  else v.pending_reasons.get(reason, 0) for v in shown]
        if not any(counts):
            continue
        ax.barh(range(len(shown)), counts, left=left, label=_short(reason, 60))
        left = [a + b for a, b in zip(left, counts, strict=True)]
    ax.set_yticks(range(len(shown)), [_short(v.name) for v in shown], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("pending pods, by the reason that rejected the most nodes")
    ax.set_title("Pending reasons per variant")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    return _save(plt, fig, path)


def draw_all(result: PlanResult, folder: Path) -> list[Path]:
    """Every chart that has something to show, written into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    drawn = []
    if draw_placed(result, folder / "placed-vs-nodes.png"):
        drawn.append(folder / "placed-vs-nodes.png")
    if draw_utilization(result.variants, folder / "utilization.png"):
        drawn.append(folder / "utilization.png")
    if draw_pending(result.variants, folder / "pending-reasons.png"):
        drawn.append(folder / "pending-reasons.png")
    return drawn
