"""Tests for extender.kube.resources, with upstream's helpers_test.go tables ported as data.

Upstream's helper tests call PodRequests on objects the apiserver never defaulted, so the
ported tables run with ``apply_defaults=False``; defaulting has its own tests below.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extender.kube.quantity import milli_value, parse_quantity, value
from extender.kube.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    NON_ZERO_DEFAULTS,
    ResourceError,
    is_supported_pod_level_resource,
    non_zero_requests,
    pod_limits,
    pod_requests,
    scheduler_units,
)

Q = parse_quantity
MI = 1024 * 1024


def rl(**values: str) -> dict[str, str]:
    """A ResourceList with python-friendly keys (hugepages_2Mi -> hugepages-2Mi)."""
    return {key.replace("_", "-"): amount for key, amount in values.items()}


def parsed(values: dict[str, str]) -> dict[str, Fraction]:
    return {key: Q(amount) for key, amount in values.items()}


def container(
    name: str = "",
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    restart_always: bool = False,
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    out: dict[str, Any] = {"name": name, "resources": resources}
    if restart_always:
        out["restartPolicy"] = "Always"
    return out


def pod(
    containers: list[dict[str, Any]] | None = None,
    init_containers: list[dict[str, Any]] | None = None,
    overhead: dict[str, str] | None = None,
    pod_resources: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers or []}
    if init_containers is not None:
        spec["initContainers"] = init_containers
    if overhead is not None:
        spec["overhead"] = overhead
    if pod_resources is not None:
        spec["resources"] = pod_resources
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
    if status is not None:
        out["status"] = status
    return out


def get_pod(
    cpu_request: str = "",
    cpu_limit: str = "",
    memory_request: str = "",
    memory_limit: str = "",
    cpu_overhead: str = "",
    memory_overhead: str = "",
) -> dict[str, Any]:
    """Upstream's getPod(name, podResources{...}) helper."""
    requests = {k: v for k, v in (("cpu", cpu_request), ("memory", memory_request)) if v}
    limits = {k: v for k, v in (("cpu", cpu_limit), ("memory", memory_limit)) if v}
    overhead = {k: v for k, v in (("cpu", cpu_overhead), ("memory", memory_overhead)) if v}
    return pod([container("foo", requests, limits)], overhead=overhead)


# TestPodRequestsAndLimits: (name, pod, requests, limits).
REQUESTS_AND_LIMITS = [
    ("just-limit-no-overhead", get_pod(cpu_limit="9"), {}, {"cpu": "9"}),
    ("just-overhead", get_pod(cpu_overhead="5", memory_overhead="5"), {"cpu": "5", "memory": "5"}, {}),
    (
        "req-and-overhead",
        get_pod(cpu_request="1", memory_request="10", cpu_overhead="5", memory_overhead="5"),
        {"cpu": "6", "memory": "15"},
        {},
    ),
    (
        "all-req-lim-and-overhead",
        get_pod("1", "2", "10", "12", "5", "5"),
        {"cpu": "6", "memory": "15"},
        {"cpu": "7", "memory": "17"},
    ),
    (
        "req-some-lim-and-overhead",
        get_pod(cpu_request="1", cpu_limit="2", memory_request="10", cpu_overhead="5", memory_overhead="5"),
        {"cpu": "6", "memory": "15"},
        {"cpu": "7"},
    ),
]


@pytest.mark.parametrize(("name", "raw", "requests", "limits"), REQUESTS_AND_LIMITS)
def test_upstream_requests_and_limits(
    name: str, raw: dict[str, Any], requests: dict[str, str], limits: dict[str, str]
) -> None:
    assert pod_requests(raw, apply_defaults=False) == parsed(requests), name
    assert pod_limits(raw, apply_defaults=False) == parsed(limits), name


TWO_CONTAINERS = [
    container("foobar", rl(cpu="1", memory="5"), rl(cpu="2", memory="10")),
    container("foobar2", rl(cpu="4", memory="12"), rl(cpu="8", memory="24")),
]

