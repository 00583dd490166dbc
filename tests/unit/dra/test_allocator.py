"""The allocator's behaviour beyond upstream's table: the interface the DynamicResources plugin relies on."""

from __future__ import annotations

import time
from typing import Any

import pytest

from extender.dra.allocator import DEFAULT_FEATURES, Allocator, Features, allocated_state
from extender.dra.capacity import format_binary_si
from extender.dra.cel import CelCache
from extender.dra.records import (
    DRAObjectError,
    claim_record,
    claim_spec_record,
    device_class_record,
    slice_record,
)
from extender.dra.results import AllocationError

DRIVER = "gpu.example.com"


def gpu_slice(node: str, count: int = 2, **device_extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{node}-gpus"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {"name": f"gpu-{i}", "attributes": {"model": {"string": "a100"}}, **device_extra} for i in range(count)
            ],
        },
    }


def gpu_class() -> dict[str, Any]:
    return {
        "metadata": {"name": "gpu"},
        "spec": {
            "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
            "config": [{"opaque": {"driver": DRIVER, "parameters": {"sharing": "none"}}}],
        },
    }


def claim(name: str, count: int = 1, *, allocation: dict[str, Any] | None = None, **exactly: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": count,
                                                                      **exactly}}]}},
    }
    if allocation is not None:
        obj["status"] = {"allocation": allocation}
    return obj


def allocator(slices: list[dict[str, Any]], claims: list[dict[str, Any]] = (),  # type: ignore[assignment]
              features: Features = DEFAULT_FEATURES) -> Allocator:
    return Allocator(
        features,
        allocated_state(claim_record(c) for c in claims),
        {"gpu": device_class_record(gpu_class())},
        [slice_record(s) for s in slices],
        CelCache(),
    )


@pytest.mark.parametrize(("minor", "config_requests"), [
    (36, {"requests": ["gpu"]}),
    (37, {}),  # v0.37.2: a config that names every request of the claim applies to all (no list)
])
def test_allocation_result_in_api_shape(minor: int, config_requests: dict[str, list[str]]) -> None:
    results = allocator([gpu_slice("node-a")], features=Features(minor=minor)).allocate(
        "node-a", {}, [claim_record(claim("c1", 2))])
    assert results is not None
    assert results[0].to_api() == {
        "devices": {
            "results": [
                {"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": "gpu-0"},
                {"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": "gpu-1"},
            ],
            "config": [
                {"opaque": {"driver": DRIVER, "parameters": {"sharing": "none"}}, "source": "FromClass",
                 **config_requests}
            ],
        },
        "nodeSelector": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}]
        },
    }


def test_no_solution_on_other_nodes_or_when_devices_are_taken() -> None:
    alloc = allocator([gpu_slice("node-a")])
    assert alloc.allocate("node-b", {}, [claim_record(claim("c1"))]) is None
    assert alloc.allocate("node-a", {}, [claim_record(claim("c1", 3))]) is None


def test_allocated_claims_take_their_devices() -> None:
    taken = claim("taken", allocation={"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": "gpu-0"}]}})
    results = allocator([gpu_slice("node-a")], [taken]).allocate("node-a", {}, [claim_record(claim("c1"))])
    assert results is not None
    assert [d.device for d in results[0].devices] == ["gpu-1"]
    assert allocator([gpu_slice("node-a")], [taken]).allocate("node-a", {}, [claim_record(claim("c1", 2))]) is None


def test_admin_access_results_do_not_take_devices() -> None:
    admin = claim("admin", allocation={"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": "gpu-0", "adminAccess": True}]}})
    state = allocated_state([claim_record(admin)])
    assert state.devices == set()
    results = allocator([gpu_slice("node-a")], [admin]).allocate("node-a", {}, [claim_record(claim("c1", 2))])
    assert results is not None


def test_shared_results_count_consumed_capacity() -> None:
    shared = claim("shared", allocation={"devices": {"results": [
        {"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": "gpu-0", "shareID": "s1",
         "consumedCapacity": {"memory": "10Gi"}},
        {"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": "gpu-0", "shareID": "s2",
         "consumedCapacity": {"memory": "20Gi"}},
    ]}})
    state = allocated_state([claim_record(shared)])
    device = (DRIVER, "node-a", "gpu-0")
    assert state.devices == set()
    assert state.shared_device_ids == {(*device, "s1"), (*device, "s2")}
    assert state.aggregated_capacity[device] == {"memory": 30 * 2**30}
    assert state.is_allocated(device)

    slices = [gpu_slice("node-a", 1, allowMultipleAllocations=True, capacity={"memory": {"value": "40Gi"}})]
    alloc = allocator(slices, [shared])
    fits = alloc.allocate("node-a", {}, [claim_record(claim("c1", capacity={"requests": {"memory": "10Gi"}}))])
    assert fits is not None
    result = fits[0].devices[0]
    assert result.share_id is not None
    assert {k: str(v) for k, v in (result.consumed_capacity or {}).items()} == {"memory": "10Gi"}
    too_much = claim("c2", capacity={"requests": {"memory": "11Gi"}})
    assert alloc.allocate("node-a", {}, [claim_record(too_much)]) is None


