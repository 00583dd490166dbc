"""The verbs' own HTTP protocol (extender/api/verb_protocol.py) on real sockets, under the service's listener.

It answers a verb as the application does, byte for byte but for the date; it hands any other request to
uvicorn, with the request's bytes from its first one; and it keeps the guarded protocol's limits: a head
deadline after each answer, the keep-alive time, the head's and the body's size limits, the body's deadline,
400 for a malformed request, ``Connection: close`` honoured, pipelined verbs answered in order.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from ops_support import closed_by_server, head_of, oversized_head, send_until_answered, uvicorn_in_thread

from extender.api.app import create_app
from extender.api.connections import DEFAULT_MAX_HEAD_BYTES, guarded_http
from extender.api.listener import ListenerLimits, listener_protocol
from extender.api.routes import FastVerbs
from extender.api.verb_protocol import verb_http
from extender.cluster.cache import ClusterCache
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.scheduler import Scheduler

HEAD_TIMEOUT = 1.0
KEEP_ALIVE = 2
READ_TIMEOUT = 1.0
LIMIT = 1024


def _app(verbs: dict[str, Any] | None = None) -> Any:
    app = create_app(Scheduler(ClusterCache(), [Framework(build_profile(None))]), max_body_bytes=LIMIT,
                     read_timeout=READ_TIMEOUT)
    if verbs is not None:
        app.fast_verbs = FastVerbs({**app.fast_verbs.verbs, **verbs}, LIMIT, READ_TIMEOUT, app.body_memory)
    return app


async def _echo(read_body: Any, profile: str | None) -> tuple[int, bytes, list[Any]]:
    """A verb that answers the length of its body and its profile."""
    body = await read_body()
    return 200, orjson.dumps({"length": len(body), "profile": profile}), []


async def _boom(read_body: Any, profile: str | None) -> tuple[int, bytes, list[Any]]:
    """A verb that fails: a bug, as the service would meet one."""
    raise RuntimeError("boom")


async def _big(read_body: Any, profile: str | None) -> tuple[int, bytes, list[Any]]:
    """A verb with a 64 KiB answer."""
    await read_body()
    return 200, b'"' + b"x" * (64 * 1024 - 2) + b'"', []


async def _slow(read_body: Any, profile: str | None) -> tuple[int, bytes, list[Any]]:
    await read_body()
    await asyncio.sleep(0.3)
    return 200, b'{"slow":true}', []


def _listen(app: Any, own: bool) -> Any:
    http: Any = guarded_http(HEAD_TIMEOUT)
    if own:
        http = verb_http(http, HEAD_TIMEOUT)
    return uvicorn_in_thread(app, listener_protocol(http, ListenerLimits(16, first_request_seconds=5.0)),
                             timeout_keep_alive=KEEP_ALIVE)


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    """The verbs' protocol in front of the service's application, with two test verbs beside the real ones."""
    with _listen(_app({"echo": _echo, "slow": _slow, "big": _big}), own=True) as listening:
        yield listening


def post(path: str, body: bytes, *extra: bytes, version: bytes = b"1.1") -> bytes:
    head = b"POST %s HTTP/%s\r\nHost: x\r\nContent-Length: %d\r\n" % (path.encode(), version, len(body))
    return head + b"".join(h + b"\r\n" for h in extra) + b"\r\n" + body


def read_answers(sock: socket.socket, count: int, within: float = 5.0) -> list[tuple[bytes, bytes]]:
    """``count`` answers (head, body) read off the socket (Content-Length framed)."""
    sock.settimeout(within)
    data = b""
    answers = []
    while len(answers) < count:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            head = data[:end]
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            if len(data) >= end + 4 + length:
                answers.append((head, data[end + 4:end + 4 + length]))
                data = data[end + 4 + length:]
                continue
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return answers


def _without_date(head: bytes) -> bytes:
    return b"\r\n".join(line for line in head.split(b"\r\n") if not line.lower().startswith(b"date:"))


@pytest.mark.parametrize("request_bytes", [
    post("/filter", b'{"Pod":{"metadata":{"name":"a","namespace":"d"}},"NodeNames":["n1","n2"]}', b"X-Request-Id: r1"),
    post("/prioritize", b'{"Pod":{"metadata":{"name":"a"}},"NodeNames":["n1"]}', b"X-Request-Id: r2"),
    post("/filter", b"{not json", b"X-Request-Id: r3"),
    post("/filter", b"   ", b"X-Request-Id: r4"),
    post("/profiles/nobody/filter", b"{}", b"X-Request-Id: r5"),
    post("/bind", b'{"PodName":"a","PodNamespace":"d","PodUID":"u","Node":"n1"}', b"X-Request-Id: r6"),
    post("/filter", b"{}", b"X-Request-Id: r7", version=b"1.0"),
    post("/filter", b"{}", b"X-Request-Id: r8", b"Connection: close"),
    post("/filter", b"{}", b"X-Request-Id: first", b"X-Request-Id: second"),
    post("/boom", b"{}", b"X-Request-Id: r9"),
])
def test_a_verb_is_answered_as_the_application_answers_it(request_bytes: bytes) -> None:
    """The same request through the verbs' protocol and through uvicorn and the application: the same status
    line, headers (in order) and body (a verb that raises gets uvicorn's 500, closing the connection)."""
    app = _app({"boom": _boom})
    answers = []
    for own in (True, False):
        with _listen(app, own) as listening, socket.create_connection(("127.0.0.1", listening)) as sock:
            sock.sendall(request_bytes)
            [(head, body)] = read_answers(sock, 1)
            answers.append((_without_date(head), body))
    assert answers[0] == answers[1]


def test_a_kept_alive_connection_serves_verbs_then_other_paths_then_verbs(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for size in (10, 20, 30):
            sock.sendall(post("/echo", b"x" * size))
            [(head, body)] = read_answers(sock, 1)
            assert head.startswith(b"HTTP/1.1 200") and orjson.loads(body) == {"length": size, "profile": None}
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # handed over to uvicorn, bytes and all
        [(head, body)] = read_answers(sock, 1)
        assert head.startswith(b"HTTP/1.1 200") and body
        sock.sendall(post("/profiles/p/echo", b"yy"))  # uvicorn serves the connection from now on
        [(head, body)] = read_answers(sock, 1)
        assert orjson.loads(body) == {"length": 2, "profile": "p"}


def test_a_first_request_that_is_not_a_verb_is_served_by_uvicorn(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        [(head, _)] = read_answers(sock, 1)
        assert head.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /filter HTTP/1.1\r\nHost: x\r\n\r\n")  # not a POST: FastAPI answers
        [(head, _)] = read_answers(sock, 1)
        assert head.startswith(b"HTTP/1.1 405")


def test_a_head_split_across_reads_is_handed_over_whole(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for piece in (b"GET /hea", b"lthz HTTP/1.1\r\nHo", b"st: x\r\n\r\n"):
            sock.sendall(piece)
            time.sleep(0.05)
        [(head, _)] = read_answers(sock, 1)
        assert head.startswith(b"HTTP/1.1 200")


def test_pipelined_verbs_are_answered_in_order(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(post("/slow", b"{}", b"X-Request-Id: first") + post("/echo", b"abc", b"X-Request-Id: second"))
        answers = read_answers(sock, 2)
    assert [b"x-request-id: first" in answers[0][0], b"x-request-id: second" in answers[1][0]] == [True, True]
    assert answers[0][1] == b'{"slow":true}' and orjson.loads(answers[1][1])["length"] == 3


def test_a_request_pipelined_behind_a_verb_that_is_not_one_closes_the_connection_after_the_verb(port: int) -> None:
    """Its bytes are not the start of a read, so uvicorn cannot be given them: the verb is answered, then the
    connection closes and the client sends the unanswered request again (HTTP/1.1 allows it)."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(post("/echo", b"abc") + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        answers = read_answers(sock, 2, within=1)
        assert len(answers) == 1 and orjson.loads(answers[0][1])["length"] == 3
        assert closed_by_server(sock, 0.8) is not None  # at once: not left for a deadline (1 s) to close


def test_a_body_declared_over_the_limit_is_refused_at_once_and_the_connection_closes(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n")  # no body sent
        [(head, body)] = read_answers(sock, 1, within=3)
        assert head.startswith(b"HTTP/1.1 413")
        assert orjson.loads(body) == {"Error": f"request body of 1000000000 bytes exceeds the limit of {LIMIT} bytes"}
        assert b"connection: close" in head.lower()
        assert closed_by_server(sock, 3) is not None


def test_a_body_not_complete_within_the_read_timeout_gets_408(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
        started = time.monotonic()
        [(head, body)] = read_answers(sock, 1, within=5)
        assert head.startswith(b"HTTP/1.1 408")
        assert orjson.loads(body) == {"Error": f"request body not received within {READ_TIMEOUT:g} seconds"}
        assert READ_TIMEOUT - 0.1 < time.monotonic() - started < READ_TIMEOUT + 1.5
        assert closed_by_server(sock, 3) is not None


def test_the_next_head_has_a_deadline_after_an_answer(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(post("/echo", b"a"))
        read_answers(sock, 1)
        sock.sendall(b"POST /ec")  # a head that never completes, though bytes came
        closed = closed_by_server(sock, KEEP_ALIVE + 3)
    assert closed is not None and HEAD_TIMEOUT - 0.2 < closed < HEAD_TIMEOUT + 1.0


def test_an_idle_connection_closes_after_the_keep_alive_time(port: int) -> None:
    """(The keep-alive time here is longer than the head deadline: the shorter of the two closes an idle
    connection, as the guarded protocol's own timers do.)"""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(post("/echo", b"a"))
        read_answers(sock, 1)
        closed = closed_by_server(sock, KEEP_ALIVE + 3)
    assert closed is not None and closed < min(KEEP_ALIVE, HEAD_TIMEOUT) + 1.0


def test_a_malformed_request_gets_400_and_the_connection_closes(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(post("/echo", b"a"))
        read_answers(sock, 1)
        sock.sendall(b"POST /echo HTTP/1.1\r\nContent-Length: -5\r\n\r\n")
        [(head, body)] = read_answers(sock, 1)
        assert head.startswith(b"HTTP/1.1 400") and body == b"Invalid HTTP request received."
        assert closed_by_server(sock, 3) is not None


@pytest.mark.parametrize("extra", [b"Connection: close", None])
def test_a_client_that_closes_is_answered_with_connection_close(port: int, extra: bytes | None) -> None:
    request = post("/echo", b"abc", extra) if extra else post("/echo", b"abc", version=b"1.0")
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(request)
        [(head, _)] = read_answers(sock, 1)
        assert b"\r\nconnection: close" in head.lower()
        assert closed_by_server(sock, 3) is not None


def test_expect_continue_and_chunked_bodies_are_served_by_uvicorn(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
        sock.settimeout(3)
        assert sock.recv(65536).startswith(b"HTTP/1.1 100 Continue")
        sock.sendall(b"abc")
        [(_, body)] = read_answers(sock, 1)
        assert orjson.loads(body)["length"] == 3
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
        [(_, body)] = read_answers(sock, 1)
        assert orjson.loads(body)["length"] == 5


def test_at_shutdown_a_verb_in_flight_is_answered_then_closed_and_an_idle_connection_closes() -> None:
    """uvicorn's graceful shutdown asks each connection to finish: the verb being computed is answered, with
    ``Connection: close``, and an idle kept-alive connection is closed at once."""
    import threading

    import uvicorn

    app = _app({"slow": _slow, "echo": _echo})
    protocol = listener_protocol(verb_http(guarded_http(HEAD_TIMEOUT), HEAD_TIMEOUT), ListenerLimits(16))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, lifespan="off", log_config=None,
                                          access_log=False, http=protocol, timeout_keep_alive=30,
                                          timeout_graceful_shutdown=5))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    listening = server.servers[0].sockets[0].getsockname()[1]
    with socket.create_connection(("127.0.0.1", listening)) as busy, \
            socket.create_connection(("127.0.0.1", listening)) as idle:
        idle.sendall(post("/echo", b"a"))
        read_answers(idle, 1)
        busy.sendall(post("/slow", b"{}"))
        time.sleep(0.1)  # the slow verb (0.3 s) is being computed
        server.should_exit = True
        [(head, body)] = read_answers(busy, 1)
        assert head.startswith(b"HTTP/1.1 200") and body == b'{"slow":true}'
        assert b"\r\nconnection: close" in head.lower()
        assert closed_by_server(busy, 3) is not None
        assert closed_by_server(idle, 3) is not None
    thread.join(10)
    assert not thread.is_alive()


def test_a_client_that_sends_verbs_without_reading_the_answers_is_not_read_further(port: int) -> None:
    """Once the answers it does not read fill the socket's buffers, the service stops reading the client's
    requests (it holds no queue of them, nor of their answers): the client's sending stalls."""
    offered = post("/big", b"{}") * 200_000  # 10 MB of requests, each answered with 64 KiB
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    with sock:
        sock.connect(("127.0.0.1", port))
        sock.setblocking(False)
        sent = 0
        deadline = time.monotonic() + 3
        while sent < len(offered) and time.monotonic() < deadline:
            try:
                sent += sock.send(offered[sent:sent + 65536])
            except BlockingIOError:
                time.sleep(0.01)
    assert sent < len(offered) // 2, f"{sent} of {len(offered)} bytes were taken"


@pytest.mark.parametrize("own", [True, False], ids=["verbs' protocol", "guarded uvicorn"])
@pytest.mark.parametrize("before", [b"", b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"], ids=["first", "after-get"])
@pytest.mark.parametrize("sent", [oversized_head(b"POST /echo HTTP/1.1\r\nHost: x\r\n"),
                                  oversized_head(b"GET /healthz HTTP/1.1\r\nHost: x\r\n"),
                                  b"GET /" + b"p" * (4 << 20)], ids=["verb", "other", "long-url"])
def test_a_head_past_the_limit_gets_431_and_the_connection_closes(own: bool, before: bytes, sent: bytes) -> None:
    """httptools sets no limit on a head: without one, a client streaming header lines within the head
    deadline made the process hold gigabytes. A verb's head, another path's, a URL without end; the first
    request or one after uvicorn took the connection over; either protocol."""
    with _listen(_app({"echo": _echo}), own) as listening, \
            socket.create_connection(("127.0.0.1", listening)) as sock:
        if before:
            sock.sendall(before)
            [(head, _)] = read_answers(sock, 1)
            assert head.startswith(b"HTTP/1.1 200")
        answer = send_until_answered(sock, sent)
    assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), answer[:200]
    assert b"\r\nconnection: close\r\n" in answer and answer.endswith(b"\r\n\r\nRequest header fields too large.")


@pytest.mark.parametrize("own", [True, False], ids=["verbs' protocol", "guarded uvicorn"])
def test_a_head_just_under_the_limit_is_served_however_it_is_cut(own: bool) -> None:
    head = head_of(DEFAULT_MAX_HEAD_BYTES - 64, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n")
    with _listen(_app({"echo": _echo}), own) as listening, \
            socket.create_connection(("127.0.0.1", listening)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for offset in range(0, len(head), 997):
            sock.sendall(head[offset:offset + 997])
            time.sleep(0.001)
        sock.sendall(b"abc")
        [(answer, body)] = read_answers(sock, 1)
    assert answer.startswith(b"HTTP/1.1 200") and orjson.loads(body) == {"length": 3, "profile": None}


@pytest.mark.parametrize("own", [True, False], ids=["verbs' protocol", "guarded uvicorn"])
def test_a_head_past_the_limit_behind_a_verb_in_flight_closes_the_connection_after_its_answer(own: bool) -> None:
    """The 431 would come before the answer it follows: the verb is answered, then the connection closes at
    once (not at the next head's deadline, a second after the answer)."""
    with _listen(_app({"slow": _slow}), own) as listening, \
            socket.create_connection(("127.0.0.1", listening)) as sock:
        started = time.monotonic()
        sock.sendall(post("/slow", b"{}"))
        time.sleep(0.05)
        answer = send_until_answered(sock, oversized_head(b"POST /echo HTTP/1.1\r\nHost: x\r\n"))
        closed = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b'{"slow":true}'), answer[:300]
    assert closed < 0.3 + HEAD_TIMEOUT, closed


def _budget_app(limit: int) -> Any:
    """The application with a body memory of ``limit`` bytes for bodies over 256 bytes (the service's: 512 KiB
    and twice --max-body-bytes)."""
    app = _app()
    app.body_memory.small, app.body_memory.limit = 256, limit
    return app


def _filter_body(size: int) -> bytes:
    """A filter request of exactly ``size`` bytes (padded with spaces)."""
    body = b'{"Pod":{"metadata":{"name":"a","namespace":"d"}},"NodeNames":["n1"]}'
    return body + b" " * (size - len(body))


def _partial(port: int, size: int) -> tuple[socket.socket, bytes]:
    """A connection that has sent a filter request's head declaring ``size`` bytes of body, and the first byte
    of it; the rest of the body."""
    body = _filter_body(size)
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                 % (size, body[:1]))
    time.sleep(0.1)
    return sock, body[1:]


@pytest.mark.parametrize("own", [True, False], ids=["verbs' protocol", "uvicorn"])
def test_large_bodies_draw_on_one_memory_budget_and_one_that_does_not_fit_gets_503(own: bool) -> None:
    """Twenty connections each sending a 249 MiB body made the service hold 5 GB: bodies over the small size
    hold their size from one budget from their head until their answer. One that does not fit is refused at
    once with 503 and Retry-After; small bodies are served all the while; what is held is given back when a
    request is answered or its connection is lost."""
    app = _budget_app(1500)
    with _listen(app, own) as listening:
        first, rest = _partial(listening, 700)
        assert app.body_memory.held == 700
        with socket.create_connection(("127.0.0.1", listening)) as second:
            second.sendall(post("/filter", _filter_body(900)))
            [(head, body)] = read_answers(second, 1)
        assert head.startswith(b"HTTP/1.1 503") and b"\r\nretry-after: 1" in head.lower(), head
        assert b"--max-body-memory" in body and app.body_memory.held == 700
        with socket.create_connection(("127.0.0.1", listening)) as small:  # 200 bytes: never waits for it
            small.sendall(post("/filter", _filter_body(200)))
            [(head, _)] = read_answers(small, 1)
        assert head.startswith(b"HTTP/1.1 200"), head
        first.sendall(rest)  # the rest of the first body: answered, and its 700 given back
        [(head, _)] = read_answers(first, 1)
        assert head.startswith(b"HTTP/1.1 200"), head
        assert app.body_memory.held == 0
        lost, _ = _partial(listening, 1000)
        assert app.body_memory.held == 1000
        lost.close()  # gone mid-body: its 1000 are given back
        time.sleep(0.2)
        assert app.body_memory.held == 0
        with socket.create_connection(("127.0.0.1", listening)) as third:
            third.sendall(post("/filter", _filter_body(1000)))
            [(head, _)] = read_answers(third, 1)
        assert head.startswith(b"HTTP/1.1 200"), head
        first.close()


def test_a_chunked_body_and_another_route_draw_on_the_same_budget() -> None:
    """A body of undeclared size holds what has arrived once it passes the small size; a route other than
    the verbs' (explain) takes from the same budget."""
    app = _budget_app(1500)
    with _listen(app, True) as listening:
        held, _ = _partial(listening, 1000)
        with socket.create_connection(("127.0.0.1", listening)) as chunked:
            body = _filter_body(600)
            chunked.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                            + b"%x\r\n%s\r\n" % (300, body[:300]) + b"%x\r\n%s\r\n" % (300, body[300:])
                            + b"0\r\n\r\n")
            [(head, answer)] = read_answers(chunked, 1)
        assert head.startswith(b"HTTP/1.1 503") and b"undeclared size" in answer, (head, answer)
        with socket.create_connection(("127.0.0.1", listening)) as explain:
            explain.sendall(post("/explain", b"{" + b" " * 898 + b"}"))
            [(head, answer)] = read_answers(explain, 1)
        assert head.startswith(b"HTTP/1.1 503") and b"--max-body-memory" in answer, (head, answer)
        held.close()
        time.sleep(0.2)
        assert app.body_memory.held == 0


@pytest.mark.parametrize("own", [True, False], ids=["verbs' protocol", "uvicorn"])
def test_what_a_large_body_decodes_to_is_held_too(own: bool) -> None:
    """Once read, a large body also holds its estimated decoded size (its bytes and 64 per separator): a dense
    body whose estimate exceeds the whole budget gets 413, one that fits alone but not beside another 503, and
    all of it is given back with the answer."""
    app = _budget_app(4000)
    dense = b'{"Pod":{"metadata":{"name":"a"}},"NodeNames":[' + b'"n",' * 100 + b'"n"]}'  # 430 bytes: ~6,900
    with _listen(app, own) as listening:
        with socket.create_connection(("127.0.0.1", listening)) as sock:
            sock.sendall(post("/filter", dense))
            [(head, body)] = read_answers(sock, 1)
        assert head.startswith(b"HTTP/1.1 413") and b"would decode to about" in body, (head, body)
        assert app.body_memory.held == 0
        held, _ = _partial(listening, 1000)
        names = b",".join(b'"n%d"' % i for i in range(45))
        medium = b'{"Pod":{"metadata":{"name":"a"}},"NodeNames":[' + names + b"]}"
        medium += b" " * (400 - len(medium))  # 49 separators: about 3,536 bytes decoded, 4,536 beside the 1,000
        with socket.create_connection(("127.0.0.1", listening)) as sock:
            sock.sendall(post("/filter", medium))
            [(head, body)] = read_answers(sock, 1)
        assert head.startswith(b"HTTP/1.1 503") and b"decoded)" in body, (head, body)
        held.close()
        time.sleep(0.2)
        assert app.body_memory.held == 0
        with socket.create_connection(("127.0.0.1", listening)) as sock:
            sock.sendall(post("/filter", medium))
            [(head, _)] = read_answers(sock, 1)
        assert head.startswith(b"HTTP/1.1 200"), head
        assert app.body_memory.held == 0


class _StandInApiserver:
    """An apiserver for the Binding POST only, over TLS on a loop of its own: each POST's path and body kept,
    answered with the next of ``answers`` (status, body), the last one repeated."""

    def __init__(self, pki: Any, answers: list[tuple[int, bytes]]) -> None:
        import ssl
        import threading

        self.requests: list[tuple[bytes, bytes]] = []
        self._answers = answers
        self._context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._context.load_cert_chain(str(pki.server.cert), str(pki.server.key))
        self._loop = asyncio.new_event_loop()
        started = threading.Event()
        self.port = 0

        async def main() -> None:
            server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self._context)
            self.port = server.sockets[0].getsockname()[1]
            started.set()
            async with server:
                await server.serve_forever()

        self._thread = threading.Thread(target=lambda: self._loop.run_until_complete(main()), daemon=True)
        self._thread.start()
        assert started.wait(10)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                body = await reader.readexactly(length)
                self.requests.append((head.split(b" ", 2)[1], body))
                status, answer = self._answers[min(len(self.requests), len(self._answers)) - 1]
                writer.write(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                             % (status, len(answer), answer))
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


def test_bind_through_the_verbs_protocol_posts_the_binding_to_the_apiserver(tmp_path: Path) -> None:
    """bind as the service runs it against an apiserver: the verbs' protocol answers it from a task, and the
    Binding POST goes through the lean client (its deadline, asyncio.timeout, needs that task) over TLS. The
    parity tests bind through a static binder; this is the path that broke when a verb was once answered
    without a task. An apiserver's refusal comes back as bind's Error, and the pod is bindable again."""
    from ops_support import make_pki

    from extender.cli import build_scheduler
    from extender.kubeapi.binder import ApiBinder
    from extender.kubeapi.client import KubeClient
    from extender.kubeapi.config import ClusterConfig

    pki = make_pki(tmp_path / "pki")
    conflict = b'{"kind":"Status","status":"Failure","message":"pods \\"web-1\\" is already assigned","code":409}'
    apiserver = _StandInApiserver(pki, [(409, conflict), (201, b'{"kind":"Status","code":201}')])
    scheduler, _ = build_scheduler(None, None)
    scheduler.binder = ApiBinder(KubeClient(ClusterConfig(server=f"https://127.0.0.1:{apiserver.port}",
                                                          ca_file=str(pki.ca))))
    examples = Path(__file__).resolve().parents[2] / "examples" / "requests"
    bind = (examples / "bind.json").read_bytes()
    with _listen(create_app(scheduler), True) as listening, \
            socket.create_connection(("127.0.0.1", listening)) as sock:
        sock.sendall(post("/filter", (examples / "filter.json").read_bytes()))  # as the README: then bind it
        [(head, _)] = read_answers(sock, 1, within=15)
        assert head.startswith(b"HTTP/1.1 200")
        sock.sendall(post("/bind", bind))
        [(head, body)] = read_answers(sock, 1, within=15)
        assert head.startswith(b"HTTP/1.1 200") and "already assigned" in orjson.loads(body)["Error"], body
        sock.sendall(post("/bind", bind))  # forgotten after the refusal: bound this time
        [(head, body)] = read_answers(sock, 1, within=15)
        assert head.startswith(b"HTTP/1.1 200") and orjson.loads(body) == {"Error": ""}, body
    assert [path for path, _ in apiserver.requests] == [b"/api/v1/namespaces/shop/pods/web-1/binding"] * 2
    sent = orjson.loads(apiserver.requests[-1][1])
    assert sent["metadata"] == {"name": "web-1", "namespace": "shop", "uid": "uid-web-1"}
    assert sent["target"] == {"kind": "Node", "name": "zone-a-04"}
