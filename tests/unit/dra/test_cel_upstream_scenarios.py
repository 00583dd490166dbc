"""Upstream's ``cel/compile_test.go`` scenarios (those of the scheduler's CEL environment).

``data/upstream_cel_scenarios.jsonl`` holds each scenario's expression and device, with what
upstream's ``cel`` package answered under the scheduler's settings (regenerate with
``dump_upstream_cel.sh``). Our compile error, match and runtime error must be the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extender.dra.cel import CelCache
from extender.dra.records import slice_record

DATA = Path(__file__).parent / "data" / "upstream_cel_scenarios.jsonl"
SCENARIOS = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
CACHE = CelCache()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_scenario_matches_upstream(scenario: dict[str, Any]) -> None:
    device = dict(scenario["device"])
    device["attributes"] = device.get("attributes") or {}
    record = slice_record(
        {
            "metadata": {"name": "slice"},
            "spec": {
                "driver": "placeholder",
                "nodeName": "node",
                "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 1},
                "devices": [device],
            },
        }
    ).devices[0]
    compiled = CACHE.get_or_compile(scenario["expression"])
    assert compiled.error == scenario.get("compileError")
    if compiled.error is None:
        assert compiled.device_matches(record, scenario["driver"]) == (scenario["matches"], scenario.get("error"))
