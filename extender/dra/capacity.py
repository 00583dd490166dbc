"""Consumable capacity (upstream ``incubating/consumable_capacity.go``).

A device with ``allowMultipleAllocations`` is shared: each allocation consumes part of its
capacities. A request's amount is defaulted (the policy's default, else the whole capacity), rounded
up to the policy's valid range step or next valid value, and must not break the policy; the device
fits when what is already consumed, plus what this attempt is allocating, plus the request stays
within each capacity.

Where dynamic-resource-allocation v0.36.3 and v0.37.2 differ (``CapacityRules.minor``):

* v0.37.2 rounds a valid range in int64 and refuses (:class:`CapacityError`, which aborts the
  allocation) a request above MaxInt64 or one whose rounded value passes it; v0.36.3 has no such check;
* v0.37.2 refuses a negative amount (from a stored request or a default) the same way;
* v0.37.2 prints the rounded amount in the step's format, v0.36.3 always in BinarySI;
* with DRAFractionalCapacityRange (v0.37.2, beta, off by default), a range whose bounds and step are
  whole milli values (step at least 1m) is rounded in milli units.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from extender.dra.records import DeviceCapacity, Quantity, RequestPolicy
from extender.kube.quantity import BINARY_SI, canonical_string, quantity_format
from extender.kube.quantity import value as quantity_value

__all__ = [
    "CapacityError",
    "CapacityRules",
    "consumed_capacity",
    "fits_capacity",
    "format_binary_si",
    "violates_policy",
]

_INT64_MAX: Final = 2**63 - 1
_INT64_MIN: Final = -(2**63)
_NOT_REPRESENTABLE: Final = "capacity request cannot be represented in the device's range arithmetic"


class CapacityError(Exception):
    """A capacity request that cannot be honoured at all (v0.37.2): the allocation aborts with this text."""


@dataclass(frozen=True, slots=True)
class CapacityRules:
    """Which release's arithmetic applies: ``minor`` and DRAFractionalCapacityRange."""

    minor: int = 37
    fractional_range: bool = False


RULES_V137: Final = CapacityRules()


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _safe_milli(quantity: Quantity) -> int | None:
    """consumable_capacity.go safeMilliValue: the value in milli units when that is exact and fits an int64."""
    milli = quantity.value * 1000
    if milli.denominator != 1 or not _INT64_MIN <= milli.numerator <= _INT64_MAX:
        return None
    return milli.numerator


def _use_milli(policy: RequestPolicy, rules: CapacityRules) -> bool:
    """consumable_capacity.go useMilli: every bound given is an exact milli value and the step at least 1m."""
    if not rules.fractional_range:
        return False
    for bound in (policy.valid_range_min, policy.valid_range_max):
        if bound is not None and _safe_milli(bound) is None:
            return False
    if policy.valid_range_step is not None:
        step = _safe_milli(policy.valid_range_step)
        if step is None or step < 1:
            return False
    return True


def _round_up_range(requested: Quantity, policy: RequestPolicy, rules: CapacityRules) -> Quantity:
    minimum = policy.valid_range_min
    assert minimum is not None
    if requested.value < minimum.value:
        return minimum
    step_q = policy.valid_range_step
    if step_q is None:
        return requested
    if rules.minor < 37:
        step = quantity_value(step_q.value)
        low = quantity_value(minimum.value)
        added = quantity_value(requested.value) - low
        n = _go_div(added, step)
        if added - n * step != 0:
            n += 1
        rounded = low + step * n
        return Quantity(Fraction(rounded), format_binary_si(rounded))
    fmt = quantity_format(step_q.text)
    if _use_milli(policy, rules):
        requested_milli = _safe_milli(requested)
        if requested_milli is None:
            raise CapacityError(f"{_NOT_REPRESENTABLE}: request {_go_string(requested)} is not a representable "
                                "milli value")
        step, low = _milli_value(step_q), _milli_value(minimum)
        added = requested_milli - low
        n = _go_div(added, step) + (1 if added % step else 0)
        if n > _go_div(_INT64_MAX - low, step):
            raise CapacityError(f"{_NOT_REPRESENTABLE}: rounding request {_go_string(requested)} up to the next step "
                                "passes the milli-value range")
        rounded_milli = Fraction(low + step * n, 1000)
        return Quantity(rounded_milli, canonical_string(rounded_milli, fmt))
    if requested.value > _INT64_MAX:
        raise CapacityError(f"{_NOT_REPRESENTABLE}: request {_go_string(requested)} exceeds MaxInt64")
    requested_int = quantity_value(requested.value)
    step, low = quantity_value(step_q.value), quantity_value(minimum.value)
    added = requested_int - low
    n = _go_div(added, step) + (1 if added % step else 0)
    if low >= 0 and n > _go_div(_INT64_MAX - low, step):
        raise CapacityError(f"{_NOT_REPRESENTABLE}: rounding request {_go_string(requested)} up to the next step "
                            "passes MaxInt64")
    rounded = low + step * n
    return Quantity(Fraction(rounded), canonical_string(rounded, fmt))


