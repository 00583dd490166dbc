"""Node taints and pod tolerations.

Upstream:

* ``k8s.io/api/core/v1/toleration.go``: ``Toleration.ToleratesTaint``;
* ``k8s.io/component-helpers/scheduling/corev1/helpers.go``:
  ``TolerationsTolerateTaint`` and ``FindMatchingUntoleratedTaint``.

Matching rules: an empty toleration effect matches every effect; an empty toleration key
matches every key; operator ``Exists`` matches every value; operator ``Equal`` (also what
an empty operator means) compares values exactly, so an empty key with ``Equal`` matches
any taint whose value equals the toleration's.

The numeric operators ``Lt`` and ``Gt`` (feature gate TaintTolerationComparisonOperators,
alpha since v1.35 and off by default in v1.36) are accepted when
parsing and compared only with ``enable_comparison_operators=True``: then both values
must be canonical decimal int64s (no sign ``+``, no leading zeros) and ``Lt`` tolerates a
taint whose value is lower than the toleration's, ``Gt`` one whose value is higher.  With
the gate off, as in kube-scheduler's defaults, such a toleration tolerates nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "EFFECT_NO_EXECUTE",
    "EFFECT_NO_SCHEDULE",
    "EFFECT_PREFER_NO_SCHEDULE",
    "TAINT_EFFECTS",
    "TOLERATION_OPERATORS",
    "Taint",
    "TaintError",
    "Toleration",
    "find_untolerated_taint",
    "parse_taints",
    "parse_tolerations",
    "tolerates",
    "tolerations_tolerate_taint",
]

EFFECT_NO_SCHEDULE: Final = "NoSchedule"
EFFECT_PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
EFFECT_NO_EXECUTE: Final = "NoExecute"
#: Every valid taint effect.
TAINT_EFFECTS: Final = frozenset({EFFECT_NO_SCHEDULE, EFFECT_PREFER_NO_SCHEDULE, EFFECT_NO_EXECUTE})

OP_EQUAL: Final = "Equal"
OP_EXISTS: Final = "Exists"
OP_LT: Final = "Lt"
OP_GT: Final = "Gt"
#: Every toleration operator the API accepts (an empty operator is normalised to Equal).
TOLERATION_OPERATORS: Final = frozenset({OP_EQUAL, OP_EXISTS, OP_LT, OP_GT})

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


class TaintError(ValueError):
    """A malformed taint or toleration; the message names the field."""


def _field_str(raw: Mapping[str, Any], name: str, path: str) -> str:
    """Return ``raw[name]`` as a string ("" when absent or null), or raise naming the field."""
    item = raw.get(name)
    if item is None:
        return ""
    if not isinstance(item, str):
        raise TaintError(f"{path}.{name}: expected a string, got {type(item).__name__}")
    return item


@dataclass(frozen=True, slots=True)
class Taint:
    """A node taint: ``key=value:effect``."""

    key: str
    value: str
    effect: str

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], *, path: str = "taint") -> Taint:
        """Build a taint from its API dict; the key must be non-empty and the effect valid."""
        if not isinstance(raw, Mapping):
            raise TaintError(f"{path}: expected an object, got {type(raw).__name__}")
        key = _field_str(raw, "key", path)
        if not key:
            raise TaintError(f"{path}.key: required value")
        effect = _field_str(raw, "effect", path)
        if effect not in TAINT_EFFECTS:
            raise TaintError(f"{path}.effect: unsupported value {effect!r}, expected one of {sorted(TAINT_EFFECTS)}")
        return cls(key=key, value=_field_str(raw, "value", path), effect=effect)

    def __str__(self) -> str:
        """Render as kubectl does: ``key=value:effect`` (``key:effect`` without a value)."""
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True, slots=True)
class Toleration:
    """A pod toleration; ``operator`` is already normalised (empty means ``Equal``)."""

    key: str = ""
    operator: str = OP_EQUAL
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], *, path: str = "toleration") -> Toleration:
        """Build a toleration from its API dict; unknown operators and effects raise :class:`TaintError`."""
        if not isinstance(raw, Mapping):
            raise TaintError(f"{path}: expected an object, got {type(raw).__name__}")
        operator = _field_str(raw, "operator", path) or OP_EQUAL
        if operator not in TOLERATION_OPERATORS:
            expected = sorted(TOLERATION_OPERATORS)
            raise TaintError(f"{path}.operator: unsupported value {operator!r}, expected one of {expected}")
        effect = _field_str(raw, "effect", path)
        if effect and effect not in TAINT_EFFECTS:
            raise TaintError(f"{path}.effect: unsupported value {effect!r}, expected one of {sorted(TAINT_EFFECTS)}")
        seconds = raw.get("tolerationSeconds")
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int)):
            raise TaintError(f"{path}.tolerationSeconds: expected an integer, got {type(seconds).__name__}")
        return cls(
            key=_field_str(raw, "key", path),
            operator=operator,
            value=_field_str(raw, "value", path),
            effect=effect,
            toleration_seconds=seconds,
        )


def parse_taints(raw: object, *, path: str = "spec.taints") -> tuple[Taint, ...]:
    """Parse a node's ``spec.taints`` list (``None`` gives no taints)."""
    return tuple(Taint.from_dict(item, path=f"{path}[{index}]") for index, item in enumerate(_list(raw, path)))


