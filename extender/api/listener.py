"""Accept, then TLS, then HTTP: every connection counted and given a deadline from the moment it is accepted.

uvicorn lets asyncio terminate TLS: the loop accepts a socket, runs the TLS handshake for as long as its own
timeout allows (60 s), and only then makes uvicorn's HTTP protocol, whose ``connection_made`` is the first
thing that code sees. Sockets that never send a ClientHello are therefore neither counted against a connection
cap nor timed: a few hundred idle ones raise the open descriptors past any cap, and enough of them exhaust the
process's descriptors, after which nothing (probes included) is accepted.

Here uvicorn keeps its server (lifespan, signals, graceful shutdown) but the protocol it makes for each
accepted socket is :class:`AcceptedConnection`, which

1. counts the connection in its listener's :class:`ConnectionBudget` at once. Past the budget's cap the oldest
   connection that has not yet sent a complete request head (an idle or handshaking socket) is closed to make
   room; only when every connection is in use is the new one refused;
2. starts one deadline at accept: the TLS handshake and the first request head must both be done by then
   (``first_request_seconds``), and with ``lifetime_seconds`` (the health port) the connection ends at that
   age: at once if it is between requests, else once the request in flight is answered (with
   ``Connection: close``), and whatever it is doing ``lifetime_grace_seconds`` later;
3. with a TLS context, runs the handshake itself (``loop.start_tls``) under that deadline;
4. hands the (TLS) transport to uvicorn's HTTP protocol (:mod:`extender.api.connections`), which reports back
   when a request head is complete and when the connection closes.

Once handed over, the HTTP protocol reads and writes the transport directly: nothing here is on the path of
a request.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import os
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

log = logging.getLogger("extender.connections")

#: Seconds a connection has, from accept, to finish its TLS handshake and send its first request head.
DEFAULT_FIRST_REQUEST_SECONDS = 10.0
DEFAULT_MAX_CONNECTIONS = 512


class HttpProtocol(Protocol):
    """What this module needs of the HTTP protocol it hands a connection to (see ``connections.py``)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None: ...

    def data_received(self, data: bytes) -> None: ...

    def eof_received(self) -> bool | None: ...

    def connection_lost(self, exc: Exception | None) -> None: ...

    def finish_and_close(self) -> None: ...


