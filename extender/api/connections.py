"""uvicorn's HTTP/1.1 protocols with what they lack: a deadline for each request head, and one write per response.

uvicorn closes a keep-alive connection that stays idle ``timeout_keep_alive`` seconds after a response, but
arms no timer while it waits for a request's head: a client that sends its headers a byte at a time holds a
connection (and a file descriptor) for ever, and enough of them exhaust the process.

:func:`guarded_http` makes a protocol class (uvicorn's httptools one when installed, else h11) for the
listener (:mod:`extender.api.listener`), which counts the connection from accept and times its first request
head (TLS handshake included). This class times every later one: a connection whose next request head is not
complete ``head_timeout`` seconds after the previous response finished is closed (data arriving does not
extend it). It tells the listener when a head is complete and when the connection is gone.

A listener with a connection lifetime (the health port) ends a connection without cutting a request short:
a request whose head arrives too close to the lifetime for the connection to be kept alive after it is
answered with ``Connection: close``, and at the lifetime a request in flight is answered before the connection
closes (:meth:`_Guard.finish_and_close`; the listener aborts it if that takes longer than its grace).

A request head may be at most ``max_head_bytes`` long (64 KiB by default; kube-scheduler's are a few hundred
bytes). httptools sets no limit of its own, and uvicorn gathers a head's URL and headers as they come: within
its deadline one connection could make the process hold gigabytes. A head past the limit is answered
``431 Request Header Fields Too Large`` and the connection closes. The limit counts what arrives after the
read in which the head began, so it never refuses a shorter head, and a connection holds at most the limit
and one read. (h11, the fallback without httptools, has its own limit: it answers 400 past 16 KiB.)
"""

from __future__ import annotations

import asyncio
import http
import logging
from typing import TYPE_CHECKING, Any

import h11
from uvicorn.protocols.http.flow_control import CLOSE_HEADER
from uvicorn.protocols.http.h11_impl import H11Protocol

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    HTTPTOOLS = True
except ImportError:  # pragma: no cover - httptools comes with uvicorn[standard]
    HttpToolsProtocol = H11Protocol  # type: ignore[misc,assignment]
    HTTPTOOLS = False

if TYPE_CHECKING:
    from collections.abc import Callable

    from extender.api.listener import AcceptedConnection, HttpProtocol

log = logging.getLogger("extender.connections")

DEFAULT_HEAD_TIMEOUT_SECONDS = 10.0
DEFAULT_KEEP_ALIVE_SECONDS = 5
DEFAULT_MAX_HEAD_BYTES = 64 * 1024
HEAD_TOO_LARGE = "Request header fields too large."


_STATUS_LINES = {status.value: b"HTTP/1.1 %d %s\r\n" % (status.value, status.phrase.encode())
                 for status in http.HTTPStatus}


