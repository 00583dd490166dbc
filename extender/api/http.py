"""HTTP plumbing shared by the routes: bounded body reading, JSON responses, request errors."""

from __future__ import annotations

import asyncio
import itertools
import os
from typing import TYPE_CHECKING, Any

import msgspec
import orjson
from fastapi import Request
from fastapi.responses import Response
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope

if TYPE_CHECKING:
    from extender.api.body_memory import BodyMemory

DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024  # a 5000-node NodeList is a few tens of MB


class HTTPProblem(Exception):
    """An error answered with a status code and ``{"Error": message}``."""

    def __init__(self, status: int, message: str, reason: str,
                 headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.reason = reason
        self.headers = headers  # sent with the answer (a 503's Retry-After)

    def header_map(self) -> dict[str, str]:
        """The headers as a Starlette response takes them (the routes built on FastAPI)."""
        return {name.decode("latin-1"): value.decode("latin-1") for name, value in self.headers}


class JSONResponse(Response):
    """A response serialised with orjson."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


DEFAULT_READ_TIMEOUT_SECONDS = 30.0


# Bodies up to this size are decoded in one call; larger ones piece by piece (see decode_json).
DECODE_CHUNK_BYTES = 256 * 1024
SPLIT_OBJECT = msgspec.json.Decoder(dict[str, msgspec.Raw])
_SPLIT_ARRAY = msgspec.json.Decoder(list[msgspec.Raw])


async def read_body(request: Request, limit: int, timeout: float = DEFAULT_READ_TIMEOUT_SECONDS) -> bytes:
    """The raw request body, refusing bodies over ``limit`` bytes before reading them all and bodies that take
    longer than ``timeout`` seconds to arrive (a stalled client must not hold a worker)."""
    return await read_asgi_body(request.scope, request.receive, limit, timeout)


def header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of a request header (``name`` in lower case), or None."""
    for key, value in scope.get("headers") or ():
        if key == name:
            return bytes(value)
    return None


#: Where the application puts its BodyMemory in an HTTP request's scope, and where a body records what it took
#: from it (given back when the request is answered: extender.api.app).
BODY_MEMORY_KEY = "extender.body_memory"
BODY_HELD_KEY = "extender.body_held"


async def read_asgi_body(scope: Scope, receive: Receive, limit: int,
                         timeout: float = DEFAULT_READ_TIMEOUT_SECONDS) -> bytes:
    """read_body on the ASGI messages themselves (the verbs' path, which builds no Request object)."""
    declared = header(scope, b"content-length")
    refused = declared_too_large(declared, limit)
    if refused is not None:
        raise refused
    memory: BodyMemory | None = scope.get(BODY_MEMORY_KEY)
    small = memory.small if memory is not None else limit
    if memory is not None and declared is not None and declared.isdigit():
        scope[BODY_HELD_KEY] = held = memory.take_declared(int(declared))
        if held:
            small = limit  # all of it is held already
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise ClientDisconnect()
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise body_too_large(limit)
                if size > small and memory is not None:  # an undeclared size past the small: all arrived so far
                    memory.take_or_refuse(size - scope.get(BODY_HELD_KEY, 0), None)
                    scope[BODY_HELD_KEY] = size
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
    except TimeoutError:
        raise body_late(timeout) from None
    body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    held = scope.get(BODY_HELD_KEY, 0)
    if held and memory is not None:  # a large body: what it will decode to is held too
        scope[BODY_HELD_KEY] = held + memory.take_decoding(body, held)
    return non_empty(body)


# What a verb's body is refused for, the same whichever HTTP path read it (ASGI, or the verbs' own protocol).

def declared_too_large(declared: bytes | None, limit: int) -> HTTPProblem | None:
    """413 for a Content-Length over ``limit`` (refused before reading the body), else None."""
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return HTTPProblem(413, f"request body of {declared.decode()} bytes exceeds the limit of {limit} bytes",
                           "too_large")
    return None


def body_too_large(limit: int) -> HTTPProblem:
    """413 for a body found larger than ``limit`` while it was read."""
    return HTTPProblem(413, f"request body exceeds the limit of {limit} bytes", "too_large")


def body_late(timeout: float) -> HTTPProblem:
    """408 for a body not complete ``timeout`` seconds after its request's head."""
    return HTTPProblem(408, f"request body not received within {timeout:g} seconds", "timeout")


def non_empty(body: bytes) -> bytes:
    """The body, unless it is empty or blank (400)."""
    if not body.strip():
        raise HTTPProblem(400, "empty request body: expected a JSON object", "empty")
    return body


#: New request ids: this process's random prefix and a count (a uuid4 per request cost a read of the
#: system's random source on every verb kube-scheduler sends, which never carries an id of its own).
_ID_PREFIX = os.urandom(4).hex()
_ID_COUNT = itertools.count(1)


def incoming_request_id(scope: Scope) -> str:
    """The request's id for logs: its X-Request-Id (at most 64 characters) or a new one, 16 hex digits
    unique within the process and, by their random half, between replicas."""
    sent = header(scope, b"x-request-id")
    return sent.decode("latin-1")[:64] if sent else new_request_id()


def new_request_id() -> str:
    """A new request id: 16 hex digits, unique within the process and, by their random half, between replicas."""
    return f"{_ID_PREFIX}{next(_ID_COUNT) & 0xFFFFFFFF:08x}"


def decode_json(body: bytes | memoryview) -> Any:
    """Decode a JSON body; large ones piece by piece, so that no single call holds the interpreter long.

    The decoders are C code that keeps the GIL for a whole call: one call over a body of tens of MB would
    freeze every other thread, the event loop answering health checks included. Large objects and arrays
    are therefore first split into their members' raw text (a fast scan that builds nothing), and each
    member is decoded on its own, recursively, with the interpreter free to switch threads in between.
    Duplicate keys resolve as in one call (the last wins).
    """
    try:
        return _decode(body, 0)
    except (orjson.JSONDecodeError, msgspec.DecodeError, UnicodeDecodeError) as err:  # (msgspec: not UTF-8)
        raise HTTPProblem(400, f"invalid JSON: {err}", "bad_json") from err
    except RecursionError:
        raise HTTPProblem(400, "invalid JSON: nested too deeply", "bad_json") from None


def _decode(raw: bytes | memoryview, depth: int) -> Any:
    if len(raw) <= DECODE_CHUNK_BYTES or depth >= 8:
        return orjson.loads(raw)
    first = bytes(raw[:64]).lstrip()[:1]
    if first == b"{":
        return {key: _decode(memoryview(value), depth + 1) for key, value in SPLIT_OBJECT.decode(raw).items()}
    if first == b"[":
        return [_decode(memoryview(value), depth + 1) for value in _SPLIT_ARRAY.decode(raw)]
    return orjson.loads(raw)


async def read_json(request: Request, limit: int, timeout: float = DEFAULT_READ_TIMEOUT_SECONDS) -> Any:
    """The request body decoded as JSON (see read_body and decode_json)."""
    return decode_json(await read_body(request, limit, timeout))