# TestPodRequestsAndLimitsWithoutOverhead (ExcludeOverhead: true).
WITHOUT_OVERHEAD = [
    ("two container no overhead", pod(TWO_CONTAINERS), {"cpu": "5", "memory": "17"}, {"cpu": "10", "memory": "34"}),
    (
        "two container with overhead - shouldn't consider overhead",
        pod(TWO_CONTAINERS, overhead=rl(cpu="3", memory="8")),
        {"cpu": "5", "memory": "17"},
        {"cpu": "10", "memory": "34"},
    ),
    (
        "two container with overhead, massive init - should just be the largest init",
        pod(
            TWO_CONTAINERS,
            init_containers=[
                container("small-init", rl(cpu="1", memory="5"), rl(cpu="1", memory="5")),
                container("big-init", rl(cpu="40", memory="120"), rl(cpu="80", memory="240")),
            ],
            overhead=rl(cpu="3", memory="8"),
        ),
        {"cpu": "40", "memory": "120"},
        {"cpu": "80", "memory": "240"},
    ),
]


@pytest.mark.parametrize(("name", "raw", "requests", "limits"), WITHOUT_OVERHEAD)
def test_upstream_requests_and_limits_without_overhead(
    name: str, raw: dict[str, Any], requests: dict[str, str], limits: dict[str, str]
) -> None:
    assert pod_requests(raw, exclude_overhead=True, apply_defaults=False) == parsed(requests), name
    assert pod_limits(raw, exclude_overhead=True, apply_defaults=False) == parsed(limits), name


def statuses(*items: tuple[str, dict[str, str] | None, dict[str, str] | None]) -> list[dict[str, Any]]:
    """Container statuses from (name, allocatedResources, resources.requests)."""
    out = []
    for name, allocated, actual in items:
        entry: dict[str, Any] = {"name": name}
        if allocated is not None:
            entry["allocatedResources"] = allocated
        if actual is not None:
            entry["resources"] = {"requests": actual}
        out.append(entry)
    return out


INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]

