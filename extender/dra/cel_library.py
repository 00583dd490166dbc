"""Kubernetes' CEL libraries that cel-expr-python lacks, and the ``device`` variable of DRA selectors.

Upstream registers its libraries in ``k8s.io/apiserver/pkg/cel/environment/base.go``; a DRA selector
sees all of them. Added here (the C++ runtime already has the CEL standard library, ``ext.Strings`` v2,
``cel.bind`` and optional types):

* quantity (``library.Quantity``): ``quantity(s)``, ``isQuantity(s)``, ``q.sign()``,
  ``q.isInteger()``, ``q.asInteger()``, ``q.asApproximateFloat()``, ``q.add(q|int)``,
  ``q.sub(q|int)``, ``q.compareTo(q)``, ``q.isGreaterThan(q)``, ``q.isLessThan(q)``; quantities
  compare equal by value;
* semver (``library.SemverLib`` v1): ``semver(s)``, ``semver(s, normalize)``, ``isSemver(s)``,
  ``isSemver(s, normalize)``, ``v.major()``, ``v.minor()``, ``v.patch()``, ``v.compareTo(v)``,
  ``v.isGreaterThan(v)``, ``v.isLessThan(v)``;
* regex (``library.Regex``): ``s.find(re)``, ``s.findAll(re)``, ``s.findAll(re, n)``;
* lists (``library.Lists``): ``l.isSorted()``, ``l.sum()``, ``l.min()``, ``l.max()`` (the list
  ``indexOf``/``lastIndexOf`` clash with the strings extension's declarations in the C++ runtime); and of ``ext.Lists`` v3: ``l.slice(i, j)``,
  ``l.flatten()``, ``l.distinct()``, ``l.sort()``, ``lists.range(n)``
  (``first``/``last`` are missing: optionals cannot be built from Python);
* sets (``ext.Sets``): ``sets.contains(a, b)``, ``sets.equivalent(a, b)``, ``sets.intersects(a, b)``.

Quantity and semver values are carried as small protobuf messages (``kubernetes.Quantity``,
``kubernetes.Semver``) holding a canonical text, so the runtime's ``==`` compares them by value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache, lru_cache
from typing import Any, Final

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from extender.dra.records import DeviceRecord
from extender.kube.quantity import QuantityError, parse_quantity

__all__ = ["device_variable", "environment", "parse_semver"]


# ---------------------------------------------------------------------------------------------------------------
# Opaque values


def _message_types() -> tuple[Any, Any, Any]:
    file = descriptor_pb2.FileDescriptorProto(name="extender_dra_cel.proto", package="kubernetes", syntax="proto3")
    for name in ("Quantity", "Semver", "Unreachable"):
        message = file.message_type.add(name=name)
        message.field.add(
            name="canonical",
            number=1,
            type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
            label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    quantity = message_factory.GetMessageClass(pool.FindMessageTypeByName("kubernetes.Quantity"))
    semver = message_factory.GetMessageClass(pool.FindMessageTypeByName("kubernetes.Semver"))
    return pool, quantity, semver


_POOL, _QuantityMessage, _SemverMessage = _message_types()
QUANTITY: Final = cel.Type("kubernetes.Quantity")
SEMVER: Final = cel.Type("kubernetes.Semver")
_DYN: Final = cel.Type.DYN
_LIST_DYN: Final = cel.Type.List(cel.Type.DYN)


class CelError(Exception):
    """A runtime error raised by a library function; the text is cel-go's."""


def _fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def quantity_message(value: Fraction) -> Any:
    """A CEL quantity value."""
    return _QuantityMessage(canonical=_fraction_text(value))


@lru_cache(maxsize=4096)
def _quantity_value(canonical: str) -> Fraction:
    return Fraction(canonical)


def _q(message: Any) -> Fraction:
    return _quantity_value(message.canonical)


# ---------------------------------------------------------------------------------------------------------------
# Semantic versions (blang/semver v4, as upstream parses them)

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")


class SemverError(ValueError):
    """A string that is not a semantic version; the message is blang/semver's."""


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _only(text: str, allowed: frozenset[str]) -> bool:
    return all(ch in allowed for ch in text)


