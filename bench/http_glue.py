"""What the service's HTTP path costs a verb request, against the least any Python server could spend (issue 22).

    python -m bench.http_glue                    # 3 rounds of 5000 requests per side, back to back
    python -m bench.http_glue --rounds 5 --requests 20000
    python -m bench.http_glue --pause-ms 2.5 --requests 2000 --sides service,uvicorn,lean,raw

Issue 22 lists "a small asyncio protocol for the verbs alone on top of httptools" among the ways to cut the
service's cost in kube-scheduler's loop. This measures what such a protocol could save at most. Two servers
answer the same POST with the same bytes, each in a process of its own on uvloop, the service's loop:

- ``service``: the product's path with the engine left out. The listener (accept, connection budget and
  deadlines), the verbs' own protocol (``extender/api/verb_protocol.py``: httptools, the route found by the
  application's ``FastVerbs``, the body read under its size limit and deadline, the request id, the answer in
  one write; until 2026-11-27 uvicorn's httptools protocol as the service guards it, the application object
  and the ASGI messages); the verb's handler only returns a fixed answer.
- ``raw``: an ``asyncio.Protocol`` feeding httptools' parser and writing the answer when a request is complete:
  no limits, no deadlines, no request id, no dispatch. Not a product; the floor.

Two more sides split the difference (``--sides``):

- ``uvicorn``: uvicorn itself (httptools, uvloop) in front of a bare ASGI application that reads the body and
  sends the answer: what uvicorn's request cycle costs, without the service's listener, guard or application.
- ``lean``: ``raw`` plus what any server of the verbs would have to keep: a Python callback per header, a head
  deadline per request (a timer armed and cancelled), a task per request and a request id. Not a product; an
  estimate of what a protocol of the verbs' own could cost.

A client of the kind kube-scheduler is (``bench.verb_client``: one kept-alive connection, one request at a
time) posts a filter-sized body (a Pod and 230 node names, as nodeCacheCapable sends at 500 nodes). Per side
and round: the server process's CPU time (user + system, from /proc) and the client's wall time per request,
after a warm-up. Sides alternate within each round, the order alternating between rounds; read the difference,
not the times. What the service could still save is at most the difference, for each of the three verbs a
scheduled pod costs (filter, prioritize, bind).

``--pause-ms``: the client waits that long after each answer before it sends the next request, as the servers
wait in kube-scheduler's loop (a verb every few milliseconds, the process idle in between). A server woken
from idle runs its code with cold caches; the CPU per request is then several times the back-to-back figure,
and more so the more code a request runs. The round trip is then the median of the requests' own times.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

from bench.run import ROOT, cpu_seconds
from bench.verb_client import VerbClient

ANSWER = (b'{"Nodes":null,"NodeNames":["node-0001","node-0002"],"FailedNodes":{},'
          b'"FailedAndUnresolvableNodes":{},"Error":""}')
#: What kube-scheduler sends to filter with nodeCacheCapable at 500 nodes: a Pod and 230 names.
BODY = (b'{"Pod":{"metadata":{"name":"web-1","namespace":"shop","uid":"5b1c","resourceVersion":"4711",'
        b'"labels":{"app":"web"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-6c",'
        b'"uid":"9d2e","controller":true}]},"spec":{"containers":[{"name":"web","image":"nginx:1.27",'
        b'"resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}],"schedulerName":"default-scheduler",'
        b'"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",'
        b'"tolerationSeconds":300}]},"status":{"phase":"Pending"}},"NodeNames":['
        + b",".join(b'"node-%04d"' % i for i in range(230)) + b"]}")


# ---------------------------------------------------------------------------------------------- the servers


def serve_service(port: int) -> None:
    """The product's HTTP path in front of a verb that answers ANSWER (the engine left out)."""
    from extender.api.app import create_app
    from extender.api.listener import Endpoint, ListenerLimits, serve
    from extender.cluster.cache import ClusterCache
    from extender.engine.profile import build_profile
    from extender.engine.runtime import Framework
    from extender.engine.scheduler import Scheduler

    async def answer(read_body: Any, profile: str | None) -> tuple[int, bytes, list[Any]]:
        await read_body()  # under the service's limits, as the verbs read their bodies
        return 200, ANSWER, []

    app: Any = create_app(Scheduler(ClusterCache(), [Framework(build_profile(None))]))
    app.fast_verbs.verbs = {"filter": answer}
    serve(app, Endpoint("127.0.0.1", port, ListenerLimits(), keep_alive_seconds=60, head_seconds=10),
          shutdown_grace=1)