# TestPodResourceRequests: (description, use_status, exclude_overhead, pod, expected).
POD_RESOURCE_REQUESTS: list[tuple[str, bool, bool, dict[str, Any], dict[str, str]]] = [
    (
        "nil options, larger init container",
        False,
        False,
        pod([container(requests=rl(cpu="1"))], [container(requests=rl(cpu="4"))]),
        {"cpu": "4"},
    ),
    (
        "nil options, larger containers",
        False,
        False,
        pod([container(requests=rl(cpu="2")), container(requests=rl(cpu="3"))], [container(requests=rl(cpu="2"))]),
        {"cpu": "5"},
    ),
    (
        "pod overhead excluded",
        False,
        True,
        pod(
            [container(requests=rl(cpu="2")), container(requests=rl(cpu="3"))],
            [container(requests=rl(cpu="2"))],
            overhead=rl(cpu="1"),
        ),
        {"cpu": "5"},
    ),
    (
        "pod overhead included",
        False,
        False,
        pod(
            [container(requests=rl(cpu="2")), container(requests=rl(cpu="3"))],
            [container(requests=rl(cpu="2"), limits=rl(cpu="2"))],
            overhead=rl(cpu="1", memory="1Gi"),
        ),
        {"cpu": "6", "memory": "1Gi"},
    ),
    (
        "resized, infeasible",
        True,
        False,
        pod(
            [container("container-1", rl(cpu="4"))],
            status={"conditions": INFEASIBLE, "containerStatuses": statuses(("container-1", None, rl(cpu="2")))},
        ),
        {"cpu": "2"},
    ),
    (
        "resized, infeasible & in-progress",
        True,
        False,
        pod(
            [container("container-1", rl(cpu="6"))],
            status={
                "conditions": INFEASIBLE,
                "containerStatuses": statuses(("container-1", rl(cpu="4"), rl(cpu="2"))),
            },
        ),
        {"cpu": "4"},
    ),
    (
        "resized, no resize status",
        True,
        False,
        pod(
            [container("container-1", rl(cpu="4"))],
            status={"containerStatuses": statuses(("container-1", None, rl(cpu="2")))},
        ),
        {"cpu": "4"},
    ),
    (
        "resized: per-resource 3-way maximum",
        True,
        False,
        pod(
            [container("container-1", rl(cpu="30m", memory="20M", ephemeral_storage="10G"))],
            status={
                "containerStatuses": statuses(
                    (
                        "container-1",
                        rl(cpu="20m", memory="10M", ephemeral_storage="30G"),
                        rl(cpu="10m", memory="30M", ephemeral_storage="20G"),
                    )
                )
            },
        ),
        {"cpu": "30m", "memory": "30M", "ephemeral-storage": "30G"},
    ),
    (
        "resized, infeasible, but don't use status",
        False,
        False,
        pod(
            [container("container-1", rl(cpu="4"))],
            status={"conditions": INFEASIBLE, "containerStatuses": statuses(("container-1", None, rl(cpu="2")))},
        ),
        {"cpu": "4"},
    ),
    (
        "resized, restartable init container, infeasible",
        True,
        False,
        pod(
            [],
            [container("restartable-init-1", rl(cpu="4"), restart_always=True)],
            status={
                "conditions": INFEASIBLE,
                "initContainerStatuses": statuses(("restartable-init-1", None, rl(cpu="2"))),
            },
        ),
        {"cpu": "2"},
    ),
    (
        "resized, restartable init container, no resize status",
        True,
        False,
        pod(
            [],
            [container("restartable-init-1", rl(cpu="4"), restart_always=True)],
            status={"initContainerStatuses": statuses(("restartable-init-1", None, rl(cpu="2")))},
        ),
        {"cpu": "4"},
    ),
    (
        "resized, restartable init container, infeasible, but don't use status",
        False,
        False,
        pod(
            [],
            [container("restartable-init-1", rl(cpu="4"), restart_always=True)],
            status={
                "conditions": INFEASIBLE,
                "initContainerStatuses": statuses(("restartable-init-1", None, rl(cpu="2"))),
            },
        ),
        {"cpu": "4"},
    ),
    (
        "restartable init container",
        False,
        False,
        pod(
            [container("container-1", rl(cpu="1"))],
            [container("restartable-init-1", rl(cpu="1"), restart_always=True)],
        ),
        {"cpu": "2"},
    ),
    (
        "multiple restartable init containers",
        False,
        False,
        pod(
            [container("container-1", rl(cpu="1"))],
            [
                container("init-1", rl(cpu="5")),
                container("restartable-init-1", rl(cpu="1"), restart_always=True),
                container("restartable-init-2", rl(cpu="2"), restart_always=True),
                container("restartable-init-3", rl(cpu="3"), restart_always=True),
            ],
        ),
        {"cpu": "7"},
    ),
    (
        "multiple restartable and regular init containers",
        False,
        False,
        pod(
            [container("container-1", rl(cpu="1"))],
            [
                container("init-1", rl(cpu="5")),
                container("restartable-init-1", rl(cpu="1"), restart_always=True),
                container("restartable-init-2", rl(cpu="2"), restart_always=True),
                container("init-2", rl(cpu="5")),
                container("restartable-init-3", rl(cpu="3"), restart_always=True),
            ],
        ),
        {"cpu": "8"},
    ),
    (
        "restartable-init, init and regular",
        False,
        False,
        pod(
            [container("container-1", rl(cpu="100"))],
            [
                container("restartable-init-1", rl(cpu="10"), restart_always=True),
                container("init-1", rl(cpu="200")),
            ],
        ),
        {"cpu": "210"},
    ),
    (
        "aggregate request resolves max of sums instead of sum of maxes",
        True,
        False,
        pod(
            [container("c1", rl(cpu="1")), container("c2", rl(cpu="2"))],
            status={"containerStatuses": statuses(("c1", rl(cpu="2"), None), ("c2", rl(cpu="1"), None))},
        ),
        {"cpu": "3"},
    ),
]


@pytest.mark.parametrize(("description", "use_status", "exclude", "raw", "expected"), POD_RESOURCE_REQUESTS)
def test_upstream_pod_resource_requests(
    description: str, use_status: bool, exclude: bool, raw: dict[str, Any], expected: dict[str, str]
) -> None:
    got = pod_requests(raw, use_status_resources=use_status, exclude_overhead=exclude, apply_defaults=False)
    assert got == parsed(expected), description


