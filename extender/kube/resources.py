"""Effective pod requests and limits, computed exactly as kube-scheduler computes them.

Upstream:

* ``k8s.io/component-helpers/resource/helpers.go``: ``PodRequests`` / ``PodLimits`` with
  their ``PodResourcesOptions`` (``NonMissingContainerRequests``, ``UseStatusResources``,
  ``SkipPodLevelResources``, ``ExcludeOverhead``);
* ``pkg/scheduler/framework/types.go``: ``PodInfo.CalculateResource`` (the scheduler's
  ``Requested`` and ``NonZeroRequested``) and ``Resource.Add`` / ``SetMaxResource``
  (CPU in milli-units, everything else in whole units);
* ``pkg/scheduler/util``: ``DefaultMilliCPURequest`` = 100 and ``DefaultMemoryRequest`` =
  200 MiB, the per-container defaults behind ``NonZeroRequested``;
* ``pkg/apis/core/v1/defaults.go``: ``SetDefaults_Pod``, which the apiserver applies to
  every pod it stores.

The rules, in order:

1. regular containers are summed;
2. init containers are walked in order: a restartable one (``restartPolicy: Always``, a
   sidecar) is added to the sum and to a running sidecar total, and its step needs that
   total; a regular init container's step needs its own requests plus the sidecars that
   started before it; the pod needs ``max(sum, every step)`` per resource;
3. pod-level ``spec.resources.requests`` (cpu, memory, ``hugepages-*``), when set, replace
   the container totals for those resources (feature PodLevelResources, on by default);
4. ``spec.overhead`` is added.

Quantities are summed exactly (:class:`~fractions.Fraction`) and converted only at the end
(:func:`scheduler_units`).

**Apiserver defaulting.**  ``SetDefaults_Pod`` copies a container's limit into its request
for every resource that has a limit but no request (regular and init containers), and,
with PodLevelResources, fills missing pod-level requests from the container totals or the
pod-level limits.  Objects read from an apiserver already carry these defaults; dumps
written by hand usually do not, so the functions here apply them (idempotently) unless
``apply_defaults=False``.  Upstream's own helper tests call ``PodRequests`` on undefaulted
objects, which is what ``apply_defaults=False`` reproduces.

**Status resources.**  kube-scheduler counts *assigned* pods with ``UseStatusResources``
(feature InPlacePodVerticalScaling, GA).  Pass ``use_status_resources=True`` for pods already
bound to a node.  The two supported releases count them differently (``minor``):

* v1.37 (component-helpers v0.37.2 ``AggregateContainerRequests``): per resource the maximum
  of three pod totals, the spec, the allocated (``status.containerStatuses[].allocatedResources``,
  else the spec) and the actuated (``status.containerStatuses[].resources.requests``, else the
  allocated, else the spec) totals, every container and init container taking part; while a
  resize is infeasible the spec falls out of all three;
* v1.36 (component-helpers v0.36.3 ``determineEffectiveRequests``): container by container, the
  per-resource maximum of its spec, actuated and allocated requests (only the last two while
  infeasible), for a regular or restartable init container whose status has ``resources``; the
  totals are then summed as for the spec.
The alpha gates InPlacePodLevelResourcesVerticalScaling and DRANodeAllocatableResources are
off in kube-scheduler's defaults and are not modelled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Final

from extender.kube.quantity import QuantityError, decode_quantity, milli_value, value

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "NON_ZERO_DEFAULTS",
    "RESOURCE_CPU",
    "RESOURCE_EPHEMERAL_STORAGE",
    "RESOURCE_MEMORY",
    "RESOURCE_PODS",
    "ResourceError",
    "is_supported_pod_level_resource",
    "non_zero_requests",
    "pod_limits",
    "pod_requests",
    "resize_deferred",
    "scheduler_units",
]

RESOURCE_CPU: Final = "cpu"
RESOURCE_MEMORY: Final = "memory"
RESOURCE_EPHEMERAL_STORAGE: Final = "ephemeral-storage"
RESOURCE_PODS: Final = "pods"
HUGEPAGES_PREFIX: Final = "hugepages-"

#: kube-scheduler's default CPU request, in milli-CPU, for a container without one.
DEFAULT_MILLI_CPU_REQUEST: Final = 100
#: kube-scheduler's default memory request, in bytes, for a container without one (200 MiB).
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024
#: The ``NonMissingContainerRequests`` kube-scheduler uses for ``NonZeroRequested``.
NON_ZERO_DEFAULTS: Final[Mapping[str, Fraction]] = MappingProxyType(
    {
        RESOURCE_CPU: Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
        RESOURCE_MEMORY: Fraction(DEFAULT_MEMORY_REQUEST),
    }
)

_RESTART_ALWAYS: Final = "Always"
_POD_RESIZE_PENDING: Final = "PodResizePending"
_REASON_INFEASIBLE: Final = "Infeasible"

ResourceList = dict[str, Fraction]


class ResourceError(ValueError):
    """A malformed resource field in a pod; the message starts with the field path."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def is_supported_pod_level_resource(name: str) -> bool:
    """Return whether ``spec.resources`` may set ``name`` (cpu, memory, ``hugepages-*``)."""
    return name in (RESOURCE_CPU, RESOURCE_MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def _overcommit_allowed(name: str) -> bool:
    """Upstream ``IsOvercommitAllowed``: a native resource that is not huge pages."""
    native = "/" not in name or "kubernetes.io/" in name
    return native and not name.startswith(HUGEPAGES_PREFIX)


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True, slots=True)
class _ContainerStatus:
    """The resource fields of one container status; ``None`` mirrors a nil Go field."""

    allocated: ResourceList | None
    actual_requests: ResourceList | None
    actual_limits: ResourceList | None
    has_resources: bool = False  # ``resources`` is present (v1.36 reads the status only then)