def _milli_value(quantity: Quantity) -> int:
    milli = quantity.value * 1000
    return -(-milli.numerator // milli.denominator)


def _go_string(quantity: Quantity) -> str:
    """``Quantity.String()`` of a parsed quantity (its canonical text in its own format)."""
    return canonical_string(quantity.value, quantity_format(quantity.text))


def consumed_capacity(requested: Quantity | None, capacity: DeviceCapacity,
                      rules: CapacityRules = RULES_V137) -> Quantity:
    """The capacity a request takes from a device after its request policy (upstream calculateConsumedCapacity).

    Raises :class:`CapacityError` (v0.37.2) when a valid-range request cannot be represented.
    """
    policy = capacity.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return capacity.value
    if policy is None:
        return requested
    if policy.has_valid_range and policy.valid_range_min is not None:
        return _round_up_range(requested, policy, rules)
    if policy.valid_values:
        for valid in policy.valid_values:
            if requested.value <= valid.value:
                return valid
    return requested


def violates_policy(consumed: Quantity, capacity: DeviceCapacity, rules: CapacityRules = RULES_V137) -> bool:
    """Whether the consumed amount breaks the capacity's request policy (upstream violatesPolicy)."""
    policy = capacity.request_policy
    if policy is None:
        return False
    if policy.default is not None and consumed.value == policy.default.value:
        return False
    if policy.has_valid_range:
        if policy.valid_range_max is not None and consumed.value > policy.valid_range_max.value:
            return True
        if policy.valid_range_step is not None:
            if _use_milli(policy, rules):
                requested = _safe_milli(consumed)
                if requested is None:
                    return True
                step = _milli_value(policy.valid_range_step)
                low = _milli_value(policy.valid_range_min) if policy.valid_range_min is not None else 0
            else:
                requested = quantity_value(consumed.value)
                step = quantity_value(policy.valid_range_step.value)
                low = quantity_value(policy.valid_range_min.value) if policy.valid_range_min is not None else 0
            if step and (requested - low) % step != 0:
                return True
        return False
    if policy.valid_values:
        return all(consumed.value != valid.value for valid in policy.valid_values)
    return False


def consumed_amounts(requests: Mapping[str, Quantity] | None, capacity: Mapping[str, DeviceCapacity],
                     rules: CapacityRules = RULES_V137) -> dict[str, Quantity]:
    """What a request consumes of each of the device's capacities (upstream GetConsumedCapacityFromRequest).

    Raises :class:`CapacityError` (v0.37.2) naming the capacity when one cannot be represented or is negative.
    """
    consumed: dict[str, Quantity] = {}
    for name, cap in capacity.items():
        try:
            amount = consumed_capacity(requests.get(name) if requests else None, cap, rules)
        except CapacityError as err:
            raise CapacityError(f'capacity "{name}": {err}') from None
        if rules.minor >= 37 and amount.value < 0:
            raise CapacityError(f'capacity "{name}": capacity value is negative')
        consumed[name] = amount
    return consumed


def fits_capacity(
    requests: Mapping[str, Quantity] | None,
    capacity: Mapping[str, DeviceCapacity],
    consumed_before: Mapping[str, Fraction],
    allocating: Mapping[str, Fraction],
    rules: CapacityRules = RULES_V137,
) -> bool | None:
    """Upstream ``CmpRequestOverCapacity``; None when a requested capacity is not defined by the device.

    v0.37.2 first works out every amount (raising :class:`CapacityError` for one that cannot be honoured, so
    the outcome does not depend on which capacity is looked at first), then checks policies and totals.
    """
    if requests and any(name not in capacity for name in requests):
        return None
    consumed = consumed_amounts(requests, capacity, rules)
    for name, cap in capacity.items():
        amount = consumed[name]
        if violates_policy(amount, cap, rules):
            return False
        total = consumed_before.get(name, Fraction(0)) + amount.value + allocating.get(name, Fraction(0))
        if total > cap.value.value:
            return False
    return True


def format_binary_si(number: int) -> str:
    """An integer as ``resource.NewQuantity(n, BinarySI).String()`` prints it."""
    return canonical_string(number, BINARY_SI)