# TestPodResourceLimits: (description, exclude_overhead, pod, expected).
POD_RESOURCE_LIMITS: list[tuple[str, bool, dict[str, Any], dict[str, str]]] = [
    (
        "nil options, larger init container",
        False,
        pod([container(limits=rl(cpu="1"))], [container(limits=rl(cpu="4"))]),
        {"cpu": "4"},
    ),
    (
        "nil options, larger containers",
        False,
        pod([container(limits=rl(cpu="2")), container(limits=rl(cpu="3"))], [container(limits=rl(cpu="2"))]),
        {"cpu": "5"},
    ),
    (
        "pod overhead excluded",
        True,
        pod(
            [container(limits=rl(cpu="2")), container(limits=rl(cpu="3"))],
            [container(limits=rl(cpu="2"))],
            overhead=rl(cpu="1"),
        ),
        {"cpu": "5"},
    ),
    (
        "pod overhead included (only added to non-zero limits)",
        False,
        pod(
            [container(limits=rl(cpu="2")), container(limits=rl(cpu="3"))],
            [container(limits=rl(cpu="2"))],
            overhead=rl(cpu="1", memory="1Gi"),
        ),
        {"cpu": "6"},
    ),
    ("no limited containers should result in no limits for the pod", False, pod([container()], []), {}),
    (
        "one limited and one unlimited container",
        False,
        pod([container(limits=rl(cpu="2", memory="2Gi")), container()], []),
        {"cpu": "2", "memory": "2Gi"},
    ),
    (
        "one limited and one unlimited init container",
        False,
        pod([], [container(limits=rl(cpu="2", memory="2Gi")), container()]),
        {"cpu": "2", "memory": "2Gi"},
    ),
]


@pytest.mark.parametrize(("description", "exclude", "raw", "expected"), POD_RESOURCE_LIMITS)
def test_upstream_pod_resource_limits(
    description: str, exclude: bool, raw: dict[str, Any], expected: dict[str, str]
) -> None:
    assert pod_limits(raw, exclude_overhead=exclude, apply_defaults=False) == parsed(expected), description


def test_zero_limit_does_not_receive_overhead() -> None:
    raw = pod([container(limits=rl(cpu="0", memory="1Gi"))], overhead=rl(cpu="1", memory="1Mi"))
    assert pod_limits(raw) == {"cpu": 0, "memory": Q("1Gi") + Q("1Mi")}


def test_upstream_container_limits_with_infeasible_resize() -> None:
    raw = pod(
        [container("c1", limits=rl(cpu="10"))],
        status={
            "conditions": INFEASIBLE,
            "containerStatuses": [{"name": "c1", "resources": {"limits": rl(cpu="6")}}],
        },
    )
    assert pod_limits(raw, use_status_resources=True) == {"cpu": 6}
    assert pod_requests(raw, use_status_resources=True, apply_defaults=False) == {}
    assert pod_limits(raw) == {"cpu": 10}


def test_status_resources_limits_take_the_maximum() -> None:
    raw = pod(
        [container("c1", limits=rl(cpu="4"))],
        status={"containerStatuses": [{"name": "c1", "resources": {"limits": rl(cpu="6", memory="1Gi")}}]},
    )
    assert pod_limits(raw, use_status_resources=True) == {"cpu": 6, "memory": Q("1Gi")}


@pytest.mark.parametrize("kind", ["initContainers", "containers"])
def test_upstream_non_missing_requests_applied(kind: str) -> None:
    raw = pod()
    raw["spec"][kind] = [container("x", rl(cpu="1"))]
    got = pod_requests(raw, non_missing={"memory": Q("100Mi")})
    assert got == {"cpu": 1, "memory": Q("100Mi")}
    assert pod_limits(raw) == {}


# Pod-level resources cases of TestPodLevelResourceRequests.
POD_LEVEL_CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]], dict[str, str]]] = [
    (
        "hugepage request/limit single page size",
        {"limits": rl(hugepages_2Mi="10Mi"), "requests": rl(cpu="1", hugepages_2Mi="10Mi")},
        [container(requests=rl(hugepages_2Mi="6Mi"), limits=rl(hugepages_2Mi="6Mi"))],
        {"cpu": "1", "hugepages-2Mi": "10Mi"},
    ),
    (
        "hugepage request/limit multiple page sizes",
        {
            "limits": rl(hugepages_2Mi="10Mi", hugepages_1Gi="2Gi"),
            "requests": rl(cpu="1", hugepages_2Mi="10Mi", hugepages_1Gi="2Gi"),
        },
        [container(requests=rl(cpu="1", hugepages_1Gi="2Gi"), limits=rl(hugepages_1Gi="2Gi"))],
        {"cpu": "1", "hugepages-2Mi": "10Mi", "hugepages-1Gi": "2Gi"},
    ),
    (
        "hugepage page sizes split between pod level and container level",
        {"limits": rl(hugepages_2Mi="10Mi"), "requests": rl(cpu="1", hugepages_2Mi="10Mi")},
        [container(requests=rl(memory="4Mi", hugepages_1Gi="1Gi"), limits=rl(hugepages_1Gi="1Gi"))],
        {"cpu": "1", "memory": "4Mi", "hugepages-2Mi": "10Mi", "hugepages-1Gi": "1Gi"},
    ),
    (
        "pod-level cpu and memory replace the container totals",
        {"requests": rl(cpu="2", memory="1Gi")},
        [container(requests=rl(cpu="500m", memory="100Mi")), container(requests=rl(cpu="1"))],
        {"cpu": "2", "memory": "1Gi"},
    ),
    (
        "unsupported pod-level resources are ignored",
        {"requests": rl(cpu="2", ephemeral_storage="1Gi")},
        [container(requests=rl(cpu="1", ephemeral_storage="5Gi"))],
        {"cpu": "2", "ephemeral-storage": "5Gi"},
    ),
]