class RawProtocol(asyncio.Protocol):
    """One connection: httptools parses, a complete request gets ANSWER."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        import httptools

        self.transport: Any = transport
        self.parser = httptools.HttpRequestParser(self)
        self.body: list[bytes] = []

    def data_received(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_body(self, chunk: bytes) -> None:
        self.body.append(chunk)

    def on_message_complete(self) -> None:
        self.body.clear()
        self.transport.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                             b"x-request-id: raw\r\n\r\n%s" % (len(ANSWER), ANSWER))


def serve_raw(port: int) -> None:
    """The floor: RawProtocol on uvloop."""
    import uvloop

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(RawProtocol, "127.0.0.1", port)
        await server.serve_forever()

    uvloop.run(main())


def serve_uvicorn(port: int) -> None:
    """uvicorn (httptools, uvloop) in front of a bare ASGI application that reads the body and answers ANSWER."""
    import uvicorn

    head = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(ANSWER))]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        await send({"type": "http.response.start", "status": 200, "headers": head})
        await send({"type": "http.response.body", "body": ANSWER})

    uvicorn.run(app, host="127.0.0.1", port=port, loop="uvloop", http="httptools", lifespan="off",
                log_level="warning", access_log=False, timeout_keep_alive=600)


class LeanProtocol(RawProtocol):
    """RawProtocol with what a server of the verbs must keep: headers read in Python, a head deadline per
    request, a task per request and a request id."""

    _answered = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.loop = asyncio.get_running_loop()
        self.headers: list[tuple[bytes, bytes]] = []
        self.deadline: asyncio.TimerHandle | None = self.loop.call_later(10, self.transport.close)

    def on_message_begin(self) -> None:
        self.headers = []

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def on_message_complete(self) -> None:
        body = b"".join(self.body)
        self.body.clear()
        self.loop.create_task(self.answer(body))

    async def answer(self, body: bytes) -> None:
        LeanProtocol._answered += 1
        self.transport.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                             b"x-request-id: %08x\r\n\r\n%s" % (len(ANSWER), LeanProtocol._answered, ANSWER))
        self.deadline = self.loop.call_later(10, self.transport.close)


def serve_lean(port: int) -> None:
    """LeanProtocol on uvloop."""
    import uvloop

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(LeanProtocol, "127.0.0.1", port)
        await server.serve_forever()

    uvloop.run(main())


SERVERS = {"service": serve_service, "raw": serve_raw, "uvicorn": serve_uvicorn, "lean": serve_lean}


# ---------------------------------------------------------------------------------------------- measuring


class Server:
    """One side's server process (``python -m bench.http_glue --serve SIDE``), until closed."""

    def __init__(self, side: str) -> None:
        from controlplane import free_port  # on the path once bench.run is imported

        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, "-m", "bench.http_glue", "--serve", side, "--port",
                                      str(self.port)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.close()
                    raise RuntimeError(f"the {side} server did not start") from None
                time.sleep(0.05)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def measure(side: str, requests: int, warm_up: int = 300, pause: float = 0.0) -> tuple[float, float, bytes]:
    """One round of one side: (server CPU µs per request, client wall µs per request, the answer's body).
    ``pause``: seconds the client waits after each answer (the wall figure is then the median request's)."""
    server = Server(side)
    try:
        with VerbClient("127.0.0.1", server.port) as client:
            for _ in range(warm_up):
                answer = client.post("/filter", BODY)
            cpu = cpu_seconds(server.proc.pid)
            started = time.perf_counter()
            if pause:
                times = []
                for _ in range(requests):
                    sent = time.perf_counter()
                    client.post("/filter", BODY)
                    times.append(time.perf_counter() - sent)
                    time.sleep(pause)
                wall = statistics.median(times) * requests
            else:
                for _ in range(requests):
                    client.post("/filter", BODY)
                wall = time.perf_counter() - started
            cpu = cpu_seconds(server.proc.pid) - cpu
    finally:
        server.close()
    return 1e6 * cpu / requests, 1e6 * wall / requests, answer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=5000, help="per side and round (after 300 to warm up)")
    parser.add_argument("--pause-ms", type=float, default=0.0,
                        help="the client's wait after each answer (0: back to back)")
    parser.add_argument("--sides", default="service,raw", help=f"comma-separated, of {','.join(SERVERS)}")
    parser.add_argument("--serve", choices=sorted(SERVERS), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        SERVERS[args.serve](args.port)
        return 0
    sides = args.sides.split(",")
    unknown = [side for side in sides if side not in SERVERS]
    if unknown:
        parser.error(f"unknown sides {unknown}: choose among {sorted(SERVERS)}")
    figures: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
    for round_ in range(args.rounds):
        for side in sides if round_ % 2 == 0 else sides[::-1]:
            cpu, wall, _ = measure(side, args.requests, pause=args.pause_ms / 1000)
            figures[side].append((cpu, wall))
            print(f"round {round_ + 1} {side}: server CPU {cpu:.1f} us, round trip {wall:.1f} us per request",
                  flush=True)
    cpu_of = {side: statistics.median(c for c, _ in rows) for side, rows in figures.items()}
    wall_of = {side: statistics.median(w for _, w in rows) for side, rows in figures.items()}
    print("medians: " + "; ".join(f"{side} {cpu_of[side]:.1f} us CPU, {wall_of[side]:.1f} us round trip"
                                  for side in sides))
    if "service" in cpu_of and "raw" in cpu_of:
        print(f"difference service - raw: {cpu_of['service'] - cpu_of['raw']:.1f} us CPU, "
              f"{wall_of['service'] - wall_of['raw']:.1f} us round trip per request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
