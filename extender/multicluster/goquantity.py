"""Quantities as Karmada v1.18.2's estimator holds and subtracts them (apimachinery v0.35.3).

Go's ``resource.Quantity`` keeps either an ``int64Amount`` (``value x 10^scale``) or an arbitrary
precision ``inf.Dec`` (``unscaled x 10^-scale``), chosen by how the text was written: ``3584Mi`` is an
int64Amount, ``3.5Gi`` the same amount as a Dec rounded to nano units.  The general estimator subtracts
``allocated`` and ``allocating`` from ``allocatable`` with ``Quantity.Sub`` and reads the result with
``Value()``/``MilliValue()``; on a Dec whose unscaled nano count falls below the int64 range (a Dec
quantity more than about 9.2e9 units negative) ``Value()`` keeps only the low 64 bits, so an
over-committed resource can read as a large positive amount.  Karmada's answers depend on that, so the
representation and its arithmetic are reproduced here: ``ParseQuantity``'s choice of form,
``Quantity.Sub`` (int64 when both are int64 and nothing overflows, else Dec at the larger scale) and
``ScaledValue`` (ceil, with Go's int64 wrap-arounds).

Values are parsed only after :func:`extender.kube.quantity.decode_quantity` accepted them, so the
text is known to be well formed.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Final

__all__ = ["ZERO", "GoQuantity", "parse_go_quantity", "sub"]

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_NANO_SCALE: Final = 9
_MAX_INT64_FACTORS: Final = 18
_WHITESPACE: Final = " \t\n\v\f\r\x85\xa0"
_DECIMAL_SUFFIXES: Final = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


def _wrap(number: int) -> int:
    """Go int64 arithmetic wraps around."""
    return (number - _INT64_MIN) % 2**64 + _INT64_MIN


def _go_div(a: int, b: int) -> int:
    """Go integer division truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


@dataclass(frozen=True, slots=True)
class GoQuantity:
    """A ``resource.Quantity`` in Go's form: ``dec`` False is ``int64Amount{number, scale}`` (the amount is
    ``number x 10^scale``), True is an ``inf.Dec`` (``number x 10^-scale``)."""

    dec: bool
    number: int
    scale: int

    def value(self) -> int:
        """``Quantity.Value()``: whole units, rounded up."""
        return self.scaled_value(0)

    def milli_value(self) -> int:
        """``Quantity.MilliValue()``: thousandths, rounded up."""
        return self.scaled_value(-3)

    def scaled_value(self, scale: int) -> int:
        """``Quantity.ScaledValue(scale)``, int64 wrap-arounds included."""
        if not self.dec:
            if self.scale < scale:
                return _negative_scale(self.number, scale - self.scale)
            return _positive_scale(self.number, self.scale - scale)
        return _dec_scaled_value(self.number, self.scale, -scale)


ZERO: Final = GoQuantity(False, 0, 0)


def _negative_scale(base: int, scale: int) -> int:
    """``negativeScaleInt64``: divide by ``10^scale``, rounding away from zero."""
    value, fraction = base, False
    for _ in range(scale):
        if not fraction and _go_rem(value, 10) != 0:
            fraction = True
        value = _go_div(value, 10)
        if value == 0:
            if fraction:
                return 1 if base > 0 else -1
            return 0
    if fraction:
        value = value + 1 if base > 0 else value - 1
    return value


def _go_rem(a: int, b: int) -> int:
    return a - _go_div(a, b) * b


def _multiply_scale(a: int, b: int) -> int:
    """``int64MultiplyScale``: the (wrapped) product; the overflow flag is dropped by ``Value()``."""
    if a in (0, 1):
        return a * b
    if a == _INT64_MIN and b != 1:
        return 0
    return _wrap(a * b)


def _positive_scale(base: int, scale: int) -> int:
    """``positiveScaleInt64``: multiply by ``10^scale``; the general case returns 0 on overflow."""
    if scale == 0:
        return base
    if scale in (1, 2, 3, 6, 9):
        return _multiply_scale(base, 10**scale)
    value = base
    for _ in range(scale):
        if value not in (0, 1) and not _INT64_MIN < value * 10 <= _INT64_MAX:
            return 0
        value *= 10
    return value


def _dec_scaled_value(unscaled: int, scale: int, new_scale: int) -> int:
    """``scaledValue``: ``ceil(unscaled x 10^-scale x 10^new_scale)`` as Go computes it."""
    dif = scale - new_scale
    if dif == 0:
        return _wrap(unscaled)
    if dif < 0:
        factor = 10**-dif if -dif <= _MAX_INT64_FACTORS else _INT64_MIN  # int64(math.Pow10(n)) on amd64
        return _wrap(_wrap(unscaled) * factor)
    if unscaled < _INT64_MAX and dif < 19:
        divide = 10**dif
        low = _wrap(unscaled)  # big.Int.Int64() keeps the low 64 bits
        result = _go_div(low, divide)
        return _wrap(result + 1) if low - result * divide != 0 else result
    # big.Int.DivMod is Euclidean: the remainder is never negative.
    quotient, remainder = divmod(unscaled, 10**dif)
    return _wrap(_wrap(quotient) + 1) if remainder != 0 else _wrap(quotient)


