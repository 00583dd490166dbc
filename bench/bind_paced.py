"""CPU per Binding POST at the rhythm of kube-scheduler's loop: the bind verb's request to the apiserver (issue 22).

    python -m bench.bind_paced                          # this checkout and the floor, three rounds
    python -m bench.bind_paced --before /tmp/before     # and another checkout, interleaved round by round
    python -m bench.bind_paced --posts 3000 --pace-ms 2.5 --rounds 5

In the loop kube-scheduler calls bind once per pod, a few milliseconds after the last, and the service then
POSTs the pod's Binding to the apiserver on a kept-alive connection: a process idle in between is woken to
send it and again to read the answer, with its caches cold each time. This times that alone. A stand-in
apiserver (this script with ``--serve``: TLS, kept-alive connections, each POST answered ``201 Created``
with the apiserver's Status and headers) is sent, ``--pace-ms`` apart:

- by each checkout's bind path as the service runs it (``extender.kubeapi.binder.ApiBinder`` over the lean
  client, on uvloop): the CPU time of its process (user + system) from the first timed POST to the last,
  per POST, after a warm-up;
- by ``floor``: an ``asyncio.Protocol`` on one TLS connection that writes the same request bytes and counts
  the answers' ends: the least a Python process spends being woken to send a request and read its answer.

Each side is a fresh process; the sides alternate within each round and the order alternates between rounds.
Read the differences, not the times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import runpy
import ssl
import sys
from pathlib import Path
from typing import Any

WARM_UP = 50
NAMESPACE, POD, UID, NODE = "shop", "web-7d9f8b6c5-x2k4q", "0f7c5e2a-1b8d-4c3e-9a6f-2d1e0b9c8a7f", "node-00042"
_ANSWER = (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}')
# The headers a kube-apiserver sends with it (1.36: audit id, flow control's ids, date).
_ANSWER_HEAD = (b"HTTP/1.1 201 Created\r\nAudit-Id: 5c3b7a52-0d7e-4a9f-b5e1-8f2c6d4a3b19\r\n"
                b"Cache-Control: no-cache, private\r\nContent-Type: application/json\r\n"
                b"X-Kubernetes-Pf-Flowschema-Uid: 7e1f0c9d-3a2b-4c5d-8e6f-9a0b1c2d3e4f\r\n"
                b"X-Kubernetes-Pf-Prioritylevel-Uid: 1a2b3c4d-5e6f-7a8b-9c0d-e1f2a3b4c5d6\r\n"
                b"Date: Fri, 27 Nov 2026 08:00:00 GMT\r\nContent-Length: %d\r\n\r\n" % len(_ANSWER))


# ------------------------------------------------------------------------------------------- the stand-in


def serve(inputs: Path, port: int) -> None:
    """The stand-in apiserver on 127.0.0.1:``port`` (run with ``--serve``): every POST answered 201."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            await reader.readexactly(length)
            writer.write(_ANSWER_HEAD + _ANSWER)

    _standin()["serve_tls"](inputs, port, handle)


# ------------------------------------------------------------------------------------------- the sides


def worker(inputs: Path) -> dict[str, Any]:
    """One side in this process (the checkout first on the path): the stand-in started, the POSTs timed."""
    async def run(params: dict[str, Any], port: int, cpu_seconds: Any) -> tuple[int, float]:
        timed = _floor if params["side"] == "floor" else _binder
        return params["posts"], await timed(inputs, port, params["posts"], params["pace_ms"] / 1000, cpu_seconds)

    figures: dict[str, Any] = _standin()["side"](__file__, inputs, "post", run)
    return figures


def _standin() -> dict[str, Any]:
    """bench/standin.py's names, run by its path (the worker's interpreter may have no ``bench`` on its path)."""
    return runpy.run_path(str(Path(__file__).with_name("standin.py")))


async def _binder(inputs: Path, port: int, posts: int, pace: float, cpu_seconds: Any) -> float:
    """The service's bind path: ApiBinder.bind over the lean client, one POST every ``pace`` seconds."""
    from extender.gc_tuning import settle_after_load
    from extender.kubeapi.binder import ApiBinder
    from extender.kubeapi.client import KubeClient
    from extender.kubeapi.config import ClusterConfig

    settle_after_load()
    client = KubeClient(ClusterConfig(server=f"https://127.0.0.1:{port}", ca_file=str(inputs / "ca.crt")))
    binder = ApiBinder(client)
    for _ in range(WARM_UP):
        await binder.bind(NAMESPACE, POD, UID, NODE)  # raises unless the stand-in answered 201
    start = cpu_seconds()
    for _ in range(posts):
        await asyncio.sleep(pace)
        await binder.bind(NAMESPACE, POD, UID, NODE)
    used: float = cpu_seconds() - start
    await client.aclose()
    return used


async def _floor(inputs: Path, port: int, posts: int, pace: float, cpu_seconds: Any) -> float:
    """The same request bytes on one TLS connection, each answer's end found by its length: no parsing."""
    body = json.dumps({"apiVersion": "v1", "kind": "Binding",
                       "metadata": {"name": POD, "namespace": NAMESPACE, "uid": UID},
                       "target": {"kind": "Node", "name": NODE}}, separators=(",", ":")).encode()
    request = (f"POST /api/v1/namespaces/{NAMESPACE}/pods/{POD}/binding HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               f"User-Agent: extender\r\nAccept: application/json\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    answer_size = len(_ANSWER_HEAD) + len(_ANSWER)
    loop = asyncio.get_running_loop()
    waiting: list[asyncio.Future[None]] = []

    class Counting(asyncio.Protocol):
        received = 0

        def data_received(self, data: bytes) -> None:
            self.received += len(data)
            if self.received >= answer_size:
                self.received -= answer_size
                waiting.pop().set_result(None)

    context = ssl.create_default_context(cafile=str(inputs / "ca.crt"))
    transport, _ = await loop.create_connection(Counting, "127.0.0.1", port, ssl=context,
                                                server_hostname="127.0.0.1")

    async def post() -> None:
        answered = loop.create_future()
        waiting.append(answered)
        transport.write(request)
        await asyncio.wait_for(answered, 10)

    for _ in range(WARM_UP):
        await post()
    start = cpu_seconds()
    for _ in range(posts):
        await asyncio.sleep(pace)
        await post()
    used: float = cpu_seconds() - start
    transport.close()
    return used


# ------------------------------------------------------------------------------------------- inputs


def write_inputs(folder: Path, posts: int, pace_ms: float) -> None:
    """A TLS key pair and its CA, and each side's parameters."""
    from bench.standin import write_pki

    write_pki(folder)
    for side in ("binder", "floor"):
        (folder / side).mkdir()
        for name in ("ca.crt", "server.crt", "server.key"):
            (folder / side / name).symlink_to(folder / name)
        (folder / side / "params.json").write_text(json.dumps({"side": side, "posts": posts, "pace_ms": pace_ms}))


def main() -> None:
    from bench import standin

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    standin.add_arguments(parser, "posts", 2000, "timed POSTs per side and round")
    args = parser.parse_args()
    standin.compare(__file__, args, lambda folder: write_inputs(folder, args.posts, args.pace_ms), "binder", "post")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(Path(sys.argv[2]), int(sys.argv[4]))
    else:
        main()