@pytest.mark.parametrize(("name", "pod_resources", "containers", "expected"), POD_LEVEL_CASES)
@pytest.mark.parametrize("apply_defaults", [False, True])
def test_pod_level_requests(
    name: str,
    pod_resources: dict[str, Any],
    containers: list[dict[str, Any]],
    expected: dict[str, str],
    apply_defaults: bool,
) -> None:
    raw = pod(containers, pod_resources=pod_resources)
    assert pod_requests(raw, apply_defaults=apply_defaults) == parsed(expected), name


def test_pod_level_resources_can_be_disabled() -> None:
    raw = pod([container(requests=rl(cpu="1"))], pod_resources={"requests": rl(cpu="4")})
    assert pod_requests(raw) == {"cpu": 4}
    assert pod_requests(raw, pod_level_resources=False) == {"cpu": 1}


def test_pod_level_requests_then_overhead() -> None:
    raw = pod([container(requests=rl(cpu="1"))], overhead=rl(cpu="250m"), pod_resources={"requests": rl(cpu="2")})
    assert pod_requests(raw) == {"cpu": Q("2250m")}


def test_pod_level_limits() -> None:
    raw = pod(
        [container(limits=rl(cpu="1", memory="1Gi")), container(limits=rl(cpu="1"))],
        pod_resources={"limits": rl(cpu="3")},
        overhead=rl(cpu="1"),
    )
    assert pod_limits(raw) == {"cpu": 4, "memory": Q("1Gi")}
    assert pod_limits(raw, pod_level_resources=False) == {"cpu": 3, "memory": Q("1Gi")}
    # Pod-level requests alone also make pod-level limits apply (IsPodLevelResourcesSet).
    raw = pod([container(limits=rl(cpu="1"))], pod_resources={"requests": rl(cpu="1"), "limits": {}})
    assert pod_limits(raw) == {"cpu": 1}


def test_is_supported_pod_level_resource() -> None:
    # TestIsSupportedPodLevelResource.
    assert is_supported_pod_level_resource("cpu")
    assert is_supported_pod_level_resource("memory")
    assert not is_supported_pod_level_resource("ephemeral-storage")
    assert is_supported_pod_level_resource("hugepages-2Mi")
    assert is_supported_pod_level_resource("hugepages-1Gi")
    assert not is_supported_pod_level_resource("nvidia.com/gpu")


# ------------------------------------------------------------------- apiserver defaulting


def test_container_limit_defaults_the_request() -> None:
    raw = pod([container(limits=rl(cpu="9", memory="1Gi"), requests=rl(cpu="1"))])
    assert pod_requests(raw) == {"cpu": 1, "memory": Q("1Gi")}
    assert pod_requests(raw, apply_defaults=False) == {"cpu": 1}


def test_init_container_limit_defaults_the_request() -> None:
    raw = pod([container(requests=rl(cpu="1"))], [container(limits=rl(cpu="3"))])
    assert pod_requests(raw) == {"cpu": 3}
    assert pod_requests(raw, apply_defaults=False) == {"cpu": 1}


def test_defaulting_is_idempotent_with_an_explicit_request() -> None:
    defaulted = pod([container(limits=rl(cpu="2"), requests=rl(cpu="2"))])
    hand_written = pod([container(limits=rl(cpu="2"))])
    assert pod_requests(defaulted) == pod_requests(hand_written) == {"cpu": 2}


