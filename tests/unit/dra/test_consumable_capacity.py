"""Upstream's ``incubating/consumable_capacity_test.go`` tables: request policies and consumed capacity."""

from __future__ import annotations

from fractions import Fraction

import pytest

from extender.dra.capacity import consumed_capacity as _consumed
from extender.dra.capacity import fits_capacity as _fits_capacity
from extender.dra.capacity import violates_policy as _violates_policy
from extender.dra.records import DeviceCapacity, Quantity, RequestPolicy


def q(value: int) -> Quantity:
    return Quantity(Fraction(value), str(value))


def policy(
    default: int | None = 1,
    *,
    valid_values: tuple[int, ...] = (),
    low: int | None = None,
    high: int | None = None,
    step: int | None = None,
    has_range: bool = False,
) -> RequestPolicy:
    return RequestPolicy(
        default=None if default is None else q(default),
        valid_values=tuple(q(v) for v in valid_values),
        valid_range_min=None if low is None else q(low),
        valid_range_max=None if high is None else q(high),
        valid_range_step=None if step is None else q(step),
        has_valid_range=has_range or low is not None,
    )


@pytest.mark.parametrize(
    ("requested", "request_policy", "violates"),
    [
        pytest.param(1, None, False, id="no constraint"),
        pytest.param(1, policy(low=1, high=2), False, id="less than maximum"),
        pytest.param(2, policy(low=1, high=1), True, id="more than maximum"),
        pytest.param(1, policy(valid_values=(1,)), False, id="in set"),
        pytest.param(2, policy(valid_values=(1,)), True, id="not in set"),
    ],
)
def test_violate_capacity_request_policy(requested: int, request_policy: RequestPolicy | None, violates: bool) -> None:
    assert _violates_policy(q(requested), DeviceCapacity(q(2), request_policy)) is violates


@pytest.mark.parametrize(
    ("requested", "capacity", "request_policy", "expected"),
    [
        pytest.param(None, 1, policy(default=None), 1, id="empty"),
        pytest.param(None, 2, policy(low=1), 1, id="min in range"),
        pytest.param(None, 2, policy(valid_values=(1,)), 1, id="default in set"),
        pytest.param(2, 2, policy(low=1), 2, id="more than min in range"),
        pytest.param(1, 2, policy(low=2), 2, id="less than min in range"),
        pytest.param(2, 3, policy(low=1, step=2), 3, id="with step (round up)"),
        pytest.param(2, 2, policy(low=1, step=1), 2, id="with step (no remaining)"),
        pytest.param(2, 3, policy(valid_values=(1, 2, 3)), 2, id="valid value in set"),
        pytest.param(2, 3, policy(valid_values=(1, 3)), 3, id="set (round up)"),
        pytest.param(3, 3, policy(valid_values=(1, 2)), 3, id="larger than set"),
    ],
)
def test_calculate_consumed_capacity(
    requested: int | None, capacity: int, request_policy: RequestPolicy, expected: int
) -> None:
    consumed = _consumed(None if requested is None else q(requested), DeviceCapacity(q(capacity), request_policy))
    assert consumed.value == expected


def test_consumed_capacity_from_request() -> None:
    capacities = {
        "capacity-0": DeviceCapacity(q(2), policy(default=2, low=1)),  # requested: the request
        "capacity-1": DeviceCapacity(q(2), policy(default=1, low=1)),  # not requested: the default
        "dummy": DeviceCapacity(q(1)),  # not requested, no policy: the whole capacity
    }
    requests = {"capacity-0": q(1), "dummy": q(1)}
    consumed = {name: _consumed(requests.get(name), cap) for name, cap in capacities.items()}
    assert {name: value.value for name, value in consumed.items()} == {"capacity-0": 1, "capacity-1": 1, "dummy": 1}


def test_requested_capacity_must_exist_and_fit() -> None:
    capacity = {"memory": DeviceCapacity(q(4))}
    assert _fits_capacity({"other": q(1)}, capacity, {}, {}) is None
    assert _fits_capacity({"memory": q(3)}, capacity, {"memory": Fraction(1)}, {}) is True
    assert _fits_capacity({"memory": q(3)}, capacity, {"memory": Fraction(1)}, {"memory": Fraction(1)}) is False
