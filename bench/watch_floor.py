"""The least a Python process spends reading the Pod watch: the floor of `python -m bench.watch_cpu --floor`.

    python -m bench.watch_floor --kubeconfig FILE --counts FILE

Watches pods as the service does (the same query, over TLS on uvloop, with the kubeconfig's credentials) with
an ``asyncio.Protocol`` that only counts the ADDED and DELETED events in the bytes as they arrive: no chunked
decoding, no JSON, no cache. Every half second it writes "<added> <deleted>" to ``--counts`` (replacing the
file) for the benchmark to wait on. Not a product: the floor that the service's CPU per watch event is set
against, so that what reading the watch costs beyond decoding and applying an event is bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from extender.cluster.live import POD_PARAMS
from extender.kubeapi.config import ClusterConfig, from_kubeconfig

_MARKS = (b'"type":"ADDED"', b'"type":"DELETED"')
_TAIL = max(len(mark) for mark in _MARKS) - 1


class CountingWatch(asyncio.Protocol):
    """Counts the events of each kind in a watch's bytes (a mark split between two reads is counted once)."""

    def __init__(self, request: bytes, ended: asyncio.Future[None]) -> None:
        self.request = request
        self.ended = ended
        self.counts = [0, 0]
        self._tail = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        seen = self._tail + data
        for i, mark in enumerate(_MARKS):
            self.counts[i] += seen.count(mark)
        # Keep the last bytes for a mark split across reads; drop any mark they hold, already counted.
        tail = seen[-_TAIL:]
        for mark in _MARKS:
            tail = tail.replace(mark, b"")
        self._tail = tail

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ended.done():
            self.ended.set_result(None)


@dataclass(frozen=True)
class Apiserver:
    """Where a kubeconfig's apiserver is, for requests written by hand on a raw connection: its address, TLS
    (None over plain HTTP) and the headers every request carries (Host, Accept, the bearer token)."""

    host: str
    port: int
    tls: Any
    server_name: str | None
    headers: str  # header lines, each ending in CRLF

    @classmethod
    def of(cls, config: ClusterConfig) -> Apiserver:
        """The kubeconfig's apiserver (its token read now)."""
        url = urlsplit(config.server)
        tls: Any = config.ssl_context() if url.scheme == "https" else None
        token = config.tokens.token()
        return cls(url.hostname or "127.0.0.1", url.port or (443 if tls else 80), tls,
                   (config.tls_server_name or url.hostname) if tls else None,
                   f"Host: {url.netloc}\r\nAccept: application/json\r\n"
                   + (f"Authorization: Bearer {token}\r\n" if token else ""))

    async def connect(self, protocol: Callable[[], asyncio.Protocol]) -> asyncio.Protocol:
        """A new connection to it, with ``protocol()`` reading it."""
        _, made = await asyncio.get_running_loop().create_connection(
            protocol, self.host, self.port, ssl=self.tls, server_hostname=self.server_name)
        return made


async def open_watch(config: ClusterConfig) -> tuple[CountingWatch, asyncio.Future[None]]:
    """The Pod watch as the service opens it (listed for a resourceVersion first), counted by a CountingWatch:
    (the protocol, a future done when the connection ends). Also bench.floor_extender's watch."""
    context: Any = config.ssl_context()
    token = config.tokens.token()
    auth = {"Authorization": f"Bearer {token}"} if token else {}

    def listed_version() -> str:
        with httpx.Client(base_url=config.server, verify=context, headers=auth) as client:
            listed = client.get("/api/v1/pods", params={**POD_PARAMS, "limit": 1})
            listed.raise_for_status()
            return str(listed.json()["metadata"]["resourceVersion"])

    version = await asyncio.to_thread(listed_version)  # off the loop: a caller's server keeps answering
    apiserver = Apiserver.of(config)
    query = urlencode({**POD_PARAMS, "watch": "true", "resourceVersion": version, "allowWatchBookmarks": "true",
                       "timeoutSeconds": 3600})
    request = f"GET /api/v1/pods?{query} HTTP/1.1\r\n{apiserver.headers}\r\n".encode("latin-1")
    ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    protocol = await apiserver.connect(lambda: CountingWatch(request, ended))
    assert isinstance(protocol, CountingWatch)
    return protocol, ended


async def watch(kubeconfig: Path, counts: Path) -> None:
    protocol, ended = await open_watch(from_kubeconfig(kubeconfig))
    written = None
    while not ended.done():
        now = tuple(protocol.counts)
        if now != written:
            partial = counts.with_suffix(".tmp")
            partial.write_text(f"{now[0]} {now[1]}\n")
            os.replace(partial, counts)
            written = now
        await asyncio.wait([ended], timeout=0.5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--counts", type=Path, required=True)
    args = parser.parse_args(argv)
    import uvloop

    uvloop.run(watch(args.kubeconfig, args.counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
