"""Multi-cluster plans: each ResourceBinding placed by the Karmada pipeline under each variant."""

from __future__ import annotations

from pathlib import Path

import pytest
from plan_helpers import ROOT, write

from extender.plan.base import base_from_dump
from extender.plan.engines import make_engine
from extender.plan.planfile import PlanError, load_plan
from extender.plan.runner import build_context, run_plan

MC = ROOT / "config" / "multicluster"


def _result(tmp_path: Path, variants: list[dict[str, object]]) -> list[dict[str, object]]:
    plan = load_plan(write(tmp_path, "plan.yaml", {"multicluster": {
        "clusters": str(MC / "clusters.yaml"),
        "bindings": [{"binding": str(MC / "binding.yaml"), "policy": str(MC / "policy.yaml")},
                     {"binding": str(MC / "binding.yaml"), "policy": str(MC / "policy-static.yaml")}]},
        "variants": variants}))
    context = build_context(plan, base_from_dump(str(ROOT / "config" / "demo-cluster.yaml")))
    with make_engine("serial") as engine:
        engine.start(context)
        return [m.as_dict() for m in run_plan(context, engine).multicluster]


def test_bindings_are_placed_under_every_variant(tmp_path: Path) -> None:
    today, lost, twins = _result(tmp_path, [
        {"name": "today"}, {"name": "member5 lost", "clustersLost": ["member5"]},
        {"name": "member1 twice", "addClusters": {"member1": 1}}])
    # As `extender place` answers for these files (config/multicluster/README.md).
    assert today["bindings"][0]["clusters"] == {"member1": 3, "member2": 2, "member5": 7}  # type: ignore[index]
    assert today["bindings"][1]["clusters"] == {"member1": 6, "member3": 3, "member5": 3}  # type: ignore[index]
    assert lost["clusters"] == 5 and "member5" not in lost["bindings"][0]["clusters"]  # type: ignore[index]
    assert twins["clusters"] == 7
    assert sum(twins["bindings"][0]["clusters"].values()) == 12  # type: ignore[index]


def test_a_cluster_that_is_not_there_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="variant 'v': no member cluster named 'member9'"):
        _result(tmp_path, [{"name": "v", "clustersLost": ["member9"]}])
