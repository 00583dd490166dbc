"""Go's ``net/url`` parsing, as far as Kubernetes' CEL URL library reads it (``library.URLs``:
``url(s)``, ``isURL(s)``, ``getScheme``, ``getHost``, ``getHostname``, ``getPort``,
``getEscapedPath``, ``getQuery``).

``url(s)`` accepts what ``url.ParseRequestURI`` accepts (an absolute URI or an absolute path) and
then reads the value with ``url.Parse`` (which also splits off the fragment); error texts are Go's,
e.g. ``parse "x": invalid URI for request``.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Final

__all__ = ["ParsedURL", "URLError", "escaped_path", "go_quote", "parse", "parse_request_uri", "query"]

_PATH, _HOST, _ZONE, _USER, _QUERY_COMPONENT, _FRAGMENT = range(6)
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_USERINFO_EXTRA: Final = frozenset("-._:~!$&'()*+,;=%@")
_GO_ESCAPES: Final = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
                      "\\": "\\\\", '"': '\\"'}


class URLError(ValueError):
    """A parse error, with Go's text."""


@dataclass(frozen=True, slots=True)
class ParsedURL:
    """The parts of a URL the library reads."""

    scheme: str
    host: str
    path: str
    raw_path: str
    raw_query: str


def go_quote(text: str) -> str:
    """strconv.Quote for the texts URL errors quote."""
    out = []
    for ch in text:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _alnum(c: str) -> bool:
    return c.isascii() and c.isalnum()


def _should_escape(c: str, mode: int) -> bool:
    if _alnum(c):
        return False
    if mode in (_HOST, _ZONE) and c in "!$&'()*+,;=:[]<>\"":
        return False
    if c in "-_.~":
        return False
    if c in "$&+,/:;=?@":
        if mode == _PATH:
            return c == "?"
        if mode == _USER:
            return c in "@/?:"
        if mode == _QUERY_COMPONENT:
            return True
        if mode == _FRAGMENT:
            return False
    # The fragment leaves some sub-delimiters as they are.
    return not (mode == _FRAGMENT and c in "!()*")


def _unescape(s: str, mode: int) -> str:
    data = s.encode()
    i = 0
    while i < len(data):
        c = chr(data[i])
        if c == "%":
            chunk = data[i:i + 3].decode(errors="replace")
            if i + 2 >= len(data) or chr(data[i + 1]) not in _HEX or chr(data[i + 2]) not in _HEX:
                raise URLError(f"invalid URL escape {go_quote(data[i:i + 3].decode(errors='replace'))}")
            if mode == _HOST and int(chr(data[i + 1]), 16) < 8 and chunk != "%25":
                raise URLError(f"invalid URL escape {go_quote(chunk)}")
            if mode == _ZONE:
                value = int(data[i + 1:i + 3], 16)
                if chunk != "%25" and value != 0x20 and _should_escape(chr(value), _HOST):
                    raise URLError(f"invalid URL escape {go_quote(chunk)}")
            i += 3
        else:
            if mode in (_HOST, _ZONE) and data[i] < 0x80 and _should_escape(c, mode):
                raise URLError(f"invalid character {go_quote(c)} in host name")
            i += 1
    out = bytearray()
    i = 0
    while i < len(data):
        if data[i] == ord("%"):
            out.append(int(data[i + 1:i + 3], 16))
            i += 3
        elif data[i] == ord("+") and mode == _QUERY_COMPONENT:
            out.append(ord(" "))
            i += 1
        else:
            out.append(data[i])
            i += 1
    return out.decode(errors="surrogateescape")


def _escape(s: str, mode: int) -> str:
    out = []
    for byte in s.encode(errors="surrogateescape"):
        c = chr(byte)
        if byte < 0x80 and not _should_escape(c, mode):
            out.append(c)
        elif c == " " and mode == _QUERY_COMPONENT:
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def _valid_optional_port(port: str) -> bool:
    if port == "":
        return True
    return port[0] == ":" and all(c in "0123456789" for c in port[1:])


