"""A lean HTTP/1.1 client for the apiserver's small JSON POSTs (Bindings), on asyncio streams.

kube-scheduler binds pods in parallel goroutines, so the extender's bind verb is the one call it makes per
pod that ends in an apiserver request. Through httpx (httpcore, anyio's TLS stream, h11), one such POST
cost the event loop more CPU than the filter and prioritize calls of the same pod together. This client
does only what a Binding needs: keep-alive connections from a small pool (asyncio's own streams and TLS), one
request written in one call, and a response read by its Content-Length or chunked, with the bearer token of
the cluster configuration (refreshed and retried once on a 401, as the httpx client does).

A connection taken from the pool may have been closed by the server meanwhile; a request that got no byte
of answer on such a reused connection is sent again once on a new connection (the server never saw it).
"""

from __future__ import annotations

import asyncio
import ssl
import time
import urllib.request
from urllib.parse import urlsplit

from extender.kubeapi.config import ClusterConfig

IDLE_SECONDS = 30.0  # a pooled connection idle longer than this is closed rather than reused
MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 4 * 1024 * 1024  # a Binding's answer is a Status of a few hundred bytes


class PostError(OSError):
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


class Poster:
    """POSTs JSON to one apiserver over a pool of keep-alive connections."""

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
        self._head = f"Host: {url.netloc}\r\nUser-Agent: {user_agent}\r\nAccept: application/json\r\n" \
                     "Content-Type: application/json\r\n"
        self._tokens = config.tokens
        self._timeout = timeout
        self._max_idle = max_idle
        self._idle: list[_Connection] = []

    async def post(self, path: str, body: bytes) -> tuple[int, str, bytes]:
        """POST ``body`` (JSON) to ``path``: (status, reason phrase, answer body); PostError if none came."""
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
            raise PostError(f"no answer within {self._timeout:g} seconds") from None
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
            raise PostError(f"cannot connect to {self._host}:{self._port}: {err}") from err
        try:
            return await self._exchange(connection, request, reused=False)
        except _Stale:
            raise PostError("the connection closed before an answer") from None

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
            if headers.get("transfer-encoding", "").lower() == "chunked":
                body = await _read_chunked(connection.reader)
            elif "content-length" in headers:
                length = int(headers["content-length"])
                if not 0 <= length <= MAX_BODY_BYTES:
                    raise PostError(f"answer of {length} bytes refused")
                body = await connection.reader.readexactly(length)
            else:  # no framing: the body ends with the connection
                body = await connection.reader.read(MAX_BODY_BYTES)
                headers["connection"] = "close"
            keep = headers.get("connection", "").lower() != "close" and not head.startswith(b"HTTP/1.0")
            return status, reason, body
        except asyncio.IncompleteReadError as err:
            if reused and not answered and not err.partial:
                raise _Stale from None
            raise PostError("the connection closed mid-answer") from err
        except (ConnectionError, BrokenPipeError) as err:
            if reused and not answered:
                raise _Stale from None
            raise PostError(f"connection failed: {err}") from err
        except (asyncio.LimitOverrunError, ValueError) as err:
            raise PostError(f"malformed answer: {err}") from err
        except (OSError, ssl.SSLError) as err:
            raise PostError(f"connection failed: {err}") from err
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


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        line = await reader.readuntil(b"\r\n")
        length = int(line.split(b";", 1)[0].strip(), 16)
        if length == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass  # trailers
            return b"".join(chunks)
        size += length
        if size > MAX_BODY_BYTES:
            raise PostError(f"answer over {MAX_BODY_BYTES} bytes refused")
        chunks.append(await reader.readexactly(length))
        await reader.readexactly(2)
