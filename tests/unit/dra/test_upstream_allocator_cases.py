"""Upstream's allocator test table, replayed against our allocator.

``data/upstream_allocator_cases-<version>.jsonl.gz`` holds every case of
``structured/internal/allocatortesting`` (``TestAllocator`` and ``TestLexicographicalAllocator``) of
dynamic-resource-allocation v0.36.3 and v0.37.2 that runs against the incubating allocator: its inputs
(features, node, classes, slices, claims, allocated state) and what upstream's incubating allocator
returned (allocation results or error text), captured while upstream's own test run asserted those
outputs equal the table's expectations. Regenerate with
``tests/unit/dra/dump_upstream_cases.sh [--version 1.37]``.

Each case asserts that our allocation (or error text), with the allocator code of that release, equals
upstream's.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from extender.dra.allocator import AllocatedState, Allocator, Features
from extender.dra.cel import CelCache
from extender.dra.records import claim_record, device_class_record, slice_record
from extender.dra.results import AllocationError
from extender.kube.quantity import parse_quantity

_TEST_LISTER_NOT_FOUND = ' "not found" not found'
DATA = Path(__file__).parent / "data"
#: Each release's minor and the dynamic-resource-allocation version its kube-scheduler vendors.
DRA_VERSIONS = {36: "v0.36.3", 37: "v0.37.2"}


def _cases(minor: int) -> list[dict[str, Any]]:
    path = DATA / f"upstream_allocator_cases-{DRA_VERSIONS[minor]}.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


CASES = [(minor, case) for minor in DRA_VERSIONS for case in _cases(minor)]


def _features(raw: Mapping[str, bool], minor: int) -> Features:
    return Features(
        admin_access=raw["AdminAccess"],
        prioritized_list=raw["PrioritizedList"],
        partitionable_devices=raw["PartitionableDevices"],
        device_taints=raw["DeviceTaints"],
        device_binding_and_status=raw["DeviceBindingAndStatus"],
        consumable_capacity=raw["ConsumableCapacity"],
        fractional_capacity_range=raw.get("FractionalCapacityRange", False),
        minor=minor,
    )


def _state(case: Mapping[str, Any]) -> AllocatedState:
    state = AllocatedState()
    for driver, pool, device in case["allocatedDevices"] or ():
        state.devices.add((driver, pool, device))
    for share in case["sharedDeviceIDs"] or ():
        state.shared_device_ids.add((share["Driver"], share["Pool"], share["Device"], share["ShareID"]))
    for entry in case["aggregatedCapacity"] or ():
        state.aggregated_capacity[(entry["Driver"], entry["Pool"], entry["Device"])] = {
            name: parse_quantity(value) for name, value in entry["Capacity"].items()
        }
    return state


def _normalize(results: list[Mapping[str, Any]] | None) -> list[Any] | None:
    """Results in a comparable form: share IDs replaced by a marker, quantities by their values."""
    if results is None:
        return None
    out = []
    for result in results:
        devices = dict(result.get("devices") or {})
        normalized_results = []
        for device in devices.get("results") or ():
            device = dict(device)
            if "shareID" in device:
                device["shareID"] = "<share>"
            if device.get("consumedCapacity"):
                device["consumedCapacity"] = {
                    k: Fraction(parse_quantity(v)) for k, v in device["consumedCapacity"].items()
                }
            else:
                device.pop("consumedCapacity", None)
            for key in ("tolerations", "bindingConditions", "bindingFailureConditions"):
                if not device.get(key):
                    device.pop(key, None)
            normalized_results.append(device)
        out.append(
            {
                "results": normalized_results,
                "config": list(devices.get("config") or ()),
                "nodeSelector": result.get("nodeSelector"),
            }
        )
    return out


def run_case(case: dict[str, Any], minor: int) -> tuple[str | None, list[dict[str, Any]] | None]:
    """Our answer to a case with release ``minor``'s allocator: ``(error text, None)`` or ``(None, results
    in API shape or None)``."""
    node = case["node"]
    allocator = Allocator(
        _features(case["features"], minor),
        _state(case),
        {c["metadata"]["name"]: device_class_record(c) for c in case["classes"] or ()},
        [slice_record(s) for s in case["slices"] or ()],
        CelCache(list_attributes=minor >= 37 or case["features"].get("ListTypeAttributes", False)),
    )
    claims = [claim_record(c) for c in case["claims"] or ()]
    try:
        results = allocator.allocate(node["metadata"]["name"], node["metadata"].get("labels") or {}, claims)
    except AllocationError as err:
        return str(err), None
    return None, None if results is None else [r.to_api() for r in results]


#: Cases whose inputs the recorder cannot capture, by name.
UNRECORDABLE = {
    # Its quantities of 10**21 (big-decimal ones) come out of json.Marshal as "1", so the recorded claim and
    # slice are not the ones upstream's run used (upstream's allocator gives our answer for the recorded ones).
    "consumable-capacity-requests-are-not-modified",
}


@pytest.mark.parametrize(("minor", "case"), CASES, ids=[f"1.{minor}-{c['name']}" for minor, c in CASES])
def test_upstream_case(minor: int, case: dict[str, Any]) -> None:
    if case["name"] in UNRECORDABLE:
        pytest.skip("the recorded inputs are not the case's (see UNRECORDABLE)")
    error, ours = run_case(case, minor)
    if error is not None:
        assert case["error"] is not None, f"unexpected error: {error}"
        expected = case["error"]
        if expected.endswith(_TEST_LISTER_NOT_FOUND):
            # The table's fake lister says ' "not found" not found'; the scheduler's informer lister
            # names the resource and the class, as our text does.
            name = expected.rsplit(" could not retrieve device class ", 1)[1].split(":", 1)[0]
            expected = expected.removesuffix(_TEST_LISTER_NOT_FOUND) + f'deviceclass.resource.k8s.io "{name}" not found'
        assert error == expected
        return
    assert case["error"] is None, f"expected error {case['error']!r}, got {ours!r}"
    assert _normalize(ours) == _normalize(case["results"])