@dataclass(frozen=True, slots=True)
class _Container:
    """The resource fields of one container, after apiserver defaulting when requested."""

    name: str
    requests: ResourceList | None
    limits: ResourceList | None
    restartable: bool


@dataclass(frozen=True, slots=True)
class _Pod:
    """The resource-relevant part of a pod, parsed and validated once."""

    containers: tuple[_Container, ...]
    init_containers: tuple[_Container, ...]
    overhead: ResourceList | None
    pod_requests: ResourceList | None
    pod_limits: ResourceList | None
    statuses: Mapping[str, _ContainerStatus]
    resize_infeasible: bool


def _mapping(obj: object, path: str) -> Mapping[str, Any] | None:
    """Return ``obj`` as a mapping, ``None`` for JSON null, or raise naming ``path``."""
    if obj is None:
        return None
    if not isinstance(obj, Mapping):
        raise ResourceError(path, f"expected an object, got {type(obj).__name__}")
    return obj


def _sequence(obj: object, path: str) -> Sequence[Any]:
    """Return ``obj`` as a list (empty for null), or raise naming ``path``."""
    if obj is None:
        return ()
    if isinstance(obj, (str, bytes)) or not isinstance(obj, Sequence):
        raise ResourceError(path, f"expected a list, got {type(obj).__name__}")
    return obj


def _string(obj: object, path: str) -> str:
    """Return ``obj`` as a string ("" for null), or raise naming ``path``."""
    if obj is None:
        return ""
    if not isinstance(obj, str):
        raise ResourceError(path, f"expected a string, got {type(obj).__name__}")
    return obj


def _resource_list(obj: object, path: str) -> ResourceList | None:
    """Parse a ``ResourceList`` (name -> quantity); ``None`` when absent, errors name the key."""
    raw = _mapping(obj, path)
    if raw is None:
        return None
    parsed: ResourceList = {}
    for name, quantity in raw.items():
        if not isinstance(name, str):
            raise ResourceError(path, f"resource name {name!r} is not a string")
        key_path = f"{path}.{name}"
        try:
            amount = decode_quantity(quantity)
        except QuantityError as exc:
            raise ResourceError(key_path, str(exc)) from None
        if amount.numerator < 0:  # a Fraction's sign is its numerator's (comparing with an int is slow)
            raise ResourceError(key_path, f"must be non-negative, got {quantity!r}")
        parsed[name] = amount
    return parsed


