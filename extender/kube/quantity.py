"""Kubernetes resource quantities, parsed exactly as ``resource.Quantity`` does.

Upstream: ``k8s.io/apimachinery/pkg/api/resource`` (``quantity.go``, ``suffix.go``,
``amount.go``, ``scale_int.go``).  A quantity is ``<signedNumber><suffix>`` where the
number may be ``1``, ``1.5``, ``1.`` or ``.5`` and the suffix is a binary SI suffix
(``Ki`` .. ``Ei``), a decimal SI suffix (``n u m "" k M G T P E``) or a decimal
exponent (``e3``, ``E-2``, ``e+6``).

Values are returned as :class:`fractions.Fraction`, so sums of requests stay exact and
are only converted to integers (:func:`milli_value`, :func:`value`) where kube-scheduler
converts them.

Upstream behaviour kept on purpose, however odd:

* the scanner accepts a sign with no digits and a bare dot: ``"-"``, ``"+"``, ``"."``,
  ``"-."`` and even ``"k"`` or ``"e3"`` all parse as zero (upstream's own
  ``TestParseQuantityString`` lists ``"."`` and ``"-."`` as valid);
* ``"1E"`` is 10**18 (exa) while ``"1e"`` is an error; suffixes are case sensitive
  (``"1ki"``, ``"1K"`` are errors);
* every non-zero value is rounded *up* (away from zero) to a whole number of nano units;
* values with a binary suffix are capped at 2**63-1 in magnitude; decimal ones are not;
* a decimal number of at most 19 digits, with at most 9 of them after the point (the
  int64 fast path), whose digits do not fit an int64 (``"9223372036854775808"``,
  ``"922337203685477580.8"``) is rejected with "unable to parse numeric part": upstream's
  fast path gives up instead of falling back to its big-decimal path.  With 20 digits or
  more (``"9223372036854775808.0"``) the same value parses fine.

Deliberate limits (upstream has none; these keep a hostile dump from exhausting memory):
inputs longer than :data:`MAX_QUANTITY_LENGTH` characters, decimal exponents outside the
int32 range (newer upstream rejects them too; older releases silently wrapped them), and
magnitudes of ``10**MAX_DECIMAL_DIGITS`` or more are rejected with :class:`QuantityError`.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Final

__all__ = [
    "MAX_DECIMAL_DIGITS",
    "MAX_QUANTITY_LENGTH",
    "QuantityError",
    "decode_quantity",
    "milli_value",
    "parse_quantity",
    "value",
]

#: Longest quantity string accepted (characters).  Real quantities are a few characters.
MAX_QUANTITY_LENGTH: Final = 1024
#: Largest accepted decimal magnitude is just below ``10**MAX_DECIMAL_DIGITS``.
MAX_DECIMAL_DIGITS: Final = 64

_NANO: Final = 10**9
_INT64_MAX: Final = 2**63 - 1
_INT64_MIN: Final = -(2**63)
_INT32_MAX: Final = 2**31 - 1
# upstream maxInt64Factors: the int64 fast path is tried for numbers of at most 19 digits.
_FAST_PATH_DIGITS: Final = 19

_DECIMAL_SUFFIXES: Final[dict[str, int]] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: Final[dict[str, int]] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DIGITS: Final = frozenset("0123456789")
# Characters upstream's scanner lets into the alphabetic part of a suffix.
_SUFFIX_CHARS: Final = frozenset("eEinumkKMGTP")
# Go's strings.TrimSpace trims the Unicode White_Space set, which differs from str.strip().
_GO_WHITESPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

_ERR_FORMAT: Final = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_ERR_NUMERIC: Final = "unable to parse numeric part of quantity"
_ERR_SUFFIX: Final = "unable to parse quantity's suffix"


class QuantityError(ValueError):
    """A string or number that is not a valid Kubernetes quantity; the message names the input."""

    def __init__(self, value: object, reason: str) -> None:
        super().__init__(f"invalid quantity {value!r}: {reason}")
        self.value = value
        self.reason = reason


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse a quantity exactly as upstream ``resource.ParseQuantity`` does.

    Strings are parsed strictly (no surrounding whitespace, as upstream).  Bare ``int`` and
    ``float`` values are accepted the way a JSON number is (see :func:`decode_quantity`).
    Raises :class:`QuantityError` for anything upstream rejects, and for the oversized
    inputs described in the module docstring.
    """
    if isinstance(value, str):
        return _parse_string(value)
    return _parse_number(value)


