"""Compact records of ``resource.k8s.io/v1`` objects, built once when an object enters the cache.

The allocator reads only these records, never raw dicts. Building a record applies the API
server's defaulting that the allocator relies on (``allocationMode`` ``ExactCount`` with
``count`` 1, toleration ``operator`` ``Equal``) and validates the fields it reads; a malformed
object raises :class:`DRAObjectError` naming the field.

Entry points (JSON dicts as the API server serves them, e.g. from ``kubectl get -o json``):

* :func:`slice_record` -> :class:`SliceRecord` (a ResourceSlice)
* :func:`claim_record` -> :class:`ClaimRecord` (a ResourceClaim, with its ``status.allocation``)
* :func:`device_class_record` -> :class:`DeviceClassRecord` (a DeviceClass)
* :func:`claim_spec_record` builds the request part from a bare ``ResourceClaimSpec`` (for
  ResourceClaimTemplates: ``claim_spec_record(template["spec"]["spec"])``).

Quantities are kept as :class:`Quantity` (exact value plus the text they were written as).
DeviceTaintRules are not read: the ``DRADeviceTaintRules`` gate is off by default in v1.36.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from extender.kube.quantity import QuantityError, decode_quantity
from extender.kube.selectors import NodeSelector, SelectorError, compile_node_selector

__all__ = [
    "ALLOCATION_MODE_ALL",
    "ALLOCATION_MODE_EXACT_COUNT",
    "AllocatedDeviceRecord",
    "Attribute",
    "ClaimAllocationRecord",
    "ClaimConfig",
    "ClaimRecord",
    "ClaimSpecRecord",
    "Constraint",
    "CounterConsumption",
    "CounterSet",
    "DRAObjectError",
    "DeviceCapacity",
    "DeviceClassRecord",
    "DeviceRecord",
    "DeviceRequest",
    "DeviceTaint",
    "DeviceToleration",
    "Quantity",
    "RequestPolicy",
    "RequestSpec",
    "SliceRecord",
    "claim_record",
    "claim_spec_record",
    "device_class_record",
    "slice_record",
]

ALLOCATION_MODE_EXACT_COUNT: Final = "ExactCount"
ALLOCATION_MODE_ALL: Final = "All"


class DRAObjectError(ValueError):
    """A DRA object the allocator cannot read; the message names the field."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """A ``resource.Quantity``: its exact value and the text it was given as (for output)."""

    value: Fraction
    text: str

    def __str__(self) -> str:
        """The quantity as written."""
        return self.text


#: The kinds of single-valued attributes (the only ones the claim constraints compare).
SCALAR_KINDS: Final = frozenset({"int", "bool", "string", "version"})


@dataclass(frozen=True, slots=True)
class Attribute:
    """One device attribute: ``kind`` is ``int``, ``bool``, ``string`` or ``version``, for a list-typed attribute
    (DRAListTypeAttributes) ``ints``, ``bools``, ``strings`` or ``versions`` with a tuple value, and empty for a
    value of no known type."""

    kind: str
    value: int | bool | str | tuple[int | bool | str, ...]

    @property
    def scalar(self) -> bool:
        """Whether this is one value of a known type (constraints cannot compare anything else)."""
        return self.kind in SCALAR_KINDS


@dataclass(frozen=True, slots=True)
class RequestPolicy:
    """``DeviceCapacity.requestPolicy``: how a capacity request is defaulted, rounded and bounded."""

    default: Quantity | None
    valid_values: tuple[Quantity, ...]
    valid_range_min: Quantity | None
    valid_range_max: Quantity | None
    valid_range_step: Quantity | None
    has_valid_range: bool


@dataclass(frozen=True, slots=True)
class DeviceCapacity:
    """One device capacity: its value and, for consumable capacity, its request policy."""

    value: Quantity
    request_policy: RequestPolicy | None = None


@dataclass(frozen=True, slots=True)
class CounterConsumption:
    """``Device.consumesCounters[*]``: the counters a partition takes from a counter set."""

    counter_set: str
    counters: Mapping[str, Quantity]
    #: ``compatibilityGroups`` (v1.37, DRADeviceCompatibilityGroups, alpha).
    compatibility_groups: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CounterSet:
    """``ResourceSlice.spec.sharedCounters[*]``."""

    name: str
    counters: Mapping[str, Quantity]


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    """A device taint (``key=value:effect``)."""

    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class DeviceToleration:
    """A device toleration; ``operator`` is defaulted to ``Equal``. ``raw`` is the API dict (for results)."""

    key: str
    operator: str
    value: str
    effect: str
    raw: Mapping[str, Any]

    def tolerates(self, taint: DeviceTaint) -> bool:
        """Upstream ``resourceclaim.ToleratesTaint``."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Equal":
            return self.value == taint.value
        return self.operator == "Exists"