def _parse_host(scheme: str, host: str) -> str:
    """parseHost (Go 1.26): a bracketed IPv6 literal (with an optional zone and port), or a name with an
    optional port; http and https hosts may hold one colon only (strict colons, the 1.26 default)."""
    bracket = host.rfind("[")
    if bracket > 0:
        raise URLError("invalid IP-literal")
    if bracket == 0:
        end = host.rfind("]")
        if end < 0:
            raise URLError("missing ']' in host")
        colon_port = host[end + 1:]
        if not _valid_optional_port(colon_port):
            raise URLError(f"invalid port {go_quote(colon_port)} after host")
        port = _unescape(colon_port, _HOST)
        name = host[1:end]
        zone = name.find("%25")
        if zone >= 0:
            unescaped = _unescape(name[:zone], _HOST) + _unescape(name[zone:], _ZONE)
        else:
            unescaped = _unescape(name, _HOST)
        address = unescaped.partition("%")[0]
        try:
            parsed = ipaddress.ip_address(address)
        except ValueError:
            raise URLError(f"invalid host: ParseAddr({go_quote(unescaped)}): unable to parse IP") from None
        if parsed.version == 4:
            raise URLError("invalid IP-literal")
        return "[" + unescaped + "]" + port
    first = host.find(":")
    if first >= 0:
        colon = first if scheme in ("http", "https") else host.rfind(":")
        colon_port = host[colon:]
        if not _valid_optional_port(colon_port):
            raise URLError(f"invalid port {go_quote(colon_port)} after host")
    return _unescape(host, _HOST)


def _parse_authority(scheme: str, authority: str) -> str:
    at = authority.rfind("@")
    host = _parse_host(scheme, authority if at < 0 else authority[at + 1:])
    if at >= 0:
        userinfo = authority[:at]
        if not all(_alnum(c) or c in _USERINFO_EXTRA for c in userinfo):
            raise URLError("net/url: invalid userinfo")
        for part in userinfo.split(":", 1):
            _unescape(part, _USER)
    return host


def _scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if c.isascii() and (c.isdigit() or c in "+-."):
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise URLError("missing protocol scheme")
            return raw[:i], raw[i + 1:]
        return "", raw
    return "", raw


def _parse(raw: str, via_request: bool) -> ParsedURL:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise URLError("net/url: invalid control character in URL")
    if raw == "" and via_request:
        raise URLError("empty url")
    if raw == "*":
        return ParsedURL("", "", "*", "", "")
    scheme, rest = _scheme(raw)
    scheme = scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        rest, raw_query = rest[:-1], ""
    else:
        rest, _, raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            return ParsedURL(scheme, "", "", "", raw_query)  # opaque: no host and no path
        if via_request:
            raise URLError("invalid URI for request")
        if ":" in rest.partition("/")[0]:
            raise URLError("first path segment in URL cannot contain colon")
    host = ""
    if (scheme or (not via_request and not rest.startswith("///"))) and rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        rest = slash + tail
        host = _parse_authority(scheme, authority)
    path = _unescape(rest, _PATH)
    raw_path = "" if _escape(path, _PATH) == rest else rest
    return ParsedURL(scheme, host, path, raw_path, raw_query)


def _error(raw: str, err: URLError) -> URLError:
    return URLError(f"parse {go_quote(raw)}: {err}")


def parse_request_uri(raw: str) -> ParsedURL:
    """url.ParseRequestURI: an absolute URI or an absolute path; no fragment is split off."""
    try:
        return _parse(raw, True)
    except URLError as err:
        raise _error(raw, err) from None


def parse(raw: str) -> ParsedURL:
    """url.Parse: the fragment after ``#`` is split off (and must be well escaped)."""
    head, hashed, fragment = raw.partition("#")
    try:
        parsed = _parse(head, False)
    except URLError as err:
        raise _error(head, err) from None
    if hashed:
        try:
            _unescape(fragment, _FRAGMENT)
        except URLError as err:
            raise _error(raw, err) from None
    return parsed


def _valid_encoded(s: str) -> bool:
    return all(c in "!$&'()*+,;=:@[]%" or not _should_escape(c, _PATH) for c in s)


def escaped_path(url: ParsedURL) -> str:
    """URL.EscapedPath: the path as written when that is a valid encoding of it, else escaped."""
    if url.raw_path and _valid_encoded(url.raw_path):
        try:
            if _unescape(url.raw_path, _PATH) == url.path:
                return url.raw_path
        except URLError:
            pass
    if url.path == "*":
        return "*"
    return _escape(url.path, _PATH)


def split_host_port(host_port: str) -> tuple[str, str]:
    """URL.Hostname and URL.Port: the port only when it is all digits; brackets dropped."""
    host, port = host_port, ""
    colon = host.rfind(":")
    if colon >= 0 and _valid_optional_port(host[colon:]):
        host, port = host[:colon], host[colon + 1:]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def query(url: ParsedURL) -> dict[str, list[str]]:
    """URL.Query (url.ParseQuery, keeping what parses): each key with its values in order."""
    out: dict[str, list[str]] = {}
    for part in url.raw_query.split("&"):
        if not part or ";" in part:
            continue
        key, _, value = part.partition("=")
        try:
            key, value = _unescape(key, _QUERY_COMPONENT), _unescape(value, _QUERY_COMPONENT)
        except URLError:
            continue
        out.setdefault(key, []).append(value)
    return out
