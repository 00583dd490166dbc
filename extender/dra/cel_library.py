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
* lists (``library.Lists``): ``l.isSorted()``, ``l.sum()``, ``l.min()``, ``l.max()``,
  ``l.indexOf(x)``, ``l.lastIndexOf(x)`` (declared under aliases: see CALL_ALIASES);
  and of ``ext.Lists`` v3: ``l.slice(i, j)``, ``l.flatten()``, ``l.distinct()``, ``l.reverse()``,
  ``l.sort()``, ``lists.range(n)`` (``first``/``last`` are missing: optionals cannot be built from Python);
* IP and CIDR (``library.IP``, ``library.CIDR``): ``ip(s)``, ``isIP(s)``, ``ip.isCanonical(s)``,
  ``family()``, ``isUnspecified()``, ``isLoopback()``, ``isLinkLocalMulticast()``,
  ``isLinkLocalUnicast()``, ``isGlobalUnicast()``, ``cidr(s)``, ``isCIDR(s)``, ``containsIP(ip|s)``,
  ``containsCIDR(cidr|s)``, ``ip()``, ``masked()``, ``prefixLength()``, ``string(ip|cidr)`` (declared
  under an alias: see CALL_ALIASES);
* URLs (``library.URLs``, Go's ``net/url`` in :mod:`extender.dra.cel_urls`): ``url(s)``, ``isURL(s)``,
  ``getScheme()``, ``getHost()``, ``getHostname()``, ``getPort()``, ``getEscapedPath()``, ``getQuery()``;
* sets (``ext.Sets``): ``sets.contains(a, b)``, ``sets.equivalent(a, b)``, ``sets.intersects(a, b)``.

Quantity and semver values are carried as small protobuf messages (``kubernetes.Quantity``,
``kubernetes.Semver``) holding a canonical text, so the runtime's ``==`` compares them by value.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache, lru_cache
from typing import Any, Final

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from extender.dra import cel_urls
from extender.dra.records import DeviceRecord
from extender.kube.quantity import QuantityError, parse_quantity

__all__ = [
    "ATTRIBUTES",
    "CAPACITY",
    "DRIVER",
    "MULTI_ALLOCATIONS",
    "declared_functions",
    "device_activation",
    "device_variable",
    "environment",
    "go_regexp_error",
    "parse_semver",
]


# ---------------------------------------------------------------------------------------------------------------
# Opaque values


def _message_types() -> tuple[Any, dict[str, Any]]:
    """A descriptor pool with one message per opaque type (named as cel-go names the type) and their classes."""
    pool = descriptor_pool.DescriptorPool()
    classes = {}
    for package, names in (("kubernetes", ("Quantity", "Semver", "Unreachable", "URL")), ("net", ("IP", "CIDR"))):
        file = descriptor_pb2.FileDescriptorProto(name=f"extender_dra_{package}.proto", package=package,
                                                  syntax="proto3")
        for name in names:
            message = file.message_type.add(name=name)
            message.field.add(
                name="canonical",
                number=1,
                type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
            )
        pool.Add(file)
        for name in names:
            classes[f"{package}.{name}"] = message_factory.GetMessageClass(
                pool.FindMessageTypeByName(f"{package}.{name}")
            )
    return pool, classes


_POOL, _CLASSES = _message_types()
_QuantityMessage = _CLASSES["kubernetes.Quantity"]
_SemverMessage = _CLASSES["kubernetes.Semver"]
_IPMessage = _CLASSES["net.IP"]
_CIDRMessage = _CLASSES["net.CIDR"]
_URLMessage = _CLASSES["kubernetes.URL"]
QUANTITY: Final = cel.Type("kubernetes.Quantity")
SEMVER: Final = cel.Type("kubernetes.Semver")
IP: Final = cel.Type("net.IP")
CIDR: Final = cel.Type("net.CIDR")
URL: Final = cel.Type("kubernetes.URL")
UNREACHABLE: Final = cel.Type("kubernetes.Unreachable")
_DYN: Final = cel.Type.DYN
_LIST_DYN: Final = cel.Type.List(cel.Type.DYN)


#: Functions the C++ runtime declares on its own, which Kubernetes' libraries add overloads to: the
#: lists library's ``indexOf``/``lastIndexOf`` (the strings extension's names) and ``string`` of an IP
#: or CIDR (the standard conversion; a name cannot be declared twice). A call the checker finds no
#: overload for is renamed to an alias of the same length (positions in error texts hold).
CALL_ALIASES: Final = {"indexOf": "_ndexOf", "lastIndexOf": "_astIndexOf", "string": "_tring"}


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
    """A CEL semver value (raises :class:`SemverError`); build metadata is dropped (it never affects order)."""
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


def go_regexp_error(pattern: str, err: re.error) -> str:
    """Go's ``regexp.Compile`` error text for the common mistakes Python's ``re`` reports differently."""
    message = err.msg
    if message.startswith("missing ), unterminated subpattern"):
        return f"error parsing regexp: missing closing ): `{pattern}`"
    if message.startswith("unterminated character set"):
        start = err.pos if err.pos is not None else 0
        return f"error parsing regexp: missing closing ]: `{pattern[start:]}`"
    if message.startswith("unbalanced parenthesis"):
        return f"error parsing regexp: unexpected ): `{pattern}`"
    if message.startswith("nothing to repeat") or message.startswith("multiple repeat"):
        position = err.pos if err.pos is not None else 0
        return f"error parsing regexp: missing argument to repetition operator: `{pattern[position:position + 1]}`"
    return f"error parsing regexp: {message}: `{pattern}`"


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise CelError(go_regexp_error(pattern, err)) from None


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    matches = [m.group(0) for m in _regex(pattern).finditer(text)]
    return matches if limit < 0 else matches[:limit]


def _is_sorted(items: Sequence[Any]) -> bool:
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def _sum(items: Sequence[Any]) -> Any:
    if not items:
        return 0
    total = items[0]
    for item in items[1:]:
        total = total + item
    return total


def _extreme(items: Sequence[Any], pick: Callable[..., Any]) -> Any:
    if not items:
        raise CelError("min called on empty list" if pick is min else "max called on empty list")
    # The first of equal elements wins, as upstream's strict comparison keeps it.
    best = pick(range(len(items)), key=lambda i: items[i])
    return items[best]


def _index_of(items: Sequence[Any], wanted: Any) -> int:
    return next((i for i, item in enumerate(items) if item == wanted), -1)


def _last_index_of(items: Sequence[Any], wanted: Any) -> int:
    return next((i for i in range(len(items) - 1, -1, -1) if items[i] == wanted), -1)


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


def _parse_ip(raw: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """netip.ParseAddr plus the IP library's rules (no zones, no IPv4-mapped IPv6)."""
    if "%" in raw:
        try:
            ipaddress.ip_address(raw)
        except ValueError:
            pass
        else:
            raise CelError(f"IP address {_go_quote(raw)} with zone value is not allowed")
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        raise CelError(
            f"IP Address {_go_quote(raw)} parse error during conversion from string: {_parse_addr_error(raw)}"
        ) from None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise CelError(f"IPv4-mapped IPv6 address {_go_quote(raw)} is not allowed")
    return address


def _parse_addr_error(raw: str) -> str:
    """netip.ParseAddr's error for a string Python's ipaddress rejects (the common cases)."""
    fields = raw.split(".")
    if ":" not in raw and len(fields) == 4 and all(f.isdigit() for f in fields):
        if any(len(f) > 1 and f[0] == "0" for f in fields):
            return f"ParseAddr({_go_quote(raw)}): IPv4 field has octet with leading zero"
        return f"ParseAddr({_go_quote(raw)}): IPv4 field has value >255"
    if not raw:
        return 'ParseAddr(""): unable to parse IP'
    return f"ParseAddr({_go_quote(raw)}): unable to parse IP"


def _parse_cidr(raw: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    """netip.ParsePrefix plus the CIDR library's rules; the address keeps its host bits (``masked()`` drops them)."""
    address, slash, length = raw.partition("/")
    prefix = f"netip.ParsePrefix({_go_quote(raw)})"
    if not slash:
        reason = f"{prefix}: no '/'"
    elif "%" in address:
        reason = f"{prefix}: IPv6 zones cannot be present in a prefix"
    elif not length.isdigit() or (len(length) > 1 and length[0] == "0"):
        reason = f"{prefix}: bad bits after slash: {_go_quote(length)}"
    else:
        reason = ""
        try:
            parsed = ipaddress.ip_address(address)
        except ValueError:
            reason = f"{prefix}: {_parse_addr_error(address)}"
        else:
            if int(length) > parsed.max_prefixlen:
                reason = f"{prefix}: prefix length out of range"
    if reason:
        # The library wraps the parser's error in its own text once more.
        raise CelError(
            "network address parse error during conversion from string: "
            f"network address parse error during conversion from string: {reason}"
        )
    interface = ipaddress.ip_interface(raw)
    if isinstance(interface, ipaddress.IPv6Interface) and interface.ip.ipv4_mapped is not None:
        raise CelError(f"IPv4-mapped IPv6 address {_go_quote(raw)} is not allowed")
    return interface


def _ip_message(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> Any:
    return _IPMessage(canonical=str(address))


def _cidr_message(interface: ipaddress.IPv4Interface | ipaddress.IPv6Interface) -> Any:
    return _CIDRMessage(canonical=f"{interface.ip}/{interface.network.prefixlen}")


def _ip(message: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(message.canonical)


def _cidr(message: Any) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    return ipaddress.ip_interface(message.canonical)


def _is_valid(parse: Callable[[str], Any], raw: str) -> bool:
    try:
        parse(raw)
    except CelError:
        return False
    return True


def _link_local_multicast(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv4Address):
        return address in ipaddress.IPv4Network("224.0.0.0/24")
    return address.packed[0] == 0xFF and address.packed[1] & 0x0F == 0x02


def _link_local_unicast(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv4Address):
        return address in ipaddress.IPv4Network("169.254.0.0/16")
    return address in ipaddress.IPv6Network("fe80::/10")


def _global_unicast(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Go's ``IsGlobalUnicast`` (private ranges count as global)."""
    if isinstance(address, ipaddress.IPv4Address) and address == ipaddress.IPv4Address("255.255.255.255"):
        return False
    return not (
        address.is_unspecified or address.is_loopback or address.is_multicast or _link_local_unicast(address)
    )


def _contains_ip(prefix: Any, other: Any) -> bool:
    network = _cidr(prefix).network
    address = _parse_ip(other) if isinstance(other, str) else _ip(other)
    return address.version == network.version and address in network


def _contains_cidr(prefix: Any, other: Any) -> bool:
    network = _cidr(prefix).network
    inner = (_parse_cidr(other) if isinstance(other, str) else _cidr(other)).network
    if inner.version != network.version or inner.prefixlen < network.prefixlen:
        return False
    return inner.supernet(new_prefix=network.prefixlen) == network


def _url(raw: str) -> Any:
    # Validated as a request URI, then read as url.Parse reads it (the fragment split off).
    try:
        cel_urls.parse_request_uri(raw)
        cel_urls.parse(raw)
    except cel_urls.URLError as err:
        raise CelError(f"URL parse error during conversion from string: {err}") from None
    return _URLMessage(canonical=raw)


def _is_url(raw: str) -> bool:
    try:
        cel_urls.parse_request_uri(raw)
    except cel_urls.URLError:
        return False
    return True


def _url_parts(message: Any) -> cel_urls.ParsedURL:
    return cel_urls.parse(message.canonical)  # parsed once already: it cannot fail


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
    return [cel.FunctionDecl(name, overloads) for name, overloads in _function_table().items()]


#: Functions the C++ runtime declares itself (standard library, strings v2, optional types).
_BUILTIN_FUNCTIONS: Final = frozenset({
    "size", "int", "uint", "double", "string", "bytes", "bool", "duration", "timestamp", "dyn", "type", "matches",
    "contains", "startsWith", "endsWith", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear",
    "getFullYear", "getHours", "getMilliseconds", "getMinutes", "getMonth", "getSeconds", "charAt", "indexOf",
    "lastIndexOf", "lowerAscii", "upperAscii", "replace", "split", "substring", "trim", "join", "format",
    "strings.quote", "optional.of", "optional.none", "optional.ofNonZeroValue", "hasValue", "value", "or",
    "orValue",
})


@cache
def declared_functions() -> frozenset[str]:
    """Every function name a selector may call (as written: aliases are not names of their own)."""
    aliases = set(CALL_ALIASES.values())
    return _BUILTIN_FUNCTIONS | {name for name in _function_table() if name not in aliases}


def _includes(target: Any, element: Any) -> bool:
    """apiserver cel/library/lists.go includes: a list holds the element, or another value equals it."""
    if isinstance(target, list):
        return any(item == element for item in target)
    return bool(target == element)


@cache
def _function_table() -> dict[str, list[Any]]:
    Q, S, B, INT, D, STR = QUANTITY, SEMVER, cel.Type.BOOL, cel.Type.INT, cel.Type.DOUBLE, cel.Type.STRING
    L = _LIST_DYN
    fn: dict[str, list[Any]] = {}

    def add(name: str, overload_id: str, result: Any, params: Sequence[Any], impl: Callable[..., Any],
            *, member: bool = False) -> None:
        fn.setdefault(name, []).append(_overload(overload_id, result, params, impl, member=member))

    add("quantity", "string_to_quantity", Q, [STR], _quantity)
    add("isQuantity", "is_quantity_string", B, [STR], _is_quantity)
    # Quantity's sign() is newer than the library version the scheduler's environment has; upstream
    # declares the name only for a type no selector can hold, so sign() is a compile error.
    add("sign", "unreachable_sign", INT, [UNREACHABLE], lambda _: 0, member=True)
    add("isInteger", "quantity_is_integer", B, [Q], lambda q: _q(q).denominator == 1, member=True)
    add("asInteger", "quantity_as_integer", INT, [Q], _as_integer, member=True)
    add("asApproximateFloat", "quantity_as_float", D, [Q], lambda q: float(_q(q)), member=True)
    add("add", "quantity_add", Q, [Q, Q], lambda a, b: quantity_message(_q(a) + _q(b)), member=True)
    add("add", "quantity_add_int", Q, [Q, INT], lambda a, b: quantity_message(_q(a) + b), member=True)
    add("sub", "quantity_sub", Q, [Q, Q], lambda a, b: quantity_message(_q(a) - _q(b)), member=True)
    add("sub", "quantity_sub_int", Q, [Q, INT], lambda a, b: quantity_message(_q(a) - b), member=True)
    # The C++ runtime dispatches on value kinds and both opaque types are messages: the implementation
    # is registered once, on the quantity overload, and dispatches on the Python type for both.
    for name, result, check in (
        ("compareTo", INT, lambda c: c),
        ("isGreaterThan", B, lambda c: c > 0),
        ("isLessThan", B, lambda c: c < 0),
    ):
        add(name, f"quantity_{name}", result, [Q, Q], lambda a, b, check=check: check(_compare(a, b)), member=True)
        fn[name].append(cel.Overload(f"semver_{name}", return_type=result, parameters=[S, S], is_member=True))
    add("semver", "string_to_semver", S, [STR], _semver)
    add("semver", "string_bool_to_semver", S, [STR, B], _semver)
    add("isSemver", "is_semver_string", B, [STR], _is_semver)
    add("isSemver", "is_semver_string_bool", B, [STR, B], _is_semver)
    add("major", "semver_major", INT, [S], lambda v: parse_semver(v.canonical)[0], member=True)
    add("minor", "semver_minor", INT, [S], lambda v: parse_semver(v.canonical)[1], member=True)
    add("patch", "semver_patch", INT, [S], lambda v: parse_semver(v.canonical)[2], member=True)

    add("ip", "string_to_ip", IP, [STR], lambda raw: _ip_message(_parse_ip(raw)))
    add("ip", "cidr_ip", IP, [CIDR], lambda c: _ip_message(_cidr(c).ip), member=True)
    add("isIP", "is_ip", B, [STR], lambda raw: _is_valid(_parse_ip, raw))
    add("ip.isCanonical", "ip_is_canonical", B, [STR], lambda raw: str(_parse_ip(raw)) == raw)
    add("family", "ip_family", INT, [IP], lambda a: _ip(a).version, member=True)
    add("isUnspecified", "ip_is_unspecified", B, [IP], lambda a: _ip(a).is_unspecified, member=True)
    add("isLoopback", "ip_is_loopback", B, [IP], lambda a: _ip(a).is_loopback, member=True)
    add("isLinkLocalMulticast", "ip_is_link_local_multicast", B, [IP],
        lambda a: _link_local_multicast(_ip(a)), member=True)
    add("isLinkLocalUnicast", "ip_is_link_local_unicast", B, [IP], lambda a: _link_local_unicast(_ip(a)), member=True)
    add("isGlobalUnicast", "ip_is_global_unicast", B, [IP], lambda a: _global_unicast(_ip(a)), member=True)
    # string(ip) and string(cidr), under the alias (see CALL_ALIASES); both are messages to the runtime.
    add(CALL_ALIASES["string"], "ip_to_string", STR, [IP], lambda value: value.canonical)
    fn[CALL_ALIASES["string"]].append(cel.Overload("cidr_to_string", return_type=STR, parameters=[CIDR]))
    add("cidr", "string_to_cidr", CIDR, [STR], lambda raw: _cidr_message(_parse_cidr(raw)))
    add("isCIDR", "is_cidr", B, [STR], lambda raw: _is_valid(_parse_cidr, raw))
    add("containsIP", "cidr_contains_ip_string", B, [CIDR, STR], _contains_ip, member=True)
    add("containsIP", "cidr_contains_ip_ip", B, [CIDR, IP], _contains_ip, member=True)
    add("containsCIDR", "cidr_contains_cidr_string", B, [CIDR, STR], _contains_cidr, member=True)
    add("containsCIDR", "cidr_contains_cidr", B, [CIDR, CIDR], _contains_cidr, member=True)
    add("prefixLength", "cidr_prefix_length", INT, [CIDR], lambda c: _cidr(c).network.prefixlen, member=True)
    add("masked", "cidr_masked", CIDR, [CIDR],
        lambda c: _CIDRMessage(canonical=str(_cidr(c).network)), member=True)

    add("url", "string_to_url", URL, [STR], _url)
    add("isURL", "is_url_string", B, [STR], _is_url)
    add("getScheme", "url_get_scheme", STR, [URL], lambda u: _url_parts(u).scheme, member=True)
    add("getHost", "url_get_host", STR, [URL], lambda u: _url_parts(u).host, member=True)
    add("getHostname", "url_get_hostname", STR, [URL],
        lambda u: cel_urls.split_host_port(_url_parts(u).host)[0], member=True)
    add("getPort", "url_get_port", STR, [URL], lambda u: cel_urls.split_host_port(_url_parts(u).host)[1],
        member=True)
    add("getEscapedPath", "url_get_escaped_path", STR, [URL], lambda u: cel_urls.escaped_path(_url_parts(u)),
        member=True)
    add("getQuery", "url_get_query", cel.Type.Map(STR, cel.Type.List(STR)), [URL],
        lambda u: cel_urls.query(_url_parts(u)), member=True)

    add("find", "string_find_string", STR, [STR, STR],
        lambda s, p: (m.group(0) if (m := _regex(p).search(s)) else ""), member=True)
    add("findAll", "string_find_all_string", cel.Type.List(STR), [STR, STR], _find_all, member=True)
    add("findAll", "string_find_all_string_int", cel.Type.List(STR), [STR, STR, INT], _find_all, member=True)

    # Upstream declares these per element type. The C++ runtime dispatches on value kinds (every list is a
    # list), so the implementation is registered on the first overload and serves them all.
    summable = [("int", INT), ("uint", cel.Type.UINT), ("double", D), ("duration", cel.Type.DURATION)]
    comparable = [*summable[:3], ("bool", B), ("duration", cel.Type.DURATION), ("timestamp", cel.Type.TIMESTAMP),
                  ("string", STR), ("bytes", cel.Type.BYTES)]
    unreachable_list = cel.Type.List(UNREACHABLE)
    for name, types, impl, result_of in (
        ("sum", summable, _sum, None),
        ("min", comparable, lambda items: _extreme(items, min), None),
        ("max", comparable, lambda items: _extreme(items, max), None),
        ("isSorted", comparable, _is_sorted, B),
    ):
        # The implementation goes on an overload no expression can select, returning dyn, so that the
        # runtime does not convert every result to the first overload's type.
        add(name, f"list_unreachable_{name}", result_of or _DYN, [unreachable_list], impl, member=True)
        for type_name, element in types:
            fn[name].append(cel.Overload(f"list_{type_name}_{name}", return_type=result_of or element,
                                         parameters=[cel.Type.List(element)], is_member=True))
    # The list indexOf/lastIndexOf, under names of the same length (see CALL_ALIASES). Declared
    # per element type, so that the checker rejects an element of another type as upstream's generic
    # declaration does; the runtime dispatches on the element's kind, one implementation per kind.
    elements = [INT, cel.Type.UINT, D, B, STR, cel.Type.BYTES, cel.Type.DURATION, cel.Type.TIMESTAMP,
                L, cel.Type.Map(_DYN, _DYN), cel.Type.NULL]
    searches: tuple[tuple[str, Callable[[Sequence[Any], Any], int]], ...] = (
        (CALL_ALIASES["indexOf"], _index_of), (CALL_ALIASES["lastIndexOf"], _last_index_of))
    for name, search in searches:
        for i, element in enumerate(elements):
            add(name, f"list_{name}_{i}", INT, [cel.Type.List(element), element], search, member=True)
        # The opaque types are all messages to the runtime: one implementation serves them all.
        add(name, f"list_{name}_quantity", INT, [cel.Type.List(Q), Q], search, member=True)
        for j, opaque in enumerate((S, IP, CIDR)):
            fn[name].append(cel.Overload(f"list_{name}_opaque_{j}", return_type=INT,
                                         parameters=[cel.Type.List(opaque), opaque], is_member=True))
    add("slice", "list_slice", L, [L, INT, INT], _slice, member=True)
    add("flatten", "list_flatten", L, [L], _flatten, member=True)
    add("distinct", "list_distinct", L, [L], _distinct, member=True)
    add("reverse", "list_reverse", L, [L], lambda items: list(reversed(items)), member=True)
    add("sort", "list_sort", L, [L], lambda items: sorted(items), member=True)
    add("lists.range", "lists_range", cel.Type.List(INT), [INT], lambda n: list(range(n)))

    add("sets.contains", "list_sets_contains_list", B, [L, L], lambda a, b: all(x in a for x in b))
    add("sets.equivalent", "list_sets_equivalent_list", B, [L, L],
        lambda a, b: all(x in b for x in a) and all(x in a for x in b))
    add("sets.intersects", "list_sets_intersects_list", B, [L, L], lambda a, b: any(x in b for x in a))
    # apiserver cel/library lists.go includes (library.IncludesOption / Lists version 1): both releases'
    # stored-expression environments have it.
    # Upstream declares includes(dyn, dyn); the runtime here dispatches on the arguments' kinds, which a
    # dyn declaration does not select, so there is one declaration per pair of kinds (the opaque types are
    # all messages to the runtime: the first carries the implementation, the others are for the checker).
    kinds = [INT, cel.Type.UINT, D, B, STR, cel.Type.BYTES, cel.Type.DURATION, cel.Type.TIMESTAMP,
             cel.Type.NULL, L, cel.Type.Map(_DYN, _DYN), Q, S, IP, CIDR]
    opaque = {id(Q), id(S), id(IP), id(CIDR)}
    for i, receiver in enumerate(kinds):
        for j, element in enumerate(kinds):
            overload_id = f"includes_{i}_{j}"
            if (id(receiver) in opaque and receiver is not Q) or (id(element) in opaque and element is not Q):
                fn.setdefault("includes", []).append(cel.Overload(
                    overload_id, return_type=B, parameters=[receiver, element], is_member=True))
            else:
                add("includes", overload_id, B, [receiver, element], _includes, member=True)
    return fn


@cache
def environment() -> Any:
    """The CEL environment of DRA selectors (built once)."""
    # The device's fields are declared as qualified variables ("device.driver", ...): the checker then
    # knows their types as cel-go does from its DRADevice object type, which the C++ runtime's Python
    # binding cannot declare.
    return cel.NewEnv(
        _POOL,
        variables={
            DRIVER: cel.Type.STRING,
            MULTI_ALLOCATIONS: cel.Type.BOOL,
            ATTRIBUTES: cel.Type.Map(cel.Type.STRING, cel.Type.Map(cel.Type.STRING, _DYN)),
            CAPACITY: cel.Type.Map(cel.Type.STRING, cel.Type.Map(cel.Type.STRING, QUANTITY)),
        },
        extensions=[ext_strings.ExtStrings(2), ext_optional.ExtOptional(), ext_bindings.ExtBindings()],
        functions=_functions(),
    )


# ---------------------------------------------------------------------------------------------------------------
# The device variable


def _split_name(name: str, driver: str) -> tuple[str, str]:
    domain, sep, short = name.partition("/")
    return (domain, short) if sep else (driver, name)


DRIVER: Final = "device.driver"
MULTI_ALLOCATIONS: Final = "device.allowMultipleAllocations"
ATTRIBUTES: Final = "device.attributes"
CAPACITY: Final = "device.capacity"


def device_variable(device: DeviceRecord, driver: str, list_attributes: bool = True) -> dict[str, Any] | str:
    """The ``device`` variable's fields by qualified name, or upstream's error text for the device.

    ``list_attributes``: a list-typed attribute is a CEL list (v0.37.2, or v0.36.3 with DRAListTypeAttributes);
    otherwise (v0.36.3 by default) it is an unsupported value and the device cannot be evaluated.
    """
    return _device_input(device, driver, list_attributes)[0]


def device_activation(device: DeviceRecord, driver: str, list_attributes: bool = True) -> Any:
    """The runtime's activation for a device (built once, cached on the record), or upstream's error text.

    An activation holds the device's values already converted for the C++ runtime, so every selector
    evaluated on the device reuses them (a third of the cost of converting them per evaluation).
    """
    return _device_input(device, driver, list_attributes)[1]


def _device_input(device: DeviceRecord, driver: str, list_attributes: bool) -> tuple[dict[str, Any] | str, Any]:
    cached = device.cel_input
    if cached is not None and cached[0] == (driver, list_attributes):
        return cached[1], cached[2]
    variables = _build_device_variable(device, driver, list_attributes)
    activation = variables if isinstance(variables, str) else environment().Activation(variables)
    device.cel_input = ((driver, list_attributes), variables, activation)
    return variables, activation


def _build_device_variable(device: DeviceRecord, driver: str, list_attributes: bool) -> dict[str, Any] | str:
    attributes: dict[str, dict[str, Any]] = {}
    for name, attr in device.attributes.items():
        try:
            if attr.kind == "version":
                value: Any = semver_message(str(attr.value))
            elif attr.scalar:
                value = attr.value
            elif list_attributes and attr.kind == "versions" and isinstance(attr.value, tuple):
                value = [semver_message(str(v)) for v in attr.value]
            elif list_attributes and isinstance(attr.value, tuple):
                value = list(attr.value)
            else:
                return f"attribute {name}: unsupported attribute value"
        except SemverError as err:
            return f"attribute {name}: parse semantic version: {err}"
        domain, short = _split_name(name, driver)
        attributes.setdefault(domain, {})[short] = value
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in device.capacity.items():
        domain, short = _split_name(name, driver)
        capacity.setdefault(domain, {})[short] = quantity_message(cap.value.value)
    return {
        DRIVER: driver,
        MULTI_ALLOCATIONS: bool(device.allow_multiple_allocations),
        ATTRIBUTES: attributes,
        CAPACITY: capacity,
    }
