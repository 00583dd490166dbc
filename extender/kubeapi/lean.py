"""A lean HTTP/1.1 client for the apiserver's per-pod traffic: Binding POSTs and watch streams, on asyncio streams.

kube-scheduler binds pods in parallel goroutines, so the extender's bind verb is the one call it makes per
pod that ends in an apiserver request, and each pod it schedules comes back as watch events (its creation and
its binding). Through httpx (httpcore, anyio's TLS stream in Python, h11), one Binding POST cost the event
loop more CPU than the filter and prioritize calls of the same pod together, and reading the pod watch cost
more than filter. This client does only what those need, with asyncio's own streams and TLS (uvloop's, in
the service):

- ``post``: keep-alive connections from a small pool, one request written in one call, and a response read
  by its Content-Length or chunked;
- ``open_stream``: a GET on a connection of its own whose answer is read as it arrives (chunked, by length
  or to the end of the connection), within one deadline for the whole stream.

Both send the bearer token of the cluster configuration (refreshed and retried once on a 401, as the httpx
client does). A connection taken from the pool may have been closed by the server meanwhile; a request that
got no byte of answer on such a reused connection is sent again once on a new connection (the server never
saw it).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
import urllib.request
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

from extender.kubeapi.config import ClusterConfig

IDLE_SECONDS = 30.0  # a pooled connection idle longer than this is closed rather than reused
MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 4 * 1024 * 1024  # a Binding's answer is a Status of a few hundred bytes
READ_BYTES = 256 * 1024  # at most this much of a stream is read at once
MAX_CHUNK_LINE_BYTES = 4096  # a chunk's size line (with extensions), or a trailer line


class LeanHTTPError(OSError):
    """The request could not be sent or its answer not read (connection, TLS, timeout, malformed answer)."""


class _Connection:
    __slots__ = ("last_used", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.last_used = time.monotonic()

    def close(self) -> None:
        self.writer.close()


class _Stale(Exception):
    """A reused connection ended before any byte of the answer: the request may be sent again."""


def uses_proxy(server: str) -> bool:
    """Whether the environment routes requests to ``server`` through a proxy (as httpx would honour)."""
    url = urlsplit(server)
    proxies = urllib.request.getproxies_environment()
    if not (proxies.get(url.scheme) or proxies.get("all")):
        return False
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]  # public, not in the stubs
    return not bypass(url.hostname or "", proxies)


class LeanClient:
    """POSTs JSON to one apiserver over a pool of keep-alive connections, and opens streamed GETs."""

    def __init__(self, config: ClusterConfig, *, timeout: float, user_agent: str, max_idle: int = 64) -> None:
        url = urlsplit(config.server)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"server {config.server!r}: expected an http(s) URL")
        self._tls: ssl.SSLContext | None = None
        if url.scheme == "https":
            context = config.ssl_context()
            self._tls = context if isinstance(context, ssl.SSLContext) else ssl.create_default_context()
        self._host = url.hostname
        self._port = url.port or (443 if self._tls else 80)
        self._server_name = config.tls_server_name or url.hostname
        self._prefix = url.path.rstrip("/")
        self._get_head = f"Host: {url.netloc}\r\nUser-Agent: {user_agent}\r\nAccept: application/json\r\n"
        self._head = f"{self._get_head}Content-Type: application/json\r\n"
        self._tokens = config.tokens
        self._timeout = timeout
        self._max_idle = max_idle
        self._idle: list[_Connection] = []

    async def post(self, path: str, body: bytes) -> tuple[int, str, bytes]:
        """POST ``body`` (JSON) to ``path``: (status, reason phrase, answer body); LeanHTTPError if none came."""
        token = self._tokens.token()
        try:
            async with asyncio.timeout(self._timeout):
                status, reason, answer = await self._send(path, body, token)
                if status == 401 and token:
                    self._tokens.refresh()
                    fresh = self._tokens.token()
                    if fresh and fresh != token:
                        status, reason, answer = await self._send(path, body, fresh)
        except TimeoutError:
            raise LeanHTTPError(f"no answer within {self._timeout:g} seconds") from None
        return status, reason, answer

    async def _send(self, path: str, body: bytes, token: str | None) -> tuple[int, str, bytes]:
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        request = (f"POST {self._prefix}{path} HTTP/1.1\r\n{self._head}{auth}Content-Length: {len(body)}\r\n\r\n"
                   .encode("latin-1") + body)
        connection = self._pooled()
        if connection is not None:
            try:
                return await self._exchange(connection, request, reused=True)
            except _Stale:
                pass  # the server had closed it: once more on a new connection
        try:
            connection = await self._connect()
        except (OSError, ssl.SSLError) as err:
            raise LeanHTTPError(f"cannot connect to {self._host}:{self._port}: {err}") from err
        try:
            return await self._exchange(connection, request, reused=False)
        except _Stale:
            raise LeanHTTPError("the connection closed before an answer") from None

    @contextlib.asynccontextmanager
    async def open_stream(self, target: str, *, seconds: float) -> AsyncIterator[Stream]:
        """GET ``target`` (a path and its query) on a connection of its own, closed on leaving: the answer's
        status and head are read before this yields (within the client's timeout), its body as the caller
        reads it. Past ``seconds`` from now the connection is cut and the read fails."""
        deadline = time.monotonic() + seconds
        token = self._tokens.token()
        stream = await self._open(target, token, deadline)
        try:
            if stream.status == 401 and token:
                self._tokens.refresh()
                fresh = self._tokens.token()
                if fresh and fresh != token:
                    stream.close()
                    stream = await self._open(target, fresh, deadline)
            yield stream
        finally:
            stream.close()

    async def _open(self, target: str, token: str | None, deadline: float) -> Stream:
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        request = f"GET {self._prefix}{target} HTTP/1.1\r\n{self._get_head}{auth}\r\n".encode("latin-1")
        try:
            async with asyncio.timeout(self._timeout):
                connection = await self._connect()
        except TimeoutError:
            raise LeanHTTPError(f"cannot connect to {self._host}:{self._port} within {self._timeout:g} seconds") \
                from None
        except (OSError, ssl.SSLError) as err:
            raise LeanHTTPError(f"cannot connect to {self._host}:{self._port}: {err}") from err
        try:
            async with asyncio.timeout(self._timeout):
                connection.writer.write(request)
                await connection.writer.drain()
                head = await connection.reader.readuntil(b"\r\n\r\n")
            status, reason, headers = _parse_head(head)
            return Stream(connection, status, reason, headers, deadline)
        except BaseException as err:
            connection.close()
            if isinstance(err, TimeoutError):
                raise LeanHTTPError(f"no answer within {self._timeout:g} seconds") from None
            if isinstance(err, asyncio.IncompleteReadError):
                raise LeanHTTPError("the connection closed before an answer") from err
            if isinstance(err, (asyncio.LimitOverrunError, ValueError)):
                raise LeanHTTPError(f"malformed answer: {err}") from err
            if isinstance(err, (OSError, ssl.SSLError)):
                raise LeanHTTPError(f"connection failed: {err}") from err
            raise

    def _pooled(self) -> _Connection | None:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if now - connection.last_used < IDLE_SECONDS and not connection.reader.at_eof() \
                    and not connection.writer.is_closing():
                return connection
            connection.close()
        return None

    async def _connect(self) -> _Connection:
        if self._tls is not None:
            reader, writer = await asyncio.open_connection(self._host, self._port, ssl=self._tls,
                                                           server_hostname=self._server_name, limit=MAX_HEAD_BYTES)
        else:
            reader, writer = await asyncio.open_connection(self._host, self._port, limit=MAX_HEAD_BYTES)
        return _Connection(reader, writer)

    async def _exchange(self, connection: _Connection, request: bytes, *, reused: bool) -> tuple[int, str, bytes]:
        keep = False
        answered = False
        try:
            connection.writer.write(request)
            await connection.writer.drain()
            head = await connection.reader.readuntil(b"\r\n\r\n")
            answered = True
            status, reason, headers = _parse_head(head)
            if "content-length" in headers and not 0 <= int(headers["content-length"]) <= MAX_BODY_BYTES:
                raise LeanHTTPError(f"answer of {headers['content-length']} bytes refused")
            body = await _collect(_body(connection.reader, status, headers), MAX_BODY_BYTES)
            if "content-length" not in headers and not _chunked(headers) and not _bodiless(status):
                headers["connection"] = "close"  # no framing: the body ended with the connection
            keep = headers.get("connection", "").lower() != "close" and not head.startswith(b"HTTP/1.0")
            return status, reason, body
        except asyncio.IncompleteReadError as err:
            if reused and not answered and not err.partial:
                raise _Stale from None
            raise LeanHTTPError("the connection closed mid-answer") from err
        except (ConnectionError, BrokenPipeError) as err:
            if reused and not answered:
                raise _Stale from None
            raise LeanHTTPError(f"connection failed: {err}") from err
        except (asyncio.LimitOverrunError, ValueError) as err:
            raise LeanHTTPError(f"malformed answer: {err}") from err
        except (OSError, ssl.SSLError) as err:
            raise LeanHTTPError(f"connection failed: {err}") from err
        finally:
            if keep and len(self._idle) < self._max_idle:
                connection.last_used = time.monotonic()
                self._idle.append(connection)
            else:
                connection.close()

    async def aclose(self) -> None:
        """Close the pooled connections."""
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


def _parse_head(head: bytes) -> tuple[int, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise ValueError(f"status line {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, sep, value = line.partition(":")
            if not sep:
                raise ValueError(f"header line {line[:80]!r}")
            headers[name.strip().lower()] = value.strip()
    return int(parts[1]), parts[2] if len(parts) > 2 else "", headers


def _bodiless(status: int) -> bool:
    return status < 200 or status in (204, 304)


def _chunked(headers: dict[str, str]) -> bool:
    return headers.get("transfer-encoding", "").lower() == "chunked"


async def _body(reader: asyncio.StreamReader, status: int, headers: dict[str, str]) -> AsyncIterator[bytes]:
    """An answer's body as it arrives, framed as its head says: chunked, by Content-Length, or to the end of
    the connection (none at all for 1xx, 204 and 304). IncompleteReadError if the connection ends first,
    ValueError if the framing is malformed. Nothing is read past the body's end but in chunked coding's last
    read (requests are never pipelined)."""
    if _bodiless(status):
        return
    if _chunked(headers):
        decoder = ChunkedDecoder()
        while not decoder.done:
            data = await reader.read(READ_BYTES)
            if not data:
                raise asyncio.IncompleteReadError(b"", None)
            for piece in decoder.feed(data):
                yield piece
    elif "content-length" in headers:
        left = int(headers["content-length"])
        if left < 0:
            raise ValueError(f"Content-Length {left}")
        while left:
            data = await reader.read(min(left, READ_BYTES))
            if not data:
                raise asyncio.IncompleteReadError(b"", left)
            left -= len(data)
            yield data
    else:
        while data := await reader.read(READ_BYTES):
            yield data


async def _collect(pieces: AsyncIterator[bytes], limit: int) -> bytes:
    """A body read whole, refused past ``limit`` bytes."""
    held: list[bytes] = []
    size = 0
    async for piece in pieces:
        size += len(piece)
        if size > limit:
            raise LeanHTTPError(f"answer over {limit} bytes refused")
        held.append(piece)
    return held[0] if len(held) == 1 else b"".join(held)


class Stream:
    """A streamed answer: its status, reason phrase and headers, and its body piece by piece as it arrives.

    The body is framed as the head says (chunked, by Content-Length, or to the end of the connection). One
    timer cuts the connection at the stream's deadline, so reading needs no timeout of its own per read.
    """

    def __init__(self, connection: _Connection, status: int, reason: str, headers: dict[str, str],
                 deadline: float) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self._connection = connection
        self._expired = False
        self._timer = asyncio.get_running_loop().call_later(max(0.0, deadline - time.monotonic()), self._expire)

    def _expire(self) -> None:
        self._expired = True
        self._connection.writer.transport.abort()

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive; LeanHTTPError if it ends early, is malformed or runs out of time."""
        try:
            async for piece in _body(self._connection.reader, self.status, self.headers):
                yield piece
        except ValueError as err:
            raise LeanHTTPError(f"malformed answer: {err}") from err
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError) as err:
            raise self._ended() from err
        if self._expired:  # a body without framing ends with the connection, which the deadline cut
            raise self._ended()

    async def body(self, limit: int = MAX_BODY_BYTES) -> bytes:
        """The whole body (an error's Status), refused past ``limit`` bytes."""
        return await _collect(self.chunks(), limit)

    def _ended(self) -> LeanHTTPError:
        if self._expired:
            return LeanHTTPError("the stream outlived its deadline")
        return LeanHTTPError("the connection closed mid-answer")

    def close(self) -> None:
        """Stop the timer and close the connection."""
        self._timer.cancel()
        self._connection.close()


