"""What the service's HTTP path costs a verb request, against the least any Python server could spend (issue 22).

    python -m bench.http_glue                    # 3 rounds of 5000 requests per side
    python -m bench.http_glue --rounds 5 --requests 20000

Issue 22 lists "a small asyncio protocol for the verbs alone on top of httptools" among the ways to cut the
service's cost in kube-scheduler's loop. This measures what such a protocol could save at most. Two servers
answer the same POST with the same bytes, each in a process of its own on uvloop, the service's loop:

- ``service``: the product's path with the engine left out. The listener (accept, connection budget and
  deadlines), uvicorn's httptools protocol as the service guards it, the application object (``create_app``)
  and its ``FastVerbs`` dispatch, the body read from the ASGI messages under its size limit and deadline,
  the request id, the answer sent as two ASGI messages; the verb's handler only returns a fixed answer.
- ``raw``: an ``asyncio.Protocol`` feeding httptools' parser and writing the answer when a request is complete:
  no limits, no deadlines, no request id, no dispatch. Not a product; the floor.

A client of the kind kube-scheduler is (``bench.verb_client``: one kept-alive connection, one request at a
time) posts a filter-sized body (a Pod and 230 node names, as nodeCacheCapable sends at 500 nodes). Per side
and round: the server process's CPU time (user + system, from /proc) and the client's wall time per request,
after a warm-up. Sides alternate within each round, the order alternating between rounds; read the difference,
not the times. What the service would save with a path of its own is at most the difference, for each of the
three verbs a scheduled pod costs (filter, prioritize, bind).
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
    from extender.api.http import DEFAULT_MAX_BODY_BYTES, DEFAULT_READ_TIMEOUT_SECONDS, read_asgi_body
    from extender.api.listener import Endpoint, ListenerLimits, serve
    from extender.cluster.cache import ClusterCache
    from extender.engine.profile import build_profile
    from extender.engine.runtime import Framework
    from extender.engine.scheduler import Scheduler

    async def answer(scope: Any, receive: Any, profile: str | None) -> tuple[int, bytes, list[Any]]:
        await read_asgi_body(scope, receive, DEFAULT_MAX_BODY_BYTES, DEFAULT_READ_TIMEOUT_SECONDS)
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


SERVERS = {"service": serve_service, "raw": serve_raw}


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


def measure(side: str, requests: int, warm_up: int = 300) -> tuple[float, float, bytes]:
    """One round of one side: (server CPU µs per request, client wall µs per request, the answer's body)."""
    server = Server(side)
    try:
        with VerbClient("127.0.0.1", server.port) as client:
            for _ in range(warm_up):
                answer = client.post("/filter", BODY)
            cpu = cpu_seconds(server.proc.pid)
            started = time.perf_counter()
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
    parser.add_argument("--serve", choices=sorted(SERVERS), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        SERVERS[args.serve](args.port)
        return 0
    figures: dict[str, list[tuple[float, float]]] = {side: [] for side in SERVERS}
    for round_ in range(args.rounds):
        order = ["service", "raw"] if round_ % 2 == 0 else ["raw", "service"]
        for side in order:
            cpu, wall, _ = measure(side, args.requests)
            figures[side].append((cpu, wall))
            print(f"round {round_ + 1} {side}: server CPU {cpu:.1f} us, round trip {wall:.1f} us per request",
                  flush=True)
    cpu = {side: statistics.median(c for c, _ in rows) for side, rows in figures.items()}
    wall = {side: statistics.median(w for _, w in rows) for side, rows in figures.items()}
    print(f"medians: service {cpu['service']:.1f} us CPU, {wall['service']:.1f} us round trip; "
          f"raw {cpu['raw']:.1f} us CPU, {wall['raw']:.1f} us round trip; "
          f"difference {cpu['service'] - cpu['raw']:.1f} us CPU, {wall['service'] - wall['raw']:.1f} us round trip "
          f"per request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