@dataclass(frozen=True)
class ListenerLimits:
    """How one listener treats its connections.

    ``max_connections`` bounds the sockets the listener holds, including those the loop has accepted but not
    yet handed to :class:`AcceptedConnection` and those closed but not yet released: the loop accepts up to
    ``backlog`` at a time (the listen queue's length), a batch may be accepted while the previous one is
    being handled, and a connection closed to make room is released on the loop's next turn, so at most
    ``max_connections - 3 * backlog`` connections are admitted.
    """

    max_connections: int = DEFAULT_MAX_CONNECTIONS
    #: From accept to the first complete request head, TLS handshake included.
    first_request_seconds: float = DEFAULT_FIRST_REQUEST_SECONDS
    #: End a connection at this age (None: no bound; the health port has one). A request in flight then is
    #: answered first, for at most ``lifetime_grace_seconds`` more; then the connection is aborted whatever it
    #: is doing (a client that never reads its answer holds nothing longer than that).
    lifetime_seconds: float | None = None
    lifetime_grace_seconds: float = 2.0
    #: TLS handshakes in progress at once (each holds the TLS layer's buffers, a quarter of a megabyte).
    max_handshakes: int = 64

    @property
    def backlog(self) -> int:
        """The most sockets the loop accepts in one go (asyncio's ``backlog``). The kernel's listen queue is
        deeper (LISTEN_QUEUE): connections it holds are not ours yet, and a burst of connects longer than one
        accept batch (a probe arriving during an attack) must wait for the loop, not lose its SYN and retry
        a second later."""
        return max(1, min(32, self.max_connections // 16))

    @property
    def admitted(self) -> int:
        """Connections counted at once."""
        return max(1, self.max_connections - 3 * self.backlog)


Refused = Callable[[str], None]  # called with a reason ("connections", "evicted", ...) for metrics


class ConnectionBudget:
    """The open connections of one listener, counted from accept and capped.

    Connections that have not sent a complete request head yet ("unproven": handshaking or idle sockets) are
    kept in accept order; at the cap, a new connection closes the oldest of them. A client that is served
    needs milliseconds from accept to its request head, so the oldest unproven connection is, short of a flood
    of more than ``max_connections`` new sockets in that time, one that is holding a slot for nothing.
    """

    def __init__(self, limits: ListenerLimits, on_refused: Refused | None = None) -> None:
        self.limits = limits
        self.on_refused = on_refused
        self.open = 0
        self._unproven: collections.OrderedDict[AcceptedConnection, None] = collections.OrderedDict()
        self._handshaking: collections.OrderedDict[AcceptedConnection, None] = collections.OrderedDict()

    def admit(self, connection: AcceptedConnection) -> bool:
        """Count a new connection; False (and nothing counted) when it must be refused."""
        if self.open >= self.limits.admitted:
            if not self._unproven:
                self.refused("connections")
                log.warning("connection refused: too many open connections",
                            extra={"limit": self.limits.max_connections, "client": connection.peer})
                return False
            self._evict(self._unproven, "no request head since it was accepted")
        self.open += 1
        self._unproven[connection] = None
        return True

    def handshake(self, connection: AcceptedConnection) -> None:
        """The connection starts its TLS handshake: past ``max_handshakes`` the oldest one is closed."""
        if len(self._handshaking) >= self.limits.max_handshakes:
            self._evict(self._handshaking, "its TLS handshake was the oldest in progress")
        self._handshaking[connection] = None

    def handshake_over(self, connection: AcceptedConnection) -> None:
        """The connection's TLS handshake finished or failed."""
        self._handshaking.pop(connection, None)

    def _evict(self, queue: collections.OrderedDict[AcceptedConnection, None], why: str) -> None:
        oldest, _ = queue.popitem(last=False)
        self.refused("evicted")
        log.info(f"connection closed to admit a new one: {why}",
                 extra={"seconds": round(oldest.age(), 3), "client": oldest.peer})
        oldest.close(abort=True)

    def proven(self, connection: AcceptedConnection) -> None:
        """The connection sent a complete request head: it is no longer closed to make room."""
        self._unproven.pop(connection, None)

    def release(self, connection: AcceptedConnection) -> None:
        """The connection closed."""
        self._unproven.pop(connection, None)
        self._handshaking.pop(connection, None)
        self.open -= 1

    def refused(self, reason: str) -> None:
        """Count a connection closed for ``reason``."""
        if self.on_refused is not None:
            self.on_refused(reason)


class AcceptedConnection(asyncio.Protocol):
    """One accepted socket, from accept until it closes: the protocol uvicorn creates per connection.

    Subclasses made by :func:`listener_protocol` carry the listener's budget, TLS context and HTTP protocol
    class; uvicorn calls the class with its own ``config``, ``server_state`` and ``app_state``, which are
    passed on to the HTTP protocol.
    """

    budget: ConnectionBudget
    tls: ssl.SSLContext | None = None
    http_class: Callable[..., HttpProtocol]

    def __init__(self, config: Any, server_state: Any, app_state: Any,
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._http_args = {"config": config, "server_state": server_state, "app_state": app_state, "_loop": _loop}
        self.loop = _loop or asyncio.get_event_loop()
        self.accepted = self.loop.time()
        #: The loop time at which the connection reaches its lifetime (None: it has none).
        self.ends_at: float | None = None
        self.peer = ""
        self.transport: asyncio.Transport | None = None
        self.http: HttpProtocol | None = None
        self.proven_once = False
        self._counted = False
        self._ended = False  # closed, or being closed by us
        self._secure_pending = False  # TLS: the loop's TLS protocol is not on the transport yet
        self._handshaking = False
        self._lost = False
        self._raw: list[bytes] = []  # bytes read before the TLS protocol was in place
        self._early: list[bytes] = []  # data that arrived between the handshake and the hand-over
        self._early_eof = False
        self._timers: list[asyncio.TimerHandle] = []

    # ------------------------------------------------------------------ accept

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Count the connection (or refuse it), start its deadlines, then TLS or straight to HTTP."""
        self.transport = transport  # type: ignore[assignment]  # uvloop's transports are not asyncio's classes
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else ""
        if not self.budget.admit(self):
            self._ended = True
            transport.abort()  # type: ignore[attr-defined]
            return
        self._counted = True
        limits = self.budget.limits
        self._timers.append(self.loop.call_at(self.first_deadline, self._first_request_late))
        if limits.lifetime_seconds is not None:
            self.ends_at = self.accepted + limits.lifetime_seconds
            self._timers.append(self.loop.call_at(self.ends_at, self._too_old))
        if self.tls is None:
            self._hand_over(transport)  # type: ignore[arg-type]
        else:
            # The TLS layer (and its buffers) only once the client sends something: an idle socket costs
            # a descriptor and this object, no more.
            self._secure_pending = True

    @property
    def first_deadline(self) -> float:
        """The loop time by which the first request head must be complete."""
        return self.accepted + self.budget.limits.first_request_seconds

    def age(self) -> float:
        """Seconds since accept."""
        return self.loop.time() - self.accepted

    async def _start_tls(self, transport: asyncio.Transport, context: ssl.SSLContext) -> None:
        secure: asyncio.Transport | None = None
        try:
            secure = await self._handshake(transport, context)
        except (OSError, TimeoutError, EOFError, RuntimeError) as err:  # ssl.SSLError is an OSError
            if not self._ended:  # else we closed it (deadline, room for another) and counted that
                self.budget.refused("tls_handshake")
                log.info("connection closed: TLS handshake failed",
                         extra={"error": f"{type(err).__name__}: {err}"[:300], "client": self.peer})
        finally:
            self._handshaking = False
            self.budget.handshake_over(self)
            if secure is None or self._ended or self._lost:
                self._end(secure or transport)
        if secure is not None and not self._ended:
            self._hand_over(secure)

    async def _handshake(self, transport: asyncio.Transport, context: ssl.SSLContext) -> asyncio.Transport:
        """``loop.start_tls``, with the bytes read before it began handed to its TLS protocol.

        uvloop starts reading a socket as soon as ``connection_made`` returns, whatever that did, so a
        ClientHello may arrive here before ``start_tls`` has put its TLS protocol on the transport. The
        coroutine is therefore run by hand up to its wait for the handshake (its protocol is in place then,
        and its ``connection_made`` queued), and those bytes are queued after that.
        """
        timeout = max(0.01, self.first_deadline - self.loop.time())
        starting = self.loop.start_tls(transport, self, context, server_side=True, ssl_handshake_timeout=timeout)
        try:
            waiting = starting.send(None)
        except StopIteration as done:  # finished without waiting (not seen in practice)
            return done.value  # type: ignore[no-any-return]
        finally:
            self._secure_pending = False
        if self._raw:
            self.loop.call_soon(_feed, transport.get_protocol(), b"".join(self._raw))
            self._raw.clear()
        try:
            await asyncio.wait([waiting])  # the handshake's waiter future
        except BaseException:
            starting.close()
            raise
        try:
            starting.send(None)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        raise RuntimeError("start_tls did not finish after its handshake")

    def _hand_over(self, transport: asyncio.Transport) -> None:
        """Give the connection to the HTTP protocol; it reads and writes the transport from now on."""
        http = self.http_class(**self._http_args, slot=self)
        self.http = http
        self.transport = transport
        transport.set_protocol(http)  # type: ignore[arg-type]  # an asyncio.Protocol in practice
        http.connection_made(transport)
        for data in self._early:
            http.data_received(data)
        self._early.clear()
        if self._early_eof:
            http.eof_received()

    # ------------------------------------------------------------------ before the hand-over (TLS handshake)
    # After it, the transport calls the HTTP protocol; a callback the TLS layer scheduled before the
    # hand-over may still arrive here, and is passed on.

    def data_received(self, data: bytes) -> None:
        """The first bytes of a TLS client start the handshake (they are kept for it); later, bytes decrypted
        after the handshake and before the hand-over are kept for the HTTP protocol."""
        if self.http is not None:
            self.http.data_received(data)
        elif self._secure_pending:
            self._raw.append(data)
            if not self._handshaking and not self._ended and self.tls is not None and self.transport is not None:
                self._handshaking = True
                self.transport.pause_reading()  # the rest is for the TLS layer, once it is in place
                self.budget.handshake(self)
                self.loop.create_task(self._start_tls(self.transport, self.tls))
        else:
            self._early.append(data)

    def eof_received(self) -> bool | None:
        """The peer closed its side."""
        if self.http is not None:
            return self.http.eof_received()
        self._early_eof = True
        if self._secure_pending and not self._handshaking:
            return False  # closed before saying anything: close ours too
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        """The connection closed (before the hand-over: refused, or during or just after the handshake)."""
        if self.http is not None:
            self.http.connection_lost(exc)
            return
        self._lost = True
        if not self._handshaking:  # else the handshake's end releases it, once
            self._end(None)

    # ------------------------------------------------------------------ deadlines and closing

    def _first_request_late(self) -> None:
        if not self._ended and not self.proven_once:
            self.budget.refused("head_timeout")
            log.info("connection closed: no complete request head in time after accept",
                     extra={"seconds": self.budget.limits.first_request_seconds, "client": self.peer,
                            "handshaking": self.tls is not None and self.http is None})
            self.close(abort=self.http is None)

    def _too_old(self) -> None:
        if self._ended:
            return
        self.budget.refused("lifetime")
        if self.http is None:  # still in its TLS handshake
            self.close(abort=True)
            return
        # A request in flight (a probe sent just now) is answered, not cut short; the grace bounds it.
        self._timers.append(self.loop.call_later(self.budget.limits.lifetime_grace_seconds, self._too_old_still))
        self.http.finish_and_close()

    def _too_old_still(self) -> None:
        if not self._ended and self.transport is not None:
            self._ended = True
            # Even if it is closing: a close waits for unsent data, which a client that does not read keeps.
            self.transport.abort()

    def proven(self) -> None:
        """Called by the HTTP protocol once a request head is complete."""
        if not self.proven_once:
            self.proven_once = True
            self.budget.proven(self)

    def close(self, *, abort: bool = False) -> None:
        """Close the connection (abort: at once, dropping unsent data); it is released when the transport
        reports it lost."""
        self._ended = True
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        if abort:
            transport.abort()
        else:
            transport.close()

    def released(self) -> None:
        """Called by the HTTP protocol when the connection is gone."""
        self._end(None)

    def _end(self, transport: asyncio.Transport | None) -> None:
        """Stop the timers and give the slot back (once); abort ``transport`` if one is given."""
        self._ended = True
        if transport is not None and not transport.is_closing():
            # Never twice: uvloop would close the descriptor again, which a new connection may hold by now.
            transport.abort()
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()
        if self._counted:
            self._counted = False
            self.budget.release(self)


def _feed(protocol: Any, data: bytes) -> None:
    """Hand ``data`` to a buffered protocol (the loop's TLS protocol) as if the transport had read it."""
    view = memoryview(data)
    try:
        while view:
            buffer = protocol.get_buffer(len(view))
            size = min(len(buffer), len(view))
            buffer[:size] = view[:size]
            protocol.buffer_updated(size)
            view = view[size:]
    except Exception:  # the connection closed meanwhile: the handshake fails and is handled there
        log.debug("bytes read before TLS could not be handed to it", exc_info=True)


def listener_protocol(http_class: Callable[..., HttpProtocol], limits: ListenerLimits, *,
                      tls: ssl.SSLContext | None = None, on_refused: Refused | None = None
                      ) -> type[AcceptedConnection]:
    """A protocol class for ``uvicorn.Config(http=...)``: one budget per listener, TLS (when given) done
    under the connection's deadline, then ``http_class`` (made with uvicorn's arguments and ``slot=``)."""
    budget = ConnectionBudget(limits, on_refused)
    return type("Accepted", (AcceptedConnection,), {"budget": budget, "tls": tls,
                                                    "http_class": staticmethod(http_class)})


@dataclass(frozen=True)
class Endpoint:
    """One listening address with its limits: the verbs' port, or the health port."""

    host: str
    port: int
    limits: ListenerLimits
    #: Seconds an idle keep-alive connection stays open, and a later request head may take.
    keep_alive_seconds: float
    head_seconds: float
    tls: ssl.SSLContext | None = None


#: The kernel's listen queue of each listening socket (capped by net.core.somaxconn).
LISTEN_QUEUE = 256


def deepen_listen_queue(fd: int, length: int = LISTEN_QUEUE) -> None:
    """Give the listening socket ``fd`` a listen queue of ``length`` (listen() again on a duplicate of it: the
    same socket), leaving how many the event loop accepts at a time as it was."""
    with socket.socket(fileno=os.dup(fd)) as listening:
        listening.listen(length)


@functools.cache
def _deep_queue_server() -> type[Any]:
    """uvicorn's server class, its listening sockets given the kernel queue LISTEN_QUEUE once they listen
    (made once, on first use: uvicorn is imported only by what serves)."""
    import uvicorn

    class DeepQueueServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            for server in getattr(self, "servers", []):
                for listening in server.sockets:
                    deepen_listen_queue(listening.fileno())

    return DeepQueueServer


def _server(app: Any, endpoint: Endpoint, on_refused: Refused | None, *, verbs: bool = False, **config: Any) -> Any:
    """uvicorn's server for one listener; ``verbs``: the verbs' own protocol first (see verb_protocol.py)."""
    import uvicorn

    from extender.api.connections import HTTPTOOLS, guarded_http
    from extender.api.verb_protocol import verb_http

    http: Callable[..., HttpProtocol] = guarded_http(endpoint.head_seconds, on_refused)
    if verbs and HTTPTOOLS:
        http = verb_http(http, endpoint.head_seconds, on_refused)
    protocol = listener_protocol(http, endpoint.limits, tls=endpoint.tls, on_refused=on_refused)
    # proxy_headers off: nothing reads a client's address, and rewriting it from X-Forwarded-* headers would
    # be one more layer on every request. TLS is ours (above), never uvicorn's.
    settings = uvicorn.Config(app, host=endpoint.host, port=endpoint.port, log_config=None, access_log=False,
                              proxy_headers=False, http=protocol, backlog=endpoint.limits.backlog,
                              timeout_keep_alive=max(1, round(endpoint.keep_alive_seconds)), **config)
    return _deep_queue_server()(settings)


def serve(app: Any, verbs: Endpoint, *, shutdown_grace: float, health_app: Any = None,
          health: Endpoint | None = None, on_refused: Refused | None = None) -> None:
    """Serve ``app`` on ``verbs`` and, with ``health``, ``health_app`` on a second listener, until SIGTERM.

    Both share one event loop; the verbs' server handles signals (graceful shutdown) and the health listener
    keeps answering until it has finished.
    """
    main = _server(app, verbs, on_refused, verbs=True, timeout_graceful_shutdown=shutdown_grace)
    if health is None or health_app is None:
        main.run()
        return
    probes_server = _server(health_app, health, on_refused, lifespan="off")

    async def both() -> None:
        probes = asyncio.create_task(probes_server._serve(), name="health-listener")  # signals: the main one's
        try:
            await main.serve()
        finally:
            probes_server.should_exit = True
            await probes

    asyncio.run(both())