def _parse_container(obj: object, path: str, apply_defaults: bool) -> _Container:
    """Parse one container; with ``apply_defaults`` a limit without a request becomes the request."""
    raw = _mapping(obj, path)
    if raw is None:
        raise ResourceError(path, "expected an object, got null")
    name = _string(raw.get("name"), f"{path}.name")
    resources = _mapping(raw.get("resources"), f"{path}.resources") or {}
    requests = _resource_list(resources.get("requests"), f"{path}.resources.requests")
    limits = _resource_list(resources.get("limits"), f"{path}.resources.limits")
    if apply_defaults and limits is not None:
        # SetDefaults_Pod: every limited resource without a request gets request = limit.
        merged = dict(requests or {})
        for key, amount in limits.items():
            merged.setdefault(key, amount)
        requests = merged
    policy = _string(raw.get("restartPolicy"), f"{path}.restartPolicy")
    return _Container(name=name, requests=requests, limits=limits, restartable=policy == _RESTART_ALWAYS)


def _parse_statuses(status: Mapping[str, Any]) -> tuple[dict[str, _ContainerStatus], bool]:
    """Parse container statuses (first name wins, regular before init) and the resize condition."""
    statuses: dict[str, _ContainerStatus] = {}
    for field in ("containerStatuses", "initContainerStatuses"):
        for index, item in enumerate(_sequence(status.get(field), f"status.{field}")):
            path = f"status.{field}[{index}]"
            raw = _mapping(item, path) or {}
            name = _string(raw.get("name"), f"{path}.name")
            actual = _mapping(raw.get("resources"), f"{path}.resources")
            parsed = _ContainerStatus(
                allocated=_resource_list(raw.get("allocatedResources"), f"{path}.allocatedResources"),
                actual_requests=None
                if actual is None
                else _resource_list(actual.get("requests"), f"{path}.resources.requests"),
                actual_limits=None
                if actual is None
                else _resource_list(actual.get("limits"), f"{path}.resources.limits"),
                has_resources=actual is not None,
            )
            statuses.setdefault(name, parsed)
    infeasible = False
    for index, item in enumerate(_sequence(status.get("conditions"), "status.conditions")):
        condition = _mapping(item, f"status.conditions[{index}]") or {}
        if condition.get("type") == _POD_RESIZE_PENDING:
            # Upstream looks at the first PodResizePending condition only.
            infeasible = condition.get("reason") == _REASON_INFEASIBLE
            break
    return statuses, infeasible


def _parse_pod(pod: object, *, apply_defaults: bool, pod_level: bool, with_status: bool) -> _Pod:
    """Validate and parse the resource fields of a raw pod object."""
    if not isinstance(pod, Mapping):
        raise ResourceError("pod", f"expected an object, got {type(pod).__name__}")
    spec = _mapping(pod.get("spec"), "spec") or {}
    containers = tuple(
        _parse_container(item, f"spec.containers[{index}]", apply_defaults)
        for index, item in enumerate(_sequence(spec.get("containers"), "spec.containers"))
    )
    init_containers = tuple(
        _parse_container(item, f"spec.initContainers[{index}]", apply_defaults)
        for index, item in enumerate(_sequence(spec.get("initContainers"), "spec.initContainers"))
    )
    overhead = _resource_list(spec.get("overhead"), "spec.overhead")
    pod_resources = _mapping(spec.get("resources"), "spec.resources") or {}
    pod_requests = _resource_list(pod_resources.get("requests"), "spec.resources.requests")
    pod_limits = _resource_list(pod_resources.get("limits"), "spec.resources.limits")
    statuses: Mapping[str, _ContainerStatus] = {}
    infeasible = False
    if with_status:
        status = _mapping(pod.get("status"), "status") or {}
        statuses, infeasible = _parse_statuses(status)
    parsed = _Pod(
        containers=containers,
        init_containers=init_containers,
        overhead=overhead,
        pod_requests=pod_requests,
        pod_limits=pod_limits,
        statuses=statuses,
        resize_infeasible=infeasible,
    )
    if apply_defaults and pod_level:
        parsed = _default_pod_level(parsed)
    return parsed


