"""The lean apiserver client against a real socket server: Binding POSTs (framing, keep-alive, stale connections,
auth, errors) and watch streams (chunked framing, events, errors, deadline)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

import orjson
import pytest

from extender.kubeapi.binder import ApiBinder
from extender.kubeapi.client import RESOURCES, ApiError, Gone, KubeClient
from extender.kubeapi.config import ClusterConfig, StaticToken, TokenSource
from extender.kubeapi.lean import ChunkedDecoder, LeanClient, LeanHTTPError, LineSplitter

# (request head, request body, connection number) -> raw answer bytes, or pieces of it (a float: a pause of that
# many seconds between two), or None to drop the connection
Answer = Callable[[bytes, bytes, int], Awaitable[bytes | list[bytes | float] | None]]


class Server:
    """A socket server on 127.0.0.1 that records requests and answers as told."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[tuple[bytes, bytes]] = []
        self.connections = 0
        self.server: asyncio.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []

    async def __aenter__(self) -> Server:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        for writer in self.writers:
            writer.close()

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                body = await reader.readexactly(length)
                self.requests.append((head, body))
                raw = await self.answer(head, body, number)
                if raw is None:
                    writer.close()
                    return
                for piece in [raw] if isinstance(raw, bytes) else raw:
                    if isinstance(piece, float):
                        await asyncio.sleep(piece)
                    else:
                        writer.write(piece)
                        await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


def created(body: bytes = b'{"kind":"Status","status":"Success"}') -> bytes:
    return b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        len(body), body)


def always(raw: bytes | None) -> Answer:
    """A server answer that is the same for every request (None: drop the connection unanswered)."""
    async def answer(head: bytes, body: bytes, number: int) -> bytes | None:
        return raw
    return answer


def lean(url: str, tokens: TokenSource | None = None, timeout: float = 5.0) -> LeanClient:
    return LeanClient(ClusterConfig(server=url, tokens=tokens or StaticToken("secret")), timeout=timeout,
                  user_agent="test")


def test_posts_json_with_token_and_reuses_the_connection() -> None:
    async def main() -> None:
        async with Server(always(created())) as server:
            client = lean(server.url)
            for _ in range(3):
                status, _reason, body = await client.post("/api/v1/namespaces/a/pods/p/binding", b'{"x":1}')
                assert status == 201 and orjson.loads(body)["status"] == "Success"
            await client.aclose()
        assert server.connections == 1
        head, body = server.requests[0]
        assert head.startswith(b"POST /api/v1/namespaces/a/pods/p/binding HTTP/1.1\r\n")
        assert b"Authorization: Bearer secret\r\n" in head and b"Content-Type: application/json\r\n" in head
        assert body == b'{"x":1}'

    asyncio.run(main())


def test_reads_a_chunked_answer_and_an_error_status() -> None:
    async def main() -> None:
        chunked = (b"HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n"
                   b"5\r\n{\"rea\r\n1b;ext=1\r\nson\":\"Conflict\",\"code\":409}\r\n0\r\n\r\n")
        async with Server(always(chunked)) as server:
            client = lean(server.url)
            status, reason, body = await client.post("/x", b"{}")
            assert (status, reason) == (409, "Conflict")
            assert orjson.loads(body) == {"reason": "Conflict", "code": 409}
            status, _, _ = await client.post("/x", b"{}")  # the connection is still usable
            assert status == 409
            await client.aclose()
        assert server.connections == 1

    asyncio.run(main())


def test_a_connection_the_server_closed_is_replaced_without_losing_the_request() -> None:
    async def main() -> None:
        async with Server(always(created())) as server:
            client = lean(server.url)
            assert (await client.post("/x", b"{}"))[0] == 201
            for writer in server.writers:  # the server ends its idle keep-alive connections
                writer.close()
            await asyncio.sleep(0.05)
            assert (await client.post("/x", b"{}"))[0] == 201
            await client.aclose()
        assert len(server.requests) == 2 and server.connections == 2

    asyncio.run(main())


