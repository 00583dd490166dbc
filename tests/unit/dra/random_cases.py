"""Random allocation problems for the differential test against upstream's allocator.

Each case is a dict in the shape ``upstream/allocoracle`` reads (and ``data/upstream_allocator_cases``
uses): features, node, classes, slices, claims and the allocated state. The generator mixes every
feature the v1.36 scheduler turns on: node selection of slices (name, all nodes, selector, per device),
incomplete and obsolete pools, partitionable devices with counter sets, multi-allocatable devices with
capacity policies, taints and tolerations, binding conditions, admin access, ``All`` mode,
prioritized lists, constraints, class configs, and CEL selectors that match, fail and error.
"""

from __future__ import annotations

import random
from typing import Any

GPU = "gpu.example.com"
NIC = "nic.example.com"
FEATURES = {
    "AdminAccess": True,
    "ConsumableCapacity": True,
    "DeviceBindingAndStatus": True,
    "DeviceTaints": True,
    "ListTypeAttributes": False,
    "PartitionableDevices": True,
    "PrioritizedList": True,
}

CLASSES = [
    {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}],
                                           "config": [{"opaque": {"driver": GPU, "parameters": {"a": 1}}}]}},
    {"metadata": {"name": "nic"}, "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{NIC}"'}}]}},
    {"metadata": {"name": "any"}, "spec": {}},
    {"metadata": {"name": "model-a"}, "spec": {"selectors": [
        {"cel": {"expression": f'device.driver == "{GPU}"'}},
        {"cel": {"expression": f'device.attributes["{GPU}"].model == "a"'}},
    ]}},
]

SELECTORS = [
    f'device.driver == "{GPU}" && device.attributes["{GPU}"].model == "b"',
    f'device.attributes["{GPU}"].index >= 1',
    f'!("memory" in device.capacity["{GPU}"]) || device.capacity["{GPU}"].memory.compareTo(quantity("10Gi")) > 0',
    f'device.driver != "{GPU}" || device.attributes["{GPU}"].version.isGreaterThan(semver("1.5.0"))',
    f'"numa" in device.attributes["{GPU}"] && device.attributes["{GPU}"].numa == 0',
    "device.allowMultipleAllocations",
    f'"{GPU}" in device.attributes && "model" in device.attributes["{GPU}"]',
    f'"numa" in device.attributes["{GPU}"] || device.capacity["{NIC}"].size() == 0',
    "true",
]
#: Selectors that fail on some devices (a missing attribute) or never compile.
BAD_SELECTORS = [f'device.attributes["{GPU}"].numa == 1', "device.noSuchField == 1"]


def _device(rng: random.Random, name: str, driver: str, counter_sets: list[str]) -> dict[str, Any]:
    attrs: dict[str, Any] = {"index": {"int": rng.randrange(4)}}
    if driver == GPU:
        attrs["model"] = {"string": rng.choice("ab")}
        attrs["version"] = {"version": rng.choice(["1.0.0", "2.0.0", "1.10.0-rc.1"])}
        if rng.random() < 0.7:
            attrs["numa"] = {"int": rng.randrange(2)}
    else:
        attrs[f"{GPU}/numa"] = {"int": rng.randrange(2)}
    device: dict[str, Any] = {"name": name, "attributes": attrs}
    memory = rng.choice(["8Gi", "16Gi"])
    if rng.random() < 0.8:
        device["capacity"] = {"memory": {"value": memory}}
    if rng.random() < 0.15 and "capacity" in device:
        device["allowMultipleAllocations"] = True
        if rng.random() < 0.5:
            device["capacity"]["memory"]["requestPolicy"] = rng.choice([
                {"default": "2Gi", "validRange": {"min": "1Gi", "max": "8Gi", "step": "1Gi"}},
                {"default": "4Gi", "validValues": ["4Gi", "8Gi"]},
            ])
    if rng.random() < 0.15:
        device["taints"] = [{"key": rng.choice(["maintenance", "broken"]), "value": rng.choice(["", "yes"]),
                             "effect": rng.choice(["NoSchedule", "NoExecute", "None"])}]
    if counter_sets and rng.random() < 0.7:
        device["consumesCounters"] = [{"counterSet": rng.choice(counter_sets),
                                       "counters": {"mem": {"value": rng.choice(["4Gi", "8Gi", "16Gi"])}}}]
    if rng.random() < 0.05:
        device["bindingConditions"] = ["ready"]
        device["bindingFailureConditions"] = ["failed"]
        device["bindsToNode"] = rng.random() < 0.5
    return device


