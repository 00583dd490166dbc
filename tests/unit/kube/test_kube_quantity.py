"""Tests for extender.kube.quantity, with upstream's quantity_test.go tables ported as data."""

from __future__ import annotations

import contextlib
import math
import time
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extender.kube.quantity import (
    MAX_QUANTITY_LENGTH,
    QuantityError,
    decode_quantity,
    milli_value,
    parse_quantity,
    value,
)

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def dec(mantissa: int, exponent: int) -> Fraction:
    """Upstream's decQuantity(mantissa, exponent): mantissa * 10**exponent."""
    return Fraction(mantissa) * Fraction(10) ** exponent


# TestQuantityParse in staging/src/k8s.io/apimachinery/pkg/api/resource/quantity_test.go.
UPSTREAM_PARSE_TABLE: list[tuple[str, Fraction]] = [
    ("0", dec(0, 0)),
    ("0n", dec(0, 0)),
    ("0u", dec(0, 0)),
    ("0m", dec(0, 0)),
    ("0Ki", dec(0, 0)),
    ("0k", dec(0, 0)),
    ("0Mi", dec(0, 0)),
    ("0M", dec(0, 0)),
    ("0Gi", dec(0, 0)),
    ("0G", dec(0, 0)),
    ("0Ti", dec(0, 0)),
    ("0T", dec(0, 0)),
    # Quantity less numbers are allowed
    ("1", dec(1, 0)),
    # Binary suffixes
    ("1Ki", dec(1024, 0)),
    ("8Ki", dec(8 * 1024, 0)),
    ("7Mi", dec(7 * 1024 * 1024, 0)),
    ("6Gi", dec(6 * 1024**3, 0)),
    ("5Ti", dec(5 * 1024**4, 0)),
    ("4Pi", dec(4 * 1024**5, 0)),
    ("3Ei", dec(3 * 1024**6, 0)),
    ("10Ti", dec(10 * 1024**4, 0)),
    ("100Ti", dec(100 * 1024**4, 0)),
    # Decimal suffixes
    ("5n", dec(5, -9)),
    ("4u", dec(4, -6)),
    ("3m", dec(3, -3)),
    ("9", dec(9, 0)),
    ("8k", dec(8, 3)),
    ("50k", dec(5, 4)),
    ("7M", dec(7, 6)),
    ("6G", dec(6, 9)),
    ("5T", dec(5, 12)),
    ("40T", dec(4, 13)),
    ("300T", dec(3, 14)),
    ("2P", dec(2, 15)),
    ("1E", dec(1, 18)),
    # Decimal exponents
    ("1E-3", dec(1, -3)),
    ("1e3", dec(1, 3)),
    ("1E6", dec(1, 6)),
    ("1e9", dec(1, 9)),
    ("1E12", dec(1, 12)),
    ("1e15", dec(1, 15)),
    ("1E18", dec(1, 18)),
    # Nonstandard but still parsable
    ("1e14", dec(1, 14)),
    ("1e13", dec(1, 13)),
    ("1e3", dec(1, 3)),
    ("100.035k", dec(100035, 0)),
    # Things that look like floating point
    ("0.001", dec(1, -3)),
    ("0.0005k", dec(5, -1)),
    ("0.005", dec(5, -3)),
    ("0.05", dec(5, -2)),
    ("0.5", dec(5, -1)),
    ("0.00050k", dec(5, -1)),
    ("0.00500", dec(5, -3)),
    ("0.05000", dec(5, -2)),
    ("0.50000", dec(5, -1)),
    ("0.5e0", dec(5, -1)),
    ("0.5e-1", dec(5, -2)),
    ("0.5e-2", dec(5, -3)),
    ("0.5e0", dec(5, -1)),
    ("10.035M", dec(10035, 3)),
    ("1.2e3", dec(12, 2)),
    ("1.3E+6", dec(13, 5)),
    ("1.40e9", dec(14, 8)),
    ("1.53E12", dec(153, 10)),
    ("1.6e15", dec(16, 14)),
    ("1.7E18", dec(17, 17)),
    ("9.01", dec(901, -2)),
    ("8.1k", dec(81, 2)),
    ("7.123456M", dec(7123456, 0)),
    ("6.987654321G", dec(6987654321, 0)),
    ("5.444T", dec(5444, 9)),
    ("40.1T", dec(401, 11)),
    ("300.2T", dec(3002, 11)),
    ("2.5P", dec(25, 14)),
    ("1.01E", dec(101, 16)),
    # Things that saturate/round
    ("3.001n", dec(4, -9)),
    ("1.1E-9", dec(2, -9)),
    ("0.0000000001", dec(1, -9)),
    ("0.0000000005", dec(1, -9)),
    ("0.00000000050", dec(1, -9)),
    ("0.5e-9", dec(1, -9)),
    ("0.9n", dec(1, -9)),
    ("0.00000012345", dec(124, -9)),
    ("0.00000012354", dec(124, -9)),
    ("9Ei", Fraction(INT64_MAX)),
    ("9223372036854775807Ki", Fraction(INT64_MAX)),
    ("12E", dec(12, 18)),
    # We'll accept fractional binary stuff, too.
    ("100.035Ki", dec(10243584, -2)),
    ("0.5Mi", dec(512 * 1024, 0)),
    ("0.05Gi", dec(536870912, -1)),
    ("0.025Ti", dec(274877906944, -1)),
    # Things written by trolls
    ("0.000000000001Ki", dec(2, -9)),  # rounds up, changes format
    (".001", dec(1, -3)),
    (".0001k", dec(100, -3)),
    ("1.", dec(1, 0)),
    ("1.G", dec(1, 9)),
]