def test_pod_level_limit_defaults_the_pod_level_request() -> None:
    # defaultPodRequests: no container requests cpu, so the pod-level request is the limit.
    raw = pod([container(requests=rl(memory="100Mi"))], pod_resources={"limits": rl(cpu="2")})
    assert pod_requests(raw) == {"cpu": 2, "memory": Q("100Mi")}
    assert pod_requests(raw, apply_defaults=False) == {"memory": Q("100Mi")}
    assert pod_requests(raw, pod_level_resources=False) == {"memory": Q("100Mi")}


def test_pod_level_request_defaults_from_container_totals() -> None:
    raw = pod(
        [container(requests=rl(cpu="500m")), container(requests=rl(cpu="250m"))],
        pod_resources={"limits": rl(cpu="2", memory="1Gi")},
    )
    # cpu defaults to the container total, memory (no container asks) to the pod limit.
    assert pod_requests(raw) == {"cpu": Q("750m"), "memory": Q("1Gi")}
    # With pod-level requests set, the non-zero default applies to neither resource.
    assert non_zero_requests(raw) == (750, 1024**3)
    # Without defaulting, no pod-level request is set: per-container defaults apply.
    assert non_zero_requests(raw, apply_defaults=False) == (750, 2 * DEFAULT_MEMORY_REQUEST)


def test_hugepage_pod_limits_are_defaulted_from_containers() -> None:
    raw = pod(
        [container(requests=rl(cpu="1"), limits=rl(hugepages_2Mi="4Mi"))],
        pod_resources={"requests": rl(cpu="2")},
    )
    # Pod-level hugepage limit and request both become the container total: same numbers.
    assert pod_requests(raw) == {"cpu": 2, "hugepages-2Mi": Q("4Mi")}
    assert pod_limits(raw) == {"hugepages-2Mi": Q("4Mi")}


# ---------------------------------------------------------------------- non-zero requests


def test_non_zero_defaults_constants() -> None:
    assert DEFAULT_MILLI_CPU_REQUEST == 100
    assert DEFAULT_MEMORY_REQUEST == 209715200
    assert dict(NON_ZERO_DEFAULTS) == {"cpu": Fraction(1, 10), "memory": 209715200}


NON_ZERO_CASES: list[tuple[str, dict[str, Any], tuple[int, int]]] = [
    ("no containers", pod([]), (0, 0)),
    ("empty container", pod([container()]), (100, DEFAULT_MEMORY_REQUEST)),
    ("two empty containers", pod([container(), container()]), (200, 2 * DEFAULT_MEMORY_REQUEST)),
    ("explicit zero is kept", pod([container(requests=rl(cpu="0", memory="0"))]), (0, 0)),
    ("cpu only", pod([container(requests=rl(cpu="250m"))]), (250, DEFAULT_MEMORY_REQUEST)),
    ("memory only", pod([container(requests=rl(memory="1Gi"))]), (100, 1024**3)),
    ("defaults per container", pod([container(requests=rl(cpu="1")), container()]), (1100, 2 * DEFAULT_MEMORY_REQUEST)),
    ("empty init container peak", pod([container()], [container()]), (100, DEFAULT_MEMORY_REQUEST)),
    ("big init container", pod([container()], [container(requests=rl(cpu="2"))]), (2000, DEFAULT_MEMORY_REQUEST)),
    (
        "sidecar gets the default too",
        pod([container()], [container(restart_always=True)]),
        (200, 2 * DEFAULT_MEMORY_REQUEST),
    ),
    ("overhead is added", pod([container()], overhead=rl(cpu="50m")), (150, DEFAULT_MEMORY_REQUEST)),
    ("rounded up", pod([container(requests=rl(cpu="0.1m", memory="0.5"))]), (1, 1)),
    ("limit defaults the request", pod([container(limits=rl(cpu="3"))]), (3000, DEFAULT_MEMORY_REQUEST)),
    (
        "pod-level cpu only: memory default only if nobody requests memory",
        pod([container(), container()], pod_resources={"requests": rl(cpu="1")}),
        (1000, 2 * DEFAULT_MEMORY_REQUEST),
    ),
    (
        "pod-level cpu, a container requests memory: no memory default",
        pod([container(requests=rl(memory="10Mi")), container()], pod_resources={"requests": rl(cpu="1")}),
        (1000, 10 * MI),
    ),
    (
        "pod-level cpu, overhead names memory: no memory default",
        pod([container()], pod_resources={"requests": rl(cpu="1")}, overhead=rl(memory="1Mi")),
        (1000, MI),
    ),
]