def _node_selection(rng: random.Random) -> dict[str, Any]:
    roll = rng.random()
    if roll < 0.6:
        return {"nodeName": "node-1"}
    if roll < 0.7:
        return {"nodeName": "node-2"}
    if roll < 0.8:
        return {"allNodes": True}
    region = rng.choice(["r1", "r2"])
    return {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "region", "operator": "In", "values": [region]}]}]}}


def _slices(rng: random.Random) -> list[dict[str, Any]]:
    slices: list[dict[str, Any]] = []
    for pool_index in range(rng.randint(1, 3)):
        driver = rng.choice([GPU, GPU, NIC])
        pool = f"pool-{pool_index}"
        generation = 1
        partitionable = driver == GPU and rng.random() < 0.25
        counter_sets = ["cs-0"] if partitionable else []
        slice_count = rng.choice([1, 1, 1, 2])
        selection = _node_selection(rng)
        present = slice_count if rng.random() < 0.85 else slice_count - 1
        if partitionable:
            slices.append({"metadata": {"name": f"{pool}-counters"}, "spec": {
                "driver": driver, "pool": {"name": pool, "generation": generation,
                                           "resourceSliceCount": slice_count + 1},
                **selection,
                "sharedCounters": [{"name": "cs-0", "counters": {"mem": {"value": rng.choice(["16Gi", "24Gi"])}}}],
            }})
        per_device = rng.random() < 0.1 and not selection.get("nodeName")
        # Some pools span nodes: each slice picks its own node, and one may be of a newer generation.
        spans_nodes = slice_count > 1 and rng.random() < 0.4
        newer_elsewhere = spans_nodes and rng.random() < 0.3
        for slice_index in range(max(present, 0)):
            devices = [_device(rng, f"dev-{slice_index}-{i}", driver, counter_sets) for i in range(rng.randint(1, 5))]
            spec: dict[str, Any] = {
                "driver": driver,
                "pool": {"name": pool, "generation": generation,
                         "resourceSliceCount": slice_count + (1 if partitionable else 0)},
                "devices": devices,
            }
            if per_device:
                spec["perDeviceNodeSelection"] = True
                for device in devices:
                    device.update(_node_selection(rng))
            elif spans_nodes:
                spec.update(_node_selection(rng))
                if newer_elsewhere and slice_index == present - 1:
                    spec["pool"]["generation"] = generation + 1
                    spec["nodeName"] = "node-2"
                    spec.pop("allNodes", None)
                    spec.pop("nodeSelector", None)
            else:
                spec.update(selection)
            slices.append({"metadata": {"name": f"{pool}-s{slice_index}"}, "spec": spec})
        if rng.random() < 0.1:
            # An older generation of the same pool: ignored.
            slices.append({"metadata": {"name": f"{pool}-old"}, "spec": {
                "driver": driver, "pool": {"name": pool, "generation": 0, "resourceSliceCount": 1},
                "nodeName": "node-1", "devices": [_device(rng, "old-0", driver, [])]}})
    return slices


