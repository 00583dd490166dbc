"""Filter through HTTP, two builds of the service side by side: which answers faster, measured interleaved.

Starts ``extender serve`` on the demo cluster from each source tree (``--before`` and ``--after``, each put on
PYTHONPATH), then for ``--rounds`` rounds sends ``--requests`` filter requests (the README's example body, as
kube-scheduler sends it with nodeCacheCapable) to one and then the other, alternating which goes first. Each
request goes over a kept-alive connection, and with ``--fresh`` a new connection each time (the accept path).
Prints each build's median and 90th percentile per request and the ratio of the medians.

    git archive main | tar -x -C /tmp/extender-main
    python -m bench.filter_ab --before /tmp/extender-main --after . --rounds 20 --requests 200
    python -m bench.filter_ab --before /tmp/extender-main --after . --health-port   # as the manifests run it

Both services run on this machine and share its cores with this client: read the ratio, not the times.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BODY = (REPO / "examples" / "requests" / "filter.json").read_bytes()


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(tree: Path, health: bool) -> tuple[subprocess.Popen[bytes], int]:
    """``extender serve`` from ``tree`` on a free port, once it answers."""
    port = _port()
    argv = [sys.executable, "-m", "extender", "serve", "--port", str(port), "--log-level", "warning"]
    if health:
        argv += ["--health-port", str(_port()), "--health-host", "127.0.0.1"]
    env = dict(os.environ, PYTHONPATH=str(tree.resolve()))
    process = subprocess.Popen(argv, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if sock.recv(64).startswith(b"HTTP/1.1 200"):
                    return process, port
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit(f"the service from {tree} did not start")


REQUEST = (b"POST /filter HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n" % len(BODY)) + BODY


def _answer(sock: socket.socket) -> None:
    """Read one response (its head's Content-Length says how much body follows)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(head[:200].decode(errors="replace"))
    length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += sock.recv(65536)


def measure(port: int, count: int, fresh: bool) -> list[float]:
    """Seconds per filter request, ``count`` of them."""
    out = []
    sock = None if fresh else socket.create_connection(("127.0.0.1", port))
    try:
        for _ in range(count):
            started = time.perf_counter()
            if fresh:
                with socket.create_connection(("127.0.0.1", port)) as one:
                    one.sendall(REQUEST)
                    _answer(one)
            else:
                assert sock is not None
                sock.sendall(REQUEST)
                _answer(sock)
            out.append(time.perf_counter() - started)
    finally:
        if sock is not None:
            sock.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """Run both, interleaved, and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="source tree of the baseline")
    parser.add_argument("--after", type=Path, default=REPO, help="source tree of the change (default: this one)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--requests", type=int, default=200, help="requests per build and round")
    parser.add_argument("--fresh", action="store_true", help="a new connection per request")
    parser.add_argument("--health-port", action="store_true", help="serve with a health port, as the manifests do")
    args = parser.parse_args(argv)
    builds = {"before": start(args.before, args.health_port), "after": start(args.after, args.health_port)}
    times: dict[str, list[float]] = {name: [] for name in builds}
    try:
        for _, port in builds.values():
            measure(port, 50, args.fresh)  # warm up: first requests build indexes
        for round_ in range(args.rounds):
            order = list(builds) if round_ % 2 == 0 else list(reversed(builds))
            for name in order:
                times[name] += measure(builds[name][1], args.requests, args.fresh)
    finally:
        for process, _ in builds.values():
            process.terminate()
            process.wait(10)
    medians = {}
    for name, values in times.items():
        ordered = sorted(values)
        medians[name] = statistics.median(ordered)
        print(f"{name:>6}: {len(values)} filter requests, median {medians[name] * 1e3:.3f} ms, "
              f"p90 {ordered[int(len(ordered) * 0.9)] * 1e3:.3f} ms")
    print(f"after / before (medians): {medians['after'] / medians['before']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
