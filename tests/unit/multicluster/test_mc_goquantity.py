"""Go's resource.Quantity forms and arithmetic, as Karmada v1.18.2's estimator sees them.

Expected values were printed by apimachinery v0.35.3 (``MustParse``, ``Sub``, ``Value``,
``MilliValue``) for the same inputs.
"""

from __future__ import annotations

import pytest

from extender.multicluster.goquantity import GoQuantity, parse_go_quantity, sub

# (a, b, a.Value(), a.MilliValue(), (a-b).Value(), (a-b).MilliValue())
GO_ANSWERS: list[tuple[str, str, int, int, int, int]] = [
    # 3.5Gi is an inf.Dec in nano units; 3.5Gi - 19Gi is below the int64 range there, and Value()
    # keeps the low 64 bits: a positive amount.
    ("3.5Gi", "19Gi", 3758096384, 3758096384000, 1803745802, 1803745801710),
    ("3.5Gi", "1Gi", 3758096384, 3758096384000, 2684354560, 2684354560000),
    ("6.5Gi", "50Gi", 6979321856, 6979321856000, 8632462878, 8632462877129),
    # The same amounts written as int64Amounts subtract exactly.
    ("3584Mi", "19Gi", 3758096384, 3758096384000, -16642998272, -16642998272000),
    ("1.5", "3", 2, 1500, -2, -1500),
    ("50.5", "7500m", 51, 50500, 43, 43000),
]


@pytest.mark.parametrize(("a", "b", "value", "milli", "diff_value", "diff_milli"), GO_ANSWERS,
                         ids=[f"{a} - {b}" for a, b, *_ in GO_ANSWERS])
def test_values_and_differences_as_go_computes_them(a: str, b: str, value: int, milli: int, diff_value: int,
                                                     diff_milli: int) -> None:
    qa, qb = parse_go_quantity(a), parse_go_quantity(b)
    assert (qa.value(), qa.milli_value()) == (value, milli)
    diff = sub(qa, qb)
    assert (diff.value(), diff.milli_value()) == (diff_value, diff_milli)


def test_forms_follow_how_the_text_is_written() -> None:
    assert parse_go_quantity("3584Mi") == GoQuantity(False, 3584 * 2**20, 0)
    assert parse_go_quantity("3.5Gi") == GoQuantity(True, 3758096384 * 10**9, 9)
    assert parse_go_quantity("100m") == GoQuantity(False, 100, -3)
    assert parse_go_quantity(None) == parse_go_quantity("0") == GoQuantity(False, 0, 0)
    assert parse_go_quantity(" 2 ") == parse_go_quantity(2) == GoQuantity(False, 2, 0)
