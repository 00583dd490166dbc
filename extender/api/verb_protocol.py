"""The verbs' own HTTP/1.1 protocol: kube-scheduler's requests answered without uvicorn's request cycle.

kube-scheduler sends a verb every few milliseconds on kept-alive connections, and between them the service is
idle: each request runs its code with the CPU's caches cold, so what it costs depends on how much code runs,
far more than back to back (``python -m bench.http_glue --pause-ms 2.5``: uvicorn's request cycle, the ASGI
messages and the application's dispatch cost a verb several times what parsing it does). This protocol
feeds httptools' parser itself and, for a verb (``POST /<verb>`` or ``/profiles/<name>/<verb>``, found by
:meth:`FastVerbs.route <extender.api.routes.FastVerbs.route>`), reads the body under the same limits as the
ASGI path, calls the verb's handler in a task and writes the answer in one write: the same status, body and
headers (uvicorn's default ones, content type and length, the request id) as the application sends.

Anything else goes to uvicorn, with everything it does: a request that is not a verb (or asks for ``Expect``,
an upgrade, a chunked body or a path to decode) hands the connection over to the guarded uvicorn protocol
(:mod:`extender.api.connections`), which reads that request's bytes again from its first one and serves the
connection from then on. A request's bytes can be given again only if it began a read: a client that pipelines
a request that is not a verb behind others in one write gets the answers before it, then the connection closes
(which HTTP/1.1 allows; the client sends it again).

What it keeps of the guarded protocol: the listener times the first request head from accept; later heads must
be complete ``head_timeout`` seconds after the previous answer; an idle connection closes after the keep-alive
time; a head is at most the guarded protocol's ``max_head_bytes`` (past it 431, counted as there); a body
must arrive within the read timeout; a malformed request gets uvicorn's 400 and the connection closes. One
request is served at a time: reading pauses while an answer is computed and while the client does not read
what was written, so a client can make the service hold one answer, no more. Pipelined verbs in one write are
answered in order.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import TYPE_CHECKING, Any

import httptools

from extender.api.connections import DEFAULT_MAX_HEAD_BYTES, head_too_large_answer, status_head
from extender.api.http import (
    HTTPProblem,
    body_late,
    declared_too_large,
    new_request_id,
    non_empty,
)
from extender.logs import request_id

if TYPE_CHECKING:
    from collections.abc import Callable

    from extender.api.listener import AcceptedConnection, HttpProtocol
    from extender.api.routes import FastHandler, FastVerbs

log = logging.getLogger("extender.connections")

_INVALID = "Invalid HTTP request received."
_INTERNAL_ERROR = (b"content-type: text/plain; charset=utf-8\r\ncontent-length: 21\r\nconnection: close\r\n\r\n"
                   b"Internal Server Error")


class _HandOver(Exception):
    """Raised from a parser callback to stop parsing: the request is not one this protocol serves."""


class _Request:
    """A verb request: its handler, what was read of it, and whether the connection stays open after it."""

    __slots__ = ("body", "handler", "held", "keep_alive", "problem", "profile", "rid")

    def __init__(self, handler: FastHandler, profile: str | None, rid: str, keep_alive: bool) -> None:
        self.handler = handler
        self.profile = profile
        self.rid = rid
        self.keep_alive = keep_alive
        self.body: list[bytes] = []
        self.problem: HTTPProblem | None = None  # why the body is refused (answered through the handler)
        self.held = 0  # bytes taken from the body memory until it is answered (a large body's size)


class VerbProtocol:
    """One connection of the verbs' port (see the module's docstring). Made by the listener with uvicorn's
    arguments; ``fallback`` is the guarded uvicorn protocol class the connection is handed to for anything
    that is not a verb."""

    fallback: Callable[..., HttpProtocol]
    head_timeout: float
    max_head_bytes: int = DEFAULT_MAX_HEAD_BYTES
    on_refused: Any = None

    def __init__(self, config: Any, server_state: Any, app_state: Any, _loop: asyncio.AbstractEventLoop | None = None,
                 slot: AcceptedConnection | None = None) -> None:
        self._args = {"config": config, "server_state": server_state, "app_state": app_state, "_loop": _loop}
        self.loop = _loop or asyncio.get_event_loop()
        self.slot = slot
        self.server_state = server_state
        self.verbs = _fast_verbs(config.loaded_app)
        self.keep_alive_seconds = config.timeout_keep_alive
        self.transport: asyncio.Transport = None  # type: ignore[assignment]
        self.parser = httptools.HttpRequestParser(self)
        self._timer: asyncio.TimerHandle | None = None
        self._head_due = 0.0  # loop time by which the next head must be complete (after an answer)
        self._in_message = False  # between a message's first byte and its end
        self._head_done = False
        self._fresh = True  # the message being parsed began a read: its bytes can be given again
        self._head_began_now = False  # the head being read began in the read being parsed
        self._head_bytes = 0  # bytes of it that arrived after that read (the size limit counts these)
        self._completed_in_read = 0  # messages completed in the read being parsed
        self._replay: list[bytes] = []  # the reads since the current message began, until its head is done
        self._url = b""
        self._headers: dict[bytes, bytes] = {}
        self._request: _Request | None = None  # the one being read
        self._queue: collections.deque[_Request] = collections.deque()  # read, waiting to be answered
        self._answering = False
        self._write_paused = False
        self._reading_paused = False
        self._closing = False  # close once what was read is answered
        self._stop = False  # stop reading: an unanswerable request followed

    # ------------------------------------------------------------------ connection

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's transports are not asyncio's classes
        self.server_state.connections.add(self)
        if self.slot is None:  # under a listener the first head is timed from accept there
            self._head_due = self.loop.time() + self.head_timeout
            self._arm(self.head_timeout)

    def data_received(self, data: bytes) -> None:
        if self._stop:
            return
        if not self._in_message:
            self._fresh = True
            self._replay = [data]
        elif not self._head_done:
            self._replay.append(data)
        self._completed_in_read = 0
        self._head_began_now = False
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserCallbackError as err:
            if isinstance(err.__context__, _HandOver):
                self._hand_over()
                return
            log.error("reading a request failed", exc_info=err.__context__)
            self._stop = True
            self.transport.close()
            return
        except httptools.HttpParserError:
            self._answer_invalid()
            return
        except httptools.HttpParserUpgrade:  # an upgrade uvicorn may serve (it refuses or answers it)
            self._hand_over()
            return
        if self._in_message and not self._head_done and not self._head_began_now:
            self._head_bytes += len(data)
            if self._head_bytes > self.max_head_bytes:
                self._refuse_head()
                return
        request = self._request
        if request is not None and self._head_done and self._timer is None and not self._answering:
            self._arm(self.verbs.read_timeout if self.verbs is not None else 0)  # the body's deadline

    def eof_received(self) -> bool | None:
        return None  # the transport closes (as uvicorn's protocol lets it)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server_state.connections.discard(self)
        self._cancel_timer()
        for unanswered in (self._request, *self._queue):  # (the one being answered gives back its own)
            if unanswered is not None:
                self._release(unanswered)
        self._request = None
        self._queue.clear()
        self._replay = []  # now, not when the collector breaks the parser's cycle with this protocol
        if self.slot is not None:
            self.slot.released()

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        if not self._answering:
            self._resume()

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown: close now if idle, else after what was read is answered."""
        self.finish_and_close()

    def finish_and_close(self) -> None:
        """Close now if no request is in flight; else answer what was read (with ``Connection: close``)."""
        if self.transport.is_closing():
            return
        if not self._answering and not self._in_message and not self._queue:
            self.transport.close()
            return
        self._closing = True

    # ------------------------------------------------------------------ parser callbacks

    def on_message_begin(self) -> None:
        self._in_message = True
        self._head_done = False
        self._head_began_now = True
        self._head_bytes = 0
        if self._completed_in_read:
            self._fresh = False  # pipelined behind another request in the same read
        self._url = b""
        self._headers = {}
        # The timer armed after the last answer stays: when it fires with this head still incomplete, it waits
        # for the head's own deadline instead of closing an idle connection (see _timed_out).

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.setdefault(name.lower(), value)  # the first of a repeated header, as the ASGI path reads

    def on_headers_complete(self) -> None:
        self._head_done = True
        self._head_due = 0.0
        if not self._answering:
            self._cancel_timer()
        if self.slot is not None:
            self.slot.proven()
        routed = self._verb()
        if routed is None:
            raise _HandOver()
        handler, profile = routed
        self._replay = []
        self.server_state.total_requests += 1
        sent = self._headers.get(b"x-request-id")
        keep_alive = self.parser.get_http_version() != "1.0" and self.parser.should_keep_alive()
        request = self._request = _Request(handler, profile, sent.decode("latin-1")[:64] if sent else new_request_id(),
                                           keep_alive)
        if self.verbs is not None:
            declared = self._headers.get(b"content-length")
            request.problem = declared_too_large(declared, self.verbs.max_body_bytes)
            if request.problem is None and declared is not None and declared.isdigit():
                try:
                    request.held = self.verbs.body_memory.take_declared(int(declared))
                except HTTPProblem as refused:
                    request.problem = refused
            if request.problem is not None:
                self._refuse_body(request)  # answered now, before any of the body is read

    def on_body(self, chunk: bytes) -> None:
        request = self._request
        if request is None or request.problem is not None:
            return
        # No size check here: httptools frames the body by its Content-Length, which on_headers_complete checked
        # against the limit (a chunked body, whose length is not declared, is uvicorn's to read).
        request.body.append(chunk)

    def on_message_complete(self) -> None:
        self._in_message = False
        self._completed_in_read += 1
        request, self._request = self._request, None
        if request is None:
            return
        if self._answering or self._queue:
            self._pause()  # pipelined: hold no more than this one until the ones before it are answered
        else:
            self._cancel_timer()  # the body's deadline
        self._queue.append(request)
        if not self._answering:
            self._next()

    def _refuse_body(self, request: _Request) -> None:
        """Answer a request whose body is refused (too large) now, then close: the rest of it is not read."""
        request.keep_alive = False
        self._request = None
        self._stop = True
        self._cancel_timer()
        self._pause()
        self._queue.append(request)
        if not self._answering:
            self._next()

    # ------------------------------------------------------------------ answering

    def _verb(self) -> tuple[FastHandler, str | None] | None:
        """The verb's handler and profile, when this protocol serves the request; None hands it over."""
        if self.verbs is None or self.parser.get_method() != b"POST" or self.parser.should_upgrade():
            return None
        headers = self._headers
        if b"expect" in headers or b"transfer-encoding" in headers:
            return None  # uvicorn answers 100 Continue and reads chunked bodies
        path = self._url.split(b"?", 1)[0]
        if not path.startswith(b"/") or b"%" in path:
            return None  # absolute forms and escaped paths: uvicorn decodes them
        try:
            return self.verbs.route(path.decode("ascii"))
        except UnicodeDecodeError:
            return None

    def _next(self) -> None:
        """Answer the next request read, if any (one at a time, in order)."""
        if not self._queue or self.transport.is_closing():
            return
        self._answering = True
        request = self._queue.popleft()
        task = self.loop.create_task(self._answer(request))
        self.server_state.tasks.add(task)
        task.add_done_callback(self.server_state.tasks.discard)

    async def _answer(self, request: _Request) -> None:
        token = request_id.set(request.rid)
        try:
            status, body, headers = await request.handler(lambda: self._body(request), request.profile)
        except Exception:
            log.exception("verb failed")  # answered as uvicorn answers an application's exception
            self._write(self._head(500) + _INTERNAL_ERROR)
            self.transport.close()
            return
        finally:
            request_id.reset(token)
            self._release(request)
        close = not request.keep_alive or self._closing
        head = [self._head(status)]
        head.append(b"content-type: application/json\r\ncontent-length: %d\r\nx-request-id: %s\r\n"
                    % (len(body), request.rid.encode("latin-1")))
        for name, value in headers:
            head.append(b"%s: %s\r\n" % (name, value))
        if close:
            head.append(b"connection: close\r\n")
        head.append(b"\r\n")
        head.append(body)
        self._write(b"".join(head))
        if close:
            self.transport.close()
            return
        self._answering = False
        if self._queue:
            self._next()
            return
        if self._stop:  # a request that cannot be served came after this one: the client sends it again
            self.transport.close()
            return
        self._head_due = self.loop.time() + self.head_timeout
        self._arm(min(self.keep_alive_seconds, self.head_timeout))
        self._resume()

    def _release(self, request: _Request) -> None:
        if request.held and self.verbs is not None:
            self.verbs.body_memory.give_back(request.held)
            request.held = 0

    def _head(self, status: int) -> bytes:
        """The status line and uvicorn's default headers (date, server)."""
        return status_head(status, self.server_state.default_headers)

    async def _body(self, request: _Request) -> bytes:
        if request.problem is not None:
            raise request.problem
        body = request.body[0] if len(request.body) == 1 else b"".join(request.body)
        request.body = []
        if request.held and self.verbs is not None:  # a large body: what it will decode to is held too
            request.held += self.verbs.body_memory.take_decoding(body, request.held)
        return non_empty(body)

    def _write(self, data: bytes) -> None:
        if not self.transport.is_closing():
            self.transport.write(data)

    # ------------------------------------------------------------------ deadlines, flow, hand-over

    def _arm(self, seconds: float) -> None:
        self._cancel_timer()
        self._timer = self.loop.call_later(max(seconds, 0.0), self._timed_out)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timed_out(self) -> None:
        self._timer = None
        if self.transport.is_closing() or self._answering:
            return
        request = self._request
        if request is not None and self._head_done:  # the body is late: answered 408, then closed
            request.problem = body_late(self.verbs.read_timeout if self.verbs is not None else 0)
            self._refuse_body(request)
            return
        if self._in_message and self._head_due and self.loop.time() < self._head_due:
            self._arm(self._head_due - self.loop.time())  # a head in progress: its own deadline
            return
        if self._in_message:
            log.info("connection closed: no complete request head in time",
                     extra={"seconds": self.head_timeout, "client": self.slot.peer if self.slot else ""})
            if self.on_refused is not None:
                self.on_refused("head_timeout")
        self.transport.close()  # idle past the keep-alive time, or a head past its deadline

    def _pause(self) -> None:
        if not self._reading_paused:
            self._reading_paused = True
            self.transport.pause_reading()

    def _resume(self) -> None:
        if self._reading_paused and not self._write_paused and not self.transport.is_closing():
            self._reading_paused = False
            self.transport.resume_reading()

    def _answer_invalid(self) -> None:
        log.warning(_INVALID)
        self._refuse(self._head(400) + b"content-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
                     b"connection: close\r\n\r\n%s" % (len(_INVALID), _INVALID.encode()))

    def _refuse_head(self) -> None:
        log.warning("connection closed: request head too large",
                    extra={"limit": self.max_head_bytes, "client": self.slot.peer if self.slot else ""})
        if self.on_refused is not None:
            self.on_refused("head_too_large")
        self._replay = []
        self._pause()
        self._refuse(head_too_large_answer(self.server_state.default_headers))

    def _refuse(self, answer: bytes) -> None:
        """Read no further, answer ``answer`` and close; or, when requests read before are still to be
        answered, answer those and close then (``answer`` would come out of order)."""
        self._stop = True
        if self._answering or self._queue:
            return
        self._write(answer)
        self.transport.close()

    def _hand_over(self) -> None:
        """The request being read is not a verb's: uvicorn serves the connection from its first byte on, or,
        if that byte is not the first of a read, the connection closes once the requests before it are
        answered."""
        if not self._fresh or self._answering or self._queue:
            self._stop = True
            self._pause()
            if not self._answering and not self._queue:
                self.transport.close()
            return
        self._cancel_timer()
        self.server_state.connections.discard(self)
        replay = b"".join(self._replay)
        self._replay = []
        uvicorn = self.fallback(**self._args, slot=self.slot)
        if self.slot is not None:
            self.slot.http = uvicorn
        self.transport.set_protocol(uvicorn)  # type: ignore[arg-type]
        uvicorn.connection_made(self.transport)
        if self._reading_paused:
            self._reading_paused = False
            self.transport.resume_reading()
        uvicorn.data_received(replay)


def _fast_verbs(app: Any) -> FastVerbs | None:
    """The application's verbs, under the middleware uvicorn may wrap it in (each keeps it as ``app``)."""
    for _ in range(4):
        verbs = getattr(app, "fast_verbs", None)
        if verbs is not None:
            return verbs  # type: ignore[no-any-return]
        app = getattr(app, "app", None)
    return None


def verb_http(fallback: Callable[..., HttpProtocol], head_timeout: float,
              on_refused: Callable[[str], None] | None = None,
              max_head_bytes: int = DEFAULT_MAX_HEAD_BYTES) -> type[VerbProtocol]:
    """The verbs' protocol class for a listener, handing what is not a verb to ``fallback``."""
    return type("Verbs", (VerbProtocol,), {"fallback": staticmethod(fallback), "head_timeout": head_timeout,
                                           "max_head_bytes": max_head_bytes,
                                           "on_refused": staticmethod(on_refused) if on_refused else None})