def test_deadline_passed_raises_timeout() -> None:
    with pytest.raises(AllocationError) as err:
        allocator([gpu_slice("node-a")]).allocate(
            "node-a", {}, [claim_record(claim("c1"))], deadline=time.monotonic() - 1
        )
    assert err.value.timed_out
    assert not err.value.failed_on_node
    assert str(err.value) == "filter operation aborted: context deadline exceeded"


@pytest.mark.parametrize(("minor", "text"), [
    (36, "claim default/c1: selector #0: CEL runtime error: no such key: missing"),
    # v0.37.2 names the device and adds a hint for a missing key.
    (37, "claim default/c1: selector #0 on device gpu.example.com/node-a/gpu-0: CEL runtime error: no such key: "
         "missing. consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() "
         "for optional fields"),
])
def test_cel_runtime_error_is_an_allocation_error(minor: int, text: str) -> None:
    bad = claim("c1", selectors=[{"cel": {"expression": f'device.attributes["{DRIVER}"].missing == 1'}}])
    with pytest.raises(AllocationError) as err:
        allocator([gpu_slice("node-a")], features=Features(minor=minor)).allocate("node-a", {}, [claim_record(bad)])
    assert str(err.value) == text
    assert not err.value.failed_on_node and not err.value.timed_out


def test_cel_compile_error_text() -> None:
    bad = claim("c1", selectors=[{"cel": {"expression": "noSuchVariable"}}])
    with pytest.raises(AllocationError) as err:
        allocator([gpu_slice("node-a")]).allocate("node-a", {}, [claim_record(bad)])
    assert str(err.value) == (
        "claim default/c1: selector #0: CEL compile error: compilation failed: "
        "ERROR: <input>:1:1: undeclared reference to 'noSuchVariable' (in container '')\n"
        " | noSuchVariable\n | ^"
    )


def test_unknown_class_names_the_class() -> None:
    with pytest.raises(AllocationError) as err:
        allocator([gpu_slice("node-a")]).allocate("node-a", {}, [claim_record(claim("c1", deviceClassName="nope"))])
    assert str(err.value) == (
        "claim default/c1, request gpu: could not retrieve device class nope: "
        'deviceclass.resource.k8s.io "nope" not found'
    )