def _number(text: str, label: str) -> int:
    if not _only(text, _NUMBERS):
        raise SemverError(f"Invalid character(s) found in {label.lower()} number {_go_quote(text)}")
    if len(text) > 1 and text[0] == "0":
        raise SemverError(f"{label} number must not contain leading zeroes {_go_quote(text)}")
    if not text or int(text) >= 2**64:
        raise SemverError(f"strconv.ParseUint: parsing {_go_quote(text)}: invalid syntax")
    return int(text)


@lru_cache(maxsize=4096)
def parse_semver(text: str) -> tuple[int, int, int, tuple[int | str, ...]]:
    """blang/semver v4 ``Parse``: ``(major, minor, patch, prerelease parts)``; build metadata is checked, not kept."""
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "Major")
    minor = _number(parts[1], "Minor")
    patch_text = parts[2]
    build: list[str] = []
    if "+" in patch_text:
        patch_text, build_text = patch_text.split("+", 1)
        build = build_text.split(".")
    prerelease: list[str] = []
    if "-" in patch_text:
        patch_text, pre_text = patch_text.split("-", 1)
        prerelease = pre_text.split(".")
    patch = _number(patch_text, "Patch")
    pre: list[int | str] = []
    for item in prerelease:
        if not item:
            raise SemverError("Prerelease is empty")
        if _only(item, _NUMBERS):
            if len(item) > 1 and item[0] == "0":
                raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {_go_quote(item)}")
            pre.append(int(item))
        elif _only(item, _ALPHANUM):
            pre.append(item)
        else:
            raise SemverError(f"Invalid character(s) found in prerelease {_go_quote(item)}")
    for item in build:
        if not item:
            raise SemverError("Build meta data is empty")
        if not _only(item, _ALPHANUM):
            raise SemverError(f"Invalid character(s) found in build meta data {_go_quote(item)}")
    return major, minor, patch, tuple(pre)


def _normalize_semver(text: str) -> str:
    """The semver library's ``normalize``: drop a leading ``v``, strip leading zeroes, fill minor and patch."""
    parts = text.removeprefix("v").split(".", 2)
    for index, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in _NUMBERS:
                part = "0" + part
            parts[index] = part
    if len(parts) < 3:
        if any(ch in parts[-1] for ch in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts.extend("0" * (3 - len(parts)))
    return ".".join(parts)


def semver_message(text: str) -> Any:
    """A CEL semver value (raises :class:`SemverError`); build metadata is dropped: it never affects order or equality."""
    major, minor, patch, pre = parse_semver(text)
    canonical = f"{major}.{minor}.{patch}" + ("-" + ".".join(str(p) for p in pre) if pre else "")
    return _SemverMessage(canonical=canonical)


def _semver_key(text: str) -> tuple[Any, ...]:
    major, minor, patch, pre = parse_semver(text)
    # A version without prerelease sorts after its prereleases; numeric identifiers sort below alphanumeric ones.
    pre_key = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in pre)
    return (major, minor, patch, 1 if not pre else 0, pre_key)


def _compare_semver(a: Any, b: Any) -> int:
    ka, kb = _semver_key(a.canonical), _semver_key(b.canonical)
    return (ka > kb) - (ka < kb)


# ---------------------------------------------------------------------------------------------------------------
# Library functions


def _quantity(text: str) -> Any:
    try:
        return quantity_message(parse_quantity(text))
    except QuantityError as err:
        raise CelError(err.reason) from None


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True


def _as_integer(q: Any) -> int:
    value = _q(q)
    if value.denominator != 1 or not -(2**63) <= value <= 2**63 - 1:
        raise CelError("cannot convert value to integer")
    return int(value)


def _semver(text: str, normalize: bool = False) -> Any:
    try:
        return semver_message(_normalize_semver(text) if normalize else text)
    except SemverError as err:
        raise CelError(str(err)) from None


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        parse_semver(_normalize_semver(text) if normalize else text)
    except SemverError:
        return False
    return True


def _compare(a: Any, b: Any) -> int:
    if isinstance(a, _QuantityMessage) and isinstance(b, _QuantityMessage):
        return (_q(a) > _q(b)) - (_q(a) < _q(b))
    if isinstance(a, _SemverMessage) and isinstance(b, _SemverMessage):
        return _compare_semver(a, b)
    raise CelError("no such overload")


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise CelError(f"error parsing regexp: {err}") from None


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    matches = [m.group(0) for m in _regex(pattern).finditer(text)]
    return matches if limit < 0 else matches[:limit]


