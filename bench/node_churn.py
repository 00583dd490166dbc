"""What kubelets' node status reports cost the service, in process (issue 22).

    python -m bench.node_churn                            # this checkout, two runs
    python -m bench.node_churn --before /tmp/before       # and another checkout, interleaved run by run

Every kubelet reports its node's status again at least every five minutes (nodeStatusReportFrequency) even
when nothing changed: the conditions' heartbeat times move, and with them the object's resourceVersion and
managed fields. At 5000 nodes the Node watch brings about 17 such versions a second, and none of them changes
anything the scheduler reads. What is measured: bench/cluster.py's cluster (``--nodes``, 30 pods per node), its
nodes written as a kubelet keeps them (managed fields with the write's time); then blocks of ``--block``
heartbeat versions of successive nodes (17: one second's worth at 5000 nodes), decoded from their JSON and
applied as the service's Node watch does, and after each block one filter + prioritize of the bench's plain pod
over 500 node names (kube-scheduler's percentageOfNodesToScore at 5000 nodes) and ImageLocality's counts with
it, as the next scheduling cycle would. Times are the CPU time of the calling thread (``time.thread_time``);
the figures are medians over the blocks: per heartbeat, and per request after a block. Each side is a fresh
process importing ``extender`` from its checkout; the inputs are written once by this checkout. Sides take
turns within each run, the order alternating.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

BLOCKS = 60
CANDIDATES = 500


def _reported(node: dict[str, Any], beat: int) -> dict[str, Any]:
    """The node as its kubelet's report number ``beat`` leaves it."""
    out = copy.deepcopy(node)
    when = f"2026-11-26T{beat // 3600 % 24:02d}:{beat // 60 % 60:02d}:{beat % 60:02d}Z"
    out["metadata"]["resourceVersion"] = str(10**7 + beat)
    out["metadata"]["managedFields"] = [
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": when, "fieldsType": "FieldsV1",
         "fieldsV1": {"f:status": {"f:conditions": {}, "f:images": {}}}}]
    for condition in out["status"]["conditions"]:
        condition["lastHeartbeatTime"] = when
    return out


def write_inputs(folder: Path, nodes: int, block: int) -> None:
    """The cluster dump (nodes as a kubelet writes them), the heartbeat events, the incoming pod."""
    from bench.cluster import generate, incoming_pods

    objects = [_reported(o, 0) if o["kind"] == "Node" else o for o in generate(nodes)]
    (folder / "cluster.json").write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    node_objects = [o for o in objects if o["kind"] == "Node"]
    events = [orjson.dumps({"type": "MODIFIED", "object": _reported(node_objects[i % len(node_objects)], 1 + i)})
              for i in range(BLOCKS * block)]
    (folder / "heartbeats").write_bytes(b"\n".join(events))
    (folder / "block").write_text(str(block))
    incoming = {k: v for k, v in incoming_pods()["plain"].items() if k != "status"}
    (folder / "incoming.json").write_bytes(orjson.dumps(incoming))


def worker(folder: Path) -> dict[str, Any]:
    """One side: load, then the heartbeats in blocks, each followed by a request; time them."""
    import extender
    from extender.cli import build_scheduler

    scheduler, _ = build_scheduler(str(folder / "cluster.json"), None)
    if hasattr(scheduler, "warm_up"):
        scheduler.warm_up()
    cache = scheduler.cache
    names = cache.node_names()
    incoming = orjson.loads((folder / "incoming.json").read_bytes())
    lines = (folder / "heartbeats").read_bytes().split(b"\n")
    block = int((folder / "block").read_text())
    per_event, per_request = [], []
    for index in range(len(lines) // block):
        began = time.thread_time()
        for line in lines[index * block:(index + 1) * block]:
            cache.apply(orjson.loads(line)["object"])
        applied = time.thread_time()
        pod = copy.deepcopy(incoming)
        pod["metadata"] = {**pod["metadata"], "name": f"incoming-{index}", "uid": f"uid-incoming-{index}",
                           "resourceVersion": "1"}
        start = index * 7919 % len(names)
        window = (names[start:] + names[:start])[:CANDIDATES]
        answer = scheduler.filter(None, pod, window, None)
        scheduler.prioritize(None, pod, answer.passed, None)
        per_event.append((applied - began) / block)
        per_request.append(time.thread_time() - applied)
    return {"extender": str(Path(extender.__file__).resolve().parents[1]),
            "heartbeat_us": 1e6 * statistics.median(per_event),
            "request_after_block_ms": 1e3 * statistics.median(per_request)}


def main() -> None:
    from bench import checkouts  # not at the top: a worker may run with another checkout's bench

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    checkouts.add_arguments(parser)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--block", type=int, default=17, help="heartbeats between two requests")
    args = parser.parse_args()
    sides = checkouts.sides(args.before)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_inputs(folder, args.nodes, args.block)
        for run in range(args.runs):
            for label, tree in sides if run % 2 == 0 else sides[::-1]:
                # The worker imports nothing from bench: its checkout's extender alone.
                figures = checkouts.run_worker(__file__, tree, folder, with_bench=False)
                print(f"run {run + 1}, {label} ({figures['extender']}): {figures['heartbeat_us']:.1f} us per "
                      f"heartbeat, filter + prioritize after {args.block} of them "
                      f"{figures['request_after_block_ms']:.2f} ms; load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
