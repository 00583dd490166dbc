"""In-process benchmarks that set this checkout against another: each side a fresh process importing its own
``extender``, the sides taking turns (bench.first_request, bench.status_churn, bench.node_churn,
bench.engine_loop).

A script adds the common arguments (:func:`add_arguments`) and defines ``worker(inputs: Path) -> dict``, which
measures one side in process; :func:`run_worker` loads the script in a fresh interpreter with a checkout first
on the path and calls its ``worker``, and :func:`compare` runs the sides in turn and prints a line for each.
Such a script imports nothing from ``bench`` at its top (the checkout measured may have a ``bench`` of its own,
without this module).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


# Run in the worker's interpreter: load the script by its path (not as a module of bench) and call its worker.
_WORKER = ("import importlib.util, json, sys; from pathlib import Path; "
           "spec = importlib.util.spec_from_file_location('bench_side', sys.argv[1]); "
           "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); "
           "print(json.dumps(module.worker(Path(sys.argv[2]))))")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--runs`` and ``--before``."""
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--before", type=Path, help="another checkout, measured interleaved with this one")


def sides(before: Path | None) -> list[tuple[str, Path]]:
    """This checkout, and ``before`` when given: (label, source tree) in the order of the first run."""
    return [("this checkout", ROOT)] + ([("before", before.resolve())] if before else [])


def run_worker(script: str, tree: Path, inputs: Path, *, with_bench: bool) -> dict[str, Any]:
    """``script``'s ``worker(inputs)`` run in a fresh interpreter with ``tree``'s extender first on the path: the
    figures it returns. ``with_bench``: a ``bench`` package is importable too (the tree's if it has one, else
    this checkout's)."""
    path = f"{tree}{os.pathsep}{ROOT}" if with_bench else str(tree)
    done = subprocess.run([sys.executable, "-c", _WORKER, str(Path(script).resolve()), str(inputs)],
                          env={**os.environ, "PYTHONPATH": path}, cwd=tempfile.gettempdir(),
                          capture_output=True, check=True)
    figures: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return figures


def compare(script: str, before: Path | None, runs: int, inputs: Path, describe: Callable[[dict[str, Any]], str], *,
            with_bench: bool = False, side: Callable[[Path, Path], dict[str, Any]] | None = None) -> None:
    """``runs`` runs of this checkout and ``before`` (when given), the sides in turn and the order alternating
    from run to run: each side's figures from ``script``'s worker (or from ``side(tree, inputs)``), printed as
    ``describe(figures)`` with the run, the side, its checkout and the machine's load."""
    both = sides(before)
    for run in range(runs):
        for label, tree in both if run % 2 == 0 else both[::-1]:
            figures = side(tree, inputs) if side is not None else run_worker(script, tree, inputs,
                                                                              with_bench=with_bench)
            print(f"run {run + 1}, {label} ({figures['extender']}): {describe(figures)}; "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)