def decode_quantity(value: object) -> Fraction:
    """Decode a quantity found in a JSON/YAML object, as upstream ``Quantity.UnmarshalJSON`` does.

    That is :func:`parse_quantity` plus what the JSON decoder adds: ``None`` (JSON ``null``)
    is zero, and strings are trimmed of surrounding whitespace first.  Objects read from a
    dump or an apiserver should go through this function.
    """
    if value is None:
        return Fraction(0)
    if isinstance(value, str):
        return _parse_string(value.strip(_GO_WHITESPACE))
    if isinstance(value, Decimal):
        # A JSON loader configured with parse_float=Decimal keeps the exact digits.
        return _parse_string(str(value))
    if isinstance(value, (int, float)):
        return _parse_number(value)
    raise QuantityError(value, f"expected a string or a number, got {type(value).__name__}")


def _parse_number(value: object) -> Fraction:
    """Parse a bare JSON number through its decimal text, as Go sees the raw JSON bytes."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise QuantityError(value, f"expected a string or a number, got {type(value).__name__}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(value, _ERR_FORMAT)
        # repr() is the shortest text that round-trips, i.e. what the JSON document most
        # likely said; Fraction(value) would instead give the binary approximation.
        return _parse_string(repr(value))
    return _parse_string(str(value))


@lru_cache(maxsize=8192)
def _parse_string(text: str) -> Fraction:
    """Parse one quantity string; cached because the same few strings recur in every pod."""
    if not text:
        raise QuantityError(text, _ERR_FORMAT)
    if len(text) > MAX_QUANTITY_LENGTH:
        raise QuantityError(text[:32] + "...", f"longer than {MAX_QUANTITY_LENGTH} characters")
    negative, num, denom, suffix = _scan(text)
    base, exponent = _interpret_suffix(text, suffix)
    mantissa = int(num + denom)
    if base == 10:
        scale = exponent - len(denom)
        if len(num) + len(denom) <= _FAST_PATH_DIGITS and scale >= -9 and mantissa > _INT64_MAX:
            # Upstream's int64 fast path fails ParseInt here and reports an error rather
            # than retrying with its arbitrary-precision path.
            raise QuantityError(text, _ERR_NUMERIC)
        nanos = _decimal_to_nanos(text, mantissa, scale)
    else:
        nanos = _binary_to_nanos(mantissa, exponent, len(denom))
    if negative:
        nanos = -nanos
    return Fraction(nanos, _NANO)


def _scan(text: str) -> tuple[bool, str, str, str]:
    """Split ``text`` into sign, integer digits, fraction digits and suffix like upstream's scanner.

    Leading zeros of the integer part are dropped (an all-zero integer part becomes "").
    """
    end = len(text)
    pos = 0
    negative = False
    if text[0] in "+-":
        negative = text[0] == "-"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos == end:
        return negative, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    # Upstream substitutes "0" for an empty integer part; its length feeds the fast-path test.
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos != end:
        raise QuantityError(text, _ERR_FORMAT)
    return negative, num, denom, text[suffix_start:]


def _interpret_suffix(text: str, suffix: str) -> tuple[int, int]:
    """Return ``(base, exponent)`` for a suffix, as upstream's suffixer interprets it."""
    decimal = _DECIMAL_SUFFIXES.get(suffix)
    if decimal is not None:
        return 10, decimal
    binary = _BINARY_SUFFIXES.get(suffix)
    if binary is not None:
        return 2, binary
    if len(suffix) > 1 and suffix[0] in "eE":
        exponent = _parse_go_int64(suffix[1:])
        if exponent is None:
            raise QuantityError(text, _ERR_SUFFIX)
        if not -_INT32_MAX <= exponent <= _INT32_MAX:
            raise QuantityError(text, f"{_ERR_SUFFIX}: exponent out of range")
        return 10, exponent
    raise QuantityError(text, _ERR_SUFFIX)


