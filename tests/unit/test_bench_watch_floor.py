"""bench/watch_floor.py: the floor watcher counts each event once, however the stream is cut into reads."""

from __future__ import annotations

import asyncio
import random

import pytest

from bench.watch_floor import CountingWatch


def stream(kinds: list[str]) -> bytes:
    """A watch body as kube-apiserver writes it: chunked, one event per chunk."""
    out = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    for i, kind in enumerate(kinds):
        line = (b'{"type":"%s","object":{"kind":"Pod","metadata":{"name":"p-%d"},"status":{"conditions":'
                b'[{"type":"PodScheduled"}]}}}\n' % (kind.encode(), i))
        out += b"%x\r\n%s\r\n" % (len(line), line)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_each_event_is_counted_once_whatever_the_reads(seed: int) -> None:
    rng = random.Random(seed)
    kinds = [rng.choice(["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]) for _ in range(200)]
    data = stream(kinds)
    loop = asyncio.new_event_loop()
    try:
        watcher = CountingWatch(b"", loop.create_future())
        at = 0
        while at < len(data):  # reads of 1 to 40 bytes: marks split anywhere
            step = rng.randint(1, 40)
            watcher.data_received(data[at:at + step])
            at += step
    finally:
        loop.close()
    assert watcher.counts == [kinds.count("ADDED"), kinds.count("DELETED")]


def test_the_apiserver_of_a_kubeconfig_is_addressed_as_the_service_addresses_it() -> None:
    """The floor's watch and its Binding POSTs write their requests by hand: the host, port, TLS name and the
    headers each carries come from the kubeconfig (its tls-server-name over the URL's host, its token)."""
    from bench.watch_floor import Apiserver
    from extender.kubeapi.config import ClusterConfig, StaticToken

    secure = Apiserver.of(ClusterConfig(server="https://api.example:6443", tokens=StaticToken("t0k"),
                                        tls_server_name="kubernetes", insecure=True))
    assert (secure.host, secure.port, secure.server_name) == ("api.example", 6443, "kubernetes")
    assert secure.tls is not None
    assert secure.headers == ("Host: api.example:6443\r\nAccept: application/json\r\n"
                              "Authorization: Bearer t0k\r\n")
    plain = Apiserver.of(ClusterConfig(server="http://127.0.0.1"))
    assert (plain.host, plain.port, plain.tls, plain.server_name) == ("127.0.0.1", 80, None, None)
    assert plain.headers == "Host: 127.0.0.1\r\nAccept: application/json\r\n"
