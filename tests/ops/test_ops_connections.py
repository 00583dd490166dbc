"""Connections cannot be held for ever or without bound (the real service process, real sockets).

The service runs with --head-timeout 1, --keep-alive-timeout 1 and --max-connections 20, and a plain health
port. A connection that sends nothing, one that sends its headers a byte at a time and never finishes them,
and an idle keep-alive connection are all closed by the server. At the cap, the oldest connection that has
not sent a request head is closed to admit a new one, so idle sockets cannot keep a client out; only when
every connection is busy with a request is a new one refused, while the health port (its own listener and
budget) still answers probes. 150 idle sockets on the health port do not make a fresh probe fail. A request
head past the size limit is answered 431 on either port.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from ops_support import (
    Service,
    closed_by_server,
    free_port,
    metric_value,
    oversized_head,
    probe,
    running,
    send_until_answered,
    summary,
    uvicorn_in_thread,
)

from extender.api.listener import ListenerLimits

MAX_CONNECTIONS = 20
# The cap counts the listen queue too: a queue of one, so at most 17 connections are admitted at once.
ADMITTED = ListenerLimits(MAX_CONNECTIONS).admitted
HEALTH_IDLE_SOCKETS = 150


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, int]]:
    health = free_port()
    svc = Service(tmp_path_factory.mktemp("connections"),
                  ["--head-timeout", "1", "--keep-alive-timeout", "1", "--max-connections", str(MAX_CONNECTIONS),
                   "--read-timeout", "20", "--health-port", str(health), "--health-host", "127.0.0.1"])
    with running(svc):
        yield svc, health


def connect_one_by_one(port: int, count: int) -> list[socket.socket]:
    """``count`` sockets, each accepted before the next connects: the listen queue is one deep, and a burst
    of connects would lose SYNs to it and wait a second for their retransmission (past the head deadline)."""
    held = []
    for _ in range(count):
        held.append(socket.create_connection(("127.0.0.1", port)))
        time.sleep(0.02)
    return held


def test_a_connection_that_sends_nothing_is_closed_after_the_head_timeout(served: tuple[Service, int]) -> None:
    service, _ = served
    with socket.create_connection(("127.0.0.1", service.port)) as sock:
        closed = closed_by_server(sock, within=5)
    assert closed is not None and 0.8 < closed < 3, closed


def test_headers_sent_a_byte_at_a_time_do_not_extend_the_deadline(served: tuple[Service, int]) -> None:
    service, _ = served
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
    with socket.create_connection(("127.0.0.1", service.port)) as sock:
        started = time.monotonic()
        closed_after = None
        for byte in head:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed_after = time.monotonic() - started
                break
            time.sleep(0.05)
            sock.settimeout(0.001)
            try:
                if sock.recv(1) == b"":
                    closed_after = time.monotonic() - started
                    break
            except TimeoutError:
                pass
            except ConnectionResetError:
                closed_after = time.monotonic() - started
                break
    assert closed_after is not None and closed_after < 3, closed_after


def test_an_idle_keep_alive_connection_is_closed(served: tuple[Service, int]) -> None:
    service, _ = served
    with socket.create_connection(("127.0.0.1", service.port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        sock.settimeout(5)
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        closed = closed_by_server(sock, within=5)
    assert closed is not None and closed < 3, closed


def test_at_the_cap_the_oldest_idle_connection_makes_room(served: tuple[Service, int]) -> None:
    """20 idle sockets, more than the cap admits: the oldest idle ones are closed to admit the newer ones, and
    a client connecting next is served."""
    service, _ = served
    held = connect_one_by_one(service.port, MAX_CONNECTIONS)
    try:
        with service.client() as client:
            assert client.get("/healthz").text == "ok"
        assert closed_by_server(held[0], within=0.5) is not None, "the oldest idle connection stayed open"
        assert closed_by_server(held[-1], within=0.2) is None, "a younger idle connection was closed first"
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.3)
    with service.client() as client:
        metrics = client.get("/metrics").text
    assert metric_value(metrics, "extender_rejected_requests_total", reason="evicted") >= 1, metrics


def test_when_every_connection_is_busy_new_ones_are_refused_and_the_health_port_answers(
        served: tuple[Service, int]) -> None:
    """Connections in the middle of a request (a head sent, the body still coming) are never closed to make
    room: past the cap a new connection is closed at once; the health port's own budget is untouched."""
    service, health = served
    busy = []
    try:
        for _ in range(ADMITTED):
            sock = socket.create_connection(("127.0.0.1", service.port))
            time.sleep(0.02)
            sock.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000\r\n\r\n{")
            busy.append(sock)
        time.sleep(0.3)
        extra = socket.create_connection(("127.0.0.1", service.port))
        with extra:
            assert closed_by_server(extra, within=0.8) is not None, "a connection past the cap stayed open"
        assert probe(health, "/healthz") < 1.0
        assert all(closed_by_server(sock, within=0.05) is None for sock in busy), "a busy connection was closed"
    finally:
        for sock in busy:
            sock.close()
    time.sleep(0.3)
    with service.client() as client:
        assert client.get("/healthz").text == "ok"
        metrics = client.get("/metrics").text
    assert metric_value(metrics, "extender_rejected_requests_total", reason="connections") >= 1
    assert metric_value(metrics, "extender_rejected_requests_total", reason="head_timeout") >= 1


def test_idle_sockets_on_the_health_port_do_not_make_fresh_probes_fail(served: tuple[Service, int]) -> None:
    """150 idle sockets (more than its cap of 64) on the health port: every fresh probe is still answered,
    the idle ones are closed to make room or by the short head deadline."""
    _, health = served
    idle = [socket.create_connection(("127.0.0.1", health)) for _ in range(HEALTH_IDLE_SOCKETS)]
    latencies: list[float] = []
    try:
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            for path in ("/healthz", "/readyz"):
                latencies.append(probe(health, path))
            idle.append(socket.create_connection(("127.0.0.1", health)))  # the attack goes on
            time.sleep(0.02)
    finally:
        for sock in idle:
            sock.close()
    figures = summary(latencies)
    print(f"\nhealth port, {HEALTH_IDLE_SOCKETS}+ idle sockets: probes {figures}")
    assert figures["max_ms"] < 1000, figures


def test_a_burst_of_connects_waits_in_the_listen_queue_not_for_a_syn_retry(served: tuple[Service, int]) -> None:
    """200 connects at once to the health port, far more than its loop accepts in one go (4) and than its cap
    (64): the kernel establishes every one at once (the listen queue is LISTEN_QUEUE deep), so none loses its
    SYN and waits a second for the retry (a kubelet probe's default timeout is one second)."""
    _, health = served
    burst = []
    try:
        for _ in range(200):
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", health))
            burst.append(sock)
        waiting = set(burst)
        deadline = time.monotonic() + 0.5
        while waiting and time.monotonic() < deadline:
            _, connected, _ = select.select([], list(waiting), [], 0.05)
            waiting -= set(connected)
        assert not waiting, f"{len(waiting)} of 200 connects still waiting for their handshake after 0.5 s"
    finally:
        for sock in burst:
            sock.close()


def test_the_health_port_serves_probes_and_metrics_only(served: tuple[Service, int]) -> None:
    _, health = served
    with httpx.Client(base_url=f"http://127.0.0.1:{health}", timeout=5) as client:
        assert client.get("/healthz").text == "ok"
        assert client.get("/readyz").json()["ready"] is True
        assert "extender_cache_objects" in client.get("/metrics").text
        assert client.post("/filter", json={}).status_code == 404
        assert client.post("/bind", json={}).status_code == 404
        assert client.post("/healthz").status_code == 405
        assert client.get("/docs").status_code == 404
        assert client.get("/profiles/default-scheduler/filter").status_code == 404


@pytest.mark.parametrize("protocol", ["GuardedH11Protocol", "GuardedHttpToolsProtocol"])
def test_both_http_implementations_close_a_silent_connection(protocol: str) -> None:
    """The head deadline works on uvicorn's h11 protocol as on httptools (used when httptools is installed)."""
    from extender.api import connections

    base = getattr(connections, protocol)
    guarded = type(protocol, (base,), {"head_timeout": 0.5, "on_refused": None})

    async def app(scope: dict[str, object], receive: object, send: object) -> None:  # never reached
        raise AssertionError("no request expected")

    with uvicorn_in_thread(app, guarded) as port, socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # never finished
        closed = closed_by_server(sock, within=5)
    assert closed is not None and closed < 3, closed


def test_a_request_head_past_the_limit_gets_431_on_both_ports_and_is_counted(served: tuple[Service, int]) -> None:
    """One connection streaming header lines within the head deadline made the service hold gigabytes: a
    head past 64 KiB is answered 431 at once, on the verbs' port and the health port alike."""
    service, health = served
    for port in (service.port, health):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            answer = send_until_answered(sock, oversized_head(b"POST /filter HTTP/1.1\r\nHost: x\r\n"))
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    with service.client() as client:
        assert client.get("/healthz").text == "ok"
        metrics = client.get("/metrics").text
    assert metric_value(metrics, "extender_rejected_requests_total", reason="head_too_large") >= 2, metrics