def parse_tolerations(raw: object, *, path: str = "spec.tolerations") -> tuple[Toleration, ...]:
    """Parse a pod's ``spec.tolerations`` list (``None`` gives no tolerations)."""
    return tuple(Toleration.from_dict(item, path=f"{path}[{index}]") for index, item in enumerate(_list(raw, path)))


def _list(raw: object, path: str) -> Sequence[Any]:
    """Return ``raw`` as a list (empty for null), or raise naming ``path``."""
    if raw is None:
        return ()
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
        raise TaintError(f"{path}: expected a list, got {type(raw).__name__}")
    return raw


def _canonical_int64(text: str) -> int | None:
    """Parse a canonical decimal int64 (upstream ``IsDecimalInteger`` then ``ParseInt``)."""
    digits = text[1:] if text.startswith("-") else text
    if not digits or len(digits) > 19 or not digits.isascii() or not digits.isdigit():
        return None
    if digits[0] == "0" and (len(digits) > 1 or text.startswith("-")):
        return None  # leading zeros and "-0" are not canonical
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def tolerates(toleration: Toleration, taint: Taint, *, enable_comparison_operators: bool = False) -> bool:
    """Return whether ``toleration`` tolerates ``taint`` (upstream ``Toleration.ToleratesTaint``)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    operator = toleration.operator
    if operator == OP_EQUAL:
        return toleration.value == taint.value
    if operator == OP_EXISTS:
        return True
    if operator in (OP_LT, OP_GT):
        if not enable_comparison_operators:
            return False
        threshold = _canonical_int64(toleration.value)
        actual = _canonical_int64(taint.value)
        if threshold is None or actual is None:
            return False
        return actual < threshold if operator == OP_LT else actual > threshold
    return False


def tolerations_tolerate_taint(
    tolerations: Iterable[Toleration], taint: Taint, *, enable_comparison_operators: bool = False
) -> bool:
    """Return whether any of ``tolerations`` tolerates ``taint``."""
    return any(
        tolerates(toleration, taint, enable_comparison_operators=enable_comparison_operators)
        for toleration in tolerations
    )


def find_untolerated_taint(
    taints: Sequence[Taint],
    tolerations: Sequence[Toleration],
    effects: frozenset[str],
    *,
    enable_comparison_operators: bool = False,
) -> Taint | None:
    """Return the first taint whose effect is in ``effects`` and that no toleration tolerates.

    Upstream ``FindMatchingUntoleratedTaint`` with an effect filter; kube-scheduler's
    TaintToleration filter passes ``{NoSchedule, NoExecute}``.  ``None`` means every such
    taint is tolerated.
    """
    for taint in taints:
        if taint.effect not in effects:
            continue
        if not tolerations_tolerate_taint(tolerations, taint, enable_comparison_operators=enable_comparison_operators):
            return taint
    return None