# The invalid list of TestQuantityParse, plus the rejections named in the product brief.
UPSTREAM_INVALID = [
    "1.1.M",
    "1+1.0M",
    "0.1mi",
    "0.1am",
    "aoeu",
    ".5i",
    "1i",
    "-3.01i",
    "-3.01e-",
    # an exponent outside the int32 scale is rejected rather than truncated
    "1e4294967297",
    # trailing whitespace is forbidden
    " 1",
    "1 ",
]
MORE_INVALID = [
    "",
    "1e",
    "1E-",
    "1e+",
    "K",
    "ki",
    "1ki",
    "1K",
    "..",
    "1..",
    "1e3e",
    "1ee3",
    "1Mi3",
    "1k3",
    "--1",
    "+-1",
    "1.5.5",
    "1_000",
    "0x10",
    "\uff11",  # a full-width digit is not an ASCII digit
    "1\n",
    "\t1",
    "1e9223372036854775808",  # exponent outside int64: ParseInt fails
    "1e2147483648",  # outside int32
    "1E-2147483648",  # -MinInt32 does not fit int32
]


@pytest.mark.parametrize(("text", "expected"), UPSTREAM_PARSE_TABLE)
def test_upstream_parse_table(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(("text", "expected"), UPSTREAM_PARSE_TABLE)
def test_upstream_parse_table_negated(text: str, expected: Fraction) -> None:
    # Upstream re-parses every entry with "-" and with "+" prepended.
    assert parse_quantity("-" + text) == -expected
    assert parse_quantity("+" + text) == expected


@pytest.mark.parametrize("text", UPSTREAM_INVALID + MORE_INVALID)
def test_invalid_quantities(text: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert repr(text)[:20] in str(info.value)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "regular expression"),
        ("aoeu", "regular expression"),
        ("1e", "suffix"),
        ("K", "suffix"),
        ("1ki", "suffix"),
        ("9223372036854775808", "numeric"),
    ],
)
def test_error_kinds_match_upstream(text: str, reason: str) -> None:
    # ErrFormatWrong, ErrSuffix and ErrNumeric respectively.
    with pytest.raises(QuantityError, match=reason):
        parse_quantity(text)


@pytest.mark.parametrize("text", [".", "-.", "+.", "-", "+", "k", "e3", "Ki", "-0", "000", "0.", "0e999999999"])
def test_degenerate_forms_parse_as_zero(text: str) -> None:
    # Upstream's scanner treats an absent integer part as "0" (TestParseQuantityString lists
    # "." and "-." as valid); only the suffix is then checked.
    assert parse_quantity(text) == 0


def test_int64_fast_path_rejects_19_digit_overflow_like_upstream() -> None:
    # ParseInt fails on the fast path (<= 19 digits, scale >= nano) and upstream reports
    # ErrNumeric instead of retrying; longer spellings of the same value take the slow path.
    for text in ["9223372036854775808", "922337203685477580.8", "9223372036854775808m", "9999999999999999999n"]:
        with pytest.raises(QuantityError, match="numeric"):
            parse_quantity(text)
    assert parse_quantity("9223372036854775808.0") == 2**63
    assert parse_quantity("10000000000000000000") == 10**19  # 20 digits: slow path
    assert parse_quantity("00009223372036854775807") == INT64_MAX  # leading zeros do not count
    assert parse_quantity("9.999999999999999999") == 10  # scale below nano: slow path, rounded up
    assert parse_quantity("9223372036854775807") == INT64_MAX


def test_binary_values_are_capped_but_decimal_ones_are_not() -> None:
    assert parse_quantity("8Ei") == INT64_MAX
    assert parse_quantity("-8Ei") == -INT64_MAX
    assert parse_quantity("100000Ei") == INT64_MAX
    assert parse_quantity("10E") == 10 * 10**18
    assert parse_quantity("1e30") == 10**30