def test_a_request_the_server_dropped_unanswered_on_a_new_connection_is_an_error_not_a_retry() -> None:
    async def main() -> None:
        async with Server(always(None)) as server:
            client = lean(server.url)
            with pytest.raises(LeanHTTPError, match="closed"):
                await client.post("/x", b"{}")
            await client.aclose()
        assert len(server.requests) == 1

    asyncio.run(main())


class Rotating(TokenSource):
    """A token that is "old" until refreshed, then "new"."""

    def __init__(self) -> None:
        self.value = "old"

    def token(self) -> str | None:
        return self.value

    def refresh(self) -> None:
        self.value = "new"


def test_a_401_refreshes_the_token_and_retries_once() -> None:
    async def main() -> None:
        async def answer(head: bytes, body: bytes, number: int) -> bytes:
            if b"Bearer new" in head:
                return created()
            return b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n"

        async with Server(answer) as server:
            client = lean(server.url, Rotating())
            assert (await client.post("/x", b"{}"))[0] == 201
            await client.aclose()
        assert [b"Bearer old" in head for head, _ in server.requests] == [True, False]

    asyncio.run(main())


def test_no_answer_in_time_is_an_error() -> None:
    async def main() -> None:
        async def answer(head: bytes, body: bytes, number: int) -> bytes:
            await asyncio.sleep(5)
            return created()

        async with Server(answer) as server:
            client = lean(server.url, timeout=0.2)
            with pytest.raises(LeanHTTPError, match=r"no answer within 0\.2 seconds"):
                await client.post("/x", b"{}")
            await client.aclose()

    asyncio.run(main())


def test_malformed_answer_is_an_error() -> None:
    async def main() -> None:
        async with Server(always(b"SPDY/3 200 OK\r\n\r\n")) as server:
            client = lean(server.url)
            with pytest.raises(LeanHTTPError, match="malformed answer"):
                await client.post("/x", b"{}")
            await client.aclose()

    asyncio.run(main())


def test_binder_reports_apiserver_message_and_unreachable_server() -> None:
    async def main() -> None:
        status = orjson.dumps({"kind": "Status", "reason": "Conflict", "code": 409,
                               "message": 'pod "web" is already assigned to node "n1"'})

        conflict = b"HTTP/1.1 409 Conflict\r\nContent-Length: %d\r\n\r\n%s" % (len(status), status)
        async with Server(always(conflict)) as server:
            url = server.url
            kube = KubeClient(ClusterConfig(server=url, tokens=StaticToken("t")))
            with pytest.raises(RuntimeError, match='binding ns/web to n2: pod "web" is already assigned'):
                await ApiBinder(kube).bind("ns", "web", "uid-1", "n2")
            head, body = server.requests[0]
            assert head.startswith(b"POST /api/v1/namespaces/ns/pods/web/binding HTTP/1.1")
            assert orjson.loads(body) == {"apiVersion": "v1", "kind": "Binding",
                                          "metadata": {"name": "web", "namespace": "ns", "uid": "uid-1"},
                                          "target": {"kind": "Node", "name": "n2"}}
            # A name from the request cannot add a header or change the request line.
            with pytest.raises(RuntimeError):
                await ApiBinder(kube).bind("ns", "web HTTP/1.1\r\nX-Evil: 1\r\n", "", "n2")
            assert server.requests[1][0].startswith(
                b"POST /api/v1/namespaces/ns/pods/web%20HTTP%2F1.1%0D%0AX-Evil%3A%201%0D%0A/binding HTTP/1.1\r\n")
            await kube.aclose()
        kube = KubeClient(ClusterConfig(server=url, tokens=StaticToken("t")), timeout=1)  # nobody listens now
        with pytest.raises(RuntimeError, match="apiserver unreachable"):
            await ApiBinder(kube).bind("ns", "web", "", "n2")
        await kube.aclose()

    asyncio.run(main())


