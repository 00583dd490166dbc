"""CEL selectors against upstream's ``dynamic-resource-allocation/cel``, expression by expression.

``data/cel_inputs.json`` lists devices and selector expressions covering the ``device`` variable,
the CEL standard library, the strings extension and Kubernetes' libraries (quantity, semver, regex,
lists, sets), plus bad expressions. ``data/cel_expected-<version>.json`` is what upstream's package
(v0.36.3, v0.37.2) returned for them (compile error text, or per device the result and runtime error
text), produced by ``tests/unit/dra/upstream/celoracle`` (see ``dump_upstream_cel.sh``); each is
compared with our cache set up as that release's scheduler sets up its own. Expressions we know to
differ are listed in :data:`KNOWN_DIFFERENCES` with the reason; every other one must agree exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extender.dra.cel import CelCache
from extender.dra.records import slice_record

DATA = Path(__file__).parent / "data"
INPUTS = json.loads((DATA / "cel_inputs.json").read_text())
#: Each release's minor and the dynamic-resource-allocation version its kube-scheduler vendors.
DRA_VERSIONS = {36: "v0.36.3", 37: "v0.37.2"}
EXPECTED = [(minor, expected) for minor, version in DRA_VERSIONS.items()
            for expected in json.loads((DATA / f"cel_expected-{version}.json").read_text())]

#: Expressions whose outcome differs from cel-go, and why (see the extender.dra.cel docstring).
_NOT_IN_RUNTIME = "not available in cel-expr-python"
KNOWN_DIFFERENCES: dict[str, str] = {
    'format.dns1123Label().validate("abc").hasValue() == false': (
        "the format library returns optional values, which functions defined in Python cannot return "
        "in cel-expr-python (an optional type can neither be declared nor built from Python)"
    ),
    "[1, 2].all(i, v, v > i)": "two-variable comprehension macros: " + _NOT_IN_RUNTIME,
    '{"a": 1}.transformMap(k, v, v + 1) == {"a": 2}': "two-variable comprehension macros: " + _NOT_IN_RUNTIME,
    '"%s %s".format([1, ["a", 2]]) == "1 [a, 2]"': (
        "format's %s of a list quotes its strings in cel-go, not in the C++ strings extension; matching it "
        "means reimplementing format in Python under an alias (not done)"
    ),
    'quantity("1.5Gi").asInteger() == 1610612736': (
        "upstream follows resource.Quantity's internal representation (1.5Gi parses to an inf.Dec, which "
        "AsInt64 refuses); the runtime's == compares every field of an opaque value, so a quantity cannot "
        "carry that representation beside its value and still compare equal to 1536Mi"
    ),
}


def _devices() -> list[tuple[Any, str]]:
    devices = []
    for index, entry in enumerate(INPUTS["devices"]):
        record = slice_record(
            {
                "metadata": {"name": f"slice-{index}"},
                "spec": {
                    "driver": entry["driver"],
                    "nodeName": "node",
                    "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 1},
                    "devices": [entry["device"]],
                },
            }
        )
        devices.append((record.devices[0], entry["driver"]))
    return devices


DEVICES = _devices()
#: v0.37.2's scheduler compiles in the list-type attributes environment; v0.36.3's (by default) does not.
CACHES = {36: CelCache(list_attributes=False), 37: CelCache(list_attributes=True)}


@pytest.mark.parametrize(("minor", "expected"), EXPECTED, ids=[f"1.{m}-{e['expression']}" for m, e in EXPECTED])
def test_expression_matches_upstream(minor: int, expected: dict[str, Any]) -> None:
    expression = expected["expression"]
    if expression in KNOWN_DIFFERENCES:
        pytest.skip(KNOWN_DIFFERENCES[expression])
    compiled = CACHES[minor].get_or_compile(expression)
    assert compiled.error == expected["compileError"]
    if compiled.error is not None:
        return
    ours = [compiled.device_matches(device, driver) for device, driver in DEVICES]
    theirs = [(r["matches"], r["error"]) for r in expected["results"]]
    assert ours == theirs