class ChunkedDecoder:
    """Undoes HTTP/1.1's chunked transfer coding as bytes arrive: ``feed`` returns the data they complete
    (a piece of a chunk as soon as it is there), ``done`` turns true after the last chunk and its trailers."""

    __slots__ = ("_crlf", "_left", "_rest", "_trailers", "done")

    def __init__(self) -> None:
        self._rest = b""  # an incomplete size or trailer line
        self._left = 0  # bytes of the current chunk's data still to come
        self._crlf = 0  # bytes of the CRLF that ends a chunk's data still to come
        self._trailers = False  # past the last (empty) chunk
        self.done = False

    def feed(self, data: bytes) -> list[bytes]:
        if self._rest:
            data, self._rest = self._rest + data, b""
        pieces: list[bytes] = []
        pos, end = 0, len(data)
        while pos < end and not self.done:
            if self._left:
                take = min(self._left, end - pos)
                pieces.append(data[pos:pos + take])
                pos += take
                self._left -= take
                if not self._left:
                    self._crlf = 2
            elif self._crlf:
                take = min(self._crlf, end - pos)
                if data[pos:pos + take] != b"\r\n"[2 - self._crlf:2 - self._crlf + take]:
                    raise ValueError("a chunk's data is not followed by CRLF")
                pos += take
                self._crlf -= take
            else:
                line_end = data.find(b"\r\n", pos)
                if line_end < 0:
                    if end - pos > MAX_CHUNK_LINE_BYTES:
                        raise ValueError(f"a chunk line over {MAX_CHUNK_LINE_BYTES} bytes")
                    self._rest = data[pos:]
                    break
                line = data[pos:line_end]
                pos = line_end + 2
                if self._trailers:
                    self.done = not line
                    continue
                size_text = line.split(b";", 1)[0].strip()
                if not size_text or size_text.strip(b"0123456789abcdefABCDEF") or len(size_text) > 16:
                    raise ValueError(f"chunk size line {line[:40]!r}")
                size = int(size_text, 16)
                if size:
                    self._left = size
                else:
                    self._trailers = True
        return pieces