def _default_pod_level(pod: _Pod) -> _Pod:
    """Apply the apiserver's pod-level defaulting (``defaultHugePagePodLimits``, ``defaultPodRequests``)."""
    if pod.pod_requests is None and pod.pod_limits is None:
        return pod
    limits = dict(pod.pod_limits or {})
    requests_set = pod.pod_requests or {}
    if limits or requests_set:
        # Container huge-page limits become pod-level limits unless a pod-level request exists.
        container_limits = _aggregate(pod, _spec_limits, None)
        for key, amount in container_limits.items():
            if key.startswith(HUGEPAGES_PREFIX) and key not in requests_set:
                limits.setdefault(key, amount)
    if not limits:
        return pod
    requests = dict(pod.pod_requests or {})
    # Missing overcommittable pod-level requests default to the container totals ...
    for key, amount in _aggregate(pod, _spec_requests, None).items():
        if key not in requests and is_supported_pod_level_resource(key) and _overcommit_allowed(key):
            requests[key] = amount
    # ... and anything still missing to the pod-level limit.
    for key, amount in limits.items():
        if key not in requests and is_supported_pod_level_resource(key):
            requests[key] = amount
    return _Pod(
        containers=pod.containers,
        init_containers=pod.init_containers,
        overhead=pod.overhead,
        pod_requests=requests or pod.pod_requests,
        pod_limits=limits,
        statuses=pod.statuses,
        resize_infeasible=pod.resize_infeasible,
    )


# ----------------------------------------------------------------------- aggregation

_Getter = Callable[[_Container, "_ContainerStatus | None", bool], "ResourceList | None"]


def _spec_requests(container: _Container, _status: _ContainerStatus | None, _infeasible: bool) -> ResourceList | None:
    """Upstream ``containerSpecRequests``."""
    return container.requests


def _allocated_requests(
    container: _Container, status: _ContainerStatus | None, infeasible: bool
) -> ResourceList | None:
    """Upstream ``containerAllocatedRequests``: allocated resources, else the spec unless infeasible."""
    if status is not None and status.allocated is not None:
        return status.allocated
    return None if infeasible else container.requests


def _actuated_requests(container: _Container, status: _ContainerStatus | None, infeasible: bool) -> ResourceList | None:
    """Upstream ``containerActuatedRequests``: actual, else allocated, else the spec unless infeasible."""
    if status is not None:
        if status.actual_requests is not None:
            return status.actual_requests
        if status.allocated is not None:
            return status.allocated
    return None if infeasible else container.requests


def _spec_limits(container: _Container, _status: _ContainerStatus | None, _infeasible: bool) -> ResourceList | None:
    """Upstream ``containerSpecLimits``."""
    return container.limits


def _actuated_limits(container: _Container, status: _ContainerStatus | None, infeasible: bool) -> ResourceList | None:
    """Upstream ``containerActuatedLimits``: actual limits, else the spec unless infeasible."""
    if status is not None and status.actual_limits is not None:
        return status.actual_limits
    return None if infeasible else container.limits


def _add_into(target: ResourceList, other: Mapping[str, Fraction] | None) -> None:
    """Add ``other`` into ``target`` key by key (upstream ``addResourceList``)."""
    if other:
        for key, amount in other.items():
            current = target.get(key)
            target[key] = amount if current is None else current + amount  # Fraction + Fraction: the fast path


def _max_into(target: ResourceList, other: Mapping[str, Fraction] | None) -> None:
    """Raise each of ``target``'s entries to ``other``'s (upstream ``maxResourceList``)."""
    if other:
        for key, amount in other.items():
            current = target.get(key)
            if current is None or amount > current:
                target[key] = amount


def _with_non_missing(resources: Mapping[str, Fraction] | None, non_missing: Mapping[str, Fraction]) -> ResourceList:
    """Upstream ``applyNonMissing``: add defaults for keys the container does not set (0 counts as set)."""
    result = dict(resources or {})
    for key, amount in non_missing.items():
        if key not in result:
            result[key] = amount
    return result


def _aggregate(pod: _Pod, getter: _Getter, non_missing: Mapping[str, Fraction] | None,
               *, sidecar_statuses_only: bool = False) -> ResourceList:
    """Upstream ``aggregateContainerResourcesByFn``: containers summed, init containers as peaks.

    ``sidecar_statuses_only``: an init container's status is passed to ``getter`` only when it is a sidecar
    (restartable), as v0.36.3's ``AggregateContainerRequests`` reads them.
    """
    infeasible = pod.resize_infeasible
    statuses = pod.statuses
    result: ResourceList = {}
    for container in pod.containers:
        resources = getter(container, statuses.get(container.name), infeasible)
        if non_missing:
            resources = _with_non_missing(resources, non_missing)
        _add_into(result, resources)
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for container in pod.init_containers:
        status = None if sidecar_statuses_only and not container.restartable else statuses.get(container.name)
        resources = getter(container, status, infeasible)
        if non_missing:
            resources = _with_non_missing(resources, non_missing)
        if container.restartable:
            # A sidecar keeps running: it adds to the pod's steady state and to every later step.
            _add_into(result, resources)
            _add_into(sidecars, resources)
            _max_into(init_peak, sidecars)
        else:
            step = dict(resources or {})
            _add_into(step, sidecars)
            _max_into(init_peak, step)
    _max_into(result, init_peak)
    return result


