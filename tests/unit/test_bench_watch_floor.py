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
