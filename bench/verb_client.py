"""A minimal HTTP/1.1 keep-alive client for timing the verbs, as cheap as kube-scheduler's own client.

kube-scheduler calls an extender through Go's net/http: building a request and reading its answer costs it tens
of microseconds. httpx, in Python, costs about half a millisecond per call on this machine, which a benchmark of
the service's filter + prioritize round trip would otherwise count as the service's (bench/RESULTS.md, "The
client"). This client writes one POST per call on one connection and reads the answer's head and its
Content-Length body (every answer of the service has one); anything else is an error, never a guess.
"""

from __future__ import annotations

import socket
from types import TracebackType


class VerbClientError(RuntimeError):
    """An answer this client does not read (no Content-Length, a closed connection) or a non-2xx status."""


class VerbClient:
    """POSTs JSON bodies to one service over one kept-alive connection."""

    def __init__(self, host: str, port: int, timeout: float = 120) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._host = f"{host}:{port}".encode()
        self._buffer = b""

    @classmethod
    def for_url(cls, url: str, timeout: float = 120) -> VerbClient:
        """A client for ``http://host:port`` (the form bench.run's service gives)."""
        if not url.startswith("http://"):
            raise ValueError(f"expected an http:// URL, got {url!r}")
        host, _, port = url.removeprefix("http://").rstrip("/").rpartition(":")
        return cls(host, int(port), timeout)

    def post(self, path: str, body: bytes) -> bytes:
        """The answer's body; VerbClientError unless the status is 2xx."""
        self.sock.sendall(b"POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                          b"Content-Length: %d\r\n\r\n%s" % (path.encode(), self._host, len(body), body))
        while b"\r\n\r\n" not in self._buffer:
            self._receive()
        head, _, self._buffer = self._buffer.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = lines[0].split(b" ", 2)
        length = None
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if length is None:
            raise VerbClientError(f"POST {path}: an answer without Content-Length ({lines[0]!r})")
        while len(self._buffer) < length:
            self._receive()
        answer, self._buffer = self._buffer[:length], self._buffer[length:]
        if len(status) < 2 or not status[1].startswith(b"2"):
            raise VerbClientError(f"POST {path}: {lines[0].decode(errors='replace')}: {answer[:200]!r}")
        return answer

    def _receive(self) -> None:
        data = self.sock.recv(1 << 20)
        if not data:
            raise VerbClientError("the service closed the connection")
        self._buffer += data

    def close(self) -> None:
        """Close the connection."""
        self.sock.close()

    def __enter__(self) -> VerbClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()
