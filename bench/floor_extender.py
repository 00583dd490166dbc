"""The least a Python extender with a cache could spend in kube-scheduler's loop: a floor beside the Go one (issue 22).

    python -m bench.floor_extender serve --port P --kubeconfig FILE     # what bench.run's service() starts

The throughput benchmark runs it as a side (``python -m bench.run --only throughput --throughput-floor``). It
speaks the verbs as kube-scheduler calls them, with the least work any Python extender must do that keeps a
cache of the cluster, and nothing more:

- the verbs on uvloop, an ``asyncio.Protocol`` feeding httptools: filter decodes the body (orjson) and passes
  every name, prioritize scores every name 0, bind decodes the body and POSTs the pod's Binding to the
  apiserver on a kept-alive TLS connection (one request at a time per connection, more opened while all are
  busy), answering once the apiserver has;
- the Pod watch as the service opens it (bench/watch_floor.py), whose events are only counted: no decoding,
  no cache. Every scheduled pod still comes back on it, as it would to any extender with a cache.

No limits, deadlines, request ids, metrics (``/metrics`` answers empty) or logs. Its rate against the
do-nothing Go extender's (which has no watch) is the most a Python extender with a watch reaches on the
machine, and its CPU per pod the least such an extender spends; our hollow service against it is what the
service's own path adds. Never a product: its answers are wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httptools
import orjson

from bench.watch_floor import Apiserver, open_watch
from extender.kubeapi.config import ClusterConfig, from_kubeconfig


class _Exchange(asyncio.Protocol):
    """One kept-alive connection to the apiserver: a request written, its answer's status and body read."""

    def __init__(self) -> None:
        self.transport: Any = None
        self.parser = httptools.HttpResponseParser(self)
        self.answer: asyncio.Future[tuple[int, bytes]] | None = None
        self.body: list[bytes] = []
        self.open = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_body(self, chunk: bytes) -> None:
        self.body.append(chunk)

    def on_message_complete(self) -> None:
        answer, self.answer = self.answer, None
        body, self.body = b"".join(self.body), []
        if answer is not None and not answer.done():
            answer.set_result((self.parser.get_status_code(), body))

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = False
        if self.answer is not None and not self.answer.done():
            self.answer.set_exception(ConnectionError("the apiserver closed the connection"))

    def send(self, request: bytes) -> asyncio.Future[tuple[int, bytes]]:
        self.answer = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self.answer


class BindingPoster:
    """POSTs Bindings to the apiserver on kept-alive connections, opening one more whenever all are busy."""

    def __init__(self, config: ClusterConfig) -> None:
        self._apiserver = Apiserver.of(config)
        self._head = (self._apiserver.headers + "Content-Type: application/json\r\n").encode("latin-1")
        self._idle: list[_Exchange] = []

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> tuple[int, bytes]:
        """The apiserver's status and body for this pod's Binding."""
        body = orjson.dumps({"apiVersion": "v1", "kind": "Binding",
                             "metadata": {"name": name, "namespace": namespace, "uid": uid},
                             "target": {"kind": "Node", "name": node}})
        request = (b"POST /api/v1/namespaces/%s/pods/%s/binding HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n%s"
                   % (namespace.encode(), name.encode(), self._head, len(body), body))
        while self._idle and not self._idle[-1].open:
            self._idle.pop()
        if self._idle:
            exchange = self._idle.pop()
        else:
            made = await self._apiserver.connect(_Exchange)
            assert isinstance(made, _Exchange)
            exchange = made
        answer = await exchange.send(request)
        if exchange.open:
            self._idle.append(exchange)
        return answer


Bind = Callable[[str, str, str, str], Awaitable[tuple[int, bytes]]]

_EMPTY_FILTER = b'"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""}'


class FloorVerbs(asyncio.Protocol):
    """One connection from kube-scheduler: each complete request answered, bind once the apiserver has."""

    def __init__(self, bind: Bind, ready: Callable[[], bool]) -> None:
        self.bind = bind
        self.ready = ready
        self.binding: set[asyncio.Task[None]] = set()  # held until done: the loop keeps only weak references
        self.transport: Any = None
        self.url = b""
        self.body: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.parser = httptools.HttpRequestParser(self)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.transport.close()

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_body(self, chunk: bytes) -> None:
        self.body.append(chunk)

    def on_message_complete(self) -> None:
        path, self.url = self.url, b""
        body, self.body = b"".join(self.body), []
        if path == b"/filter":
            names = orjson.loads(body).get("NodeNames") or []
            self.answer(200, b'{"Nodes":null,"NodeNames":' + orjson.dumps(names) + b"," + _EMPTY_FILTER)
        elif path == b"/prioritize":
            names = orjson.loads(body).get("NodeNames") or []
            self.answer(200, orjson.dumps([{"Host": name, "Score": 0} for name in names]))
        elif path == b"/bind":
            task = asyncio.get_running_loop().create_task(self._bind(orjson.loads(body)))
            self.binding.add(task)
            task.add_done_callback(self.binding.discard)
        elif path == b"/readyz":
            ready = self.ready()
            self.answer(200 if ready else 503, b"ok" if ready else b"not ready")
        elif path == b"/metrics":
            self.answer(200, b"")
        else:
            self.answer(404, b"not found")

    async def _bind(self, args: dict[str, Any]) -> None:
        try:
            status, text = await self.bind(args["PodNamespace"], args["PodName"], args["PodUID"], args["Node"])
            error = "" if status == 201 else f"binding: {status} {text.decode('utf-8', 'replace')}"
        except (OSError, KeyError) as err:
            error = f"binding: {err!r}"
        self.answer(200, orjson.dumps({"Error": error}))

    def answer(self, status: int, body: bytes) -> None:
        reason = {200: b"OK", 404: b"Not Found", 503: b"Service Unavailable"}[status]
        self.transport.write(b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                             % (status, reason, len(body), body))


async def serve(port: int, config: ClusterConfig) -> None:
    """The verbs on 127.0.0.1:``port``, ready once the Pod watch is open; until that watch ends."""
    poster = BindingPoster(config)
    loop = asyncio.get_running_loop()
    watching: list[asyncio.Future[None]] = []
    server = await loop.create_server(lambda: FloorVerbs(poster.bind, lambda: bool(watching)), "127.0.0.1", port)
    _, ended = await open_watch(config)
    watching.append(ended)
    async with server:
        await ended


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve_args = commands.add_parser("serve", help="serve the verbs (the flags bench.run's service() passes)")
    serve_args.add_argument("--port", type=int, required=True)
    serve_args.add_argument("--kubeconfig", type=Path, required=True)
    serve_args.add_argument("--log-level", default="warning", help="accepted for bench.run; nothing is logged")
    args = parser.parse_args(argv)
    import uvloop

    uvloop.run(serve(args.port, from_kubeconfig(args.kubeconfig)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
