"""The Kubernetes API client's watch stream over TLS on uvloop, as the service runs it against a real apiserver:
events applied as they arrive or handed on in order, an error's Status, and a stream cut at its deadline.
(tests/unit/kubeapi/test_lean.py covers the same reader over plain TCP on asyncio's own loop.)"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import orjson
import pytest
import uvloop
from ops_support import Pki

from extender.kubeapi.client import RESOURCES, ApiError, KubeClient
from extender.kubeapi.config import ClusterConfig, StaticToken
from extender.kubeapi.lean import LeanHTTPError

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
Pieces = list[bytes | float]  # bytes to write, or seconds to wait


def _event(name: str, version: int) -> bytes:
    return orjson.dumps({"type": "ADDED", "object": {"metadata": {"name": name, "resourceVersion": str(version)}}}) \
        + b"\n"


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


@asynccontextmanager
async def tls_server(pki: Pki, answer: Callable[[bytes], Awaitable[Pieces]]) -> AsyncIterator[str]:
    """A TLS server on 127.0.0.1 (the PKI's server certificate) that answers each request with ``answer(head)``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(pki.server.cert), str(pki.server.key))
    writers: list[asyncio.StreamWriter] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        try:
            for piece in await answer(await reader.readuntil(b"\r\n\r\n")):
                if isinstance(piece, float):
                    await asyncio.sleep(piece)
                else:
                    writer.write(piece)
                    await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
    try:
        yield f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()
        for writer in writers:
            writer.close()


def test_a_watch_over_tls_applies_events_as_they_arrive_and_hands_on_the_declined_in_order(pki: Pki) -> None:
    events = b"".join(_event(f"n{i}", 100 + i) for i in range(40))
    # Events cut across chunks and the chunks across TLS records and pauses, as a busy apiserver sends them.
    body = b"".join(_chunk(events[i:i + 333]) for i in range(0, len(events), 333)) + b"0\r\n\r\n"
    pieces: Pieces = [HEAD + body[:500]]
    for start in range(500, len(body), 700):
        pieces += [0.005, body[start:start + 700]]

    async def answer(head: bytes) -> Pieces:
        return pieces

    async def main() -> list[tuple[str, int]]:
        happened: list[tuple[str, int]] = []

        def apply_now(event: dict[str, object]) -> bool:
            version = int(event["object"]["metadata"]["resourceVersion"])  # type: ignore[index]
            if version % 10 == 5:  # every tenth declined: it and those after it go to the consumer
                return False
            happened.append(("now", version))
            return True

        async with tls_server(pki, answer) as url:
            kube = KubeClient(ClusterConfig(server=url, tokens=StaticToken("t"), ca_file=str(pki.ca)))
            async for event in kube.watch(RESOURCES["Namespace"], "99", timeout_seconds=5, apply_now=apply_now):
                happened.append(("later", int(event["object"]["metadata"]["resourceVersion"])))  # type: ignore[index]
                await asyncio.sleep(0.01)
            await kube.aclose()
        return happened

    happened = uvloop.run(main())
    assert [version for _, version in happened] == list(range(100, 140))  # every event once, in order
    assert {version for how, version in happened if how == "later"} >= {105, 115, 125, 135}
    assert sum(how == "now" for how, _ in happened) >= 20  # most applied as they arrived


def test_a_watch_over_tls_reads_the_apiservers_refusal_and_is_cut_at_its_deadline(pki: Pki) -> None:
    status = orjson.dumps({"kind": "Status", "code": 403, "reason": "Forbidden", "message": "no watching"})

    async def answer(head: bytes) -> Pieces:
        if b"&resourceVersion=1&" in head:
            return [b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                    % len(status), status[:20], 0.02, status[20:]]
        return [HEAD + _chunk(_event("a", 7)), 30.0]  # then silence

    async def main() -> None:
        async with tls_server(pki, answer) as url:
            kube = KubeClient(ClusterConfig(server=url, tokens=StaticToken("t"), ca_file=str(pki.ca)))
            with pytest.raises(ApiError, match="no watching"):
                async for _ in kube.watch(RESOURCES["Namespace"], "1", timeout_seconds=5):
                    pass
            seen: list[dict[str, object]] = []
            with pytest.raises(LeanHTTPError, match="deadline"):
                async for event in kube.watch(RESOURCES["Namespace"], "2", timeout_seconds=-29):
                    seen.append(event)  # the stream's deadline is timeoutSeconds + 30: one second from now
            assert len(seen) == 1
            await kube.aclose()

    uvloop.run(main())