def _maximum(first: Mapping[str, Fraction] | None, *others: Mapping[str, Fraction] | None) -> ResourceList:
    """Upstream ``max``: per resource, the largest value among the lists (union of keys)."""
    result = dict(first or {})
    for other in others:
        _max_into(result, other)
    return result


def _effective_requests_v136(
    container: _Container, status: _ContainerStatus | None, infeasible: bool
) -> ResourceList | None:
    """v0.36.3 ``determineEffectiveRequests`` for one container: its spec, or (when its status has
    ``resources``) the per-resource maximum of spec, actuated and allocated (not the spec while infeasible)."""
    if status is None or not status.has_resources:
        return container.requests
    if infeasible:
        return _maximum(status.actual_requests, status.allocated)
    return _maximum(container.requests, status.actual_requests, status.allocated)


def _container_requests_v136(pod: _Pod, non_missing: Mapping[str, Fraction] | None) -> ResourceList:
    """v0.36.3 ``AggregateContainerRequests`` with UseStatusResources: the status is read container by container
    (for init containers only restartable ones), defaults for missing requests applied after it."""
    return _aggregate(pod, _effective_requests_v136, non_missing, sidecar_statuses_only=True)


def _container_requests(pod: _Pod, non_missing: Mapping[str, Fraction] | None, use_status: bool,
                        minor: int = 37) -> ResourceList:
    """Upstream ``AggregateContainerRequests`` (without the pod-level status and DRA gates)."""
    if use_status and minor < 37:
        return _container_requests_v136(pod, non_missing)
    spec = _aggregate(pod, _spec_requests, non_missing)
    if not use_status:
        return spec
    allocated = _aggregate(pod, _allocated_requests, non_missing)
    actuated = _aggregate(pod, _actuated_requests, non_missing)
    if pod.resize_infeasible:
        return _maximum(actuated, allocated)
    return _maximum(spec, actuated, allocated)


def _container_limits(pod: _Pod, use_status: bool) -> ResourceList:
    """Upstream ``AggregateContainerLimits`` (without the pod-level status and DRA gates)."""
    spec = _aggregate(pod, _spec_limits, None)
    if not use_status:
        return spec
    actuated = _aggregate(pod, _actuated_limits, None)
    if pod.resize_infeasible:
        return actuated
    return _maximum(spec, actuated)


def _pod_level_requests_set(pod: _Pod) -> bool:
    """Upstream ``IsPodLevelRequestsSet``."""
    return any(is_supported_pod_level_resource(key) for key in pod.pod_requests or ())


def _pod_level_resources_set(pod: _Pod) -> bool:
    """Upstream ``IsPodLevelResourcesSet``: requests or limits name a supported resource."""
    return _pod_level_requests_set(pod) or any(is_supported_pod_level_resource(key) for key in pod.pod_limits or ())


def _apply_pod_level(result: ResourceList, pod_level: Mapping[str, Fraction] | None) -> None:
    """Upstream ``applyPodLevelResources``: supported pod-level values replace the totals."""
    for key, amount in (pod_level or {}).items():
        if is_supported_pod_level_resource(key):
            result[key] = amount


def _requests(
    pod: _Pod,
    non_missing: Mapping[str, Fraction] | None,
    pod_level: bool,
    use_status: bool,
    exclude_overhead: bool,
    minor: int = 37,
) -> ResourceList:
    """Upstream ``PodRequests`` on a parsed pod."""
    result = _container_requests(pod, non_missing, use_status, minor)
    if pod_level and _pod_level_requests_set(pod):
        _apply_pod_level(result, pod.pod_requests)
    if not exclude_overhead:
        _add_into(result, pod.overhead)
    return result


# ------------------------------------------------------------------------ public API


def resize_deferred(pod: Mapping[str, Any]) -> bool:
    """Upstream ``IsPodResizeDeferred`` (component-helpers v0.37.2): the pod's first PodResizePending condition
    has reason Deferred (an in-place resize the node cannot take yet)."""
    status = pod.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, Mapping) and condition.get("type") == _POD_RESIZE_PENDING:
            return condition.get("reason") == "Deferred"
    return False