def _parse_go_int64(text: str) -> int | None:
    """Parse like Go's ``strconv.ParseInt(text, 10, 64)``; ``None`` where Go returns an error."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or any(ch not in _DIGITS for ch in digits):
        return None
    if len(digits) > 25:  # far beyond int64 either way; avoid converting huge strings
        return None
    number = int(text)
    if not _INT64_MIN <= number <= _INT64_MAX:
        return None
    return number


def _decimal_to_nanos(text: str, mantissa: int, scale: int) -> int:
    """Return ``ceil(mantissa * 10**scale * 1e9)`` without ever building a huge power of ten."""
    if mantissa == 0:
        return 0
    digits = len(str(mantissa))
    if digits + scale > MAX_DECIMAL_DIGITS:
        raise QuantityError(text, f"magnitude of 10**{MAX_DECIMAL_DIGITS} or more is not supported")
    shift = scale + 9
    if shift >= 0:
        factor: int = 10**shift
        return mantissa * factor
    drop = -shift
    if drop > digits:
        # Any non-zero value below one nano unit rounds up to exactly one.
        return 1
    divisor: int = 10**drop
    return -(-mantissa // divisor)


def _binary_to_nanos(mantissa: int, exponent: int, fraction_digits: int) -> int:
    """Return ``mantissa / 10**fraction_digits * 2**exponent`` in nano units, rounded up and capped."""
    if mantissa == 0:
        return 0
    scaled = mantissa << exponent
    nanos: int
    if fraction_digits <= 9:
        factor: int = 10 ** (9 - fraction_digits)
        nanos = scaled * factor
    else:
        divisor: int = 10 ** (fraction_digits - 9)
        nanos = -(-scaled // divisor)
    # Upstream caps binary-suffixed values at the int64 maximum instead of rejecting them.
    return min(nanos, _INT64_MAX * _NANO)


def _scaled_away_from_zero(quantity: Fraction | int, factor: int) -> int:
    """Return ``quantity * factor`` rounded away from zero and saturated to the int64 range."""
    numerator = quantity.numerator * factor
    denominator = quantity.denominator
    magnitude = -(-abs(numerator) // denominator)
    result = magnitude if numerator >= 0 else -magnitude
    # Newer upstream saturates on overflow rather than wrapping; the scheduler's sums are int64.
    return max(_INT64_MIN, min(_INT64_MAX, result))


def milli_value(quantity: Fraction | int) -> int:
    """Return upstream ``Quantity.MilliValue()``: ``quantity * 1000`` rounded away from zero.

    Positive values round up (``0.1m`` CPU gives 1); negative values round down (``-0.1m``
    gives -1).  The result saturates at the int64 limits.
    """
    return _scaled_away_from_zero(quantity, 1000)


def value(quantity: Fraction | int) -> int:
    """Return upstream ``Quantity.Value()``: the quantity rounded away from zero to an integer.

    ``1500m`` gives 2 and ``-1500m`` gives -2.  The result saturates at the int64 limits.
    """
    return _scaled_away_from_zero(quantity, 1)


#: ``resource.Format`` values.
BINARY_SI: Final = "BinarySI"
DECIMAL_SI: Final = "DecimalSI"
DECIMAL_EXPONENT: Final = "DecimalExponent"

_DECIMAL_SUFFIX_BY_EXPONENT: Final = {exponent: suffix for suffix, exponent in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIX_BY_EXPONENT: Final = {exponent: suffix for suffix, exponent in _BINARY_SUFFIXES.items()}


def quantity_format(text: str) -> str:
    """The ``resource.Format`` upstream's parser gives a quantity written as ``text`` (a valid quantity):
    BinarySI for a binary suffix, DecimalExponent for an ``e``/``E`` exponent, DecimalSI otherwise."""
    if not text:
        return DECIMAL_SI
    _, _, _, suffix = _scan(text)
    if suffix in _BINARY_SUFFIXES:
        return BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        return DECIMAL_EXPONENT
    return DECIMAL_SI


def canonical_string(quantity: Fraction | int, fmt: str) -> str:
    """``Quantity.String()`` of a quantity with this value and format, as ``resource.NewQuantity`` (whole numbers)
    or ``resource.NewMilliQuantity`` build it (quantity.go CanonicalizeBytes; values with a finite decimal
    expansion).

    BinarySI prints in powers of 1024 unless the value is within (-1024, 1024) or not whole, which print as
    DecimalSI; DecimalSI and DecimalExponent print the digits without trailing zeros and an exponent that is a
    multiple of three, as a suffix (``k``, ``M``, ``m``...) or as ``e<n>``.
    """
    quantity = Fraction(quantity)
    if quantity == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < quantity < 1024 or quantity.denominator != 1:
            fmt = DECIMAL_SI
        else:
            number, exponent = int(quantity), 0
            while number % 1024 == 0 and exponent < 60:
                number //= 1024
                exponent += 10
            return f"{number}{_BINARY_SUFFIX_BY_EXPONENT.get(exponent, '')}"
    exponent = 0
    while quantity.denominator != 1:
        quantity *= 10
        exponent -= 1
    number = int(quantity)
    while number % 10 == 0:
        number //= 10
        exponent += 1
    # Go's exponent % 3 keeps the sign: 1 and -2 take one digit back, 2 and -1 two.
    if exponent % 3 == 1:
        number, exponent = number * 10, exponent - 1
    elif exponent % 3 == 2:
        number, exponent = number * 100, exponent - 2
    if fmt == DECIMAL_EXPONENT:
        return f"{number}e{exponent}" if exponent else str(number)
    suffix = _DECIMAL_SUFFIX_BY_EXPONENT.get(exponent)
    return f"{number}{suffix}" if suffix is not None else f"{number}e{exponent}"
