"""A listener's connection lifetime (the health port's) ends connections without cutting a request short.

The listener runs in process, on real sockets, with uvicorn and each of the two HTTP protocols it may use: a
lifetime of 1.5 s, a grace of 1 s and a keep-alive of 1 s. A request in flight at the lifetime is answered,
and the connection closes after it; one still unanswered a grace later is aborted; a request whose head
arrives too late for the connection to be kept alive after it is answered with ``Connection: close``; a
client polling on one kept-alive connection across several lifetimes never meets a close with a request in
flight (a CI run once did, when the lifetime aborted whatever the connection was doing).
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

import httpx
import pytest
from ops_support import uvicorn_in_thread

from extender.api import connections
from extender.api.listener import ConnectionBudget, ListenerLimits, listener_protocol

LIFETIME = 1.5
GRACE = 1.0
KEEP_ALIVE = 1
BIG = 64 << 20  # an answer far larger than the socket buffers hold


async def slow_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """``/slow?<seconds>`` answers after that long, ``/big`` with BIG bytes, anything else at once. A body
    other than /big's names the client's port, so that a client can tell which connection answered."""
    if scope["type"] != "http":
        return
    await receive()
    if scope["path"] == "/slow":
        await asyncio.sleep(float(scope["query_string"] or b"0"))
    body = f"done {scope['client'][1]}".encode() if scope["path"] != "/big" else b"x" * BIG
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class Listener(NamedTuple):
    """A listener under test: the HTTP protocol class's name, its port and its connection budget."""

    protocol: str
    port: int
    budget: ConnectionBudget


@pytest.fixture(params=["GuardedHttpToolsProtocol", "GuardedH11Protocol"])
def served(request: pytest.FixtureRequest) -> Iterator[Listener]:
    """A listener with a connection lifetime, on one of uvicorn's two HTTP protocols."""
    base = getattr(connections, request.param)
    http = type(request.param, (base,), {"head_timeout": 5.0, "on_refused": None})
    limits = ListenerLimits(16, first_request_seconds=5.0, lifetime_seconds=LIFETIME, lifetime_grace_seconds=GRACE)
    accepted = listener_protocol(http, limits)
    with uvicorn_in_thread(slow_app, accepted, timeout_keep_alive=KEEP_ALIVE) as port:
        yield Listener(request.param, port, accepted.budget)


def read_until_closed(sock: socket.socket, within: float) -> tuple[bytes, float | None]:
    """Everything the server sends, and the seconds until it closed the connection (None: still open, or
    reset: aborted connections lose what was unsent, so a reset is reported with the bytes read so far)."""
    started = time.monotonic()
    sock.settimeout(0.1)
    received = b""
    while time.monotonic() - started < within:
        try:
            data = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return received, time.monotonic() - started
        if not data:
            return received, time.monotonic() - started
        received += data
    return received, None


def test_a_request_in_flight_at_the_lifetime_is_answered_then_the_connection_closes(
        served: Listener) -> None:
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        own_port = sock.getsockname()[1]
        started = time.monotonic()
        # In flight from 0 s to 1.8 s: across the lifetime (1.5 s), and answered within its grace (2.5 s).
        sock.sendall(b"GET /slow?1.8 HTTP/1.1\r\nHost: x\r\n\r\n")
        answer, closed = read_until_closed(sock, within=6)
        elapsed = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 200"), answer
    assert answer.endswith(f"\r\n\r\ndone {own_port}".encode()), answer
    assert closed is not None and elapsed < LIFETIME + GRACE, elapsed
    assert b"\r\nconnection: close\r\n" in answer.lower(), answer


def test_a_request_unanswered_a_grace_after_the_lifetime_is_aborted(served: Listener) -> None:
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /slow?30 HTTP/1.1\r\nHost: x\r\n\r\n")
        answer, closed = read_until_closed(sock, within=8)
        elapsed = time.monotonic() - started
    assert answer == b"" and closed is not None, (answer, closed)
    assert LIFETIME + GRACE - 0.2 < elapsed < LIFETIME + GRACE + 1.5, elapsed


def test_a_client_that_does_not_read_its_answer_is_let_go_a_grace_after_the_lifetime(
        served: Listener) -> None:
    """Its answer (64 MB) stays unsent in the server's buffers while the client does not read; a grace after
    the lifetime the server has let go of the connection (its slot, its descriptor and those buffers), not
    waiting for a close that would flush them."""
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
        started = time.monotonic()
        time.sleep(LIFETIME - 0.5)
        assert served.budget.open == 1
        deadline = time.monotonic() + GRACE + 3.0  # not reading; let go of at LIFETIME + GRACE (in 1.5 s)
        while served.budget.open and time.monotonic() < deadline:
            time.sleep(0.05)
        assert served.budget.open == 0
        assert time.monotonic() - started > LIFETIME + GRACE - 0.3  # the grace was given


def test_an_idle_connection_closes_at_its_lifetime_even_if_it_sent_a_head_late(
        served: Listener) -> None:
    """A request whose head arrives after lifetime − keep-alive is the connection's last: answered, then
    closed at once (the client is told so in its head), not left for the lifetime to close under a next one."""
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")  # at 0 s: kept alive
        sock.settimeout(5)
        assert b"connection: close" not in sock.recv(65536).lower()
        time.sleep(0.7)  # the next head at 0.7 s: 0.7 + 1 s of keep-alive reaches the lifetime
        sock.sendall(b"GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
        answer, closed = read_until_closed(sock, within=5)
        elapsed = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 200"), answer
    assert closed is not None and elapsed < LIFETIME, elapsed  # closed after the answer, before the lifetime
    assert b"\r\nconnection: close\r\n" in answer.lower(), answer


def test_a_client_polling_on_one_kept_alive_connection_meets_no_close_mid_request(
        served: Listener) -> None:
    """Five seconds of back-to-back requests through one httpx client (connections reused while kept
    alive): every one is answered, across at least three lifetimes' worth of connections."""
    clients: set[str] = set()
    answered = 0
    with httpx.Client(base_url=f"http://127.0.0.1:{served.port}", timeout=5) as client:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            # A fast request, and one that takes a while, so that the lifetime meets requests in flight too.
            for path in ("/fast", "/slow?0.2"):
                response = client.get(path)
                assert response.status_code == 200
                clients.add(response.text.split()[1])
                answered += 1
    assert len(clients) >= 3, clients
    print(f"\n{answered} requests answered on {len(clients)} connections")