def test_rounding_up_to_nano_is_away_from_zero() -> None:
    assert parse_quantity("0.1n") == dec(1, -9)
    assert parse_quantity("-0.1n") == -dec(1, -9)
    assert parse_quantity("1.0000000001") == dec(1000000001, -9)
    assert parse_quantity("1e-999999999") == dec(1, -9)
    assert parse_quantity("-1e-2147483647") == -dec(1, -9)


# TestNegativeValueRoundsAwayFromZero: (input, Value(), MilliValue()).
UPSTREAM_VALUE_TABLE = [
    ("-.484785E-7466", -1, -1),
    (".484785E-7466", 1, 1),
    ("-.484785E-1", -1, -49),
    (".484785E-1", 1, 49),
    ("-0.0005", -1, -1),
    ("0.0005", 1, 1),
    ("-1500m", -2, -1500),
    ("1500m", 2, 1500),
    ("-9.5000000001Gi", -10200547329, -10200547328108),
    ("9.5000000001Gi", 10200547329, 10200547328108),
    ("-1", -1, -1000),
    ("1", 1, 1000),
    ("0", 0, 0),
    # Examples from the upstream notes and TestScaledValue / TestNewScaledSet.
    ("0.1m", 1, 1),
    ("1.5", 2, 1500),
    ("100Mi", 104857600, 104857600000),
    ("1n", 1, 1),
    ("1u", 1, 1),
    ("1m", 1, 1),
    ("1000m", 1, 1000),
    ("1234", 1234, 1234000),
    ("1Ki", 1024, 1024000),
]


@pytest.mark.parametrize(("text", "expected_value", "expected_milli"), UPSTREAM_VALUE_TABLE)
def test_value_and_milli_value(text: str, expected_value: int, expected_milli: int) -> None:
    quantity = parse_quantity(text)
    assert value(quantity) == expected_value
    assert milli_value(quantity) == expected_milli