@pytest.mark.parametrize(("name", "raw", "expected"), NON_ZERO_CASES)
def test_non_zero_requests(name: str, raw: dict[str, Any], expected: tuple[int, int]) -> None:
    assert non_zero_requests(raw) == expected, name


def test_non_zero_requests_with_status() -> None:
    raw = pod(
        [container("c1", rl(cpu="1")), container("c2")],
        status={"containerStatuses": statuses(("c1", rl(cpu="2"), None))},
    )
    assert non_zero_requests(raw) == (1100, 2 * DEFAULT_MEMORY_REQUEST)
    assert non_zero_requests(raw, use_status_resources=True) == (2100, 2 * DEFAULT_MEMORY_REQUEST)


def test_scheduler_units() -> None:
    reqs = {
        "cpu": Q("0.1m"),
        "memory": Q("0.5"),
        "ephemeral-storage": Q("1Gi"),
        "nvidia.com/gpu": Q("2"),
        "hugepages-2Mi": Q("4Mi"),
    }
    assert scheduler_units(reqs) == {
        "cpu": 1,
        "memory": 1,
        "ephemeral-storage": 1024**3,
        "nvidia.com/gpu": 2,
        "hugepages-2Mi": 4 * MI,
    }
    assert scheduler_units(pod_requests(pod([container(requests=rl(cpu="1.5", memory="100Mi"))]))) == {
        "cpu": 1500,
        "memory": 104857600,
    }


def test_yaml_style_numbers_and_nulls() -> None:
    raw = pod([container(requests={"cpu": 1, "memory": 1.5, "nvidia.com/gpu": None})])  # type: ignore[dict-item]
    assert pod_requests(raw) == {"cpu": 1, "memory": Fraction(3, 2), "nvidia.com/gpu": 0}


def test_missing_and_null_fields_are_empty() -> None:
    assert pod_requests({}) == {}
    assert pod_requests({"spec": None}) == {}
    assert pod_requests({"spec": {"containers": None, "initContainers": None, "overhead": None}}) == {}
    assert pod_requests({"spec": {"containers": [{"name": "a"}, {"resources": None}]}}) == {}
    assert pod_requests({"spec": {"containers": [{"resources": {"requests": None, "limits": None}}]}}) == {}
    assert non_zero_requests({"spec": {"containers": [{}]}}) == (100, DEFAULT_MEMORY_REQUEST)


# -------------------------------------------------------------------------- bad input

BAD_PODS: list[tuple[object, str]] = [
    ([], "pod: expected an object"),
    ({"spec": []}, "spec: expected an object"),
    ({"spec": {"containers": {"a": 1}}}, "spec.containers: expected a list"),
    ({"spec": {"containers": "abc"}}, "spec.containers: expected a list"),
    ({"spec": {"containers": [{}, 5]}}, "spec.containers[1]: expected an object"),
    ({"spec": {"containers": [{}, None]}}, "spec.containers[1]: expected an object"),
    ({"spec": {"containers": [{"name": 3}]}}, "spec.containers[0].name: expected a string"),
    ({"spec": {"containers": [{"resources": []}]}}, "spec.containers[0].resources: expected an object"),
    (
        {"spec": {"containers": [{}, {"resources": {"requests": {"cpu": "abc"}}}]}},
        "spec.containers[1].resources.requests.cpu: invalid quantity 'abc'",
    ),
    (
        {"spec": {"containers": [{"resources": {"limits": {"memory": "-1Gi"}}}]}},
        "spec.containers[0].resources.limits.memory: must be non-negative",
    ),
    (
        {"spec": {"containers": [{"resources": {"requests": ["cpu"]}}]}},
        "spec.containers[0].resources.requests: expected an object",
    ),
    (
        {"spec": {"containers": [{"resources": {"requests": {1: "1"}}}]}},
        "spec.containers[0].resources.requests: resource name 1 is not a string",
    ),
    (
        {"spec": {"containers": [{"resources": {"requests": {"cpu": True}}}]}},
        "spec.containers[0].resources.requests.cpu: invalid quantity True",
    ),
    (
        {"spec": {"initContainers": [{"restartPolicy": 1}]}},
        "spec.initContainers[0].restartPolicy: expected a string",
    ),
    (
        {"spec": {"initContainers": [{"resources": {"requests": {"cpu": "1x"}}}]}},
        "spec.initContainers[0].resources.requests.cpu",
    ),
    ({"spec": {"overhead": {"cpu": "-1"}}}, "spec.overhead.cpu: must be non-negative"),
    ({"spec": {"overhead": "1"}}, "spec.overhead: expected an object"),
    ({"spec": {"resources": {"requests": {"cpu": "1 1"}}}}, "spec.resources.requests.cpu"),
    ({"spec": {"resources": {"limits": {"cpu": "-2"}}}}, "spec.resources.limits.cpu: must be non-negative"),
]