def _request_fields(rng: random.Random, admin: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {"deviceClassName": rng.choice(["gpu", "gpu", "gpu", "nic", "any", "model-a"])}
    if rng.random() < 0.1:
        fields["allocationMode"] = "All"
    else:
        fields["allocationMode"] = "ExactCount"
        fields["count"] = rng.choice([1, 1, 1, 1, 2, 3])
    if rng.random() < 0.4:
        pool = SELECTORS + (BAD_SELECTORS if rng.random() < 0.1 else [])
        fields["selectors"] = [{"cel": {"expression": rng.choice(pool)}}]
    if rng.random() < 0.25:
        fields["tolerations"] = [rng.choice([
            {"key": "maintenance", "operator": "Exists"},
            {"key": "broken", "operator": "Equal", "value": "yes", "effect": "NoSchedule"},
            {"operator": "Exists"},
        ])]
    if rng.random() < 0.15:
        fields["capacity"] = {"requests": {"memory": rng.choice(["1Gi", "3Gi", "4Gi", "9Gi"])}}
    if admin:
        fields["adminAccess"] = True
    return fields


def _claim(rng: random.Random, index: int) -> dict[str, Any]:
    requests = []
    for request_index in range(rng.choice([1, 1, 2, 3])):
        name = f"req-{request_index}"
        if rng.random() < 0.25:
            subs = [{"name": f"sub-{i}", **_request_fields(rng, False)} for i in range(rng.randint(2, 3))]
            requests.append({"name": name, "firstAvailable": subs})
        else:
            requests.append({"name": name, "exactly": _request_fields(rng, rng.random() < 0.08)})
    devices: dict[str, Any] = {"requests": requests}
    if rng.random() < 0.3:
        names = [r["name"] for r in requests]
        names += [f'{r["name"]}/{sub["name"]}' for r in requests for sub in r.get("firstAvailable", ())]
        chosen = rng.sample(names, rng.randint(0, len(names)))
        kind = rng.choice(["matchAttribute", "distinctAttribute"])
        attribute = rng.choice([f"{GPU}/numa", f"{GPU}/model", f"{GPU}/index"])
        constraint: dict[str, Any] = {kind: attribute}
        if chosen:
            constraint["requests"] = chosen
        devices["constraints"] = [constraint]
    if rng.random() < 0.3:
        targets = [r["name"] for r in requests]
        targets += [f'{r["name"]}/{sub["name"]}' for r in requests for sub in r.get("firstAvailable", ())]
        devices["config"] = [
            {"requests": rng.sample(targets, rng.randint(0, min(2, len(targets)))),
             "opaque": {"driver": GPU, "parameters": {"claim": index, "config": i}}}
            for i in range(rng.randint(1, 2))
        ]
    return {"metadata": {"name": f"claim-{index}", "namespace": "default", "uid": f"uid-{index}"},
            "spec": {"devices": devices}, "status": {}}


def random_case(seed: int) -> dict[str, Any]:
    """One allocation problem, reproducible from its seed."""
    rng = random.Random(seed)
    slices = _slices(rng)
    device_ids = [(s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"])
                  for s in slices for d in s["spec"].get("devices", [])]
    multi = {(s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"])
             for s in slices for d in s["spec"].get("devices", []) if d.get("allowMultipleAllocations")}
    allocated = [list(d) for d in device_ids if d not in multi and rng.random() < 0.15]
    shared = [d for d in multi if rng.random() < 0.5]
    return {
        "name": f"seed-{seed}",
        "features": FEATURES,
        "node": {"metadata": {"name": "node-1", "labels": {"region": "r1"}}},
        "classes": CLASSES,
        "slices": slices,
        "claims": [_claim(rng, i) for i in range(rng.choice([1, 1, 2]))],
        "allocatedDevices": allocated,
        "sharedDeviceIDs": [{"Driver": d[0], "Pool": d[1], "Device": d[2], "ShareID": f"s-{i}"}
                            for i, d in enumerate(shared)],
        "aggregatedCapacity": [{"Driver": d[0], "Pool": d[1], "Device": d[2],
                                "Capacity": {"memory": rng.choice(["2Gi", "4Gi"])}} for d in shared],
    }
