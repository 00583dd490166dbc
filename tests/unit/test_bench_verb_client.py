"""bench/verb_client.py: the benchmark's minimal HTTP client reads answers however they arrive (split across
reads, two on one connection), sends what kube-scheduler sends, and refuses what it cannot read rather than
guessing."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from bench.verb_client import VerbClient, VerbClientError


class FakeService:
    """One connection on a local port: each request read (head and Content-Length body) is recorded and
    answered with the next queued reply, sent chunk by chunk with a pause between chunks."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.received: list[bytes] = []
        self._replies: list[list[bytes]] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def answer(self, *replies: list[bytes]) -> None:
        """Queue the replies and start serving."""
        self._replies.extend(replies)
        self._thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            buffer = b""
            while self._replies:
                while b"\r\n\r\n" not in buffer:
                    buffer += conn.recv(65536)
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                while len(buffer) < length:
                    buffer += conn.recv(65536)
                self.received.append(head + b"\r\n\r\n" + buffer[:length])
                buffer = buffer[length:]
                for chunk in self._replies.pop(0):
                    conn.sendall(chunk)
                    time.sleep(0.01)

    def close(self) -> None:
        self._thread.join(5)
        self.listener.close()


@pytest.fixture
def fake() -> Iterator[FakeService]:
    service = FakeService()
    yield service
    service.close()


def test_answers_split_across_reads_on_one_kept_alive_connection(fake: FakeService) -> None:
    fake.answer([b"HTTP/1.1 200 OK\r\nContent-Le", b'ngth: 10\r\n\r\n{"a":', b" 1}  "],
                [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-request-id: r\r\n\r\n[]"])
    with VerbClient.for_url(fake.url) as client:
        assert client.post("/filter", b'{"Pod": {}}') == b'{"a": 1}  '
        assert client.post("/prioritize", b"{}") == b"[]"
    first, second = fake.received
    assert first.startswith(b"POST /filter HTTP/1.1\r\n") and first.endswith(b'\r\n\r\n{"Pod": {}}')
    assert b"Content-Type: application/json\r\n" in first and b"Content-Length: 11\r\n" in first
    assert second.startswith(b"POST /prioritize HTTP/1.1\r\n")


def test_an_error_status_or_an_unframed_answer_is_refused(fake: FakeService) -> None:
    fake.answer([b'HTTP/1.1 400 Bad Request\r\nContent-Length: 13\r\n\r\n{"Error":"x"}'],
                [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n"])
    with VerbClient.for_url(fake.url) as client:
        with pytest.raises(VerbClientError, match=r"400 Bad Request.*Error"):
            client.post("/filter", b"{}")
        with pytest.raises(VerbClientError, match="without Content-Length"):
            client.post("/filter", b"{}")
