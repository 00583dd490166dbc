"""CPU that `extender serve` spends per Pod watch event, against a real kube-apiserver (issue 22).

    python -m bench.watch_cpu                             # this checkout, three rounds
    python -m bench.watch_cpu --before /tmp/before        # and another checkout, interleaved round by round
    python -m bench.watch_cpu --floor                     # and bench.watch_floor, the least a process spends

Every pod kube-scheduler schedules reaches the service as watch events (its creation, then its binding), so
what an event costs is part of the CPU per scheduled pod. What is measured: a real kube-apiserver and etcd
(built by tests/e2e/controlplane.py) with 500 nodes; in each round each side is a fresh ``extender serve
--kubeconfig`` started from its checkout; once ready, 1000 pending pods are created (ADDED events) and then
deleted (their deletion's events), and the CPU time of the service's process (user + system, from /proc)
from the first creation until its watch-event counter shows them all is divided by the number of pods.
Sides take turns within each round, the order alternating from round to round; read the ratio, not the times.
``--floor`` adds a side that only counts the events in the watch's bytes (bench/watch_floor.py: the same
watch, TLS on uvloop, no decoding), timed the same way: what the service spends per event beyond it is what
reading, decoding and applying the watch costs it.

``--status-updates K`` times what running pods cost instead, as a kubelet reports them: the pods are created
bound to the nodes (ADDED), each gets a first status (phase Running, start time, conditions, container
statuses: MODIFIED), then K more status updates of the kind that churn through a cluster all day (readiness
flipping, a restart counted), which change nothing the scheduler reads; the service's CPU per event of each.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))


def pod_events(url: str, event_type: str) -> float:
    """How many Pod watch events of a type the service has applied (its extender_watch_events counter)."""
    total = 0.0
    for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
        if line.startswith("extender_watch_events_total{") and 'kind="Pod"' in line \
                and f'type="{event_type}"' in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


# A /metrics scrape costs the service CPU too (1.5-1.65 ms each on the demo cluster, two runs), which the figures
# would count: polled every 50 ms (until 2026-11-26), 20 scrapes a second were measured with the events. Once a
# second they add a few microseconds per pod.
POLL_SECONDS = 1.0


def wait_for_events(url: str, event_type: str, count: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while pod_events(url, event_type) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the service saw fewer than {count} {event_type} events in {timeout:g} s")
        time.sleep(POLL_SECONDS)


def create_pods(client: Any, body: dict[str, Any], prefix: str, count: int, nodes: int = 0) -> None:
    """``count`` pods from ``body`` named ``<prefix>-<i>``, eight at a time; pending, or bound round-robin to
    the ``nodes`` nodes bench.cluster names (``node-00000``...) when ``nodes`` is given."""
    def create(i: int) -> None:
        spec = {**body["spec"], "nodeName": f"node-{i % nodes:05d}"} if nodes else body["spec"]
        client.post("/api/v1/namespaces/shop/pods", {
            **body, "metadata": {"name": f"{prefix}-{i}", "namespace": "shop", "labels": {"app": "web"}}, "spec": spec})

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(create, range(count)))


def kubelet_status(body: dict[str, Any], update: int) -> dict[str, Any]:
    """The status a kubelet reports for a running pod of ``body``: update 0 is the first (phase Running, its
    start time); later ones flip readiness and count restarts, which no scheduling decision reads."""
    ready = "True" if update % 2 == 0 else "False"
    stamp = f"2026-11-26T10:{update // 60 % 60:02d}:{update % 60:02d}Z"
    return {"status": {
        "phase": "Running", "startTime": "2026-11-26T10:00:00Z", "podIP": "10.1.0.7", "hostIP": "10.0.0.1",
        "conditions": [{"type": kind, "status": ready if kind in ("Ready", "ContainersReady") else "True",
                        "lastTransitionTime": stamp} for kind in ("Initialized", "Ready", "ContainersReady",
                                                                  "PodScheduled")],
        "containerStatuses": [{"name": c["name"], "image": c["image"], "imageID": "", "ready": ready == "True",
                               "started": True, "restartCount": update // 2,
                               "state": {"running": {"startedAt": stamp}}} for c in body["spec"]["containers"]]}}


def update_statuses(client: Any, body: dict[str, Any], prefix: str, count: int, update: int) -> None:
    """One kubelet status update (``kubelet_status``) of each of the pods create_pods made, eight at a time."""
    status = kubelet_status(body, update)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: client.merge_patch(f"/api/v1/namespaces/shop/pods/{prefix}-{i}/status", status),
                      range(count)))


Waiter = Callable[[str, int], None]  # waits until the side has seen this many events of a type


@contextlib.contextmanager
def floor_watcher(kubeconfig: Path, counts: Path) -> Iterator[tuple[int, Waiter]]:
    """bench.watch_floor running (its watch open): its pid, and a wait on its ADDED / DELETED counts."""
    counts.unlink(missing_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "bench.watch_floor", "--kubeconfig", str(kubeconfig),
                             "--counts", str(counts)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})

    def seen(event_type: str) -> int:
        try:
            return int(counts.read_text().split()[("ADDED", "DELETED").index(event_type)])
        except (OSError, ValueError, IndexError):
            return 0

    def wait(event_type: str, count: int, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while seen(event_type) < count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the floor watcher saw fewer than {count} {event_type} events in {timeout:g} s")
            time.sleep(POLL_SECONDS)

    try:
        deadline = time.monotonic() + 60
        while not counts.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("bench.watch_floor did not open its watch")
            time.sleep(0.1)
        yield proc.pid, wait
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def extender_service(kubeconfig: Path, tree: Path) -> Iterator[tuple[int, Waiter]]:
    """`extender serve` from ``tree``, ready: its pid, and a wait on its watch-event counter."""
    from bench.run import service

    with service(["--kubeconfig", str(kubeconfig)], source=tree) as (url, proc, _seconds):
        yield proc.pid, lambda event_type, count: wait_for_events(url, event_type, count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="another checkout, measured interleaved with this one")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--floor", action="store_true", help="also time bench.watch_floor (only counts events)")
    parser.add_argument("--status-updates", type=int, default=0, metavar="K",
                        help="create the pods bound, then time a first kubelet status and K more per pod")
    args = parser.parse_args()
    if args.floor and args.status_updates:
        parser.error("--floor counts ADDED and DELETED events only; it cannot time status updates")

    from controlplane import ControlPlane, build_binaries

    from bench.cluster import generate, incoming_pods
    from bench.run import cpu_seconds, populate

    # (label, checkout to serve from; None for the floor watcher)
    sides: list[tuple[str, Path | None]] = [("this checkout", ROOT)] \
        + ([("before", args.before.resolve())] if args.before else []) + ([("floor", None)] if args.floor else [])
    work = Path(os.environ.get("BENCH_WORKDIR", "/tmp/extender-bench-watch"))
    work.mkdir(parents=True, exist_ok=True)
    cp = ControlPlane(build_binaries(work / "build.log"), work / f"cp-{os.getpid()}")
    cp.start()
    client = cp.client()
    # What is timed, in order, with the events each step brings per pod.
    steps = ["created", *(["first status", "status churn"] if args.status_updates else []), "deleted"]
    figures: dict[str, dict[str, list[float]]] = {label: {step: [] for step in steps} for label, _ in sides}
    try:
        populate(cp, [o for o in generate(args.nodes, pods_per_node=0)
                      if o["kind"] in ("Node", "Namespace", "Service")])
        body: dict[str, Any] = {k: v for k, v in incoming_pods()["plain"].items() if k != "status"}
        for round_ in range(args.rounds):
            for label, tree in sides if round_ % 2 == 0 else sides[::-1]:
                side = floor_watcher(cp.kubeconfig, work / "floor-counts") if tree is None \
                    else extender_service(cp.kubeconfig, tree)
                prefix = f"w{round_}-{label.replace(' ', '-')}"
                with side as (pid, wait):
                    time.sleep(1)  # past the start's tail (the service's warm-up)
                    times = [cpu_seconds(pid)]
                    create_pods(client, body, prefix, args.pods, args.nodes if args.status_updates else 0)
                    wait("ADDED", args.pods)
                    times.append(cpu_seconds(pid))
                    if args.status_updates:
                        for update in range(1 + args.status_updates):  # the first, then the churn after it
                            update_statuses(client, body, prefix, args.pods, update)
                            wait("MODIFIED", args.pods * (update + 1))
                            if update == 0:
                                times.append(cpu_seconds(pid))
                        times.append(cpu_seconds(pid))
                    client.delete_pods("shop")
                    wait("DELETED", args.pods)
                    times.append(cpu_seconds(pid))
                events = {"status churn": args.pods * args.status_updates}
                for step, before, after in zip(steps, times[:-1], times[1:], strict=True):
                    figures[label][step].append(1e6 * (after - before) / events.get(step, args.pods))
                print(f"round {round_ + 1}, {label}: " + ", ".join(
                    f"{figures[label][step][-1]:.0f} us per {unit(step)}" for step in steps)
                    + f"; load {os.getloadavg()[0]:.1f}", flush=True)
                while client.get("/api/v1/namespaces/shop/pods", limit="1")["items"]:
                    time.sleep(0.2)
    finally:
        client.close()
        cp.stop()
    for label, _ in sides:
        print(f"{label}: median " + ", ".join(
            f"{statistics.median(figures[label][step]):.0f} us per {unit(step)}" for step in steps))


def unit(step: str) -> str:
    """What a step's figure is per: a pod (one event, or two for a deletion), or one status update."""
    return {"created": "pod created", "deleted": "pod deleted", "first status": "first status",
            "status churn": "status update after it"}[step]


if __name__ == "__main__":
    main()
