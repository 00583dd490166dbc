"""HTTP plumbing shared by the routes: bounded body reading, JSON responses, request errors."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from fastapi import Request
from fastapi.responses import Response

DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024  # a 5000-node NodeList is a few tens of MB


class HTTPProblem(Exception):
    """An error answered with a status code and ``{"Error": message}``."""

    def __init__(self, status: int, message: str, reason: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.reason = reason


class JSONResponse(Response):
    """A response serialised with orjson."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


DEFAULT_READ_TIMEOUT_SECONDS = 30.0


async def read_json(request: Request, limit: int, timeout: float = DEFAULT_READ_TIMEOUT_SECONDS) -> Any:
    """The request body decoded as JSON, refusing bodies over ``limit`` bytes before reading them all and
    bodies that take longer than ``timeout`` seconds to arrive (a stalled client must not hold a worker)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPProblem(413, f"request body of {declared} bytes exceeds the limit of {limit} bytes", "too_large")
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise HTTPProblem(413, f"request body exceeds the limit of {limit} bytes", "too_large")
                chunks.append(chunk)
    except TimeoutError:
        raise HTTPProblem(408, f"request body not received within {timeout:g} seconds", "timeout") from None
    body = b"".join(chunks)
    if not body.strip():
        raise HTTPProblem(400, "empty request body: expected a JSON object", "empty")
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as err:
        raise HTTPProblem(400, f"invalid JSON: {err}", "bad_json") from err
