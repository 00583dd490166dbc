"""Upstream's ``cel/compile_test.go`` scenarios (those of the scheduler's CEL environment).

``data/upstream_cel_scenarios-<version>.jsonl`` holds each scenario's expression and device, with what
upstream's ``cel`` package (v0.36.3, v0.37.2) answered under the scheduler's settings (regenerate with
``dump_upstream_cel.sh [--version 1.37]``). Our compile error, match and runtime error, with the cache
set up as that release's scheduler does, must be the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extender.dra.cel import CelCache
from extender.dra.records import slice_record

DATA = Path(__file__).parent / "data"
DRA_VERSIONS = {36: "v0.36.3", 37: "v0.37.2"}
SCENARIOS = [(minor, json.loads(line)) for minor, version in DRA_VERSIONS.items()
             for line in (DATA / f"upstream_cel_scenarios-{version}.jsonl").read_text().splitlines() if line.strip()]
CACHES = {36: CelCache(list_attributes=False), 37: CelCache(list_attributes=True)}


@pytest.mark.parametrize(("minor", "scenario"), SCENARIOS, ids=[f"1.{m}-{s['name']}" for m, s in SCENARIOS])
def test_scenario_matches_upstream(minor: int, scenario: dict[str, Any]) -> None:
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
    compiled = CACHES[minor].get_or_compile(scenario["expression"])
    assert compiled.error == scenario.get("compileError")
    if compiled.error is None:
        assert compiled.device_matches(record, scenario["driver"]) == (scenario["matches"], scenario.get("error"))
