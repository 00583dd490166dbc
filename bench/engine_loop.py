"""What the engine spends per scheduled pod, in process: kube-scheduler's loop without HTTP (issue 22).

    python -m bench.engine_loop                                   # this checkout, 500 nodes, two runs
    python -m bench.engine_loop --before /tmp/before              # and another checkout, interleaved
    python -m bench.engine_loop --nodes 5000 --pods 600           # 5000 nodes: 500 names per request

Every pod of a workload goes through the same steps in the service, and this runs them in one thread, as the
engine thread does: the pod's creation arrives on the Pod watch (decoded by the pod codec, applied to the
cache); kube-scheduler sends filter with the nodes its own plugins passed (a window of ``--names`` names of
the nodes the pod fits, moving round the cluster: 230 at 500 nodes, 500 at 5000, as percentageOfNodesToScore
picks them; which nodes the pod fits is found by the extender's own filter over every node, again before
each block of pods and outside its timing, since kube-scheduler's plugins and ours agree; again for a pod
whose window holds none of them, as with hard spreading constraints, the failed filter left out) and then
prioritize with filter's answer; bind (the verb's own steps, with the static cluster's binder, which posts
nothing) assumes the pod on the best node and finishes the binding (choosing that node is kube-scheduler's
work, left out of the step since 2026-11-27: about 25 µs over 230 scores); last, the watch brings the bound
pod back with the node's zone and region labels added, as kube-apiserver's PodTopologyLabelsAdmission does (from 1.35;
``--no-topology-labels`` for an apiserver before it, or nodes without those labels). The
cluster is bench/cluster.py's (30 pods per node), the pods the bench's ``--template`` (plain by default).

In kube-scheduler's loop the service's caches are cold at every step: kube-scheduler, the apiserver and etcd
run on the same cores between its requests. ``--evict-mb N`` models that: before each step it writes every
cache line of an N MiB buffer (outside the timing), so that the step finds little of its working set in the
CPU's caches (8 MiB is twice a core's L2 here). Three runs on 2026-11-27 (plain, 500 nodes) put a pod at
1.5-1.7× its CPU with warm caches, filter + prioritize at 1.4-1.6×: much of the gap between this benchmark's
warm figures and the service's CPU per pod in the loop (bench/RESULTS.md, "Cold caches").

Figures per pod, medians over blocks of 50 pods: the CPU time of the thread for all of it (``time.thread_time``
around each block), and each step's share timed with ``time.perf_counter`` (which costs no system call, so the
steps' sum stays close to the CPU time on an idle machine). Each side is a fresh process importing ``extender``
from its checkout; the inputs are written once by this checkout. Sides take turns within each run, the order
alternating.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import orjson

BLOCK = 50
WARM = 50  # pods through the loop before timing (the first builds the template's state)
STEPS = ("watch: created", "filter", "prioritize", "bind", "watch: bound")


def write_inputs(folder: Path, nodes: int, template: str, pods: int, names: int, topology_labels: bool = True,
                 evict_mb: int = 0) -> None:
    """The cluster dump and the loop's parameters, into ``folder``; without ``topology_labels``, the bound pod
    comes back with its own labels only; ``evict_mb``: the buffer written before each step (0: none)."""
    from bench.cluster import generate, incoming_pods

    objects = generate(nodes)
    (folder / "cluster.json").write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    pod = {k: v for k, v in incoming_pods()[template].items() if k != "status"}
    zones = {o["metadata"]["name"]: {k: v for k, v in o["metadata"].get("labels", {}).items()
                                     if k in ("topology.kubernetes.io/zone", "topology.kubernetes.io/region")}
             for o in objects if o["kind"] == "Node"} if topology_labels else {}
    (folder / "loop.json").write_bytes(orjson.dumps({"pod": pod, "pods": pods, "names": names, "zones": zones,
                                                     "evict_mb": evict_mb}))


def worker(folder: Path) -> dict[str, Any]:
    """One side: load the cluster, run the pods through the loop, time it."""
    import extender
    from extender.cli import build_scheduler
    from extender.cluster.columns import NodeNames
    from extender.kubeapi.podcodec import decode_pod_event

    scheduler, _ = build_scheduler(str(folder / "cluster.json"), None)
    if hasattr(scheduler, "warm_up"):
        scheduler.warm_up()
    cache = scheduler.cache
    loop = orjson.loads((folder / "loop.json").read_bytes())
    template, zones, names_per_pod = loop["pod"], loop["zones"], loop["names"]
    version = 10**9

    def event(kind: str, pod: dict[str, Any]) -> bytes:
        nonlocal version
        version += 1
        pod["metadata"]["resourceVersion"] = str(version)
        return orjson.dumps({"type": kind, "object": pod})

    def feasible() -> list[str]:
        """The nodes the template's pod fits now: what kube-scheduler's own filters pass."""
        probe = copy.deepcopy(template)
        probe["metadata"].update(name="loop-probe", uid="uid-loop-probe")
        every = cache.node_names()
        return list(scheduler.filter(None, probe, NodeNames(every, orjson.dumps(every)), None).passed)

    nodes = feasible()
    steps = [0.0] * len(STEPS)
    untimed = [0.0]  # seconds of a block spent choosing a pod's window again or evicting (left out of its figures)
    # Written one int64 per 64-byte line: every line of the buffer is dirtied, so that it displaces what a step
    # left in the caches (numpy: one call, whatever its size).
    buffer = np.zeros(int(loop["evict_mb"]) * (1 << 20) // 8, np.int64)

    def evict() -> None:
        """Fill the CPU's caches with the buffer (outside the timing): what other processes leave in kube-scheduler's
        loop between two steps."""
        if len(buffer):
            began = time.thread_time()
            buffer[::8] += 1
            untimed[0] += time.thread_time() - began

    def window(i: int) -> list[str]:
        start = i * 7919 % len(nodes)  # a window moving round the cluster in a scattered order
        return (nodes[start:] + nodes[:start])[:names_per_pod]

    def sent(names: list[str]) -> NodeNames:
        """Names as filter's HTTP layer hands them over: decoded from the request's text, so each is a new string
        (not the cache's own object, which a lookup would find by identity without comparing any text)."""
        text = orjson.dumps(names)
        return NodeNames(orjson.loads(text), text)

    def refit(wasted: float) -> None:
        """The nodes the template's pod fits now, when a pod's window held none of them: with hard spreading
        constraints, which nodes fit moves with every pod bound (kube-scheduler's own filters would send only
        those). ``wasted``: the timed seconds of the filter that found none, left out with this."""
        nonlocal nodes
        began = time.thread_time()
        nodes = feasible()
        untimed[0] += wasted + time.thread_time() - began
        if not nodes:
            raise RuntimeError("no node fits the template's pod any more: time fewer --pods, or use more --nodes")
    assumed = [0]  # pods bind assumed where prioritize put them
    rejected = [0]  # names filter did not pass (kube-scheduler sends none such: 0 when the windows are right)
    bind_loop = asyncio.new_event_loop()  # bind is a coroutine (its Binding POST is awaited; here nowhere)

    def one(i: int) -> None:
        pod = copy.deepcopy(template)
        name, uid = f"loop-{i}", f"uid-loop-{i}"
        pod["metadata"].update(name=name, uid=uid)
        created = event("ADDED", pod)
        names = window(i)
        names_in = sent(names)
        spent = [0.0] * len(STEPS)
        evict()
        began = time.perf_counter()
        raw = decode_pod_event(created)["object"]
        cache.apply(raw)
        spent[0] = time.perf_counter() - began
        evict()
        began = time.perf_counter()
        answer = scheduler.filter(None, raw, names_in, None)
        spent[1] = time.perf_counter() - began
        if not answer.passed:  # kube-scheduler never sends a window of nodes that all fail its own filters
            refit(spent[1])
            names = window(i)
            names_in = sent(names)
            evict()
            began = time.perf_counter()
            answer = scheduler.filter(None, raw, names_in, None)
            spent[1] = time.perf_counter() - began
        # kube-scheduler sends filter's answer back as the same text; the HTTP layer decodes it to these names.
        passed = NodeNames(list(answer.passed), answer.passed.text)
        evict()
        began = time.perf_counter()
        scores = scheduler.prioritize(None, raw, passed, None)
        spent[2] = time.perf_counter() - began
        best = max(scores, key=lambda pair: pair[1])[0]
        evict()
        began = time.perf_counter()
        bind_loop.run_until_complete(scheduler.bind(raw["metadata"]["namespace"], name, uid, best))
        spent[3] = time.perf_counter() - began
        placed = cache.get_pod(uid)  # bind assumed it on the node prioritize chose (about a microsecond)
        assumed[0] += placed is not None and placed.node_name == best
        bound = copy.deepcopy(pod)
        bound["spec"]["nodeName"] = best
        bound["metadata"]["labels"] = {**bound["metadata"]["labels"], **zones.get(best, {})}
        confirmed = event("MODIFIED", bound)
        evict()
        began = time.perf_counter()
        cache.apply(decode_pod_event(confirmed)["object"])
        spent[4] = time.perf_counter() - began
        rejected[0] += len(names) - len(passed)
        for k, seconds in enumerate(spent):
            steps[k] += seconds

    for i in range(WARM):
        one(-1 - i)
    per_pod: list[float] = []
    per_step: list[list[float]] = [[] for _ in STEPS]
    for block in range(loop["pods"] // BLOCK):
        nodes = feasible()  # (nodes the pods bound so far have filled drop out)
        steps[:] = [0.0] * len(STEPS)
        untimed[0] = 0.0
        began = time.thread_time()
        for i in range(block * BLOCK, (block + 1) * BLOCK):
            one(i)
        per_pod.append((time.thread_time() - began - untimed[0]) / BLOCK)
        for k, spent in enumerate(steps):
            per_step[k].append(spent / BLOCK)
    return {"extender": str(Path(extender.__file__).resolve().parents[1]),
            "bound_pods": assumed[0],
            "rejected_names": rejected[0],
            "cpu_per_pod_ms": 1e3 * statistics.median(per_pod),
            "steps_ms": {label: 1e3 * statistics.median(values) for label, values in zip(STEPS, per_step,
                                                                                          strict=True)}}


def main() -> None:
    from bench import checkouts  # not at the top: a worker may run with another checkout's bench

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    checkouts.add_arguments(parser)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--names", type=int, help="names per filter (default: 230 at 500 nodes, else 500)")
    parser.add_argument("--pods", type=int, default=1000, help="pods timed per side and run")
    parser.add_argument("--template", default="plain",
                        help="the incoming pod: plain, affinity+tolerations, anti-affinity or spread")
    parser.add_argument("--no-topology-labels", action="store_true",
                        help="the bound pod comes back without its node's zone and region labels (an apiserver "
                             "before 1.35, or nodes without them)")
    parser.add_argument("--evict-mb", type=int, default=0,
                        help="before each step, write this many MiB (outside the timing): the cold caches of "
                             "kube-scheduler's loop, where other processes run between the service's steps")
    args = parser.parse_args()
    names = args.names or (230 if args.nodes <= 500 else 500)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_inputs(folder, args.nodes, args.template, max(args.pods, BLOCK), min(names, args.nodes),
                     not args.no_topology_labels, args.evict_mb)

        def describe(figures: dict[str, Any]) -> str:
            steps = ", ".join(f"{step} {ms:.3f}" for step, ms in figures["steps_ms"].items())
            return f"{figures['cpu_per_pod_ms']:.3f} ms of CPU per pod; by step (ms): {steps}"

        # The worker imports nothing from bench: its checkout's extender alone.
        checkouts.compare(__file__, args.before, args.runs, folder, describe)

if __name__ == "__main__":
    main()