def pod_requests(
    pod: Mapping[str, Any],
    *,
    non_missing: Mapping[str, Fraction] | None = None,
    pod_level_resources: bool = True,
    use_status_resources: bool = False,
    exclude_overhead: bool = False,
    apply_defaults: bool = True,
    minor: int = 37,
) -> dict[str, Fraction]:
    """Return the pod's effective requests per resource, exactly as upstream ``PodRequests``.

    ``non_missing`` supplies defaults applied per container for resources the container
    does not request (an explicit 0 is kept), as kube-scheduler does for
    ``NonZeroRequested`` with :data:`NON_ZERO_DEFAULTS`.  ``pod_level_resources`` is the
    PodLevelResources feature gate.  ``use_status_resources`` counts resized containers as
    kube-scheduler counts assigned pods, the way release 1.<``minor``> does.  ``exclude_overhead``
    leaves ``spec.overhead`` out.  ``apply_defaults`` applies the apiserver's request defaulting
    first (see the module docstring).  Raises :class:`ResourceError` naming the field on
    malformed input.
    """
    parsed = _parse_pod(
        pod, apply_defaults=apply_defaults, pod_level=pod_level_resources, with_status=use_status_resources
    )
    return _requests(parsed, non_missing, pod_level_resources, use_status_resources, exclude_overhead, minor)


def pod_limits(
    pod: Mapping[str, Any],
    *,
    pod_level_resources: bool = True,
    use_status_resources: bool = False,
    exclude_overhead: bool = False,
    apply_defaults: bool = True,
) -> dict[str, Fraction]:
    """Return the pod's effective limits per resource, exactly as upstream ``PodLimits``.

    Same aggregation as :func:`pod_requests`; pod-level limits replace the container
    totals when any pod-level resource is set, and the overhead is added only to limits
    that are present and non-zero (an unlimited resource stays unlimited).
    """
    parsed = _parse_pod(
        pod, apply_defaults=apply_defaults, pod_level=pod_level_resources, with_status=use_status_resources
    )
    result = _container_limits(parsed, use_status_resources)
    if pod_level_resources and _pod_level_resources_set(parsed):
        _apply_pod_level(result, parsed.pod_limits)
    if not exclude_overhead and parsed.overhead:
        for key, amount in parsed.overhead.items():
            current = result.get(key)
            if current:
                result[key] = current + amount
    return result


def non_zero_requests(
    pod: Mapping[str, Any],
    *,
    pod_level_resources: bool = True,
    use_status_resources: bool = False,
    apply_defaults: bool = True,
    minor: int = 37,
) -> tuple[int, int]:
    """Return ``(milliCPU, memory bytes)`` as kube-scheduler's ``NonZeroRequested`` counts the pod.

    Every container without a CPU (memory) request counts as 100m (200 MiB); an explicit
    0 stays 0.  With pod-level requests set, the default applies only to a resource that
    neither the pod level nor any container requests (upstream
    ``getNonMissingContainerRequests``).
    """
    parsed = _parse_pod(
        pod, apply_defaults=apply_defaults, pod_level=pod_level_resources, with_status=use_status_resources
    )
    requests = _requests(parsed, None, pod_level_resources, use_status_resources, False, minor)
    if pod_level_resources and _pod_level_requests_set(parsed):
        non_missing = {key: amount for key, amount in NON_ZERO_DEFAULTS.items() if key not in requests}
    else:
        non_missing = dict(NON_ZERO_DEFAULTS)
    non_zero = requests
    if non_missing:
        non_zero = _requests(parsed, non_missing, pod_level_resources, use_status_resources, False, minor)
    return milli_value(non_zero.get(RESOURCE_CPU, 0)), value(non_zero.get(RESOURCE_MEMORY, 0))


def scheduler_units(reqs: Mapping[str, Fraction]) -> dict[str, int]:
    """Convert exact quantities to the integers kube-scheduler's ``Resource`` stores.

    CPU becomes milli-CPU (``MilliValue``, rounded up); every other resource becomes whole
    units (``Value``, rounded up): bytes for memory and storage, counts for the rest.
    """
    return {name: milli_value(amount) if name == RESOURCE_CPU else value(amount) for name, amount in reqs.items()}
