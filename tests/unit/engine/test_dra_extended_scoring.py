"""NodeResourcesFit's scoring strategies and NodeResourcesBalancedAllocation on extended resources a
DeviceClass stands for: on a node with no allocatable of the resource, the devices of the class count as
its allocatable and those held by claims as allocated (upstream resource_allocation.go, v1.36.3,
calculateDRAResourceTotals)."""

from __future__ import annotations

from typing import Any

from builders import make_node, make_pod
from dra_builders import claim, device_class, exact_request, gpu, resource_slice
from plugin_harness import scores

from extender.cluster.cache import ClusterCache
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.scheduler import Scheduler

DRA_GPU = "example.com/dra-gpu"
FIT = "NodeResourcesFit"
BALANCED = "NodeResourcesBalancedAllocation"


def fit_args(kind: str, *names: str) -> dict[str, Any]:
    return {"scoringStrategy": {"type": kind, "resources": [{"name": n, "weight": 1} for n in names]}}


def gpu_class(expression: str | None = 'device.driver == "gpu.example.com"', extended: str | None = DRA_GPU,
              name: str = "gpu.example.com") -> dict[str, Any]:
    klass = device_class(name, expression)
    if extended:
        klass["spec"]["extendedResourceName"] = extended
    return klass


def cluster(*extra: dict[str, Any], klass: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """n1: four GPUs through DRA (one h100); n2: four through a device plugin; n3: none at all."""
    devices = [gpu("gpu-0"), gpu("gpu-1"), gpu("gpu-2"), gpu("gpu-3", model="h100")]
    return [make_node("n1"), make_node("n2", extra={DRA_GPU: 4}), make_node("n3"),
            klass if klass is not None else gpu_class(), resource_slice("n1", devices), *extra]


def gpu_pod(count: int = 1, name: str = DRA_GPU) -> dict[str, Any]:
    return make_pod("p", requests=[{name: count}])


def used(*devices: str) -> dict[str, Any]:
    return claim("used", [exact_request()], allocated_on="n1", devices=list(devices))


def test_most_allocated_counts_devices_and_the_ones_claims_hold() -> None:
    raw = scores(FIT, gpu_pod(), cluster(used("gpu-0")), fit_args("MostAllocated", DRA_GPU), normalized=False)
    # n1: (1 held + 1 requested) of 4 devices; n2: 1 of its 4 allocatable; n3 has none: nothing to score.
    assert raw == {"n1": 50, "n2": 25, "n3": 0}


def test_least_allocated_and_requested_to_capacity_ratio() -> None:
    objects = cluster(used("gpu-0", "gpu-1"))
    least = scores(FIT, gpu_pod(), objects, fit_args("LeastAllocated", DRA_GPU), normalized=False)
    assert least == {"n1": 25, "n2": 75, "n3": 0}
    ratio = fit_args("RequestedToCapacityRatio", DRA_GPU)
    ratio["scoringStrategy"]["requestedToCapacityRatio"] = {"shape": [{"utilization": 0, "score": 0},
                                                                      {"utilization": 100, "score": 10}]}
    assert scores(FIT, gpu_pod(), objects, ratio, normalized=False) == {"n1": 75, "n2": 25, "n3": 0}


def test_only_devices_the_class_selects_count() -> None:
    klass = gpu_class('device.attributes["gpu.example.com"].model == "h100"')
    raw = scores(FIT, gpu_pod(), cluster(klass=klass), fit_args("MostAllocated", DRA_GPU), normalized=False)
    assert raw is not None and raw["n1"] == 100  # one h100: the pod's one device fills it


def test_a_class_selector_that_fails_leaves_the_node_without_the_resource() -> None:
    klass = gpu_class('device.attributes["gpu.example.com"].missing == "x"')  # no such attribute: runtime error
    raw = scores(FIT, gpu_pod(), cluster(klass=klass), fit_args("MostAllocated", "cpu", DRA_GPU), normalized=False)
    plain = scores(FIT, gpu_pod(), cluster(klass=klass), fit_args("MostAllocated", "cpu"), normalized=False)
    assert raw is not None and plain is not None and raw["n1"] == plain["n1"]


def test_a_device_plugin_amount_wins_over_devices() -> None:
    objects = cluster(resource_slice("n2", [gpu("gpu-0")]))
    raw = scores(FIT, gpu_pod(2), objects, fit_args("MostAllocated", DRA_GPU), normalized=False)
    assert raw is not None and raw["n2"] == 50  # 2 of the 4 allocatable, not of its one device


def test_implicit_class_resource_name() -> None:
    implicit = "deviceclass.resource.kubernetes.io/gpu.example.com"
    raw = scores(FIT, gpu_pod(2, implicit), cluster(klass=gpu_class(extended=None)),
                 fit_args("MostAllocated", implicit), normalized=False)
    assert raw == {"n1": 50, "n2": 0, "n3": 0}


def test_resources_the_pod_does_not_request_are_skipped() -> None:
    pod = make_pod("p", requests=[{"cpu": "1"}])
    with_gpu = scores(FIT, pod, cluster(used("gpu-0")), fit_args("MostAllocated", "cpu", DRA_GPU), normalized=False)
    cpu_only = scores(FIT, pod, cluster(used("gpu-0")), fit_args("MostAllocated", "cpu"), normalized=False)
    assert with_gpu == cpu_only


def test_no_class_stands_for_the_resource() -> None:
    raw = scores(FIT, gpu_pod(), cluster(klass=gpu_class(extended=None)), fit_args("MostAllocated", DRA_GPU),
                 normalized=False)
    assert raw == {"n1": 0, "n2": 25, "n3": 0}


def test_slices_for_all_nodes_and_by_node_selector_count_too() -> None:
    shared = resource_slice("", [gpu("pool-0"), gpu("pool-1")], name="everywhere")
    del shared["spec"]["nodeName"]
    shared["spec"]["allNodes"] = True
    shared["spec"]["pool"]["name"] = "everywhere"
    by_label = resource_slice("", [gpu("rack-0")], name="rack")
    del by_label["spec"]["nodeName"]
    by_label["spec"]["pool"]["name"] = "rack"
    by_label["spec"]["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n3"]}]}]}
    raw = scores(FIT, gpu_pod(), cluster(shared, by_label), fit_args("LeastAllocated", DRA_GPU), normalized=False)
    # n1: 4 + 2 devices, n3: 2 + 1; n2 keeps its device plugin's 4.
    assert raw == {"n1": (6 - 1) * 100 // 6, "n2": 75, "n3": (3 - 1) * 100 // 3}


def test_balanced_allocation_counts_devices() -> None:
    pod = make_pod("p", requests=[{"cpu": "2", "memory": "8Gi", DRA_GPU: 1}])
    args = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                          {"name": DRA_GPU, "weight": 1}]}
    without_gpu = {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
    raw = scores(BALANCED, pod, cluster(used("gpu-0")), args, normalized=False)
    two = scores(BALANCED, pod, cluster(used("gpu-0")), without_gpu, normalized=False)
    assert raw is not None and two is not None
    # n1's gpu share goes 1/4 -> 2/4 beside cpu and memory at 2/4: it becomes perfectly balanced.
    assert raw["n1"] == 50 + (50 + 100 - 88) // 2  # before: cpu, memory 0, gpu 1/4: 88
    assert raw["n3"] == two["n3"]  # no devices, no device plugin: cpu and memory only


def test_scores_follow_claims_between_equivalent_pods() -> None:
    """Scores that count devices are never reused from an equivalent pod's cycle."""
    cache = ClusterCache()
    cache.load(cluster())
    profile = {"pluginConfig": [{"name": FIT, "args": fit_args("MostAllocated", DRA_GPU)}],
               "plugins": {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": FIT}]}}}
    scheduler = Scheduler(cache, [Framework(build_profile(profile))])
    first = dict(scheduler.prioritize(None, make_pod("a", requests=[{DRA_GPU: 1}], uid="a"), ["n1", "n2"], None))
    cache.load([used("gpu-0", "gpu-1")])
    second = dict(scheduler.prioritize(None, make_pod("b", requests=[{DRA_GPU: 1}], uid="b"), ["n1", "n2"], None))
    assert first["n1"] < second["n1"]
    assert first["n2"] == second["n2"]
