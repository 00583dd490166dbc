"""A lean HTTP/1.1 client for the apiserver's per-pod traffic: Binding POSTs and watch streams.

kube-scheduler binds pods in parallel goroutines, so the extender's bind verb is the one call it makes per
pod that ends in an apiserver request, and each pod it schedules comes back as watch events (its creation and
its binding). Through httpx (httpcore, anyio's TLS stream in Python, h11), one Binding POST cost the event
loop more CPU than the filter and prioritize calls of the same pod together, and reading the pod watch cost
more than filter. This client does only what those need, with asyncio's own transports and TLS (uvloop's, in
the service):

- ``post``: keep-alive connections from a small pool, one request written in one call, and its answer read
  whole;
- ``open_stream``: a GET on a connection of its own whose answer is read as it arrives, within one deadline
  for the whole stream: whole, or cut into lines that a caller's function may deal with inside the callback
  that received them (``Stream.lines``).

Every connection is read by its own callbacks (``_Reading``): an answer framed chunked, by Content-Length or
by the end of the connection, one answer after another on a kept-alive one.

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
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

from extender.kubeapi.config import ClusterConfig

IDLE_SECONDS = 30.0  # a pooled connection idle longer than this is closed rather than reused
MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 4 * 1024 * 1024  # a Binding's answer is a Status of a few hundred bytes
MAX_CHUNK_LINE_BYTES = 4096  # a chunk's size line (with extensions), or a trailer line
# A watch event is one object: etcd stores at most 1.5 MiB of one (its default --max-request-bytes), which its
# JSON may double. A line this long is no event, and an answer that never ends its line is refused here rather
# than held until memory runs out.
MAX_LINE_BYTES = 32 * 1024 * 1024


class LeanHTTPError(OSError):
    """The request could not be sent or its answer not read (connection, TLS, timeout, malformed answer)."""


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
        self._idle: list[_Reading] = []  # kept-alive connections, the most recently used last

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
                reading = await self._connect()
        except TimeoutError:
            raise LeanHTTPError(f"cannot connect to {self._host}:{self._port} within {self._timeout:g} seconds") \
                from None
        except (OSError, ssl.SSLError) as err:
            raise LeanHTTPError(f"cannot connect to {self._host}:{self._port}: {err}") from err
        try:
            async with asyncio.timeout(self._timeout):
                reading.send(request)
                status, reason, headers = await reading.answered
            return Stream(reading, status, reason, headers, deadline)
        except BaseException as err:
            reading.close()
            if isinstance(err, TimeoutError):
                raise LeanHTTPError(f"no answer within {self._timeout:g} seconds") from None
            raise

    def _pooled(self) -> _Reading | None:
        now = time.monotonic()
        while self._idle:
            reading = self._idle.pop()
            if now - reading.last_used < IDLE_SECONDS and not reading.lost:
                return reading
            reading.close()
        return None

    async def _connect(self) -> _Reading:
        loop = asyncio.get_running_loop()
        if self._tls is not None:
            _, reading = await loop.create_connection(lambda: _Reading(loop), self._host, self._port, ssl=self._tls,
                                                      server_hostname=self._server_name)
        else:
            _, reading = await loop.create_connection(lambda: _Reading(loop), self._host, self._port)
        return reading

    async def _exchange(self, reading: _Reading, request: bytes, *, reused: bool) -> tuple[int, str, bytes]:
        keep = False
        try:
            reading.next_answer()
            reading.send(request)
            try:
                status, reason, _headers = await reading.answered
            except LeanHTTPError:
                if reused and not reading.received:
                    raise _Stale from None
                raise
            body = await reading.whole(MAX_BODY_BYTES)
            keep = reading.reusable
            return status, reason, body
        finally:
            if keep and len(self._idle) < self._max_idle:
                reading.last_used = time.monotonic()
                self._idle.append(reading)
            else:
                reading.close()

    async def aclose(self) -> None:
        """Close the pooled connections."""
        idle, self._idle = self._idle, []
        for reading in idle:
            reading.close()


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


T = TypeVar("T")
_ENDED = LeanHTTPError("the body ended")  # a marker: the body ended as its framing says (never raised)


class _Reading(asyncio.Protocol):
    """One connection to the apiserver, read by callbacks as bytes arrive: each answer's head, then its body
    undone from its framing (chunked, by Content-Length, or to the connection's end), kept whole (a Binding's
    Status, an error's: ``whole``) or cut into lines (a watch: ``Stream.lines``). A POST's connection reads
    one answer after another (``next_answer``) while it is kept alive.

    Why callbacks and not an asyncio stream: a watch brings one event at a time, every few milliseconds in
    kube-scheduler's loop. Read through a StreamReader, each event woke a task and passed through three
    generators before it was applied; here an event can be dealt with inside the callback that received its
    bytes (see ``Stream.lines``), as the least a watcher spends does (bench/watch_floor.py).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.transport: asyncio.Transport | None = None
        self.lost = False  # the connection is gone
        self.last_used = 0.0  # when it went back to the pool
        self.expired = False  # cut at the stream's deadline
        self._waiter: asyncio.Future[None] | None = None
        self.next_answer()

    def next_answer(self) -> None:
        """Read the next answer from scratch (the one before it, if any, was read to its end)."""
        self.answered: asyncio.Future[tuple[int, str, dict[str, str]]] = self._loop.create_future()
        self.received = False  # a byte of this answer arrived
        self.reusable = False  # once its body ended: another request may follow on this connection
        self._head = b""  # the head's bytes so far
        self._framing: ChunkedDecoder | int | None = None  # chunked, bytes left by Content-Length, or to the end
        self.ending: BaseException | None = None  # _ENDED, or why the body could not be read
        self._pieces: list[bytes] = []  # body bytes kept whole (before lines are asked for, or for whole())
        self._kept = 0  # their size
        self._limit = MAX_BODY_BYTES
        self._splitting = False  # lines were asked for: the body is cut into lines
        self._lines = LineSplitter()
        self.queue: deque[tuple[bool, Any]] = deque()  # (taken, item): an item take gave, or a line not yet taken
        self.take: Callable[[bytes], Any] | None = None  # offered each line as it completes (Stream.lines)
        self.holding = False  # the consumer holds an item: no line is taken before it is done with it

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A read-write transport (uvloop's TLS transport is one without being an asyncio.Transport).
        self.transport = cast(asyncio.Transport, transport)

    def send(self, request: bytes) -> None:
        assert self.transport is not None
        self.transport.write(request)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self.ending is not None or self.answered.cancelled():
            return
        self.received = True
        if not self.answered.done():
            data = self._read_head(data)
            if not data:
                return
        try:
            self._body_bytes(data)
        except Exception as err:  # from the framing, or from take: raised once the items before it are consumed
            self._end(err)
        self._wake()

    def _read_head(self, data: bytes) -> bytes:
        """Keeps the head's bytes until it is complete; then answers it and returns the body's bytes after it."""
        self._head += data
        end = self._head.find(b"\r\n\r\n")
        if end < 0:
            if len(self._head) > MAX_HEAD_BYTES:
                self._refuse(LeanHTTPError(f"malformed answer: a head over {MAX_HEAD_BYTES} bytes"))
            return b""
        head, rest = self._head[:end + 4], self._head[end + 4:]
        self._head = b""
        try:
            status, reason, headers = _parse_head(head)
            length = int(headers["content-length"]) if "content-length" in headers else None
            if length is not None and length < 0:
                raise ValueError(f"Content-Length {length}")
        except ValueError as err:
            self._refuse(LeanHTTPError(f"malformed answer: {err}"))
            return b""
        if _bodiless(status):
            self._framing, self.ending = 0, _ENDED
        elif _chunked(headers):
            self._framing = ChunkedDecoder()
        else:
            self._framing = length
            if length == 0:
                self.ending = _ENDED
        # Another request may follow once this body ends, unless the server says otherwise or the body ends
        # with the connection.
        self.reusable = self._framing is not None and headers.get("connection", "").lower() != "close" \
            and not head.startswith(b"HTTP/1.0")
        self.answered.set_result((status, reason, headers))
        return rest if self.ending is None else b""

    def _refuse(self, err: LeanHTTPError) -> None:
        """The head could not be read: the stream was never answered."""
        self.ending = err
        if not self.answered.done():
            self.answered.set_exception(err)
        self.close()

    def _body_bytes(self, data: bytes) -> None:
        framing = self._framing
        if isinstance(framing, ChunkedDecoder):
            try:
                pieces = framing.feed(data)
            except ValueError as err:
                raise LeanHTTPError(f"malformed answer: {err}") from err
            ended = framing.done
        elif framing is None:
            pieces, ended = [data], False
        else:
            pieces = [data[:framing]]
            self._framing = framing - len(pieces[0])
            ended = not self._framing
        for piece in pieces:
            if self._splitting:
                self._split(piece)
            elif piece:
                self._kept += len(piece)
                if self._kept > self._limit:
                    raise LeanHTTPError(f"answer over {self._limit} bytes refused")
                self._pieces.append(piece)
        if ended:
            self._end(_ENDED)

    def split_kept(self) -> None:
        """From now on the body is cut into lines, starting with what was kept of it so far."""
        self._splitting = True
        pieces, self._pieces = self._pieces, []
        try:
            for piece in pieces:
                self._split(piece)
            if self.ending is _ENDED:
                self._last_line()
        except Exception as err:  # as in data_received: raised once the items before it are consumed
            if self.ending is _ENDED:
                self.ending = None  # the body had ended, but a line of it is refused: that is its end now
            self._end(err)

    def _split(self, piece: bytes) -> None:
        for line in self._lines.feed(piece):
            self._offer(line)

    def _last_line(self) -> None:
        last = self._lines.end()
        if last is not None:
            self._offer(last)

    def _offer(self, line: bytes) -> None:
        take = self.take
        if take is not None and not self.queue and not self.holding:
            item = take(line)  # nothing before it is waiting: dealt with now, in order
            if item is not None:
                self.queue.append((True, item))
        else:
            self.queue.append((False, line))
        if self.queue and self.transport is not None:
            self.transport.pause_reading()  # the consumer reads on once it has them all

    def _end(self, why: BaseException) -> None:
        """The body ended (``_ENDED``) or cannot be read on (an error, closing the connection); the first end
        stands. A last line without its newline is offered at the body's end."""
        if self.ending is not None:
            return
        if why is _ENDED and self._splitting:
            self._last_line()
        self.ending = why
        if why is not _ENDED:
            self.close()

    def eof_received(self) -> bool:
        return False  # the connection closes: connection_lost says how the body ended

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.reusable = False
        if not self.answered.done():
            self._refuse(LeanHTTPError("the connection closed before an answer"))
        elif self.ending is None:
            if self.expired:
                self._end(LeanHTTPError("the stream outlived its deadline"))
            elif self._framing is None:
                try:
                    self._end(_ENDED)  # no framing: the body ends with the connection
                except Exception as err:  # from take, offered the last line
                    self.ending = err
            else:
                self._end(LeanHTTPError("the connection closed mid-answer"))
        self._wake()

    def _wake(self) -> None:
        """Wakes the consumer when it has something to do: an item waiting, the body's end, or (whole) bytes."""
        waiter = self._waiter
        if waiter is not None and not waiter.done() and (self.queue or self.ending is not None or self._pieces):
            waiter.set_result(None)

    async def wait(self) -> None:
        """Until more of the body (or its end) has arrived; reading goes on meanwhile."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.resume_reading()
        self._waiter = self._loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    async def whole(self, limit: int) -> bytes:
        """The body whole once it has ended, refused past ``limit`` bytes."""
        self._limit = limit
        while True:
            if self._kept > limit:
                raise LeanHTTPError(f"answer over {limit} bytes refused")
            if self.ending is _ENDED:
                return b"".join(self._pieces)
            if self.ending is not None:
                raise self.ending
            await self.wait()


class Stream:
    """A streamed answer: its status, reason phrase and headers, and its body, whole or line by line.

    The body is framed as the head says (chunked, by Content-Length, or to the end of the connection). One
    timer cuts the connection at the stream's deadline, so reading needs no timeout of its own per read.
    """

    def __init__(self, reading: _Reading, status: int, reason: str, headers: dict[str, str],
                 deadline: float) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self._reading = reading
        self._timer = asyncio.get_running_loop().call_later(max(0.0, deadline - time.monotonic()), self._expire)

    def _expire(self) -> None:
        self._reading.expired = True
        if self._reading.transport is not None:
            self._reading.transport.abort()

    async def lines(self, take: Callable[[bytes], T | None]) -> AsyncIterator[T]:
        """What ``take`` makes of the body's non-empty lines (a watch: one event per line), in order.

        ``take`` is called with each line as soon as it is complete, on the event loop, inside the callback
        that received its bytes when nothing before it is waiting: a line it has dealt with there (None) costs
        no task wake-up. A line whose item it returns, and every line after it, waits for the consumer, which
        gets the items in order (``take`` is called for the waiting lines as the consumer reaches them) while
        reading pauses. An exception from ``take`` ends the stream: it is raised once the items before it are
        consumed. LeanHTTPError if the body ends early, is malformed or runs out of time.
        """
        reading = self._reading
        reading.take = take
        reading.split_kept()
        while True:
            while reading.queue:
                taken, value = reading.queue.popleft()
                item = value if taken else take(value)
                if item is None:
                    continue
                reading.holding = True  # no line is taken in place before the consumer is done with this one
                try:
                    yield item
                finally:
                    reading.holding = False
            if reading.ending is not None:
                if reading.ending is _ENDED:
                    return
                raise reading.ending
            await reading.wait()

    async def body(self, limit: int = MAX_BODY_BYTES) -> bytes:
        """The whole body (an error's Status), refused past ``limit`` bytes."""
        return await self._reading.whole(limit)

    def close(self) -> None:
        """Stop the timer and close the connection."""
        self._timer.cancel()
        self._reading.close()


class LineSplitter:
    """Cuts a stream of bytes into its non-empty lines (a watch: one JSON event per line), as bytes arrive:
    ``feed`` returns the lines a piece completes, ``end`` the last one if the stream ended without a newline.
    A line longer than ``max_line_bytes`` raises LeanHTTPError, as soon as that many bytes of it arrived."""

    __slots__ = ("_held", "_held_bytes", "max_line_bytes")

    def __init__(self, max_line_bytes: int | None = None) -> None:
        self._held: list[bytes] = []  # a line's pieces so far (an event larger than a read)
        self._held_bytes = 0
        self.max_line_bytes = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes

    def feed(self, piece: bytes) -> list[bytes]:
        if b"\n" not in piece:
            if piece:
                self._held.append(piece)
                self._held_bytes += len(piece)
                if self._held_bytes > self.max_line_bytes:
                    self._refuse()
            return []
        if self._held:
            self._held.append(piece)
            piece = b"".join(self._held)
            self._held.clear()
            self._held_bytes = 0
        *complete, rest = piece.split(b"\n")
        # (Only a piece longer than the limit can hold a line longer than it: the usual piece is not looked at.)
        if len(piece) > self.max_line_bytes and any(len(line) > self.max_line_bytes for line in (*complete, rest)):
            self._refuse()
        if rest:
            self._held.append(rest)
            self._held_bytes = len(rest)
        return [line for line in complete if line.strip()]

    def _refuse(self) -> None:
        self._held.clear()
        self._held_bytes = 0
        raise LeanHTTPError(f"a line of the answer over {self.max_line_bytes} bytes refused (no watch event is "
                            "that large)")

    def end(self) -> bytes | None:
        last = b"".join(self._held)
        self._held.clear()
        self._held_bytes = 0
        return last if last.strip() else None


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
