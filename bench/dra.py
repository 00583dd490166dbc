"""A GPU-claim pod: filter + prioritize p50 at 500 and 5000 nodes with 8 devices per node, beside the Go framework.

    python -m bench.dra                 # 500 and 5000 nodes (~3 min), writes bench/DRA-RESULTS.md
    python -m bench.dra --nodes 500     # one size

The cluster is bench.cluster's (nodes with 10 pods each, spread and anti-affinity among them), plus a GPU
driver: one ResourceSlice of 8 GPUs (model, index, memory capacity) per node, a quarter of the GPUs held
by allocated claims, and the DeviceClass. The incoming pod references an unallocated claim for one GPU
with a CEL selector (40Gi or more). The engine figure is in-process (Scheduler.filter then prioritize on
the feasible names, equivalence cache on, as served); the Go figure is kube-scheduler v1.36.3's framework
runtime on the same objects (tests/oracle ``-bench``: PreFilter, Filter on every node with 16 workers,
PreScore, Score). Both are the median of the run, on this machine, in this run.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from bench.cluster import generate, make_pod

ROOT = Path(__file__).resolve().parents[1]
DRIVER = "gpu.example.com"
DEVICES_PER_NODE = 8
PODS_PER_NODE = 10


def dra_objects(node_names: list[str], rng: random.Random) -> list[dict[str, Any]]:
    """The class, one slice of 8 GPUs per node, and claims holding a quarter of the GPUs."""
    objects: list[dict[str, Any]] = [{
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}]
    for node in node_names:
        devices = [{"name": f"gpu-{i}", "attributes": {"model": {"string": rng.choice(["a100", "h100", "l4"])},
                                                        "index": {"int": i}},
                    "capacity": {"memory": {"value": rng.choice(["24Gi", "40Gi", "80Gi"])}}}
                   for i in range(DEVICES_PER_NODE)]
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                        "metadata": {"name": f"{node}-gpu"},
                        "spec": {"driver": DRIVER, "nodeName": node, "devices": devices,
                                 "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}})
        for i in rng.sample(range(DEVICES_PER_NODE), DEVICES_PER_NODE // 4):
            objects.append(claim(f"held-{node}-{i}", node, f"gpu-{i}"))
    objects.append(claim("incoming-gpu", "", ""))
    return objects


def claim(name: str, node: str, device: str) -> dict[str, Any]:
    """A one-GPU claim (40Gi or more), allocated on ``node`` when given."""
    selector = f'device.capacity["{DRIVER}"].memory.compareTo(quantity("40Gi")) >= 0'
    obj: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "shop", "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1,
            "selectors": [{"cel": {"expression": selector}}]}}]}}}
    if node:
        obj["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
        obj["status"] = {"allocation": {
            "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node, "device": device}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
            "reservedFor": [{"resource": "pods", "name": f"user-{name}", "uid": f"uid-user-{name}"}]}
    return obj


def gpu_pod() -> dict[str, Any]:
    """The incoming pod: a web-like container plus the claim."""
    pod = make_pod("incoming-gpu", "shop", "trainer", random.Random(3))
    pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "incoming-gpu"}]
    return pod


def engine_p50(objects: list[dict[str, Any]], iterations: int) -> tuple[float, float, int]:
    """First call and warm p50 of filter + prioritize (ms), and the feasible count."""
    from extender.cluster.cache import ClusterCache
    from extender.engine.profile import build_profile
    from extender.engine.runtime import Framework
    from extender.engine.scheduler import Scheduler

    cache = ClusterCache()
    cache.load(objects)
    gc.collect()
    gc.freeze()
    scheduler = Scheduler(cache, [Framework(build_profile(None))])
    names = cache.node_names()
    pod = gpu_pod()
    times: list[float] = []
    feasible = 0
    for i in range(iterations):
        replica = {**pod, "metadata": {**pod["metadata"], "name": f"incoming-gpu-{i}", "uid": f"uid-gpu-{i}"}}
        started = time.perf_counter()
        answer = scheduler.filter(None, replica, names, None)
        scheduler.prioritize(None, replica, answer.passed, None)
        times.append(1000 * (time.perf_counter() - started))
        feasible = len(answer.passed)
    gc.unfreeze()
    return times[0], statistics.median(times[1:]), feasible


def go_p50(objects: list[dict[str, Any]], runs: int) -> tuple[float, int] | None:
    """The Go framework's p50 per cycle (ms) and feasible count, or None without Go."""
    try:
        binary = subprocess.run([str(ROOT / "tests" / "oracle" / "build")], capture_output=True, text=True,
                                check=True).stdout.strip().splitlines()[-1]
    except (OSError, subprocess.CalledProcessError) as err:
        print(f"Go oracle unavailable ({err}); Go figure skipped", file=sys.stderr)
        return None
    line = orjson.dumps({"id": "gpu", "objects": objects, "pod": gpu_pod()}) + b"\n"
    done = subprocess.run([binary, "-bench", str(runs)], input=line, capture_output=True, check=True)
    result = json.loads(done.stdout.splitlines()[0])
    if result.get("error"):
        print(f"Go oracle error: {result['error']}", file=sys.stderr)
        return None
    return float(result["p50"]), int(result["feasible"])


def main(argv: list[str] | None = None) -> int:
    """Measure and write bench/DRA-RESULTS.md."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, action="append", help="cluster size (repeatable; default 500 and 5000)")
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "DRA-RESULTS.md")
    args = ap.parse_args(argv)
    rows = []
    for nodes in args.nodes or [500, 5000]:
        objects = generate(nodes, pods_per_node=PODS_PER_NODE)
        names = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]
        objects += dra_objects(names, random.Random(nodes))
        first, p50, feasible = engine_p50(objects, args.iterations)
        go = go_p50(objects, args.iterations)
        rows.append((nodes, first, p50, feasible, go))
        print(f"{nodes} nodes: engine first {first:.1f} ms, p50 {p50:.1f} ms ({feasible} feasible); "
              f"Go p50 {go[0] if go else '-'} ms", file=sys.stderr)
    lines = ["# A GPU-claim pod: filter + prioritize", "",
             f"Generated by `python -m bench.dra` on {platform.machine()} / Python {platform.python_version()}; "
             "medians of this run. Each node has 8 GPUs (a quarter held by allocated claims) and "
             f"{PODS_PER_NODE} pods; the pod asks for one GPU of 40Gi or more (a CEL selector).", "",
             "| nodes | engine first call (ms) | engine p50 (ms) | Go framework p50 (ms) | ratio "
             "| feasible (engine / Go) |",
             "|---|---|---|---|---|---|"]
    for nodes, first, p50, feasible, go in rows:
        go_ms = f"{go[0]:.1f}" if go else "-"
        ratio = f"{p50 / go[0]:.1f}x" if go and go[0] else "-"
        lines.append(f"| {nodes} | {first:.1f} | {p50:.1f} | {go_ms} | {ratio} | {feasible} / {go[1] if go else '-'} |")
    lines += ["", "The engine figure is in-process and single-threaded (no HTTP); the Go figure uses 16 filter "
              "workers, as kube-scheduler does.", ""]
    args.out.write_text("\n".join(lines))
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
