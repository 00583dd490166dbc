"""Record the exact JSON bodies kube-scheduler sends to an extender.

Runs etcd + kube-apiserver + kube-scheduler (tests/k8s/build, one of the pinned
releases) with a permissive recording extender registered for every verb, drives
one scenario per nodeCacheCapable setting, and writes the first request of each
verb to ``tests/fixtures/wire/<release>/<verb>-<variant>.json`` byte for byte:

- filter-nodenames / prioritize-nodenames / preempt-metavictims (nodeCacheCapable: true)
- filter-nodes / prioritize-nodes / preempt-victims (nodeCacheCapable: false)
- bind (the same in both)

Scenario, on two nodes of 2 CPUs: a low-priority pod that fits both (filter on 2
nodes, prioritize, bind), a second low-priority pod that fills the other node,
then a high-priority pod that fits nowhere (preempt).

Usage: python tests/e2e/record_wire.py [--version 1.36|1.37] [--out DIR] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from controlplane import (
    K8S_VERSIONS,
    REPO,
    ControlPlane,
    ExtenderConfig,
    Scheduler,
    running_control_plane,
    scheduler_configuration,
)
from recorder import Recorded, RecordingExtender

WIRE_ROOT = REPO / "tests" / "fixtures" / "wire"


def wire_dir(version: str) -> Path:
    """Where the requests of a release ("1.36", "1.37") are kept: tests/fixtures/wire/<tag>/."""
    return WIRE_ROOT / K8S_VERSIONS[version]
VARIANTS = {True: ("nodenames", "metavictims"), False: ("nodes", "victims")}
NAMESPACE = "wire"


def _first(rec: RecordingExtender, verb: str, want: int = 1, timeout: float = 30.0) -> Recorded:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = rec.of_verb(verb)
        if len(got) >= want:
            return got[0]
        time.sleep(0.1)
    raise RuntimeError(f"kube-scheduler sent no {verb} request within {timeout:.0f}s")


def record_variant(cp: ControlPlane, workdir: Path, node_cache_capable: bool) -> dict[str, bytes]:
    """Drive the scenario once; return {fixture name: request body}."""
    kube = cp.client()
    kube.ensure_priority_class("e2e-low", 10)
    kube.ensure_priority_class("e2e-high", 1000)
    kube.ensure_namespace(NAMESPACE)
    rec = RecordingExtender(bind=kube.bind).start()
    ext = ExtenderConfig(
        rec.url,
        filter_verb="filter",
        prioritize_verb="prioritize",
        bind_verb="bind",
        preempt_verb="preempt",
        weight=1,
        node_cache_capable=node_cache_capable,
    )
    sched: Scheduler | None = None
    nodes_v, victims_v = VARIANTS[node_cache_capable]
    try:
        for name, zone in (("node-a", "zone-1"), ("node-b", "zone-2")):
            kube.create_node(name, cpu="2", memory="4Gi", labels={"topology.kubernetes.io/zone": zone})
        sched = Scheduler(
            cp,
            workdir / f"scheduler-{nodes_v}",
            scheduler_configuration(cp.kubeconfig, [ext]),
        )
        sched.wait_ready()
        kube.create_pod(NAMESPACE, "web", cpu="1500m", memory="1Gi", priority_class="e2e-low")
        first = kube.wait_scheduled(NAMESPACE, "web")
        kube.create_pod(NAMESPACE, "batch", cpu="1500m", memory="1Gi", priority_class="e2e-low")
        second = kube.wait_scheduled(NAMESPACE, "batch")
        if first == second:
            raise RuntimeError(f"both low-priority pods landed on {first}")
        kube.create_pod(NAMESPACE, "critical", cpu="1500m", memory="1Gi", priority_class="e2e-high")
        return {
            f"filter-{nodes_v}": _first(rec, "filter").body,
            f"prioritize-{nodes_v}": _first(rec, "prioritize").body,
            "bind": _first(rec, "bind").body,
            f"preempt-{victims_v}": _first(rec, "preempt").body,
        }
    finally:
        if sched is not None:
            sched.stop()
        rec.stop()
        kube.delete_pods(NAMESPACE)
        kube.delete_all_nodes()
        kube.close()


def record(cp: ControlPlane, workdir: Path, out: Path) -> dict[str, Path]:
    """Record both variants and write ``out/<name>.json``; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for cache_capable in (True, False):
        for name, body in record_variant(cp, workdir, cache_capable).items():
            if name in written:
                continue  # bind is the same in both variants; keep the first
            path = out / f"{name}.json"
            path.write_bytes(body)
            written[name] = path
    return written


def main() -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", choices=sorted(K8S_VERSIONS), default="1.36",
                        help="the kube-scheduler release to record (default 1.36)")
    parser.add_argument("--out", type=Path, default=None, help="where to write the fixtures "
                                                               "(default: tests/fixtures/wire/<release>)")
    parser.add_argument("--workdir", type=Path, default=None, help="logs and data (default: a temp dir)")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="record-wire-"))
    print(f"logs in {workdir}", file=sys.stderr)
    with running_control_plane(workdir, args.version) as cp:
        for name, path in sorted(record(cp, workdir, args.out or wire_dir(args.version)).items()):
            print(f"{name}: {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
