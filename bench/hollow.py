"""`extender serve` with the engine hollowed out: the ceiling of this service in kube-scheduler's loop.

    python -m bench.hollow serve --kubeconfig <file>     # what `python -m extender serve` takes

Everything a request goes through runs as in the product: uvicorn and the verbs' HTTP path, decoding the
request (the Pod and the node names), the pod's record (kept for the bind that follows), the cache's snapshot
and the names' rows, encoding the answer, the metrics; bind assumes the pod and posts the Binding; the watches
keep the cache current. Only the plugins' work is left out: filter passes every known node and prioritize
scores every node 0. kube-scheduler then places pods by its own scores, as with the do-nothing extender.

The throughput benchmark runs it as a side (``python -m bench.run --only throughput --throughput-hollow``): its
rate, against the do-nothing Go extender's, is the most any engine behind this service could reach on the
machine; ours against it is what the engine itself costs in the loop. Never a product: its answers are wrong.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from extender.cluster.columns import NodeNames
from extender.cluster.snapshot import Snapshot
from extender.engine.scheduler import FilterAnswer, HostScores, Scheduler
from extender.engine.sent_nodes import SentNode


def _snapshot_for(scheduler: Scheduler, profile: str | None, raw_pod: Any) -> Snapshot:
    """What both verbs do before the plugins: the profile, the pod's record (kept for the bind), the snapshot."""
    scheduler.framework(profile)
    scheduler.pod_record(raw_pod)
    return scheduler.cache.snapshot()


def hollow_filter(self: Scheduler, profile: str | None, raw_pod: Any, names: Sequence[Any] | None,
                  nodes: Sequence[SentNode] | None) -> FilterAnswer:
    """Every node the cache knows passes; the others fail as unknown, as in Scheduler.filter."""
    snapshot = _snapshot_for(self, profile, raw_pod)
    if names is None:
        return FilterAnswer(passed_nodes=[sent.echo() for sent in nodes or []])
    batch, positions = self.resolve_names(snapshot, names)
    # Answered as Scheduler.filter answers (the names' text and rows kept for the prioritize that follows).
    known = NodeNames.encoded([names[i] for i in positions.tolist()])
    snapshot.columns.remember_rows(known, batch.rows)
    return FilterAnswer(passed=known, failed={name: "unknown" for name in set(names) - set(known)})


def hollow_prioritize(self: Scheduler, profile: str | None, raw_pod: Any, names: Sequence[Any] | None,
                      nodes: Sequence[SentNode] | None) -> HostScores:
    """Every node scores 0."""
    snapshot = _snapshot_for(self, profile, raw_pod)
    if names is None:
        order = [sent.name or "" for sent in nodes or []]
    else:
        self.resolve_names(snapshot, names)
        order = list(names)
    return HostScores(order, np.zeros(len(order), np.int64))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the extender's command line with the hollow filter and prioritize."""
    from extender.cli import main as extender_main

    Scheduler.filter = hollow_filter  # type: ignore[method-assign]
    Scheduler.prioritize = hollow_prioritize  # type: ignore[method-assign]
    return extender_main(list(argv) if argv is not None else sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