# TestQuantityParseEmit: the emitted form is irrelevant here, the value is not.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1Ki", dec(1024, 0)),
        ("1Mi", dec(1024**2, 0)),
        ("1Gi", dec(1024**3, 0)),
        ("1024Mi", dec(1024**3, 0)),
        ("1000M", dec(1, 9)),
        (".001Ki", dec(1024, -3)),
        (".000001Ki", dec(1024, -6)),
        (".000000001Ki", dec(1024, -9)),
        (".000000000001Ki", dec(2, -9)),
    ],
)
def test_upstream_parse_emit_values(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected
    assert parse_quantity("-" + text) == -expected


def test_values_saturate_at_int64() -> None:
    assert milli_value(parse_quantity("1E")) == INT64_MAX
    assert milli_value(parse_quantity("-1E")) == INT64_MIN
    assert value(Fraction(10**30)) == INT64_MAX
    assert value(Fraction(-(10**30))) == INT64_MIN
    assert value(parse_quantity("9Ei")) == INT64_MAX
    assert value(7) == 7


# TestJSONWhitespace: UnmarshalJSON trims whitespace and accepts bare numbers.
@pytest.mark.parametrize(
    ("raw", "expected"),
    [(" 1", 1), ("1 ", 1), (1, 1), (10, 10), (-1, -1), (" -1", -1), ("\t2Gi\n", 2 * 1024**3), ("\u00a05", 5)],
)
def test_decode_trims_whitespace_and_accepts_numbers(raw: object, expected: int) -> None:
    assert decode_quantity(raw) == expected


def test_decode_other_json_values() -> None:
    assert decode_quantity(None) == 0  # JSON null leaves a zero quantity
    assert decode_quantity(1.5) == Fraction(3, 2)
    assert decode_quantity(0.1) == Fraction(1, 10)  # the JSON text, not the binary double
    assert decode_quantity(1e-7) == dec(1, -7)
    assert decode_quantity(1e16) == 10**16
    assert decode_quantity(Decimal("1.25")) == Fraction(5, 4)
    assert decode_quantity(10**30) == 10**30
    # Python's str.strip() would also strip \x1c, which Go's TrimSpace keeps.
    with pytest.raises(QuantityError):
        decode_quantity("\x1c1")


@pytest.mark.parametrize("raw", [True, False, [1], {"a": 1}, float("nan"), float("inf"), b"1", object()])
def test_decode_rejects_non_quantities(raw: object) -> None:
    with pytest.raises(QuantityError):
        decode_quantity(raw)


def test_parse_accepts_bare_numbers_but_not_bools() -> None:
    assert parse_quantity(2) == 2
    assert parse_quantity(0.5) == Fraction(1, 2)
    assert parse_quantity(-3) == -3
    with pytest.raises(QuantityError):
        parse_quantity(True)
    with pytest.raises(QuantityError):
        parse_quantity(float("-inf"))
    with pytest.raises(QuantityError):
        parse_quantity(None)  # type: ignore[arg-type]


def test_error_names_the_input() -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity("12xyz")
    assert "'12xyz'" in str(info.value)
    assert info.value.value == "12xyz"
    assert isinstance(info.value, ValueError)


def test_absurd_inputs_are_rejected_quickly() -> None:
    absurd = [
        "1" * (MAX_QUANTITY_LENGTH + 1),
        "1e999999999",
        "1e2147483647",
        "9" * 1000 + "e2147483647",
        "1.5e-2147483647",
        "1" + "0" * 70,
        "0." + "0" * 1000 + "1Ki",
    ]
    start = time.perf_counter()
    for text in absurd:
        with contextlib.suppress(QuantityError):
            parse_quantity(text)
    assert time.perf_counter() - start < 1.0
    for text in absurd[:4] + absurd[5:6]:
        with pytest.raises(QuantityError):
            parse_quantity(text)
    assert parse_quantity("1.5e-2147483647") == dec(1, -9)
    assert parse_quantity("0." + "0" * 1000 + "1Ki") == dec(1, -9)


def test_longest_allowed_input_parses() -> None:
    text = "0" * (MAX_QUANTITY_LENGTH - 1) + "1"
    assert parse_quantity(text) == 1


# ------------------------------------------------------------------ property tests

DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


@given(st.integers(min_value=0, max_value=10**15), st.sampled_from(sorted(DECIMAL_SUFFIXES)))
def test_canonical_decimal_forms_round_trip(mantissa: int, suffix: str) -> None:
    expected = Fraction(mantissa) * Fraction(10) ** DECIMAL_SUFFIXES[suffix]
    assert parse_quantity(f"{mantissa}{suffix}") == expected
    assert parse_quantity(f"-{mantissa}{suffix}") == -expected
    assert parse_quantity(f"{mantissa}e{DECIMAL_SUFFIXES[suffix]}") == expected


@given(st.integers(min_value=0, max_value=10**15), st.sampled_from(sorted(BINARY_SUFFIXES)))
def test_canonical_binary_forms_round_trip(mantissa: int, suffix: str) -> None:
    expected = min(mantissa << BINARY_SUFFIXES[suffix], INT64_MAX)
    assert parse_quantity(f"{mantissa}{suffix}") == expected
    assert parse_quantity(f"-{mantissa}{suffix}") == -expected


@given(
    st.integers(min_value=0, max_value=10**8),
    st.text(alphabet="0123456789", max_size=9),
    st.integers(min_value=-30, max_value=12),
    st.booleans(),
)
def test_decimal_numbers_match_exact_reference(integer: int, fraction: str, exponent: int, negative: bool) -> None:
    text = f"{'-' if negative else ''}{integer}.{fraction}e{exponent}"
    exact = Fraction(Decimal(text))
    # Reference rounding: magnitude up to a whole number of nano units.
    nanos = math.ceil(abs(exact) * 10**9)
    expected = Fraction(nanos, 10**9) * (-1 if exact < 0 else 1)
    assert parse_quantity(text) == expected


@given(st.fractions(min_value=-(10**12), max_value=10**12), st.fractions(min_value=-(10**12), max_value=10**12))
def test_milli_value_and_value_are_monotone(a: Fraction, b: Fraction) -> None:
    low, high = min(a, b), max(a, b)
    assert milli_value(low) <= milli_value(high)
    assert value(low) <= value(high)


@given(st.fractions(min_value=-(10**12), max_value=10**12))
def test_value_rounds_away_from_zero(q: Fraction) -> None:
    if q >= 0:
        assert value(q) == math.ceil(q)
        assert 0 <= value(q) - q < 1
        assert milli_value(q) == math.ceil(q * 1000)
    else:
        assert value(q) == math.floor(q)
        assert milli_value(q) == math.floor(q * 1000)
    assert value(-q) == -value(q)
    assert milli_value(q) == value(q * 1000)


@given(st.integers(min_value=0, max_value=10**12), st.sampled_from(sorted(DECIMAL_SUFFIXES) + sorted(BINARY_SUFFIXES)))
def test_milli_value_of_parsed_quantity_is_ceil(mantissa: int, suffix: str) -> None:
    quantity = parse_quantity(f"{mantissa}{suffix}")
    assert milli_value(quantity) == min(math.ceil(quantity * 1000), INT64_MAX)
    assert value(quantity) == min(math.ceil(quantity), INT64_MAX)
