"""What changes of other objects (PVCs, ReplicaSets) cost the service and the request after each, in process.

    python -m bench.object_churn                              # this checkout, two runs: PVC updates
    python -m bench.object_churn --before /tmp/before         # and another checkout, interleaved run by run
    python -m bench.object_churn --kind ReplicaSet            # a ReplicaSet's status instead

A cluster's other objects change all the time: PVCs bind, Services move, and kube-controller-manager writes a
ReplicaSet's status at each step of its pods. What is measured: bench/cluster.py's 500 nodes (30 pods each) and
``--replicasets`` ReplicaSets (10000: Deployments keep their old ones); then 300 updates of one object of
``--kind`` (a PVC's status phase, or a ReplicaSet's ready count), each decoded and applied as the service's
watch does and followed by one filter + prioritize of the bench's plain pod over 230 names, as the next
scheduling cycle would, and by the same request again with nothing applied between (the same process's
baseline). bench.status_churn's worker times them (CPU time of the thread; medians over the updates). Each side
is a fresh process importing ``extender`` from its checkout. Sides take turns within each run, the order
alternating.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import orjson

UPDATES = 300
CANDIDATES = 230


def replica_set(i: int) -> dict[str, Any]:
    """A ReplicaSet of one of 50 apps, with its status."""
    app = f"app-{i % 50}"
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"rs-{i}", "namespace": "shop", "uid": f"uid-rs-{i}", "resourceVersion": "1",
                         "labels": {"app": app}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": app, "pod-template-hash": str(i)}},
                     "template": {"metadata": {"labels": {"app": app, "pod-template-hash": str(i)}},
                                  "spec": {"containers": [{"name": "c", "image": "registry.example.com/c:1"}]}}},
            "status": {"replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "observedGeneration": 1}}


def changed(kind: str, update: int) -> dict[str, Any]:
    """The ``update``-th version of the object that changes."""
    if kind == "ReplicaSet":
        obj = replica_set(0)
        obj["status"]["readyReplicas"] = update % 4
    else:
        obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"name": "data", "namespace": "shop", "uid": "uid-pvc-data"},
               "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
               "status": {"phase": "Bound" if update % 2 else "Pending"}}
    obj["metadata"]["resourceVersion"] = str(10**6 + update)
    return obj


def write_inputs(folder: Path, kind: str, replicasets: int) -> None:
    """The cluster dump, the updates, the incoming pod, for bench.status_churn's worker."""
    from bench.cluster import generate
    from bench.status_churn import write_incoming

    objects = generate(500) + [replica_set(i) for i in range(replicasets)] + [changed(kind, 0)]
    (folder / "cluster.json").write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    events = [orjson.dumps({"type": "MODIFIED", "object": changed(kind, 1 + i)}) for i in range(UPDATES)]
    (folder / "events").write_bytes(b"\n".join(events))
    write_incoming(folder, block=1, candidates=CANDIDATES, pods=False)


def main() -> None:
    from bench import checkouts, status_churn  # not at the top: a worker may run with another checkout's bench

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    checkouts.add_arguments(parser)
    parser.add_argument("--kind", choices=["PersistentVolumeClaim", "ReplicaSet"], default="PersistentVolumeClaim")
    parser.add_argument("--replicasets", type=int, default=10000)
    args = parser.parse_args()
    status_churn.compare(lambda folder: write_inputs(folder, args.kind, args.replicasets), args.before, args.runs,
                         f"{args.kind} update", "one")

if __name__ == "__main__":
    main()
