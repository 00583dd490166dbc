"""``extender plan PLAN``: run a plan file's variants and searches and report them.

``extender plan PLAN [--cluster DUMP | --kubeconfig FILE] [--engine process|serial|ray|dask] [--workers N]
[--address ADDR] [-o table|json] [--report DIR] [--placements] [--quiet]`` prints a table (or JSON) of every
variant, the smallest pool counts and the pending reasons; ``--report DIR`` also writes ``plan.json``, the
charts (PNG) and ``report.html`` there. ``--export VARIANT DIR`` writes one variant as the inputs of
``extender simulate`` (cluster, pods, configuration) and prints the command that simulates it alone.
Exit status: 0 when the plan ran, 2 for a bad plan, cluster or engine.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from extender.cluster.dump import DumpError
from extender.plan.base import BaseCluster, base_from_dump, base_from_live
from extender.plan.engines import ENGINES, EngineError, make_engine
from extender.plan.evaluate import PlanContext, check_variant, pods_to_place, variant_release
from extender.plan.planfile import PlanError, load_plan
from extender.plan.progress import ProgressBar
from extender.plan.report import render_json, render_table
from extender.plan.runner import build_context, check_plan, run_plan
from extender.plan.variants import BaseIndex, profile_spec, variant_objects


class PlanCommandError(Exception):
    """A failure reported on stderr with exit status 2."""


def load_base(args: argparse.Namespace, plan_cluster: str | None) -> BaseCluster:
    """The base cluster: --kubeconfig/--context/--in-cluster (read once), else --cluster, else the plan's, else
    the demo cluster."""
    from extender.cli import DEMO_CLUSTER, CLIError, _live_cluster
    from extender.cluster.oneshot import ClusterReadError

    try:
        live = _live_cluster(args, by_default=False)
    except CLIError as err:
        raise PlanCommandError(str(err)) from err
    try:
        if live is not None:
            return base_from_live(live)
        chosen: str | None = args.cluster or plan_cluster
        if chosen:
            return base_from_dump(chosen)
        return replace(base_from_dump(str(DEMO_CLUSTER)), source="the demo cluster")
    except ClusterReadError as err:
        raise PlanCommandError(f"apiserver: {err}") from err
    except DumpError as err:
        raise PlanCommandError(f"cluster: {err}") from err


def export_variant(context: PlanContext, name: str, folder: Path) -> str:
    """Write one variant as ``extender simulate`` inputs; returns the command that runs it."""
    variant = next((v for v in context.plan.variants if v.name == name), None)
    if variant is None:
        raise PlanCommandError(f"--export: no variant named {name!r}; variants: "
                               f"{[v.name for v in context.plan.variants]}")
    index = BaseIndex.of(context.base.objects)
    changes = check_variant(context, index, variant)
    folder.mkdir(parents=True, exist_ok=True)
    objects = variant_objects(context.base.objects, changes, context.workload.objects)
    (folder / "cluster.json").write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    (folder / "pods.json").write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List",
                                                     "items": pods_to_place(context.workload, changes)}))
    spec = profile_spec(context.profile, variant, name)
    # The variant's release named outright, so that simulate follows it whatever the exported dump records.
    chosen = variant_release(context, variant)
    config: dict[str, Any] = {"kubernetesVersion": chosen.name, "profiles": [spec]}
    if chosen.gates.overrides:
        config["featureGates"] = dict(chosen.gates.overrides)
    if context.imports:
        config["imports"] = [str(Path(context.imports_base or ".") / m) if m.endswith(".py") else m
                             for m in context.imports]
    (folder / "config.json").write_bytes(orjson.dumps(config, option=orjson.OPT_INDENT_2))
    command = ["extender", "simulate", "--cluster", str(folder / "cluster.json"), "--pods",
               str(folder / "pods.json"), "--config", str(folder / "config.json"), "--seed", str(context.plan.seed)]
    percentage = (variant.percentage_of_nodes_to_score if variant.percentage_of_nodes_to_score is not None
                  else context.plan.percentage_of_nodes_to_score)
    if percentage is not None:
        command += ["--percentage-of-nodes-to-score", str(percentage)]
    return shlex.join(command)


def cmd_plan(args: argparse.Namespace) -> int:
    """Run a plan and report it."""
    try:
        return _plan(args)
    except (PlanCommandError, PlanError, EngineError) as err:
        sys.stderr.write(f"extender: {err}\n")
        return 2


def _plan(args: argparse.Namespace) -> int:
    if args.workers is not None and args.workers < 1:
        raise PlanCommandError(f"--workers: expected at least 1, got {args.workers}")
    plan = load_plan(args.plan)
    base = load_base(args, plan.cluster)
    context = build_context(plan, base)
    if args.export:
        name, folder = args.export
        sys.stdout.write(export_variant(context, name, Path(folder)) + "\n")
        return 0
    check_plan(context)
    engine = make_engine(args.engine, args.workers, args.address)
    bar = ProgressBar.for_terminal(len(plan.variants), args.quiet)
    with engine:
        engine.start(context)
        result = run_plan(context, engine, keep_placements=args.placements, progress=bar)
    bar.close()
    if args.report:
        from extender.plan.html import write_report

        write_report(result, Path(args.report))
    sys.stdout.write(render_json(result) if args.output == "json" else render_table(result))
    return 0


def add_plan_command(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``plan`` to an ``argparse`` subparsers object; returns the new parser."""
    from extender.cli import _add_live_options

    plan: argparse.ArgumentParser = subparsers.add_parser(
        "plan", help="capacity and what-if sweeps over simulate (variants of a cluster, smallest pool that fits)",
        description=__doc__.split("\n\n")[1] if __doc__ else None)
    plan.add_argument("plan", metavar="PLAN", help="the plan file (YAML or JSON; see examples/plan/)")
    plan.add_argument("--cluster", help="cluster dump (default: the plan's cluster, else the bundled demo cluster)")
    _add_live_options(plan)
    plan.add_argument("--engine", choices=ENGINES, default="process",
                      help="where simulations run: a local process pool (default), this process (serial), "
                           "Ray or Dask")
    plan.add_argument("--workers", type=int, help="worker processes (default: one per core; Ray or Dask with "
                                                  "--address: the cluster's CPUs)")
    plan.add_argument("--address", help="a running Ray (ray://HOST:10001, auto) or Dask (tcp://HOST:8786) cluster "
                                        "(default: start a local one)")
    plan.add_argument("-o", "--output", choices=("table", "json"), default="table")
    plan.add_argument("--report", metavar="DIR", help="also write plan.json, the charts (PNG) and report.html here")
    plan.add_argument("--placements", action="store_true", help="keep every pod's node in the JSON")
    plan.add_argument("--export", nargs=2, metavar=("VARIANT", "DIR"),
                      help="write one variant as extender simulate's inputs and print the command")
    plan.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    plan.set_defaults(func=cmd_plan)
    return plan