# ------------------------------------------------------------------------------------------------ watch streams
def chunked(*payloads: bytes) -> bytes:
    """``payloads`` in HTTP/1.1 chunked coding, ending with the last chunk and no trailers."""
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in payloads) + b"0\r\n\r\n"


def cut_anywhere(raw: bytes, rng: random.Random, times: int = 200) -> list[list[bytes]]:
    """``raw`` cut ``times`` ways, each into 2 to 13 pieces at random places."""
    cuts = []
    for _ in range(times):
        at = sorted(rng.sample(range(1, len(raw)), rng.randint(1, 12)))
        cuts.append([raw[start:end] for start, end in zip([0, *at], [*at, len(raw)], strict=True)])
    return cuts


def test_chunked_decoding_is_the_same_however_the_bytes_are_cut() -> None:
    payloads = [b'{"type":"ADDED"}\n', b"x" * 300, b'{"type":"MODIFIED"', b'}\n']
    raw = chunked(*payloads).replace(b"12c\r\n", b"12c;name=value\r\n")  # an extension is ignored
    raw = raw[:-2] + b"Trailer-A: 1\r\n\r\n"  # and so is a trailer
    whole = ChunkedDecoder()
    assert b"".join(whole.feed(raw)) == b"".join(payloads) and whole.done
    for cut in cut_anywhere(raw, random.Random(7)):
        decoder = ChunkedDecoder()
        pieces = [piece for part in cut for piece in decoder.feed(part)]
        assert b"".join(pieces) == b"".join(payloads) and decoder.done
    one_by_one = ChunkedDecoder()
    assert b"".join(b"".join(one_by_one.feed(raw[i:i + 1])) for i in range(len(raw))) == b"".join(payloads)


def test_lines_are_the_same_however_the_bytes_are_cut() -> None:
    raw = b'{"a":1}\n\n{"b":' + b"2" * 500 + b'}\n  \n{"last":true}'  # blank lines skipped, the last unended
    expected = [b'{"a":1}', b'{"b":' + b"2" * 500 + b"}", b'{"last":true}']
    for cut in cut_anywhere(raw, random.Random(11)):
        splitter = LineSplitter()
        lines = [line for part in cut for line in splitter.feed(part)]
        assert [*lines, splitter.end()] == expected


def test_a_line_past_the_limit_is_refused_however_it_arrives() -> None:
    """A line is held until its newline comes: past the limit it is refused (and let go) rather than held on."""
    long_line = b"x" * 101
    for pieces in ([long_line[:60], long_line[60:]], [b'{"a":1}\n' + long_line], [b"{}\n" + long_line + b"\n"],
                   [b"y" * 50, b"y" * 51 + b"\n"]):
        splitter = LineSplitter(max_line_bytes=100)
        with pytest.raises(LeanHTTPError, match="over 100 bytes refused"):
            for piece in pieces:
                splitter.feed(piece)
        assert splitter.end() is None  # nothing of it is held any more
    exactly = LineSplitter(max_line_bytes=100)
    assert exactly.feed(b"z" * 60) == [] and exactly.feed(b"z" * 40 + b"\n") == [b"z" * 100]


