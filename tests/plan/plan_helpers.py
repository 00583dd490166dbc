"""Shared pieces of the plan tests: plan files written on the fly, contexts, and simulate run alone."""

from __future__ import annotations

import contextlib
import io
import shlex
from pathlib import Path
from typing import Any

import orjson
import yaml

from extender.cli import main
from extender.plan.base import base_from_dump
from extender.plan.cli import export_variant
from extender.plan.evaluate import PlanContext
from extender.plan.planfile import load_plan
from extender.plan.runner import build_context, check_plan

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "config" / "demo-cluster.yaml"
WEB = ROOT / "examples" / "plan" / "web.yaml"


def write(folder: Path, name: str, doc: Any) -> Path:
    """A YAML file in ``folder``."""
    path = folder / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def context_of(plan: Path, cluster: Path | str = DEMO) -> PlanContext:
    """The checked context of a plan file on a dump."""
    context = build_context(load_plan(plan), base_from_dump(str(cluster)))
    check_plan(context)
    return context


def simulate_alone(context: PlanContext, variant: str, folder: Path) -> dict[str, Any]:
    """``extender simulate`` on one variant exported by ``extender plan --export``, as its JSON answer."""
    command = shlex.split(export_variant(context, variant, folder))
    assert command[:2] == ["extender", "simulate"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*command[1:], "-o", "json"])
    assert code in (0, 1), out.getvalue()
    answer: dict[str, Any] = orjson.loads(out.getvalue())
    return answer


def zoned_nodes(count: int) -> list[dict[str, Any]]:
    """``count`` nodes over three zones, of two sizes, some tainted PreferNoSchedule."""
    from builders import make_node

    spot = [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]
    return [make_node(f"n{i:03d}", cpu="8" if i % 2 else "4", memory="32Gi",
                      labels={"topology.kubernetes.io/zone": f"zone-{'abc'[i % 3]}",
                              "topology.kubernetes.io/region": "r1"},
                      taints=spot if i % 5 == 0 else None) for i in range(count)]
