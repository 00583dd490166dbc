"""``extender place``: where would Karmada put this workload's replicas.

``extender place --clusters DUMP --binding RB.yaml [--policy PP.yaml] [-o table|json]`` loads member
clusters, a ResourceBinding and (optionally) the PropagationPolicy whose placement replaces the binding's,
runs :func:`extender.multicluster.scheduler.schedule` and prints the target clusters, the filtered
clusters with their reasons and the error.  Exit status: 0 scheduled, 1 not schedulable, 2 bad input (or a
region search too large to finish).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

import orjson

from extender.cluster.dump import DumpError
from extender.multicluster.budget import WorkLimitError
from extender.multicluster.dump import load_binding, load_clusters, load_placement
from extender.multicluster.scheduler import PlacementResult, schedule

__all__ = ["add_place_command", "cmd_place", "render_table"]


def render_table(result: PlacementResult) -> str:
    """A readable report: targets, then every feasible cluster's score and capacity, then the filtered."""
    lines: list[str] = []
    if result.affinity_name:
        lines.append(f"cluster affinity term: {result.affinity_name}")
    if result.ok:
        total = sum(t.replicas for t in result.clusters)
        lines.append(f"scheduled {total} replica(s) to {len(result.clusters)} cluster(s)")
        lines.extend(f"  {t.name:<24} {t.replicas:>6}" for t in result.clusters)
    else:
        lines.append(f"not scheduled: {result.error}")
    if result.available:
        lines.append("feasible clusters (score, available replicas incl. current, selected)")
        for name, available in result.available.items():
            tier = f", tier {result.tiers[name]}" if name in result.tiers else ""
            chosen = "yes" if name in result.selected else "no"
            lines.append(f"  {name:<24} score {result.scores.get(name, 0):>3}  available {available:>6}  "
                         f"selected {chosen}{tier}")
    if result.filtered:
        lines.append("filtered out")
        for name, reasons in sorted(result.filtered.items()):
            lines.append(f"  {name:<24} {'; '.join(reasons)}")
    return "\n".join(lines) + "\n"


def cmd_place(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one placement from files and print it."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        clusters = load_clusters(args.clusters)
        binding = load_binding(args.binding)
        placement = load_placement(args.policy) if args.policy else None
    except DumpError as problem:
        err.write(f"extender: {problem}\n")
        return 2
    try:
        result = schedule(clusters, binding, placement)
    except WorkLimitError as problem:
        err.write(f"extender: {problem}\n")
        return 2
    if args.output == "json":
        body: dict[str, Any] = result.as_dict()
        out.write(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.write(render_table(result))
    return 0 if result.ok else 1


def add_place_command(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``place`` to an ``argparse`` subparsers object; returns the new parser."""
    place: argparse.ArgumentParser = subparsers.add_parser(
        "place", help="place a Karmada ResourceBinding's replicas on member clusters",
                                  description=__doc__.split("\n\n")[1] if __doc__ else None)
    place.add_argument("--clusters", required=True,
                       help="Cluster objects: a kubectl/karmadactl -o yaml|json file or directory")
    place.add_argument("--binding", required=True, help="a file holding one (Cluster)ResourceBinding")
    place.add_argument("--policy", help="a file holding one (Cluster)PropagationPolicy (default: the binding's "
                                        "own spec.placement)")
    place.add_argument("-o", "--output", choices=("table", "json"), default="table")
    place.set_defaults(func=cmd_place)
    return place