def test_a_watch_line_that_never_ends_stops_the_watch_not_the_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream whose line goes on past any event's size ends the watch with a clear error (the reflector
    resumes it), after the events before it were delivered, instead of being held without bound."""
    monkeypatch.setattr("extender.kubeapi.lean.MAX_LINE_BYTES", 64 * 1024)

    async def main() -> None:
        async def answer(head: bytes, body: bytes, number: int) -> list[bytes | float]:
            endless = [chunked(b"{" + b"9" * 16 * 1024) for _ in range(8)]  # 128 KiB without a newline
            return [_watch_head() + chunked(_event("ADDED", "a", "42")).removesuffix(b"0\r\n\r\n"),
                    *(piece.removesuffix(b"0\r\n\r\n") for piece in endless), 5.0]

        async with Server(answer) as server:
            assert await _events_before_the_error(server, "over 65536 bytes refused") == 1

    asyncio.run(asyncio.wait_for(main(), 4))


@pytest.mark.parametrize("raw", [b"zz\r\nab\r\n", b"-2\r\nab\r\n", b"2\r\nabXY", b"\r\n", b"1" * 5000])
def test_malformed_chunked_coding_is_refused(raw: bytes) -> None:
    with pytest.raises(ValueError):
        ChunkedDecoder().feed(raw)


def _watch_head() -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"


def _event(kind: str, name: str, version: str) -> bytes:
    return orjson.dumps({"type": kind, "object": {"metadata": {"name": name, "namespace": "ns",
                                                               "resourceVersion": version}}}) + b"\n"


async def _collect(kube: KubeClient, **params: str) -> list[dict[str, object]]:
    return [event async for event in kube.watch(RESOURCES["Namespace"], "41", timeout_seconds=5, params=params)]


def test_a_watch_reads_events_cut_anywhere_and_sends_its_query_and_token() -> None:
    async def main() -> None:
        events = _event("ADDED", "a", "42") + _event("MODIFIED", "a", "43") + _event("BOOKMARK", "", "44")
        async def answer(head: bytes, body: bytes, number: int) -> list[bytes | float]:
            # The events cut across chunks, and the chunks across writes.
            body = chunked(events[:10], events[10:70], events[70:])
            return [_watch_head() + body[:7], 0.01, body[7:90], 0.01, body[90:]]

        async with Server(answer) as server:
            kube = KubeClient(ClusterConfig(server=server.url, tokens=StaticToken("secret")))
            got = await _collect(kube, labelSelector="app in (a, b)")
            await kube.aclose()
        assert [(e["type"], e["object"]["metadata"]["resourceVersion"]) for e in got] == [  # type: ignore[index]
            ("ADDED", "42"), ("MODIFIED", "43"), ("BOOKMARK", "44")]
        assert all(e["object"]["kind"] == "Namespace" for e in got)  # type: ignore[index]
        head = server.requests[0][0]
        line = head.split(b"\r\n", 1)[0]
        assert line.startswith(b"GET /api/v1/namespaces?") and line.endswith(b" HTTP/1.1")
        for part in (b"labelSelector=app+in+%28a%2C+b%29", b"watch=true", b"resourceVersion=41",
                     b"allowWatchBookmarks=true", b"timeoutSeconds=5"):
            assert part in line
        assert b"Authorization: Bearer secret\r\n" in head

    asyncio.run(main())


def test_a_watch_raises_the_apiservers_errors() -> None:
    async def main() -> None:
        status = orjson.dumps({"kind": "Status", "code": 403, "reason": "Forbidden", "message": "no watching"})
        expired = orjson.dumps({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired",
                                                            "message": "too old resource version"}}) + b"\n"
        async def answer(head: bytes, body: bytes, number: int) -> bytes:
            if number == 1:
                return b"HTTP/1.1 403 Forbidden\r\nContent-Length: %d\r\n\r\n%s" % (len(status), status)
            return _watch_head() + chunked(_event("ADDED", "a", "42"), expired)

        async with Server(answer) as server:
            kube = KubeClient(ClusterConfig(server=server.url, tokens=StaticToken("t")))
            with pytest.raises(ApiError, match="no watching") as refused:
                await _collect(kube)
            assert refused.value.status == 403
            seen: list[dict[str, object]] = []
            with pytest.raises(Gone, match="too old"):
                async for event in kube.watch(RESOURCES["Namespace"], "41", timeout_seconds=5):
                    seen.append(event)
            assert len(seen) == 1  # the event before the error was delivered
            await kube.aclose()

    asyncio.run(main())


def test_a_watch_cut_mid_stream_is_a_transport_error() -> None:
    async def main() -> None:
        async def answer(head: bytes, body: bytes, number: int) -> list[bytes | float] | None:
            return [_watch_head() + b"%x\r\n%s\r\n" % (len(_event("ADDED", "a", "42")), _event("ADDED", "a", "42")),
                    b"5\r\n{\"ty"]

        def go_away() -> None:
            for writer in server.writers:
                writer.close()  # the server goes away after the first event

        async with Server(answer) as server:
            assert await _events_before_the_error(server, "closed mid-answer", go_away) == 1

    asyncio.run(main())


async def _events_before_the_error(server: Server, error: str, after_each: Callable[[], None] = lambda: None) -> int:
    """How many events a watch from ``server`` delivers before it raises LeanHTTPError matching ``error``."""
    kube = KubeClient(ClusterConfig(server=server.url, tokens=StaticToken("t")))
    seen = 0
    with pytest.raises(LeanHTTPError, match=error):
        async for _ in kube.watch(RESOURCES["Namespace"], "41", timeout_seconds=5):
            seen += 1
            after_each()
    await kube.aclose()
    return seen


def test_a_stream_is_cut_at_its_deadline_and_a_401_retries_with_a_fresh_token() -> None:
    async def main() -> None:
        async def answer(head: bytes, body: bytes, number: int) -> list[bytes | float] | bytes:
            if b"Bearer old" in head:
                return b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n"
            return [_watch_head() + b"4\r\nabc\n\r\n", 30.0]  # then silence, never the last chunk

        async with Server(answer) as server:
            client = lean(server.url, Rotating())
            started = asyncio.get_running_loop().time()
            async with client.open_stream("/api/v1/pods?watch=true", seconds=0.3) as stream:
                assert stream.status == 200
                pieces = []
                with pytest.raises(LeanHTTPError, match="deadline"):
                    async for piece in stream.lines(lambda line: line):
                        pieces.append(piece)
            assert pieces == [b"abc"] and asyncio.get_running_loop().time() - started < 5
            await client.aclose()
        assert [b"Bearer old" in head for head, _ in server.requests] == [True, False]

    asyncio.run(main())


def test_an_answer_without_framing_is_read_to_the_end_of_its_connection() -> None:
    async def main() -> None:
        body = orjson.dumps({"kind": "Status", "message": "x" * 100_000})

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n\x7b")  # the head and the body's first byte
            writer.write(b"HTTP/1.1 500 Internal Server Error\r\n\r\n" + body[:10])
            await writer.drain()
            await asyncio.sleep(0.05)  # the rest comes in a later read
            writer.write(body[10:])
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        client = lean(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}")
        status, _reason, answer = await client.post("/x", b"{}")
        assert status == 500 and answer == body
        assert client._idle == []  # never reused: its end was the body's
        await client.aclose()
        server.close()

    asyncio.run(main())


def test_an_answer_that_has_no_body_is_not_waited_for() -> None:
    async def main() -> None:
        async with Server(always(b"HTTP/1.1 204 No Content\r\n\r\n")) as server:
            client = lean(server.url, timeout=2)
            for _ in range(2):  # and the connection stays usable
                assert await client.post("/x", b"{}") == (204, "No Content", b"")
            await client.aclose()
        assert server.connections == 1

    asyncio.run(main())


def _ordering_watch(pieces: list[bytes | float], decline: set[str], hold: float
                    ) -> list[tuple[str, str]]:
    """Runs a watch whose server sends ``pieces``; apply_now declines the versions in ``decline`` (once each),
    and the consumer holds each event it gets for ``hold`` seconds. What happened, in order: ("now", version)
    for an event applied as it arrived, ("later", version) when the consumer got one, ("done", version) when
    it let it go."""
    happened: list[tuple[str, str]] = []

    def version(event: dict[str, object]) -> str:
        return str(event["object"]["metadata"]["resourceVersion"])  # type: ignore[index]

    def apply_now(event: dict[str, object]) -> bool:
        if version(event) in decline:
            decline.discard(version(event))
            return False
        happened.append(("now", version(event)))
        return True

    async def main() -> None:
        async def answer(head: bytes, body: bytes, number: int) -> list[bytes | float]:
            return [_watch_head(), *pieces, b"0\r\n\r\n"]

        async with Server(answer) as server:
            kube = KubeClient(ClusterConfig(server=server.url, tokens=StaticToken("t")))
            async for event in kube.watch(RESOURCES["Namespace"], "41", timeout_seconds=5, apply_now=apply_now):
                happened.append(("later", version(event)))
                await asyncio.sleep(hold)
                happened.append(("done", version(event)))
            await kube.aclose()

    asyncio.run(main())
    return happened


def test_a_watch_applies_events_as_they_arrive_and_yields_those_declined_in_order() -> None:
    # Six events in one write: the second is declined, so it and the four after it wait for the consumer, which
    # offers each of the later ones to apply_now again once it has let the declined one go.
    events = b"".join(_event("ADDED", f"n{i}", str(42 + i)) for i in range(6))
    happened = _ordering_watch([chunked(events)[:-5]], {"43"}, 0.01)
    assert happened == [("now", "42"), ("later", "43"), ("done", "43"),
                        ("now", "44"), ("now", "45"), ("now", "46"), ("now", "47")]


def test_an_event_arriving_while_the_consumer_holds_a_declined_one_waits_for_it() -> None:
    first, second, third = (_event("ADDED", f"n{i}", str(42 + i)) for i in range(3))
    pieces: list[bytes | float] = [chunked(first, second)[:-5], 0.05, chunked(third)[:-5]]
    happened = _ordering_watch(pieces, {"43"}, 0.3)  # the third arrives while the consumer holds the second
    assert happened == [("now", "42"), ("later", "43"), ("done", "43"), ("now", "44")]


def test_an_event_apply_now_cannot_read_ends_the_watch_after_those_before_it() -> None:
    async def main() -> None:
        events = _event("ADDED", "a", "42") + b'{"type":"ADDED","object":\n' + _event("ADDED", "b", "44")
        async with Server(always(_watch_head() + chunked(events))) as server:
            kube = KubeClient(ClusterConfig(server=server.url, tokens=StaticToken("t")))
            applied: list[dict[str, object]] = []
            with pytest.raises(ValueError):
                async for _event_declined in kube.watch(RESOURCES["Namespace"], "41", timeout_seconds=5,
                                                        apply_now=lambda event: applied.append(event) is None):
                    raise AssertionError("every readable event was applied at once")
            assert len(applied) == 1  # the event before the unreadable one, and none after it
            await kube.aclose()

    asyncio.run(main())


@pytest.mark.parametrize(("line", "error"), [
    (b"[]\n", ValueError),  # JSON, but not an object: the reflector restarts the watch, as for one that is not JSON
    (b'"ADDED"\n', ValueError),
    (b'{"type":"ERROR","object":["gone"]}\n', ApiError),  # an ERROR without a Status: 500, not a crash
    (b'{"type":"ERROR","object":{"code":"410"}}\n', ApiError),
])
def test_a_watch_line_of_the_wrong_shape_is_an_error_the_reflector_handles(line: bytes, error: type) -> None:
    async def main() -> None:
        async with Server(always(_watch_head() + chunked(line))) as server:
            kube = KubeClient(ClusterConfig(server=server.url, tokens=StaticToken("t")))
            with pytest.raises(error) as raised:
                await _collect(kube)
            if error is ApiError:
                assert raised.value.status == 500 and not isinstance(raised.value, Gone)
            await kube.aclose()

    asyncio.run(main())
