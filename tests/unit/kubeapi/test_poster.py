"""The lean Binding client against a real socket server: framing, keep-alive, stale connections, auth, errors."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import orjson
import pytest

from extender.kubeapi.binder import ApiBinder
from extender.kubeapi.client import KubeClient
from extender.kubeapi.config import ClusterConfig, StaticToken, TokenSource
from extender.kubeapi.poster import Poster, PostError

# (request head, request body, connection number) -> raw answer bytes, or None to drop the connection
Answer = Callable[[bytes, bytes, int], Awaitable[bytes | None]]


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
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                body = await reader.readexactly(length)
                self.requests.append((head, body))
                raw = await self.answer(head, body, number)
                if raw is None:
                    writer.close()
                    return
                writer.write(raw)
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


def poster(url: str, tokens: TokenSource | None = None, timeout: float = 5.0) -> Poster:
    return Poster(ClusterConfig(server=url, tokens=tokens or StaticToken("secret")), timeout=timeout,
                  user_agent="test")


def test_posts_json_with_token_and_reuses_the_connection() -> None:
    async def main() -> None:
        async with Server(always(created())) as server:
            client = poster(server.url)
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
            client = poster(server.url)
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
            client = poster(server.url)
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
            client = poster(server.url)
            with pytest.raises(PostError, match="closed"):
                await client.post("/x", b"{}")
            await client.aclose()
        assert len(server.requests) == 1

    asyncio.run(main())


def test_a_401_refreshes_the_token_and_retries_once() -> None:
    class Rotating(TokenSource):
        def __init__(self) -> None:
            self.value = "old"

        def token(self) -> str | None:
            return self.value

        def refresh(self) -> None:
            self.value = "new"

    async def main() -> None:
        async def answer(head: bytes, body: bytes, number: int) -> bytes:
            if b"Bearer new" in head:
                return created()
            return b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n"

        async with Server(answer) as server:
            client = poster(server.url, Rotating())
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
            client = poster(server.url, timeout=0.2)
            with pytest.raises(PostError, match=r"no answer within 0\.2 seconds"):
                await client.post("/x", b"{}")
            await client.aclose()

    asyncio.run(main())


def test_malformed_answer_is_an_error() -> None:
    async def main() -> None:
        async with Server(always(b"SPDY/3 200 OK\r\n\r\n")) as server:
            client = poster(server.url)
            with pytest.raises(PostError, match="malformed answer"):
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