@pytest.mark.parametrize(("raw", "message"), BAD_PODS)
def test_bad_input_names_the_field(raw: object, message: str) -> None:
    for compute in (pod_requests, pod_limits, non_zero_requests):
        with pytest.raises(ResourceError) as info:
            compute(raw)  # type: ignore[arg-type]
        assert str(info.value).startswith(message), str(info.value)
        assert isinstance(info.value, ValueError)


BAD_STATUSES: list[tuple[object, str]] = [
    ([], "status: expected an object"),
    ({"containerStatuses": {}}, "status.containerStatuses: expected a list"),
    ({"containerStatuses": [3]}, "status.containerStatuses[0]: expected an object"),
    ({"containerStatuses": [{"name": ["x"]}]}, "status.containerStatuses[0].name: expected a string"),
    (
        {"initContainerStatuses": [{"allocatedResources": {"cpu": "x"}}]},
        "status.initContainerStatuses[0].allocatedResources.cpu",
    ),
    (
        {"containerStatuses": [{"resources": {"requests": {"cpu": "-1"}}}]},
        "status.containerStatuses[0].resources.requests.cpu: must be non-negative",
    ),
    ({"containerStatuses": [{"resources": 7}]}, "status.containerStatuses[0].resources: expected an object"),
    ({"conditions": "x"}, "status.conditions: expected a list"),
    ({"conditions": [1]}, "status.conditions[0]: expected an object"),
]


@pytest.mark.parametrize(("status", "message"), BAD_STATUSES)
def test_bad_status_only_matters_when_used(status: object, message: str) -> None:
    raw = pod([container("c", rl(cpu="1"))])
    raw["status"] = status
    assert pod_requests(raw) == {"cpu": 1}  # status is not read without use_status_resources
    with pytest.raises(ResourceError) as info:
        pod_requests(raw, use_status_resources=True)
    assert str(info.value).startswith(message), str(info.value)


def test_resource_error_attributes() -> None:
    with pytest.raises(ResourceError) as info:
        pod_requests({"spec": {"overhead": {"cpu": "zz"}}})
    assert info.value.path == "spec.overhead.cpu"
    assert "zz" in info.value.reason


# ------------------------------------------------------------------------- properties

amounts = st.integers(min_value=0, max_value=10_000).map(lambda n: f"{n}m")


def reference_requests(regular: list[Fraction], inits: list[tuple[Fraction, bool]]) -> Fraction:
    """The KEP-753 formula written out: containers summed, sidecars added, init steps as peaks."""
    total = sum(regular, Fraction(0))
    sidecars = Fraction(0)
    peak = Fraction(0)
    for amount, sidecar in inits:
        if sidecar:
            sidecars += amount
            total += amount
            peak = max(peak, sidecars)
        else:
            peak = max(peak, amount + sidecars)
    return max(total, peak)


@given(st.lists(amounts, max_size=5), st.lists(st.tuples(amounts, st.booleans()), max_size=5))
def test_requests_match_reference_formula(regular: list[str], inits: list[tuple[str, bool]]) -> None:
    raw = pod(
        [container(requests={"cpu": amount}) for amount in regular],
        [container(requests={"cpu": amount}, restart_always=sidecar) for amount, sidecar in inits],
    )
    expected = reference_requests([Q(a) for a in regular], [(Q(a), sidecar) for a, sidecar in inits])
    got = pod_requests(raw)
    assert got == ({"cpu": expected} if regular or inits else {})
    # Every container sets cpu (explicit zeros included), so only memory gets the default.
    default_memory = Fraction(DEFAULT_MEMORY_REQUEST)
    memory = reference_requests([default_memory] * len(regular), [(default_memory, sc) for _, sc in inits])
    assert non_zero_requests(raw) == (milli_value(expected), value(memory))
