"""The first request after ready against the steady state, in process, at 5000 nodes (issue 22).

    python -m bench.first_request                         # this checkout, two runs
    python -m bench.first_request --before /tmp/before    # and another checkout, interleaved run by run
    python -m bench.first_request --http                  # through HTTP: `extender serve --cluster`, wall time

What is measured: the bench cluster (bench/cluster.py: 5000 nodes, 30 pods each) is written to a dump once;
each side is a fresh process that loads it as ``extender serve --cluster`` does (build_scheduler), warms the
engine up as serve does before /readyz (``Scheduler.warm_up``, where the checkout has it), and then, for each of
the bench's incoming pods (plain; node affinity + tolerations; pod anti-affinity; zone spread), runs filter then
prioritize with every node's name: first the pod itself (its template is new to the engine: the first
request of that template), then nine replicas of it (other names and UIDs, the same template: steady state,
their median). Times are the CPU time of the calling thread (``time.thread_time``), which a loaded machine
moves far less than wall time. Sides take turns within each run, the order alternating from run to run.

With ``--http`` each side is ``extender serve --cluster <dump>`` started from that checkout; once ``/readyz``
answers 200, the same pods go through ``/filter`` then ``/prioritize`` (the passed names), as kube-scheduler
sends them, timed by the wall clock of this client (so this mode wants an otherwise idle machine).
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

REPLICAS = 9


def first_and_steady(both_verbs: Callable[[dict[str, Any]], None],
                     clock: Callable[[], float]) -> dict[str, dict[str, float]]:
    """Per incoming pod of the bench: ms of its first filter + prioritize, and the median of its replicas'."""
    from bench.cluster import incoming_pods

    kinds = {}
    for kind, pod in incoming_pods().items():
        times = []
        for i in range(1 + REPLICAS):
            replica = copy.deepcopy(pod)
            if i:  # the same template under another name and UID
                replica["metadata"]["name"] = f"{pod['metadata']['name']}-{i}"
                replica["metadata"]["uid"] = f"{pod['metadata']['uid']}-{i}"
            began = clock()
            both_verbs(replica)
            times.append((clock() - began) * 1000)
        kinds[kind] = {"first_ms": times[0], "steady_p50_ms": statistics.median(times[1:])}
    return kinds


def worker(dump: Path) -> dict[str, Any]:
    """One side's figures, in this process (its ``extender`` is whatever PYTHONPATH finds first)."""
    import extender
    from extender.cli import build_scheduler

    scheduler, _config = build_scheduler(str(dump), None)
    started = time.thread_time()
    warm_up = getattr(scheduler, "warm_up", None)
    if warm_up is not None:
        warm_up()
    warmed_ms = (time.thread_time() - started) * 1000
    names = [node.name for node in scheduler.cache.snapshot().all_nodes().nodes]
    out: dict[str, Any] = {"extender": str(Path(extender.__file__).parent), "warm_up_ms": warmed_ms, "kinds": {}}

    def both_verbs(pod: dict[str, Any]) -> None:
        scheduler.filter(None, pod, names, None)
        scheduler.prioritize(None, pod, names, None)

    out["kinds"] = first_and_steady(both_verbs, time.thread_time)
    return out


def http_side(tree: Path, dump: Path) -> dict[str, Any]:
    """One side's figures through HTTP: ``extender serve`` from ``tree`` on the dump, timed from this client."""
    import socket

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen([sys.executable, "-m", "extender", "serve", "--cluster", str(dump), "--port",
                                   str(port)], env=env, cwd=tempfile.gettempdir(), stdout=log, stderr=log)
        try:
            client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)
            started = time.monotonic()
            while True:
                if server.poll() is not None or time.monotonic() - started > 900:
                    log.seek(0)
                    raise RuntimeError(f"extender serve did not become ready: {log.read()[-2000:]!r}")
                try:
                    if client.get("/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
            ready_s = time.monotonic() - started
            names = [item["metadata"]["name"] for item in orjson.loads(dump.read_bytes())["items"]
                     if item.get("kind") == "Node"]
            out: dict[str, Any] = {"extender": str(tree), "warm_up_ms": ready_s * 1000, "kinds": {}}

            def both_verbs(pod: dict[str, Any]) -> None:
                answer = client.post("/filter", content=orjson.dumps({"Pod": pod, "Nodes": None, "NodeNames": names}))
                answer.raise_for_status()
                passed = orjson.loads(answer.content)["NodeNames"] or []
                client.post("/prioritize", content=orjson.dumps(
                    {"Pod": pod, "Nodes": None, "NodeNames": passed})).raise_for_status()

            out["kinds"] = first_and_steady(both_verbs, time.perf_counter)
            return out
        finally:
            server.terminate()
            server.wait(timeout=30)


def main() -> None:
    from bench import checkouts  # not at the top: a worker may run with another checkout's bench

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--http", action="store_true", help="through `extender serve` (wall time of a client)")
    checkouts.add_arguments(parser)
    args = parser.parse_args()
    from bench.cluster import generate, incoming_pods

    def describe(figures: dict[str, Any]) -> str:
        ratios = ", ".join(f"{kind} {k['first_ms']:.1f}/{k['steady_p50_ms']:.1f} ms "
                           f"({k['first_ms'] / k['steady_p50_ms']:.1f}x)" for kind, k in figures["kinds"].items())
        before = "ready after" if args.http else "warm-up"
        return f"{before} {figures['warm_up_ms']:.0f} ms; first/steady p50: {ratios}"

    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "cluster.json"
        items = generate(args.nodes) + list(incoming_pods().values())
        dump.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
        checkouts.compare(__file__, args.before, args.runs, dump, describe, with_bench=True,
                          side=http_side if args.http else None)

if __name__ == "__main__":
    main()