def _split(text: str) -> tuple[bool, str, str, str, str]:
    """``parseQuantityString``: sign, the number as written, integer digits, fraction digits, suffix."""
    positive, pos, end = True, 0, len(text)
    if text[:1] in ("-", "+"):
        positive = text[0] != "-"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos].isdigit() and text[pos].isascii():
            pos += 1
        denom = text[start:pos]
    return positive, text[:pos], num, denom, text[pos:]


def _suffix(suffix: str) -> tuple[int, int, bool]:
    """``quantitySuffixer.interpret``: base, exponent, and whether the format is BinarySI."""
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], True
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], False
    return 10, int(suffix[1:]), False  # e<n> / E<n>: decode_quantity accepted it


def _text(raw: object) -> str:
    if isinstance(raw, str):
        return raw.strip(_WHITESPACE)
    if isinstance(raw, float):
        return repr(raw)
    if isinstance(raw, Decimal):
        return str(raw)
    return str(raw)


def parse_go_quantity(raw: object) -> GoQuantity:
    """``Quantity.UnmarshalJSON``: the form ``ParseQuantity`` gives ``raw`` (JSON null is zero)."""
    if raw is None:
        return ZERO
    text = _text(raw)
    if text == "0":
        return ZERO
    positive, value, num, denom, suffix = _split(text)
    base, exponent, binary = _suffix(suffix)
    mantissa, scale = 1, 0
    if not binary:
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    elif exponent >= 0 and not denom:
        mantissa = 1 << exponent
        precision = 15 - len(num) - exponent * 3 // 10 - 1  # exponents are multiples of 10: exact
    else:
        precision = -1
    if precision >= 0:
        scale -= len(denom)
        if scale >= -_NANO_SCALE:
            digits = int(num + denom)  # decode_quantity already rejected what ParseInt would
            product = digits * mantissa
            if digits in (0, 1) or mantissa in (0, 1) or _INT64_MIN < product <= _INT64_MAX:
                return GoQuantity(False, product if positive else -product, scale)
    # inf.Dec: the digits as written, the suffix applied exactly, rounded up to nano units.
    whole, _, fraction = value.lstrip("+-").partition(".")
    unscaled = int((whole or "0") + fraction)
    dec_scale = len(fraction)
    if base == 10:
        dec_scale -= exponent
    else:
        unscaled <<= exponent
    if unscaled != 0:
        if dec_scale <= _NANO_SCALE:
            unscaled *= 10 ** (_NANO_SCALE - dec_scale)
        else:
            unscaled = -(-unscaled // 10 ** (dec_scale - _NANO_SCALE))
        dec_scale = _NANO_SCALE
    if binary and Fraction(unscaled, 10**dec_scale if dec_scale >= 0 else 1) * (
            10**-dec_scale if dec_scale < 0 else 1) > _INT64_MAX:
        unscaled, dec_scale = _INT64_MAX, 0  # BinarySI amounts are capped at maxAllowed
    return GoQuantity(True, unscaled if positive else -unscaled, dec_scale)


def _as_dec(q: GoQuantity) -> tuple[int, int]:
    """``int64Amount.AsDec``: ``value x 10^scale`` as unscaled and inf scale."""
    return (q.number, q.scale) if q.dec else (q.number, -q.scale)


def _int64_add(a: int, b: int) -> int | None:
    """``int64Add``: the sum, or ``None`` on overflow."""
    total = a + b
    return total if _INT64_MIN <= total <= _INT64_MAX else None


def _amount_add(a: GoQuantity, b: GoQuantity) -> GoQuantity | None:
    """``int64Amount.Add``; ``None`` when it overflows (Go then falls back to inf.Dec)."""
    if b.number == 0:
        return a
    if a.number == 0:
        return b
    if a.scale == b.scale:
        total = _int64_add(a.number, b.number)
        return None if total is None else GoQuantity(False, total, a.scale)
    high, low = (a, b) if a.scale > b.scale else (b, a)
    scaled = high.number * 10 ** (high.scale - low.scale)
    if not _INT64_MIN < scaled <= _INT64_MAX:
        return None
    total = _int64_add(scaled, low.number)
    return None if total is None else GoQuantity(False, total, low.scale)


def sub(a: GoQuantity, b: GoQuantity) -> GoQuantity:
    """``a.Sub(b)`` as Go computes it."""
    if not a.dec and not b.dec:
        result = _amount_add(a, GoQuantity(False, _wrap(-b.number), b.scale))
        if result is not None:
            return result
    (x, xs), (y, ys) = _as_dec(a), _as_dec(b)
    scale = max(xs, ys)
    return GoQuantity(True, x * 10 ** (scale - xs) - y * 10 ** (scale - ys), scale)