def _comparable(items: Sequence[Any]) -> list[Any]:
    return [_q(i) if isinstance(i, _QuantityMessage) else i for i in items]


def _is_sorted(items: Sequence[Any]) -> bool:
    values = _comparable(items)
    return all(values[i] <= values[i + 1] for i in range(len(values) - 1))


def _sum(items: Sequence[Any]) -> Any:
    if not items:
        return 0
    if isinstance(items[0], _QuantityMessage):
        return quantity_message(sum((_q(i) for i in items), Fraction(0)))
    total = items[0]
    for item in items[1:]:
        total = total + item
    return total


def _extreme(items: Sequence[Any], pick: Callable[..., Any]) -> Any:
    if not items:
        raise CelError("min called on empty list" if pick is min else "max called on empty list")
    values = _comparable(items)
    best = pick(range(len(values)), key=lambda i: values[i])
    return items[best]


def _flatten(items: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, list):
            out.extend(item)
        else:
            out.append(item)
    return out


def _distinct(items: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def _slice(items: Sequence[Any], start: int, end: int) -> list[Any]:
    if start < 0 or end < 0:
        raise CelError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise CelError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if end > len(items):
        raise CelError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return list(items[start:end])


def _overload(name: str, result: Any, params: Sequence[Any], impl: Callable[..., Any], *, member: bool) -> Any:
    def guarded(*args: Any) -> Any:
        try:
            return impl(*args)
        except CelError:
            raise
        except (ValueError, TypeError, ArithmeticError) as err:
            raise CelError(str(err)) from None

    return cel.Overload(name, return_type=result, parameters=list(params), is_member=member, impl=guarded)


def _functions() -> list[Any]:
    Q, S, B, I, D, STR = QUANTITY, SEMVER, cel.Type.BOOL, cel.Type.INT, cel.Type.DOUBLE, cel.Type.STRING
    L = _LIST_DYN
    fn: dict[str, list[Any]] = {}

    def add(name: str, overload_id: str, result: Any, params: Sequence[Any], impl: Callable[..., Any],
            *, member: bool = False) -> None:
        fn.setdefault(name, []).append(_overload(overload_id, result, params, impl, member=member))

    add("quantity", "string_to_quantity", Q, [STR], _quantity)
    add("isQuantity", "is_quantity_string", B, [STR], _is_quantity)
    # Quantity's sign() is newer than the library version the scheduler's environment has; upstream
    # declares the name only for a type no selector can hold, so sign() is a compile error.
    add("sign", "unreachable_sign", I, [cel.Type("kubernetes.Unreachable")], lambda _: 0, member=True)
    add("isInteger", "quantity_is_integer", B, [Q], lambda q: _q(q).denominator == 1, member=True)
    add("asInteger", "quantity_as_integer", I, [Q], _as_integer, member=True)
    add("asApproximateFloat", "quantity_as_float", D, [Q], lambda q: float(_q(q)), member=True)
    add("add", "quantity_add", Q, [Q, Q], lambda a, b: quantity_message(_q(a) + _q(b)), member=True)
    add("add", "quantity_add_int", Q, [Q, I], lambda a, b: quantity_message(_q(a) + b), member=True)
    add("sub", "quantity_sub", Q, [Q, Q], lambda a, b: quantity_message(_q(a) - _q(b)), member=True)
    add("sub", "quantity_sub_int", Q, [Q, I], lambda a, b: quantity_message(_q(a) - b), member=True)
    # The C++ runtime dispatches on value kinds and both opaque types are messages: the implementation
    # is registered once, on the quantity overload, and dispatches on the Python type for both.
    for name, result, check in (
        ("compareTo", I, lambda c: c),
        ("isGreaterThan", B, lambda c: c > 0),
        ("isLessThan", B, lambda c: c < 0),
    ):
        add(name, f"quantity_{name}", result, [Q, Q], lambda a, b, check=check: check(_compare(a, b)), member=True)
        fn[name].append(cel.Overload(f"semver_{name}", return_type=result, parameters=[S, S], is_member=True))
    add("semver", "string_to_semver", S, [STR], _semver)
    add("semver", "string_bool_to_semver", S, [STR, B], _semver)
    add("isSemver", "is_semver_string", B, [STR], _is_semver)
    add("isSemver", "is_semver_string_bool", B, [STR, B], _is_semver)
    add("major", "semver_major", I, [S], lambda v: parse_semver(v.canonical)[0], member=True)
    add("minor", "semver_minor", I, [S], lambda v: parse_semver(v.canonical)[1], member=True)
    add("patch", "semver_patch", I, [S], lambda v: parse_semver(v.canonical)[2], member=True)

    add("find", "string_find_string", STR, [STR, STR],
        lambda s, p: (m.group(0) if (m := _regex(p).search(s)) else ""), member=True)
    add("findAll", "string_find_all_string", cel.Type.List(STR), [STR, STR], _find_all, member=True)
    add("findAll", "string_find_all_string_int", cel.Type.List(STR), [STR, STR, I], _find_all, member=True)

    add("isSorted", "list_is_sorted", B, [L], _is_sorted, member=True)
    add("sum", "list_sum", _DYN, [L], _sum, member=True)
    add("min", "list_min", _DYN, [L], lambda items: _extreme(items, min), member=True)
    add("max", "list_max", _DYN, [L], lambda items: _extreme(items, max), member=True)
    add("slice", "list_slice", L, [L, I, I], _slice, member=True)
    add("flatten", "list_flatten", L, [L], _flatten, member=True)
    add("distinct", "list_distinct", L, [L], _distinct, member=True)
    add("reverse", "list_reverse", L, [L], lambda items: list(reversed(items)), member=True)
    add("sort", "list_sort", L, [L], lambda items: [items[i] for i in sorted(range(len(items)),
                                                                              key=lambda i: _comparable(items)[i])],
        member=True)
    add("lists.range", "lists_range", cel.Type.List(I), [I], lambda n: list(range(n)))

    add("sets.contains", "list_sets_contains_list", B, [L, L], lambda a, b: all(x in a for x in b))
    add("sets.equivalent", "list_sets_equivalent_list", B, [L, L],
        lambda a, b: all(x in b for x in a) and all(x in a for x in b))
    add("sets.intersects", "list_sets_intersects_list", B, [L, L], lambda a, b: any(x in b for x in a))
    return [cel.FunctionDecl(name, overloads) for name, overloads in fn.items()]


@cache
def environment() -> Any:
    """The CEL environment of DRA selectors (built once)."""
    return cel.NewEnv(
        _POOL,
        variables={"device": _DYN},
        extensions=[ext_strings.ExtStrings(2), ext_optional.ExtOptional(), ext_bindings.ExtBindings()],
        functions=_functions(),
    )


# ---------------------------------------------------------------------------------------------------------------
# The device variable


def _split_name(name: str, driver: str) -> tuple[str, str]:
    domain, sep, short = name.partition("/")
    return (domain, short) if sep else (driver, name)


def device_variable(device: DeviceRecord, driver: str) -> dict[str, Any] | str:
    """The ``device`` variable (cached on the record), or the error text upstream reports for it."""
    cached = device.cel_input
    if cached is not None and cached[0] == driver:
        return cached[1]  # type: ignore[no-any-return]
    result = _build_device_variable(device, driver)
    device.cel_input = (driver, result)
    return result


def _build_device_variable(device: DeviceRecord, driver: str) -> dict[str, Any] | str:
    attributes: dict[str, dict[str, Any]] = {}
    for name, attr in device.attributes.items():
        if attr.kind == "version":
            try:
                value: Any = semver_message(str(attr.value))
            except SemverError as err:
                return f"attribute {name}: parse semantic version: {err}"
        elif attr.kind:
            value = attr.value
        else:
            return f"attribute {name}: unsupported attribute value"
        domain, short = _split_name(name, driver)
        attributes.setdefault(domain, {})[short] = value
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in device.capacity.items():
        domain, short = _split_name(name, driver)
        capacity.setdefault(domain, {})[short] = quantity_message(cap.value.value)
    return {
        "driver": driver,
        "allowMultipleAllocations": bool(device.allow_multiple_allocations),
        "attributes": attributes,
        "capacity": capacity,
    }
