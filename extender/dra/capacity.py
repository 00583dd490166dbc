"""Consumable capacity (upstream ``incubating/consumable_capacity.go``).

A device with ``allowMultipleAllocations`` is shared: each allocation consumes part of its
capacities. A request's amount is defaulted (the policy's default, else the whole capacity), rounded
up to the policy's valid range step or next valid value, and must not break the policy; the device
fits when what is already consumed, plus what this attempt is allocating, plus the request stays
within each capacity.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Final

from extender.dra.records import DeviceCapacity, Quantity
from extender.kube.quantity import value as quantity_value

__all__ = ["consumed_capacity", "fits_capacity", "format_binary_si", "violates_policy"]


def consumed_capacity(requested: Quantity | None, capacity: DeviceCapacity) -> Quantity:
    """The capacity a request takes from a device after its request policy (upstream calculateConsumedCapacity)."""
    policy = capacity.request_policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return capacity.value
    if policy is None:
        return requested
    if policy.has_valid_range and policy.valid_range_min is not None:
        minimum = policy.valid_range_min
        if requested.value < minimum.value:
            return minimum
        if policy.valid_range_step is None:
            return requested
        step = quantity_value(policy.valid_range_step.value)
        low = quantity_value(minimum.value)
        added = quantity_value(requested.value) - low
        n = abs(added) // step * (1 if added >= 0 else -1)  # Go's truncating division
        if added - n * step != 0:
            n += 1
        rounded = low + step * n
        return Quantity(Fraction(rounded), format_binary_si(rounded))
    if policy.valid_values:
        for valid in policy.valid_values:
            if requested.value <= valid.value:
                return valid
    return requested


def violates_policy(consumed: Quantity, capacity: DeviceCapacity) -> bool:
    policy = capacity.request_policy
    if policy is None:
        return False
    if policy.default is not None and consumed.value == policy.default.value:
        return False
    if policy.has_valid_range:
        if policy.valid_range_max is not None and consumed.value > policy.valid_range_max.value:
            return True
        if policy.valid_range_step is not None:
            low = quantity_value(policy.valid_range_min.value) if policy.valid_range_min is not None else 0
            step = quantity_value(policy.valid_range_step.value)
            if step and (quantity_value(consumed.value) - low) % step != 0:
                return True
        return False
    if policy.valid_values:
        return all(consumed.value != valid.value for valid in policy.valid_values)
    return False


def fits_capacity(
    requests: Mapping[str, Quantity] | None,
    capacity: Mapping[str, DeviceCapacity],
    consumed_before: Mapping[str, Fraction],
    allocating: Mapping[str, Fraction],
) -> bool | None:
    """Upstream ``CmpRequestOverCapacity``; None when a requested capacity is not defined by the device."""
    if requests and any(name not in capacity for name in requests):
        return None
    for name, cap in capacity.items():
        consumed = consumed_capacity(requests.get(name) if requests else None, cap)
        if violates_policy(consumed, cap):
            return False
        total = consumed_before.get(name, Fraction(0)) + consumed.value + allocating.get(name, Fraction(0))
        if total > cap.value.value:
            return False
    return True


_BINARY_SUFFIXES: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def format_binary_si(number: int) -> str:
    """An integer as ``resource.NewQuantity(n, BinarySI).String()`` prints it."""
    if -1024 < number < 1024:
        return str(number)
    exponent = 0
    while exponent < len(_BINARY_SUFFIXES) - 1 and number % 1024 == 0 and number != 0:
        number //= 1024
        exponent += 1
    return f"{number}{_BINARY_SUFFIXES[exponent]}"