def status_head(status: int, default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """An answer's status line and uvicorn's default headers (date, server), as the server state holds them."""
    head = [_STATUS_LINES.get(status) or b"HTTP/1.1 %d \r\n" % status]
    for name, value in default_headers:
        head.append(b"%s: %s\r\n" % (name, value))
    return b"".join(head)


def head_too_large_answer(default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The whole 431 answer: the connection closes after it."""
    return status_head(431, default_headers) + b"content-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n" \
        b"connection: close\r\n\r\n%s" % (len(HEAD_TOO_LARGE), HEAD_TOO_LARGE.encode())


class _Guard:
    """The deadline of each request head after the first, for either of uvicorn's HTTP/1.1 protocols (mixed
    in ahead of it); the first one's runs from accept, in the listener."""

    head_timeout: float = DEFAULT_HEAD_TIMEOUT_SECONDS
    max_head_bytes: int = DEFAULT_MAX_HEAD_BYTES
    on_refused: Any = None  # called with a reason ("head_timeout", "head_too_large") for metrics

    # Provided by the uvicorn protocol class this is mixed into.
    client: tuple[str, int] | None
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    timeout_keep_alive: int

    slot: AcceptedConnection | None = None  # the listener's record of this connection
    _head_deadline: asyncio.TimerHandle | None = None
    _awaiting_head = False
    _closing = False  # close once the request in flight is answered (finish_and_close)

    def _guard_connection(self) -> None:
        """Under a listener the first request head is timed from accept there; on its own, from now."""
        if self.slot is None:
            self._arm_head_deadline()
        else:
            self._awaiting_head = True

    def _arm_head_deadline(self) -> None:
        self._cancel_head_deadline()
        self._awaiting_head = True
        self._head_deadline = self.loop.call_later(self.head_timeout, self._head_timed_out)

    def _head_received(self) -> None:
        self._awaiting_head = False
        self._cancel_head_deadline()  # the body has a timeout of its own (--read-timeout)
        if self.slot is not None:
            self.slot.proven()

    def _cancel_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_timed_out(self) -> None:
        self._head_deadline = None
        if self._awaiting_head and not self.transport.is_closing():
            log.info("connection closed: no complete request head in time",
                     extra={"seconds": self.head_timeout, "client": _peer(self.client)})
            self._refused("head_timeout")
            self.transport.close()

    def _refused(self, reason: str) -> None:
        if self.on_refused is not None:
            self.on_refused(reason)

    def _released(self) -> None:
        self._cancel_head_deadline()
        if self.slot is not None:
            self.slot.released()

    # ------------------------------------------------------------------ ending without cutting a request short

    def finish_and_close(self) -> None:
        """Close now if no request is in flight; else answer it (with ``Connection: close``) and close then."""
        if self.transport.is_closing():
            return
        if self._between_requests():
            self.transport.close()
            return
        self._closing = True
        self._last_request()

    def _between_requests(self) -> bool:
        """No request in flight: waiting for a head of which nothing has arrived."""
        raise NotImplementedError

    def _last_request(self) -> None:
        """The current request is the connection's last one when it is closing, or when its lifetime would end
        it while it waited, idle, for the next one: answered with ``Connection: close``, so that the client
        does not send another on a connection about to close under it."""
        if not self._closing:
            ends = self.slot.ends_at if self.slot is not None else None
            if ends is None or self.loop.time() + self.timeout_keep_alive < ends:
                return  # (the verbs' port has no lifetime: this is all a request costs here)
        cycle = getattr(self, "cycle", None)
        if cycle is not None and not cycle.response_complete:
            cycle.keep_alive = False
            self._announce_close(cycle)

    def _announce_close(self, cycle: Any) -> None:
        """Make the answer's head say that the connection closes after it, if the head is not sent yet
        (httptools' cycle adds ``Connection: close`` itself when it is not kept alive)."""


class GuardedH11Protocol(_Guard, H11Protocol):
    """uvicorn's h11 protocol with the request-head deadline."""

    def __init__(self, *args: Any, slot: AcceptedConnection | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slot = slot

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._guard_connection()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._awaiting_head and self.conn.their_state is not h11.IDLE:
            self._head_received()
            self._last_request()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self._arm_head_deadline()  # waiting for the next request's head (keep-alive)

    def _announce_close(self, cycle: Any) -> None:
        # uvicorn's h11 cycle writes Connection: close only when the request carried it; h11 then closes
        # after the answer (its state becomes MUST_CLOSE). Its default headers are the server's shared list:
        # this cycle gets a list of its own.
        if not cycle.response_started and CLOSE_HEADER not in cycle.default_headers:
            cycle.default_headers = [*cycle.default_headers, CLOSE_HEADER]

    def _between_requests(self) -> bool:
        return (self._awaiting_head and self.conn.their_state is h11.IDLE and not self.conn.trailing_data[0]
                and (self.cycle is None or self.cycle.response_complete))

    def connection_lost(self, exc: Exception | None) -> None:
        self._released()
        super().connection_lost(exc)


class _OneWritePerResponse:
    """The connection's transport, with the writes of one response joined into one.

    uvicorn's httptools protocol writes a response's head and its body separately: two send calls, and with
    TCP_NODELAY two segments that wake the client twice. For a small verb answer that doubles the cost of
    the system calls of every request. Writes here are held until the response completes (or the
    connection closes), and at the latest until the event loop's next turn, so nothing waits longer.
    """

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._held:
            self._loop.call_soon(self.flush)
        self._held.append(data)

    def flush(self) -> None:
        if self._held:
            data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
            self._held.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class GuardedHttpToolsProtocol(_Guard, HttpToolsProtocol):
    """uvicorn's httptools protocol (its default when installed) with the same deadline, and one write per
    response."""

    def __init__(self, *args: Any, slot: AcceptedConnection | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.slot = slot

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._guard_connection()
        self.transport = _OneWritePerResponse(transport, self.loop)  # type: ignore[assignment]

    _partial_head = False  # some bytes of a request head have arrived, not all of it
    _head_began_now = False  # the head being read began in the read being parsed
    _head_bytes = 0  # bytes of it that arrived after that read

    def data_received(self, data: bytes) -> None:
        self._head_began_now = False
        super().data_received(data)
        if self._partial_head and not self._head_began_now and not self.transport.is_closing():
            self._head_bytes += len(data)
            if self._head_bytes > self.max_head_bytes:
                self._refuse_head()

    def _refuse_head(self) -> None:
        """431 for a head past the limit, then close; after the answer in flight, if there is one (the head
        is not read further)."""
        log.warning("connection closed: request head too large",
                    extra={"limit": self.max_head_bytes, "client": _peer(self.client)})
        self._refused("head_too_large")
        self.transport.pause_reading()
        if self.cycle is not None and not self.cycle.response_complete:
            self._closing = True  # on_response_complete closes (the pipeline holds no complete request)
            return
        self.transport.write(head_too_large_answer(self.server_state.default_headers))
        self.transport.close()

    def on_message_begin(self) -> None:
        self._partial_head = True
        self._head_began_now = True
        self._head_bytes = 0
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._partial_head = False
        self._head_received()
        super().on_headers_complete()
        self._last_request()

    def on_response_complete(self) -> None:
        if isinstance(self.transport, _OneWritePerResponse):
            self.transport.flush()
        super().on_response_complete()
        if self.transport.is_closing():
            return
        if self._closing and not self.pipeline:  # a pipelined request is answered first (it closes after)
            self.transport.close()
        elif self.cycle is None or self.cycle.response_complete:
            self._arm_head_deadline()  # no pipelined request started: waiting for the next head

    def _between_requests(self) -> bool:
        return self._awaiting_head and not self._partial_head

    def connection_lost(self, exc: Exception | None) -> None:
        self._released()
        super().connection_lost(exc)


def _peer(client: tuple[str, int] | None) -> str:
    return f"{client[0]}:{client[1]}" if client else ""


def guarded_http(head_timeout: float = DEFAULT_HEAD_TIMEOUT_SECONDS, on_refused: Any = None,
                 max_head_bytes: int = DEFAULT_MAX_HEAD_BYTES) -> Callable[..., HttpProtocol]:
    """The HTTP protocol class the listener hands connections to, with this head deadline and size limit:
    httptools when installed (as uvicorn's own default), else h11."""
    base: type[_Guard] = GuardedHttpToolsProtocol if HTTPTOOLS else GuardedH11Protocol
    return type(base.__name__, (base,), {
        "head_timeout": head_timeout, "max_head_bytes": max_head_bytes,
        "on_refused": staticmethod(on_refused) if on_refused is not None else None})