def test_template_spec_builds_the_same_requests() -> None:
    spec = claim("c1", 2)["spec"]
    assert claim_spec_record(spec) == claim_record(claim("c1", 2)).spec


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"metadata": {"name": "s"}, "spec": {"pool": {"name": "p"}}}, "spec.driver: required value"),
        ({"metadata": {"name": "s"}, "spec": {"driver": "d", "pool": {"name": "p"}, "devices": {}}},
         "spec.devices: expected a list, got dict"),
        ({"metadata": {"name": "s"}, "spec": {"driver": "d", "pool": {"name": "p", "generation": "1"}}},
         "spec.pool.generation: expected an integer, got str"),
        ({"metadata": {"name": "s"}, "spec": {"driver": "d", "pool": {"name": "p"},
                                              "devices": [{"name": "x", "capacity": {"m": {"value": "1x"}}}]}},
         "spec.devices[0].capacity[m].value: invalid quantity '1x'"),
    ],
)
def test_malformed_slices_are_reported(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(DRAObjectError) as err:
        slice_record(obj)
    assert str(err.value).startswith(message)


def test_malformed_claim_is_reported() -> None:
    obj = claim("c1")
    obj["spec"]["devices"]["requests"][0]["exactly"]["count"] = "two"
    with pytest.raises(DRAObjectError, match=r"spec.devices.requests\[0\].exactly.count: expected an integer"):
        claim_record(obj)


def test_cel_cache_compiles_once_and_memoizes_per_device() -> None:
    cache = CelCache()
    first = cache.get_or_compile('device.driver == "gpu.example.com"')
    assert cache.get_or_compile('device.driver == "gpu.example.com"') is first
    device = slice_record(gpu_slice("node-a")).devices[0]
    assert first.device_matches(device, DRIVER) == (True, None)
    assert first.device_matches(device, DRIVER) == (True, None)


@pytest.mark.parametrize(
    ("number", "text"), [(0, "0"), (1023, "1023"), (1024, "1Ki"), (1536, "1536"), (3 * 2**30, "3Gi"), (-2048, "-2Ki")]
)
def test_binary_si_format(number: int, text: str) -> None:
    assert format_binary_si(number) == text


def test_exhaustive_search_stops_at_the_deadline() -> None:
    # 13 single-device requests that must use distinct values of an attribute with 12 values: no
    # solution, and the search would try every ordered choice of devices before saying so.
    devices = [{"name": f"gpu-{i}", "attributes": {"group": {"int": i % 12}}} for i in range(36)]
    slices = [{"metadata": {"name": "s"}, "spec": {"driver": DRIVER, "nodeName": "node-a",
                                                   "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                                                   "devices": devices}}]
    requests = [{"name": f"r{i}", "exactly": {"deviceClassName": "gpu", "count": 1}} for i in range(13)]
    hard = {"metadata": {"name": "hard", "namespace": "default"},
            "spec": {"devices": {"requests": requests, "constraints": [{"distinctAttribute": f"{DRIVER}/group"}]}}}
    with pytest.raises(AllocationError) as err:
        allocator(slices).allocate("node-a", {}, [claim_record(hard)], deadline=time.monotonic() + 0.2)
    assert err.value.timed_out


def test_results_in_api_shape_are_copies() -> None:
    slices = [gpu_slice("node-a")]
    alloc = allocator(slices)
    results = alloc.allocate("node-a", {}, [claim_record(claim("c1"))])
    assert results is not None
    api = results[0].to_api()
    api["devices"]["config"][0]["opaque"]["parameters"]["sharing"] = "changed"
    api["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"].append("other")
    again = results[0].to_api()
    assert again["devices"]["config"][0]["opaque"]["parameters"] == {"sharing": "none"}
    assert again["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["node-a"]
    assert alloc.classes["gpu"].config[0]["opaque"]["parameters"] == {"sharing": "none"}


def test_pools_follow_new_slices_and_node_labels() -> None:
    first = allocator([gpu_slice("node-a", 1)]).allocate("node-a", {}, [claim_record(claim("c1"))])
    assert first is not None and first[0].devices[0].device == "gpu-0"
    renamed = gpu_slice("node-a", 1)
    renamed["spec"]["devices"][0]["name"] = "gpu-9"
    second = allocator([renamed]).allocate("node-a", {}, [claim_record(claim("c1"))])
    assert second is not None and second[0].devices[0].device == "gpu-9"

    by_label = gpu_slice("node-a", 1)
    del by_label["spec"]["nodeName"]
    by_label["spec"]["nodeSelector"] = {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["yes"]}]}]
    }
    alloc = allocator([by_label])
    assert alloc.allocate("node-a", {"gpu": "yes"}, [claim_record(claim("c1"))]) is not None
    assert alloc.allocate("node-a", {"gpu": "no"}, [claim_record(claim("c1"))]) is None
    labelled = alloc.allocate("node-a", {"gpu": "yes"}, [claim_record(claim("c1"))])
    assert labelled is not None
    assert labelled[0].node_selector == by_label["spec"]["nodeSelector"]


def test_records_copy_and_pickle_after_selectors_ran() -> None:
    import copy
    import pickle

    record = slice_record(gpu_slice("node-a"))
    compiled = CelCache().get_or_compile(f'device.driver == "{DRIVER}"')
    assert compiled.device_matches(record.devices[0], DRIVER) == (True, None)
    for clone in (copy.deepcopy(record), pickle.loads(pickle.dumps(record))):
        assert clone.devices[0].name == "gpu-0"
        assert compiled.device_matches(clone.devices[0], DRIVER) == (True, None)


@pytest.mark.parametrize("minor", [36, 37])
def test_a_request_with_derived_attributes_is_refused_from_v1_37(minor: int) -> None:
    derived = claim("c1", derivedAttributes=[{"name": "gpu.example.com/x", "expression": "1"}])
    alloc = allocator([gpu_slice("node-a")], features=Features(minor=minor))
    if minor == 36:  # the field does not exist in v1.36's API: nothing reads it
        assert alloc.allocate("node-a", {}, [claim_record(derived)]) is not None
        return
    with pytest.raises(AllocationError) as err:
        alloc.allocate("node-a", {}, [claim_record(derived)])
    assert str(err.value) == ("claim default/c1, request gpu: cannot handle request with derived attributes, "
                              "the feature is disabled")


@pytest.mark.parametrize(("minor", "taken"), [(36, ["gpu-0", "gpu-1", "gpu-2"]), (37, None)])
def test_distinct_attribute_compares_every_device_of_a_request_from_v1_37(minor: int, taken: list[str] | None) -> None:
    # Models a, b, a: v1.36 remembers one value per request (b replaces a), so the third device passes.
    slice_ = gpu_slice("node-a", 3)
    for device, model in zip(slice_["spec"]["devices"], ("a", "b", "a"), strict=True):
        device["attributes"] = {"model": {"string": model}}
    distinct = claim("c1", 3)
    distinct["spec"]["devices"]["constraints"] = [{"distinctAttribute": f"{DRIVER}/model"}]
    results = allocator([slice_], features=Features(minor=minor)).allocate("node-a", {}, [claim_record(distinct)])
    assert (None if results is None else [d.device for d in results[0].devices]) == taken
