"""What running pods' status updates cost the service, in process (issue 22).

    python -m bench.status_churn                          # this checkout, two runs
    python -m bench.status_churn --before /tmp/before     # and another checkout, interleaved run by run

A kubelet reports each running pod's status again whenever readiness flips, a container restarts or a probe
changes state; kube-scheduler rewrites a pending pod's PodScheduled condition on each failed attempt. The
service's Pod watch receives all of it. What is measured: 500 empty nodes (bench/cluster.py) and 3000 running
pods of the bench's plain template bound round robin, each with its kubelet's first status
(bench.watch_cpu.kubelet_status); then two further status updates of every pod (readiness flipping, a restart
counted), decoded and applied as the service's Pod watch does (the pod codec, then the cache), in blocks of 300
events, and after each block one filter + prioritize of a plain pod over 230 names (what kube-scheduler sends
at 500 nodes), as the next scheduling cycle would. Times are the CPU time of the calling thread
(``time.thread_time``); the figures are medians over the blocks: per status update, per request after a block,
and per request made again right after it with nothing applied between (the same process's baseline). Each side
is a fresh process importing ``extender`` from its checkout; the events are written once by this checkout, so
both sides apply the same bytes. Sides take turns within each run, the order alternating.

The worker times any such churn written into its folder (bench.node_churn writes kubelets' node heartbeats):
``cluster.json``, the events applied before timing (``setup``) and those timed (``events``, one JSON event per
line as a watch sends them), the incoming pod, and ``churn.json`` (events per block, names per request, and
whether the events are pods, decoded by the pod codec, or other objects, decoded whole).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

NODES = 500
PODS = 3000
UPDATES = 2  # status updates after the first, per pod
BLOCK = 300  # events applied between two requests
CANDIDATES = 230  # names per filter: kube-scheduler's percentageOfNodesToScore at 500 nodes


def write_inputs(folder: Path) -> None:
    """The cluster dump, the pods' events (their first status as ADDED, then the updates as MODIFIED) and the
    incoming pod, into ``folder``."""
    from bench.cluster import generate, incoming_pods
    from bench.watch_cpu import kubelet_status

    nodes = [o for o in generate(NODES, pods_per_node=0) if o["kind"] in ("Node", "Namespace", "Service")]
    (folder / "cluster.json").write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": nodes}))
    template = incoming_pods()["plain"]
    version = 1

    def event(kind: str, i: int, update: int) -> bytes:
        nonlocal version
        version += 1
        pod = copy.deepcopy(template)
        pod["metadata"] = {**pod["metadata"], "name": f"running-{i}", "uid": f"uid-running-{i}",
                           "resourceVersion": str(version)}
        pod["spec"]["nodeName"] = f"node-{i % NODES:05d}"
        pod["status"] = kubelet_status(pod, update)["status"]
        return orjson.dumps({"type": kind, "object": pod})

    (folder / "setup").write_bytes(b"\n".join(event("ADDED", i, 0) for i in range(PODS)))
    (folder / "events").write_bytes(b"\n".join(event("MODIFIED", i, update) for update in range(1, 1 + UPDATES)
                                               for i in range(PODS)))
    write_incoming(folder, block=BLOCK, candidates=CANDIDATES, pods=True)


def write_incoming(folder: Path, *, block: int, candidates: int, pods: bool) -> None:
    """The incoming pod and the churn's parameters (``pods``: the events are pods, for the pod codec)."""
    from bench.cluster import incoming_pods

    incoming = {k: v for k, v in incoming_pods()["plain"].items() if k != "status"}
    (folder / "incoming.json").write_bytes(orjson.dumps(incoming))
    (folder / "churn.json").write_bytes(orjson.dumps({"block": block, "candidates": candidates, "pods": pods}))


def worker(folder: Path) -> dict[str, Any]:
    """One side: load, apply the events, time them and the requests after each block."""
    import extender
    from extender.cli import build_scheduler
    from extender.kubeapi.podcodec import decode_pod_event

    scheduler, _ = build_scheduler(str(folder / "cluster.json"), None)
    if hasattr(scheduler, "warm_up"):
        scheduler.warm_up()
    churn = orjson.loads((folder / "churn.json").read_bytes())
    decode = decode_pod_event if churn["pods"] else orjson.loads
    block, candidates = churn["block"], churn["candidates"]
    cache = scheduler.cache
    setup = (folder / "setup").read_bytes() if (folder / "setup").exists() else b""
    for line in setup.split(b"\n") if setup else []:
        cache.apply(decode(line)["object"])
    names = cache.node_names()
    incoming = orjson.loads((folder / "incoming.json").read_bytes())
    lines = (folder / "events").read_bytes().split(b"\n")

    def request(index: int, suffix: str) -> float:
        """One filter + prioritize of a new replica: its CPU time."""
        began = time.thread_time()
        pod = copy.deepcopy(incoming)
        name = f"incoming-{index}{suffix}"
        pod["metadata"] = {**pod["metadata"], "name": name, "uid": f"uid-{name}", "resourceVersion": "1"}
        start = index * candidates % len(names)
        window = (names[start:] + names[:start])[:candidates]
        answer = scheduler.filter(None, pod, window, None)
        scheduler.prioritize(None, pod, answer.passed, None)
        return time.thread_time() - began

    per_event, per_request, alone = [], [], []
    for index in range(len(lines) // block):
        began = time.thread_time()
        for line in lines[index * block:(index + 1) * block]:
            cache.apply(decode(line)["object"])
        per_event.append((time.thread_time() - began) / block)
        per_request.append(request(index, ""))
        # The same request again with nothing applied between: what the block added, read in this process
        # (whose speed a shared machine moves from one process to the next).
        alone.append(request(index, "-again"))
    return {"extender": str(Path(extender.__file__).resolve().parents[1]),
            "event_us": 1e6 * statistics.median(per_event),
            "request_after_block_ms": 1e3 * statistics.median(per_request),
            "request_alone_ms": 1e3 * statistics.median(alone)}


def compare(write: Callable[[Path], None], before: Path | None, runs: int, event: str, block: str) -> None:
    """Write a churn's inputs (``write``), then time it with this module's worker on this checkout and ``before``,
    run by run, printing per ``event`` and per request after ``block``."""
    from bench import checkouts  # not at the top: a worker may run with another checkout's bench

    def describe(figures: dict[str, Any]) -> str:
        after, alone = figures["request_after_block_ms"], figures["request_alone_ms"]
        return (f"{figures['event_us']:.1f} us per {event}, filter + prioritize after {block} {after:.2f} ms "
                f"(with none applied: {alone:.2f} ms, {after / alone:.2f}x)")

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write(folder)
        # The worker imports nothing from bench: its checkout's extender alone.
        checkouts.compare(__file__, before, runs, folder, describe)


def main() -> None:
    from bench import checkouts  # not at the top: a worker may run with another checkout's bench

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    checkouts.add_arguments(parser)
    args = parser.parse_args()
    compare(write_inputs, args.before, args.runs, "status update", f"{BLOCK} of them")

if __name__ == "__main__":
    main()