@dataclass(eq=False, slots=True)
class DeviceRecord:
    """One device of a ResourceSlice. Compared by identity: the allocator caches per device."""

    name: str
    attributes: Mapping[str, Attribute]
    capacity: Mapping[str, DeviceCapacity]
    consumes_counters: tuple[CounterConsumption, ...]
    node_name: str | None
    node_selector: NodeSelector | None
    node_selector_raw: Mapping[str, Any] | None
    all_nodes: bool
    taints: tuple[DeviceTaint, ...]
    binds_to_node: bool
    binding_conditions: tuple[str, ...] | None
    binding_failure_conditions: tuple[str, ...] | None
    allow_multiple_allocations: bool | None
    #: Whether any capacity has a request policy (else a device without requests fits when unshared).
    has_request_policy: bool = False
    #: The CEL ``device`` variable, built on first use by :mod:`extender.dra.cel` for a driver.
    cel_input: Any = field(default=None)

    def __getstate__(self) -> dict[str, Any]:
        """Copies and pickles leave the CEL runtime's values behind (they are rebuilt on first use)."""
        return {name: getattr(self, name) for name in self.__slots__ if name != "cel_input"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a copied record; its CEL input is rebuilt when a selector next reads it."""
        for name, value in state.items():
            setattr(self, name, value)
        self.cel_input = None


@dataclass(eq=False, slots=True)
class SliceRecord:
    """A ResourceSlice (``spec`` only; ``name`` is ``metadata.name``)."""

    name: str
    driver: str
    pool_name: str
    pool_generation: int
    resource_slice_count: int
    node_name: str | None
    node_selector: NodeSelector | None
    node_selector_raw: Mapping[str, Any] | None
    all_nodes: bool
    per_device_node_selection: bool
    shared_counters: tuple[CounterSet, ...]
    devices: tuple[DeviceRecord, ...]


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """An ``exactly`` request or one ``firstAvailable`` subrequest (``admin_access`` is None for those)."""

    name: str
    device_class_name: str
    allocation_mode: str
    count: int
    admin_access: bool | None
    #: CEL expressions of ``selectors``; None stands for a selector without ``cel`` (unsupported type).
    selectors: tuple[str | None, ...]
    tolerations: tuple[DeviceToleration, ...]
    #: ``capacity.requests`` or None when ``capacity`` is unset.
    capacity_requests: Mapping[str, Quantity] | None
    #: How many ``derivedAttributes`` it has (v1.37, DRADerivedAttributes, alpha).
    derived_attributes: int = 0


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """``spec.devices.requests[*]``: exactly one of ``exactly`` and ``first_available`` is set."""

    name: str
    exactly: RequestSpec | None
    first_available: tuple[RequestSpec, ...]


@dataclass(frozen=True, slots=True)
class Constraint:
    """``spec.devices.constraints[*]``: ``kind`` is ``matchAttribute``, ``distinctAttribute`` or ``""``."""

    requests: tuple[str, ...]
    kind: str
    attribute: str


@dataclass(frozen=True, slots=True)
class ClaimConfig:
    """``spec.devices.config[*]``: the requests it applies to and the raw config (``opaque``)."""

    requests: tuple[str, ...]
    raw: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ClaimSpecRecord:
    """The device part of a ``ResourceClaimSpec``."""

    requests: tuple[DeviceRequest, ...]
    constraints: tuple[Constraint, ...]
    config: tuple[ClaimConfig, ...]


@dataclass(frozen=True, slots=True)
class AllocatedDeviceRecord:
    """One ``status.allocation.devices.results[*]`` entry."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None
    share_id: str | None
    consumed_capacity: Mapping[str, Quantity] | None


@dataclass(frozen=True, slots=True)
class ClaimAllocationRecord:
    """``status.allocation``: the device results and the node selector (compiled and raw)."""

    devices: tuple[AllocatedDeviceRecord, ...]
    node_selector: NodeSelector | None
    node_selector_raw: Mapping[str, Any] | None
    raw: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ClaimRecord:
    """A ResourceClaim: identity, device spec, allocation and ``reservedFor`` (raw entries)."""

    namespace: str
    name: str
    uid: str
    spec: ClaimSpecRecord
    allocation: ClaimAllocationRecord | None
    reserved_for: tuple[Mapping[str, Any], ...]

    @property
    def key(self) -> str:
        """``namespace/name``, as ``klog.KObj`` prints a claim in upstream's error texts."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True, slots=True)
class DeviceClassRecord:
    """A DeviceClass: selectors (CEL expressions, None for unsupported types), raw configs, extended resource."""

    name: str
    selectors: tuple[str | None, ...]
    config: tuple[Mapping[str, Any], ...]
    extended_resource_name: str | None


# ---------------------------------------------------------------------------------------------------------------
# Field readers


def _map(obj: Any, path: str) -> Mapping[str, Any]:
    if obj is None:
        return {}
    if not isinstance(obj, Mapping):
        raise DRAObjectError(f"{path}: expected an object, got {type(obj).__name__}")
    return obj


def _list(obj: Any, path: str) -> Sequence[Any]:
    if obj is None:
        return ()
    if not isinstance(obj, list | tuple):
        raise DRAObjectError(f"{path}: expected a list, got {type(obj).__name__}")
    return obj


def _str(obj: Mapping[str, Any], key: str, path: str, *, required: bool = False) -> str:
    value = obj.get(key)
    if value is None:
        if required:
            raise DRAObjectError(f"{path}.{key}: required value")
        return ""
    if not isinstance(value, str):
        raise DRAObjectError(f"{path}.{key}: expected a string, got {type(value).__name__}")
    if required and not value:
        raise DRAObjectError(f"{path}.{key}: required value")
    return value


def _opt_str(obj: Mapping[str, Any], key: str, path: str) -> str | None:
    if obj.get(key) is None:
        return None
    return _str(obj, key, path)


def _int(obj: Mapping[str, Any], key: str, path: str, default: int = 0) -> int:
    value = obj.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise DRAObjectError(f"{path}.{key}: expected an integer, got {type(value).__name__}")
    return value


def _opt_bool(obj: Mapping[str, Any], key: str, path: str) -> bool | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise DRAObjectError(f"{path}.{key}: expected a boolean, got {type(value).__name__}")
    return value


def _strings(obj: Any, path: str) -> tuple[str, ...]:
    items = _list(obj, path)
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise DRAObjectError(f"{path}[{index}]: expected a string, got {type(item).__name__}")
    return tuple(items)


def _quantity(obj: Any, path: str) -> Quantity:
    if obj is None:
        raise DRAObjectError(f"{path}: required value")
    try:
        value = decode_quantity(obj)
    except QuantityError as err:
        raise DRAObjectError(f"{path}: {err}") from None
    return Quantity(value, obj if isinstance(obj, str) else str(obj))


def _opt_quantity(obj: Any, path: str) -> Quantity | None:
    return None if obj is None else _quantity(obj, path)


def _node_selector(obj: Mapping[str, Any], path: str) -> tuple[NodeSelector | None, Mapping[str, Any] | None]:
    raw = obj.get("nodeSelector")
    if raw is None:
        return None, None
    raw = _map(raw, f"{path}.nodeSelector")
    try:
        # Upstream parses these with nodeaffinity.NewNodeSelector at allocation time; a bad selector
        # is an allocation error there. Invalid terms are kept (never matching) and reported lazily.
        return compile_node_selector(raw), raw
    except SelectorError as err:
        raise DRAObjectError(f"{path}.nodeSelector: {err}") from None


# ---------------------------------------------------------------------------------------------------------------
# ResourceSlice


def _attribute(raw: Any, path: str) -> Attribute:
    attr = _map(raw, path)
    for key, kind in (("int", "int"), ("bool", "bool"), ("string", "string"), ("version", "version")):
        value = attr.get(key)
        if value is None:
            continue
        if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
            return Attribute(kind, value)
        if (kind == "bool" and isinstance(value, bool)) or (kind in ("string", "version") and isinstance(value, str)):
            return Attribute(kind, value)
        raise DRAObjectError(f"{path}.{key}: expected {kind}, got {type(value).__name__}")
    # List-typed attributes (DRAListTypeAttributes, alpha). The apiserver keeps them only with the gate on
    # (or once in use); what a selector sees of them depends on the release (see cel_library).
    for key, kind in (("ints", "int"), ("bools", "bool"), ("strings", "string"), ("versions", "version")):
        values = attr.get(key)
        if values is None:
            continue
        items = tuple(_list(values, f"{path}.{key}"))
        if not all(_attribute_value_fits(kind, v) for v in items):
            raise DRAObjectError(f"{path}.{key}: expected a list of {kind}")
        return Attribute(key, items)
    return Attribute("", "")


def _attribute_value_fits(kind: str, value: Any) -> bool:
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    return isinstance(value, str)


def _request_policy(raw: Any, path: str) -> RequestPolicy | None:
    if raw is None:
        return None
    policy = _map(raw, path)
    valid_range = policy.get("validRange")
    rng = _map(valid_range, f"{path}.validRange")
    return RequestPolicy(
        default=_opt_quantity(policy.get("default"), f"{path}.default"),
        valid_values=tuple(
            _quantity(v, f"{path}.validValues[{i}]") for i, v in enumerate(_list(policy.get("validValues"), path))
        ),
        valid_range_min=_opt_quantity(rng.get("min"), f"{path}.validRange.min"),
        valid_range_max=_opt_quantity(rng.get("max"), f"{path}.validRange.max"),
        valid_range_step=_opt_quantity(rng.get("step"), f"{path}.validRange.step"),
        has_valid_range=valid_range is not None,
    )


def _counters(raw: Any, path: str) -> dict[str, Quantity]:
    return {
        str(name): _quantity(_map(counter, f"{path}.{name}").get("value"), f"{path}.{name}.value")
        for name, counter in _map(raw, path).items()
    }


def _device(raw: Any, path: str) -> DeviceRecord:
    dev = _map(raw, path)
    selector, selector_raw = _node_selector(dev, path)
    taints = []
    for index, taint in enumerate(_list(dev.get("taints"), f"{path}.taints")):
        t = _map(taint, f"{path}.taints[{index}]")
        taints.append(
            DeviceTaint(
                _str(t, "key", f"{path}.taints[{index}]"),
                _str(t, "value", f"{path}.taints[{index}]"),
                _str(t, "effect", f"{path}.taints[{index}]"),
            )
        )
    binding = dev.get("bindingConditions")
    binding_failure = dev.get("bindingFailureConditions")
    capacity = {
        str(name): DeviceCapacity(
            _quantity(_map(value, f"{path}.capacity[{name}]").get("value"), f"{path}.capacity[{name}].value"),
            _request_policy(value.get("requestPolicy"), f"{path}.capacity[{name}].requestPolicy"),
        )
        for name, value in _map(dev.get("capacity"), f"{path}.capacity").items()
    }
    return DeviceRecord(
        name=_str(dev, "name", path, required=True),
        attributes={
            str(name): _attribute(value, f"{path}.attributes[{name}]")
            for name, value in _map(dev.get("attributes"), f"{path}.attributes").items()
        },
        capacity=capacity,
        consumes_counters=tuple(
            CounterConsumption(
                _str(_map(c, f"{path}.consumesCounters[{i}]"), "counterSet", f"{path}.consumesCounters[{i}]"),
                _counters(c.get("counters"), f"{path}.consumesCounters[{i}].counters"),
                _strings(c.get("compatibilityGroups"), f"{path}.consumesCounters[{i}].compatibilityGroups"),
            )
            for i, c in enumerate(_list(dev.get("consumesCounters"), f"{path}.consumesCounters"))
        ),
        node_name=_opt_str(dev, "nodeName", path),
        node_selector=selector,
        node_selector_raw=selector_raw,
        all_nodes=bool(_opt_bool(dev, "allNodes", path)),
        taints=tuple(taints),
        binds_to_node=bool(_opt_bool(dev, "bindsToNode", path)),
        binding_conditions=None if binding is None else _strings(binding, f"{path}.bindingConditions"),
        binding_failure_conditions=(
            None if binding_failure is None else _strings(binding_failure, f"{path}.bindingFailureConditions")
        ),
        allow_multiple_allocations=_opt_bool(dev, "allowMultipleAllocations", path),
        has_request_policy=any(c.request_policy is not None for c in capacity.values()),
    )


def slice_record(obj: Mapping[str, Any]) -> SliceRecord:
    """Build the record of a ResourceSlice; raise :class:`DRAObjectError` if it is malformed."""
    obj = _map(obj, "ResourceSlice")
    name = _str(_map(obj.get("metadata"), "metadata"), "name", "metadata", required=True)
    spec = _map(obj.get("spec"), "spec")
    pool = _map(spec.get("pool"), "spec.pool")
    selector, selector_raw = _node_selector(spec, "spec")
    return SliceRecord(
        name=name,
        driver=_str(spec, "driver", "spec", required=True),
        pool_name=_str(pool, "name", "spec.pool", required=True),
        pool_generation=_int(pool, "generation", "spec.pool"),
        resource_slice_count=_int(pool, "resourceSliceCount", "spec.pool"),
        node_name=_opt_str(spec, "nodeName", "spec") or None,
        node_selector=selector,
        node_selector_raw=selector_raw,
        all_nodes=bool(_opt_bool(spec, "allNodes", "spec")),
        per_device_node_selection=bool(_opt_bool(spec, "perDeviceNodeSelection", "spec")),
        shared_counters=tuple(
            CounterSet(
                _str(_map(c, f"spec.sharedCounters[{i}]"), "name", f"spec.sharedCounters[{i}]"),
                _counters(c.get("counters"), f"spec.sharedCounters[{i}].counters"),
            )
            for i, c in enumerate(_list(spec.get("sharedCounters"), "spec.sharedCounters"))
        ),
        devices=tuple(
            _device(d, f"spec.devices[{i}]") for i, d in enumerate(_list(spec.get("devices"), "spec.devices"))
        ),
    )


@dataclass(frozen=True, slots=True)
class TaintRuleRecord:
    """A DeviceTaintRule: the taint it adds to the devices its selector picks (an unset field picks all; no
    selector picks none), as resourceslice/tracker applies it (``applyPatches``)."""

    name: str
    has_selector: bool
    driver: str | None
    pool: str | None
    device: str | None
    taint: DeviceTaint

    def applies_to_pool(self, driver: str, pool: str) -> bool:
        """Whether the rule can taint devices of this driver's pool."""
        return self.has_selector and self.driver in (None, driver) and self.pool in (None, pool)


def taint_rule_record(obj: Mapping[str, Any]) -> TaintRuleRecord:
    """Build the record of a DeviceTaintRule (resource.k8s.io/v1, or v1beta2 in 1.36); DRAObjectError if it is
    malformed."""
    obj = _map(obj, "DeviceTaintRule")
    name = _str(_map(obj.get("metadata"), "metadata"), "name", "metadata", required=True)
    spec = _map(obj.get("spec"), "spec")
    selector = spec.get("deviceSelector")
    sel = _map(selector, "spec.deviceSelector")
    taint = _map(spec.get("taint"), "spec.taint")
    return TaintRuleRecord(
        name=name,
        has_selector=selector is not None,
        driver=_opt_str(sel, "driver", "spec.deviceSelector"),
        pool=_opt_str(sel, "pool", "spec.deviceSelector"),
        device=_opt_str(sel, "device", "spec.deviceSelector"),
        taint=DeviceTaint(_str(taint, "key", "spec.taint"), _str(taint, "value", "spec.taint"),
                          _str(taint, "effect", "spec.taint")),
    )


def with_taint_rules(slice_: SliceRecord, rules: Sequence[TaintRuleRecord]) -> SliceRecord:
    """The slice as the ResourceSlice tracker shows it: each rule's taint appended to every device it picks (a
    new record when any applies, else the slice itself)."""
    applicable = [r for r in rules if r.applies_to_pool(slice_.driver, slice_.pool_name)]
    if not applicable:
        return slice_
    devices: list[DeviceRecord] = []
    changed = False
    for device in slice_.devices:
        added = tuple(r.taint for r in applicable if r.device in (None, device.name))
        if added:
            device = dataclasses.replace(device, taints=device.taints + added, cel_input=None)
            changed = True
        devices.append(device)
    return dataclasses.replace(slice_, devices=tuple(devices)) if changed else slice_


# ---------------------------------------------------------------------------------------------------------------
# ResourceClaim and DeviceClass


def _selectors(raw: Any, path: str) -> tuple[str | None, ...]:
    result: list[str | None] = []
    for index, sel in enumerate(_list(raw, path)):
        cel = _map(sel, f"{path}[{index}]").get("cel")
        result.append(None if cel is None else _str(_map(cel, f"{path}[{index}].cel"), "expression", path))
    return tuple(result)


def _tolerations(raw: Any, path: str) -> tuple[DeviceToleration, ...]:
    result = []
    for index, tol in enumerate(_list(raw, path)):
        t = _map(tol, f"{path}[{index}]")
        p = f"{path}[{index}]"
        result.append(
            DeviceToleration(_str(t, "key", p), _str(t, "operator", p) or "Equal", _str(t, "value", p),
                             _str(t, "effect", p), t)
        )
    return tuple(result)


def _request_spec(raw: Mapping[str, Any], name: str, path: str, *, sub: bool) -> RequestSpec:
    mode = _str(raw, "allocationMode", path) or ALLOCATION_MODE_EXACT_COUNT
    count = _int(raw, "count", path)
    if mode == ALLOCATION_MODE_EXACT_COUNT and count == 0:
        count = 1
    capacity = raw.get("capacity")
    capacity_requests: dict[str, Quantity] | None = None
    if capacity is not None:
        capacity_requests = {
            str(k): _quantity(v, f"{path}.capacity.requests[{k}]")
            for k, v in _map(_map(capacity, f"{path}.capacity").get("requests"), f"{path}.capacity.requests").items()
        }
    return RequestSpec(
        name=name,
        device_class_name=_str(raw, "deviceClassName", path),
        allocation_mode=mode,
        count=count,
        admin_access=None if sub else _opt_bool(raw, "adminAccess", path),
        selectors=_selectors(raw.get("selectors"), f"{path}.selectors"),
        tolerations=_tolerations(raw.get("tolerations"), f"{path}.tolerations"),
        capacity_requests=capacity_requests,
        derived_attributes=len(_list(raw.get("derivedAttributes"), f"{path}.derivedAttributes")),
    )


def claim_spec_record(spec: Mapping[str, Any], *, path: str = "spec") -> ClaimSpecRecord:
    """Build the device part of a ``ResourceClaimSpec`` (a claim's or a template's)."""
    devices = _map(_map(spec, path).get("devices"), f"{path}.devices")
    requests = []
    for index, raw in enumerate(_list(devices.get("requests"), f"{path}.devices.requests")):
        p = f"{path}.devices.requests[{index}]"
        req = _map(raw, p)
        name = _str(req, "name", p, required=True)
        exactly = req.get("exactly")
        subs = tuple(
            _request_spec(
                _map(s, f"{p}.firstAvailable[{i}]"),
                _str(_map(s, f"{p}.firstAvailable[{i}]"), "name", f"{p}.firstAvailable[{i}]", required=True),
                f"{p}.firstAvailable[{i}]",
                sub=True,
            )
            for i, s in enumerate(_list(req.get("firstAvailable"), f"{p}.firstAvailable"))
        )
        requests.append(
            DeviceRequest(
                name,
                None
                if exactly is None
                else _request_spec(_map(exactly, f"{p}.exactly"), name, f"{p}.exactly", sub=False),
                subs,
            )
        )
    constraints = []
    for index, raw in enumerate(_list(devices.get("constraints"), f"{path}.devices.constraints")):
        p = f"{path}.devices.constraints[{index}]"
        con = _map(raw, p)
        kind, attribute = "", ""
        if con.get("matchAttribute") is not None:
            kind, attribute = "matchAttribute", _str(con, "matchAttribute", p)
        elif con.get("distinctAttribute") is not None:
            kind, attribute = "distinctAttribute", _str(con, "distinctAttribute", p)
        constraints.append(Constraint(_strings(con.get("requests"), f"{p}.requests"), kind, attribute))
    config = tuple(
        ClaimConfig(_strings(_map(c, f"{path}.devices.config[{i}]").get("requests"), f"{path}.devices.config"), c)
        for i, c in enumerate(_list(devices.get("config"), f"{path}.devices.config"))
    )
    return ClaimSpecRecord(tuple(requests), tuple(constraints), config)


def _allocation(raw: Any) -> ClaimAllocationRecord | None:
    if raw is None:
        return None
    alloc = _map(raw, "status.allocation")
    results = []
    path = "status.allocation.devices.results"
    for index, res in enumerate(_list(_map(alloc.get("devices"), "status.allocation.devices").get("results"), path)):
        r = _map(res, f"{path}[{index}]")
        p = f"{path}[{index}]"
        consumed = r.get("consumedCapacity")
        results.append(
            AllocatedDeviceRecord(
                request=_str(r, "request", p),
                driver=_str(r, "driver", p, required=True),
                pool=_str(r, "pool", p, required=True),
                device=_str(r, "device", p, required=True),
                admin_access=_opt_bool(r, "adminAccess", p),
                share_id=_opt_str(r, "shareID", p),
                consumed_capacity=None
                if consumed is None
                else {str(k): _quantity(v, f"{p}.consumedCapacity[{k}]") for k, v in _map(consumed, p).items()},
            )
        )
    selector, selector_raw = _node_selector(alloc, "status.allocation")
    return ClaimAllocationRecord(tuple(results), selector, selector_raw, alloc)


def claim_record(obj: Mapping[str, Any]) -> ClaimRecord:
    """Build the record of a ResourceClaim; raise :class:`DRAObjectError` if it is malformed."""
    obj = _map(obj, "ResourceClaim")
    meta = _map(obj.get("metadata"), "metadata")
    status = _map(obj.get("status"), "status")
    return ClaimRecord(
        namespace=_str(meta, "namespace", "metadata"),
        name=_str(meta, "name", "metadata", required=True),
        uid=_str(meta, "uid", "metadata"),
        spec=claim_spec_record(_map(obj.get("spec"), "spec")),
        allocation=_allocation(status.get("allocation")),
        reserved_for=tuple(
            _map(r, "status.reservedFor") for r in _list(status.get("reservedFor"), "status.reservedFor")
        ),
    )


def device_class_record(obj: Mapping[str, Any]) -> DeviceClassRecord:
    """Build the record of a DeviceClass; raise :class:`DRAObjectError` if it is malformed."""
    obj = _map(obj, "DeviceClass")
    spec = _map(obj.get("spec"), "spec")
    return DeviceClassRecord(
        name=_str(_map(obj.get("metadata"), "metadata"), "name", "metadata", required=True),
        selectors=_selectors(spec.get("selectors"), "spec.selectors"),
        config=tuple(_map(c, "spec.config") for c in _list(spec.get("config"), "spec.config")),
        extended_resource_name=_opt_str(spec, "extendedResourceName", "spec"),
    )
