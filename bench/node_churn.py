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
the figures are medians over the blocks: per heartbeat, per request after a block, and per request made
again right after it with nothing applied between (the same process's baseline). Each side is a fresh
process importing ``extender`` from its checkout, running bench.status_churn's worker on the inputs written
here once by this checkout. Sides take turns within each run, the order alternating.
"""

from __future__ import annotations

import argparse
import copy
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
    """The cluster dump (nodes as a kubelet writes them), the heartbeat events, the incoming pod, for
    bench.status_churn's worker."""
    from bench.cluster import generate
    from bench.status_churn import write_incoming

    objects = [_reported(o, 0) if o["kind"] == "Node" else o for o in generate(nodes)]
    (folder / "cluster.json").write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    node_objects = [o for o in objects if o["kind"] == "Node"]
    events = [orjson.dumps({"type": "MODIFIED", "object": _reported(node_objects[i % len(node_objects)], 1 + i)})
              for i in range(BLOCKS * block)]
    (folder / "events").write_bytes(b"\n".join(events))
    write_incoming(folder, block=block, candidates=min(CANDIDATES, nodes), pods=False)


def main() -> None:
    from bench import checkouts, status_churn  # not at the top: a worker may run with another checkout's bench

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    checkouts.add_arguments(parser)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--block", type=int, default=17, help="heartbeats between two requests")
    args = parser.parse_args()
    status_churn.compare(lambda folder: write_inputs(folder, args.nodes, args.block), args.before, args.runs,
                         "heartbeat", f"{args.block} of them")


if __name__ == "__main__":
    main()
