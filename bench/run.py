"""Regenerate bench/RESULTS.md: the extender against its targets, side by side with upstream's code.

    python -m bench.run              # full: 500 and 5000 nodes x 30 pods, apiserver sync, throughput (~5 min)
    python -m bench.run --quick      # 500 nodes only, smaller apiserver runs (~1 min)

Every figure comes from this one run on this machine and is reported as a median (p50) or p99 of that
run, never as a promise; ratios put each figure beside upstream's Go code measured in the same run.

What is measured (see bench/RESULTS.md for the figures and targets):
1. Engine only (in-process): filter + prioritize per incoming pod, first call and warm p50/p99, with and
   without the equivalence cache.
2. The Go framework (tests/oracle `-bench`): the same pod on the same cluster through kube-scheduler
   v1.36.3's framework runtime (PreFilter, Filter on every node with 16 workers, PreScore, Score).
3. The HTTP service (a real `extender serve` process, keep-alive client): filter and prioritize
   latency with NodeNames (nodeCacheCapable) and filter with a full NodeList; load time and RSS.
4. Cache ingest: objects per second into the cache, and watch events per second through a reflector.
5. Against a real kube-apiserver: time for our service to sync (list+watch to /readyz) and its RSS, next
   to kube-scheduler's sync time (to /readyz) and RSS for the same cluster.
6. kube-scheduler throughput (pods bound per second) at 500 nodes, alone and with our extender
   (filter + prioritize + bind, nodeCacheCapable).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson

from bench.cluster import generate, incoming_pods

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))


# ---------------------------------------------------------------------------------------------- helpers
def pct(values: Sequence[float], q: float) -> float:
    """The q-quantile (nearest rank) of a sample."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def rss_mb(pid: int) -> float:
    """Resident set size of a process, MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def log(msg: str) -> None:
    """Progress on stderr."""
    sys.stderr.write(f"[bench {time.strftime('%H:%M:%S')}] {msg}\n")
    sys.stderr.flush()


def fmt(value: float | None, digits: int = 1) -> str:
    """A number for the report ("n/a" when not measured)."""
    return "n/a" if value is None or value != value else f"{value:.{digits}f}"


def named(pod: dict[str, Any], i: int) -> dict[str, Any]:
    """A distinct replica of a pod (new name and UID), as a controller would create."""
    meta = pod["metadata"]
    return {**pod, "metadata": {**meta, "name": f"{meta['name']}-{i}", "uid": f"{meta['uid']}-{i}"}}


# ---------------------------------------------------------------------------------------------- 1. engine
def engine_figures(objects: list[dict[str, Any]], iterations: int) -> dict[str, dict[str, float]]:
    """Per pod type: first call, warm p50/p99 (equivalence cache on), warm p50 without it (ms)."""
    from extender.cluster.cache import ClusterCache
    from extender.engine.profile import build_profile
    from extender.engine.runtime import Framework
    from extender.engine.scheduler import Scheduler

    cache = ClusterCache()
    cache.load(objects)
    gc.collect()
    gc.freeze()
    names = cache.node_names()
    out: dict[str, dict[str, float]] = {}
    for eq in (True, False):
        scheduler = Scheduler(cache, [Framework(build_profile(None))], equivalence_cache=eq)
        for label, pod in incoming_pods().items():
            times = []
            for i in range(iterations):
                replica = named(pod, i)
                started = time.perf_counter()
                answer = scheduler.filter(None, replica, names, None)
                scheduler.prioritize(None, replica, answer.passed, None)
                times.append(1000 * (time.perf_counter() - started))
            entry = out.setdefault(label, {"feasible": float(len(answer.passed))})
            if eq:
                entry.update(first=times[0], p50=statistics.median(times[1:]), p99=pct(times[1:], 0.99))
            else:
                entry["p50_no_eq"] = statistics.median(times[1:])
    gc.unfreeze()
    return out


# ---------------------------------------------------------------------------------------------- 2. Go
def go_framework_figures(objects: list[dict[str, Any]], runs: int) -> dict[str, dict[str, float]]:
    """Per pod type: the Go framework's p50 per cycle (ms) and its feasible count, or {} without Go."""
    try:
        binary = subprocess.run([str(ROOT / "tests" / "oracle" / "build")], capture_output=True, text=True,
                                check=True).stdout.strip().splitlines()[-1]
    except (OSError, subprocess.CalledProcessError) as err:
        log(f"Go oracle unavailable ({err}); Go figures skipped")
        return {}
    lines = b"".join(orjson.dumps({"id": label, "objects": objects, "pod": pod}) + b"\n"
                     for label, pod in incoming_pods().items())
    done = subprocess.run([binary, "-bench", str(runs)], input=lines, capture_output=True, check=True)
    out: dict[str, dict[str, float]] = {}
    for line in done.stdout.splitlines():
        result = json.loads(line)
        if result.get("error"):
            log(f"Go oracle error for {result.get('id')}: {result['error']}")
            continue
        out[result["id"]] = {"p50": result["p50"], "feasible": float(result["feasible"])}
    return out


# ---------------------------------------------------------------------------------------------- 3. service
@contextmanager
def service(argv: list[str], env: dict[str, str] | None = None, ready_timeout: float = 900) -> Iterator[
        tuple[str, subprocess.Popen[bytes], float]]:
    """A running `extender serve` process: (url, process, seconds until /readyz answered 200)."""
    from controlplane import free_port

    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "extender", "serve", "--port", str(port), "--log-level",
                             "warning", *argv], cwd=ROOT, env={**os.environ, **(env or {})},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                if httpx.get(f"{url}/readyz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.perf_counter() - started > ready_timeout:
                raise RuntimeError(f"extender serve {' '.join(argv)} did not become ready")
            time.sleep(0.05)
        yield url, proc, time.perf_counter() - started
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def service_figures(dump: Path, objects: list[dict[str, Any]], iterations: int,
                    nodelist_iterations: int) -> dict[str, Any]:
    """Latency through HTTP (names and full NodeList), load time and RSS of the service."""
    nodes = [o for o in objects if o["kind"] == "Node"]
    names = [n["metadata"]["name"] for n in nodes]
    nodelist = {"metadata": {}, "items": [{k: v for k, v in n.items() if k != "kind"} for n in nodes]}
    out: dict[str, Any] = {"pods": {}}
    with service(["--cluster", str(dump)]) as (url, proc, load_seconds), \
            httpx.Client(base_url=url, timeout=120) as client:
        out["load_seconds"] = load_seconds
        out["rss_mb"] = rss_mb(proc.pid)
        for label, pod in incoming_pods().items():
            filters, prios, totals = [], [], []
            for i in range(iterations):
                replica = named(pod, i)
                t0 = time.perf_counter()
                passed = client.post("/filter", content=orjson.dumps(
                    {"Pod": replica, "Nodes": None, "NodeNames": names}),
                    headers={"content-type": "application/json"}).json()["NodeNames"]
                t1 = time.perf_counter()
                if len(passed) > 1:  # kube-scheduler does not call prioritize for a single feasible node
                    client.post("/prioritize", content=orjson.dumps({"Pod": replica, "Nodes": None,
                                                                     "NodeNames": passed}),
                                headers={"content-type": "application/json"}).raise_for_status()
                t2 = time.perf_counter()
                filters.append(1000 * (t1 - t0))
                prios.append(1000 * (t2 - t1))
                totals.append(1000 * (t2 - t0))
            full = []
            for i in range(nodelist_iterations):
                body = orjson.dumps({"Pod": named(pod, 10_000 + i), "Nodes": nodelist, "NodeNames": None})
                t0 = time.perf_counter()
                client.post("/filter", content=body, headers={"content-type": "application/json"}).raise_for_status()
                full.append(1000 * (time.perf_counter() - t0))
            # The first request of a pod template builds per-template state (equivalence class, plugin
            # indexes): reported on its own; p50/p99 are over the replicas that follow, as a ReplicaSet's do.
            first, filters, prios, totals = totals[0], filters[1:], prios[1:], totals[1:]
            out["pods"][label] = {
                "first": first,
                "filter_p50": statistics.median(filters), "filter_p99": pct(filters, 0.99),
                "prioritize_p50": statistics.median(prios), "prioritize_p99": pct(prios, 0.99),
                "total_p50": statistics.median(totals), "total_p99": pct(totals, 0.99),
                "nodelist_p50": statistics.median(full), "nodelist_p99": pct(full, 0.99),
                "nodelist_mb": len(orjson.dumps(nodelist)) / 1e6,
            }
        out["rss_after_mb"] = rss_mb(proc.pid)
    return out


# ---------------------------------------------------------------------------------------------- 4. ingest
def ingest_figures(objects: list[dict[str, Any]]) -> dict[str, float]:
    """Objects per second into the cache, and pod MODIFIED watch events per second through a reflector."""
    from extender.cluster.cache import ClusterCache
    from extender.cluster.reflector import Reflector
    from extender.kubeapi.client import RESOURCES, KubeClient
    from extender.kubeapi.config import ClusterConfig

    cache = ClusterCache()
    started = time.perf_counter()
    cache.load(objects)
    load_rate = len(objects) / (time.perf_counter() - started)
    reflector = Reflector(KubeClient(ClusterConfig("http://unused")), RESOURCES["Pod"], cache)
    pods = [o for o in objects if o["kind"] == "Pod"][:50_000]
    events = []
    for i, pod in enumerate(pods):
        changed = {**pod, "metadata": {**pod["metadata"], "resourceVersion": str(10_000_000 + i),
                                       "labels": {**pod["metadata"]["labels"], "rev": "2"}}}
        events.append({"type": "MODIFIED", "object": changed})
    started = time.perf_counter()
    for event in events:
        reflector.apply(event)
    event_rate = len(events) / (time.perf_counter() - started)
    # Snapshots: a request after one pod changed copies one node; a full copy is what it avoids.
    cache.snapshot()
    incremental = []
    for event in events[:200]:
        reflector.apply({"type": "MODIFIED", "object": {**event["object"], "metadata": {
            **event["object"]["metadata"], "resourceVersion": "x" + event["object"]["metadata"]["resourceVersion"]}}})
        started = time.perf_counter()
        cache.snapshot()
        incremental.append(1000 * (time.perf_counter() - started))
    started = time.perf_counter()
    snapshot = cache.snapshot()
    full = type(snapshot).from_node_infos([n.clone() for n in snapshot.node_list], snapshot.objects)
    full_ms = 1000 * (time.perf_counter() - started)
    del full
    return {"objects_per_s": load_rate, "events_per_s": event_rate,
            "snapshot_one_change_ms": statistics.median(incremental), "snapshot_full_copy_ms": full_ms}


# ---------------------------------------------------------------------------------------------- 5. apiserver
def populate(cp: Any, objects: list[dict[str, Any]], workers: int = 8) -> float:
    """Create the cluster's objects through the API (nodes with status first); returns seconds taken."""
    client = cp.client()
    for ns in {o["metadata"].get("namespace") for o in objects if o["metadata"].get("namespace")}:
        client.ensure_namespace(ns)
    started = time.perf_counter()
    local = threading.local()

    def api() -> Any:
        if not hasattr(local, "client"):
            local.client = cp.client()
        return local.client

    def create_node(node: dict[str, Any]) -> None:
        body = {k: v for k, v in node.items() if k != "status"}
        body["metadata"] = {k: v for k, v in node["metadata"].items() if k not in ("uid", "resourceVersion")}
        name = node["metadata"]["name"]
        api().post("/api/v1/nodes", body)
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        status = {**node["status"], "conditions": [{**c, "lastHeartbeatTime": now, "lastTransitionTime": now}
                                                   for c in node["status"]["conditions"]]}
        api().merge_patch(f"/api/v1/nodes/{name}/status", {"status": status})
        # TaintNodesByCondition adds node.kubernetes.io/not-ready at creation; no controller removes it here.
        api().merge_patch(f"/api/v1/nodes/{name}", {"spec": {"taints": node["spec"].get("taints") or None}})

    def create_other(obj: dict[str, Any]) -> None:
        meta = {k: v for k, v in obj["metadata"].items() if k not in ("uid", "resourceVersion")}
        if obj["kind"] == "Pod":
            meta.pop("ownerReferences", None)  # no ReplicaSets exist: owner refs would dangle
            body = {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}
            api().post(f"/api/v1/namespaces/{meta['namespace']}/pods", body)
        elif obj["kind"] == "Service":
            spec = {**obj["spec"], "ports": [{"port": 80}]}
            api().post(f"/api/v1/namespaces/{meta['namespace']}/services", {**obj, "metadata": meta, "spec": spec})

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(create_node, [o for o in objects if o["kind"] == "Node"]))
        list(pool.map(create_other, [o for o in objects if o["kind"] in ("Pod", "Service")]))
    return time.perf_counter() - started


def apiserver_figures(objects: list[dict[str, Any]], workdir: Path) -> dict[str, float]:
    """Sync time and RSS of our service and of kube-scheduler, from the same populated apiserver."""
    from controlplane import ControlPlane, Scheduler, build_binaries, scheduler_configuration

    bin_dir = build_binaries(workdir / "build.log")
    cp = ControlPlane(bin_dir, workdir / "cp")
    cp.start()
    try:
        out = {"populate_seconds": populate(cp, objects)}
        log(f"apiserver populated in {out['populate_seconds']:.0f}s")
        with service(["--kubeconfig", str(cp.kubeconfig)]) as (_url, proc, seconds):
            out["extender_sync_seconds"] = seconds
            time.sleep(2)
            out["extender_rss_mb"] = rss_mb(proc.pid)
        started = time.perf_counter()
        scheduler = Scheduler(cp, workdir / "sched", scheduler_configuration(cp.kubeconfig, []), verbosity=1)
        scheduler.wait_ready(timeout=900)
        out["scheduler_sync_seconds"] = time.perf_counter() - started
        time.sleep(2)
        out["scheduler_rss_mb"] = rss_mb(scheduler.process.pid)
        scheduler.stop()
        return out
    finally:
        cp.stop()


# ---------------------------------------------------------------------------------------------- 6. throughput
def throughput_figures(nodes: int, pods: int, workdir: Path) -> dict[str, float]:
    """Pods bound per second by kube-scheduler alone and with our extender (filter, prioritize, bind)."""
    from controlplane import ControlPlane, ExtenderConfig, Scheduler, build_binaries, scheduler_configuration

    bin_dir = build_binaries(workdir / "build.log")
    cp = ControlPlane(bin_dir, workdir / "tp")
    cp.start()
    objects = [o for o in generate(nodes, pods_per_node=0) if o["kind"] in ("Node", "Namespace", "Service")]
    populate(cp, objects)
    client = cp.client()
    template = incoming_pods()["plain"]

    def run(label: str, extender_url: str | None) -> float:
        config = scheduler_configuration(cp.kubeconfig, [ExtenderConfig(
            url_prefix=extender_url, filter_verb="filter", prioritize_verb="prioritize", bind_verb="bind",
            weight=1, node_cache_capable=True)] if extender_url else [])
        scheduler = Scheduler(cp, workdir / f"sched-{label}", config, verbosity=1)
        scheduler.wait_ready(timeout=120)
        started = time.perf_counter()
        body = {k: v for k, v in template.items() if k != "status"}
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: client.post("/api/v1/namespaces/shop/pods", {
                **body, "metadata": {"name": f"{label}-{i}", "namespace": "shop", "labels": {"app": "web"}}}),
                range(pods)))
        deadline = time.perf_counter() + 600
        while time.perf_counter() < deadline:
            items = client.get("/api/v1/namespaces/shop/pods", labelSelector="app=web")["items"]
            bound = sum(1 for p in items if p["metadata"]["name"].startswith(f"{label}-") and p["spec"].get("nodeName"))
            if bound >= pods:
                break
            time.sleep(0.2)
        rate = pods / (time.perf_counter() - started)
        scheduler.stop()
        return rate

    try:
        # Alternate the two setups (alone, with, alone, with) and keep each one's median: the first runs on
        # a fresh apiserver are slower, and a single pair would credit that to whichever went first.
        alone: list[float] = []
        extended: list[float] = []
        with service(["--kubeconfig", str(cp.kubeconfig)]) as (url, _proc, _seconds):
            for round_ in range(2):
                alone.append(run(f"alone{round_}", None))
                extended.append(run(f"ext{round_}", url))
        return {"nodes": float(nodes), "pods": float(pods), "alone_pods_per_s": statistics.median(alone),
                "extender_pods_per_s": statistics.median(extended), "runs": float(len(alone))}
    finally:
        cp.stop()


# ---------------------------------------------------------------------------------------------- report
TARGETS = """| Target | Figure | Met |
|---|---|---|
{rows}"""


def report(results: dict[str, Any], args: argparse.Namespace) -> str:
    """bench/RESULTS.md."""
    lines = ["# Benchmark results", "",
             f"Generated by `python -m bench.run{' --quick' if args.quick else ''}` on {time.strftime('%Y-%m-%d')} "
             f"on this machine ({os.cpu_count()} cores). One run; medians (p50) and p99 of that run; ratios are "
             "ours ÷ upstream's Go code measured in the same run. Clusters: generated by bench/cluster.py, "
             "30 pods per node (labels, owner references, two containers, 1 in 20 with required anti-affinity, "
             "1 in 10 with spread constraints); incoming pods: plain, node affinity + tolerations, pod "
             "anti-affinity, topology spread.", ""]
    rows: list[str] = []
    for size, figures in results["sizes"].items():
        eng, go, svc = figures["engine"], figures.get("go", {}), figures.get("service")
        lines += [f"## {size} nodes, {figures['pods']} pods", "",
                  "| incoming pod | feasible | Go framework p50 (ms) | engine first (ms) | engine warm p50 / p99 (ms) "
                  "| engine p50 without equivalence cache (ms) | service first (ms) "
                  "| service filter+prioritize p50 / p99 (ms) "
                  "| ratio service p50 ÷ Go | service full NodeList filter p50 / p99 (ms) |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for label, e in eng.items():
            g = go.get(label, {})
            s = svc["pods"][label] if svc else {}
            ratio = s.get("total_p50", float("nan")) / g["p50"] if g and s else None
            lines.append(f"| {label} | {int(e['feasible'])} | {fmt(g.get('p50'))} | {fmt(e['first'])} | "
                         f"{fmt(e['p50'])} / {fmt(e['p99'])} | {fmt(e['p50_no_eq'])} | {fmt(s.get('first'))} | "
                         f"{fmt(s.get('total_p50'))} / {fmt(s.get('total_p99'))} | {fmt(ratio, 2)} | "
                         f"{fmt(s.get('nodelist_p50'))} / {fmt(s.get('nodelist_p99'))} |")
        if svc:
            lines += ["", f"Service: loaded the {figures['pods']}-pod dump and answered /readyz in "
                          f"{fmt(svc['load_seconds'])} s; RSS {fmt(svc['rss_mb'], 0)} MB after load, "
                          f"{fmt(svc['rss_after_mb'], 0)} MB after the run. A full NodeList request is "
                          f"{fmt(next(iter(svc['pods'].values()))['nodelist_mb'])} MB of JSON."]
        ing = figures["ingest"]
        lines += ["", f"Cache ingest: {fmt(ing['objects_per_s'], 0)} objects/s from a dump; "
                      f"{fmt(ing['events_per_s'], 0)} pod watch events/s applied through a reflector. "
                      f"Snapshot for a request after one pod changed: {fmt(ing['snapshot_one_change_ms'], 2)} ms "
                      f"(median; only that node is copied), against {fmt(ing['snapshot_full_copy_ms'], 1)} ms "
                      "to copy every node.", ""]
        worst = max(svc["pods"].values(), key=lambda p: p["total_p99"]) if svc else None
        if size == max(results["sizes"]) and svc and go:
            ratios = [svc["pods"][k]["total_p50"] / go[k]["p50"] for k in svc["pods"] if k in go]
            rows.append(f"| {size} nodes, names only: service filter+prioritize p50 ≤ 1.0× the Go framework "
                        f"| worst ratio {fmt(max(ratios), 2)} | {'yes' if max(ratios) <= 1.0 else 'no'} |")
            rows.append(f"| {size} nodes, names only: p99 < 50 ms | worst p99 {fmt(worst['total_p99'])} ms "
                        f"| {'yes' if worst['total_p99'] < 50 else 'no'} |")
            full = max(p["nodelist_p50"] for p in svc["pods"].values())
            rows.append(f"| {size} nodes, full NodeList: filter p50 < 200 ms | worst p50 {fmt(full)} ms "
                        f"| {'yes' if full < 200 else 'no'} |")
    api = results.get("apiserver")
    if api:
        lines += [f"## Sync from a real kube-apiserver ({api['nodes']} nodes, {api['pods']} pods)", "",
                  "| | sync to ready (s) | RSS (MB) |", "|---|---|---|",
                  f"| extender (`serve --kubeconfig`) | {fmt(api['extender_sync_seconds'])} | "
                  f"{fmt(api['extender_rss_mb'], 0)} |",
                  f"| kube-scheduler v1.36.3 | {fmt(api['scheduler_sync_seconds'])} | "
                  f"{fmt(api['scheduler_rss_mb'], 0)} |", "",
                  f"(Populating the apiserver took {fmt(api['populate_seconds'], 0)} s.)", ""]
        rows.append(f"| {api['nodes']} nodes / {api['pods']} pods: RSS ≤ 1 GB and ≤ kube-scheduler's | "
                    f"{fmt(api['extender_rss_mb'], 0)} MB vs {fmt(api['scheduler_rss_mb'], 0)} MB | "
                    f"{'yes' if api['extender_rss_mb'] <= min(1024, api['scheduler_rss_mb']) else 'no'} |")
        ratio = api["extender_sync_seconds"] / api["scheduler_sync_seconds"]
        rows.append(f"| sync time ≤ 1.5× kube-scheduler's | {fmt(ratio, 2)}× | {'yes' if ratio <= 1.5 else 'no'} |")
    tp = results.get("throughput")
    if tp:
        ratio = tp["extender_pods_per_s"] / tp["alone_pods_per_s"]
        lines += [f"## kube-scheduler throughput ({int(tp['nodes'])} nodes, {int(tp['pods'])} pods per run, "
                  f"median of {int(tp.get('runs', 1))} alternated runs each)", "",
                  "| | pods/s |", "|---|---|", f"| kube-scheduler alone | {fmt(tp['alone_pods_per_s'])} |",
                  f"| with the extender (filter + prioritize + bind, nodeCacheCapable) | "
                  f"{fmt(tp['extender_pods_per_s'])} |", ""]
        rows.append(f"| throughput with the extender ≥ 50% of without at {int(tp['nodes'])} nodes | "
                    f"{fmt(100 * ratio, 0)}% | {'yes' if ratio >= 0.5 else 'no'} |")
    lines += ["## Targets", "", TARGETS.format(rows="\n".join(rows)), ""]
    lines += ["Notes: the Go framework figure is kube-scheduler's own per-pod cost (16 workers, no "
              "percentageOfNodesToScore sampling), the service figure adds HTTP and JSON. 'Warm' means later "
              "replicas of the same pod template, as a ReplicaSet's pods arrive; 'first' includes building "
              "per-request indexes. Gaps are explained in the README's performance section."]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run everything and write the report."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="500 nodes only, smaller apiserver runs")
    parser.add_argument("--sizes", help="comma-separated node counts (default 500,5000; quick: 500)")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--no-apiserver", action="store_true", help="skip the sync and throughput runs")
    parser.add_argument("--out", default=str(ROOT / "bench" / "RESULTS.md"))
    args = parser.parse_args(argv)
    sizes = [int(s) for s in (args.sizes or ("500" if args.quick else "500,5000")).split(",")]
    results: dict[str, Any] = {"sizes": {}}
    workdir = Path(tempfile.mkdtemp(prefix="extender-bench-"))
    try:
        for size in sizes:
            log(f"{size} nodes: generating")
            objects = generate(size)
            dump = workdir / f"cluster-{size}.json"
            dump.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
            pods = sum(1 for o in objects if o["kind"] == "Pod")
            figures: dict[str, Any] = {"pods": pods}
            log(f"{size} nodes: Go framework")
            figures["go"] = go_framework_figures(objects, 10)
            log(f"{size} nodes: engine")
            figures["engine"] = engine_figures(objects, args.iterations)
            log(f"{size} nodes: ingest")
            figures["ingest"] = ingest_figures(objects)
            log(f"{size} nodes: service")
            figures["service"] = service_figures(dump, objects, args.iterations, 5)
            results["sizes"][size] = figures
            del objects
            gc.collect()
        if not args.no_apiserver:
            sync_nodes = 500 if args.quick else max(sizes)
            log(f"apiserver sync with {sync_nodes} nodes")
            objects = generate(sync_nodes)
            results["apiserver"] = {"nodes": sync_nodes, "pods": sum(1 for o in objects if o["kind"] == "Pod"),
                                    **apiserver_figures(objects, workdir)}
            del objects
            log("throughput at 500 nodes")
            results["throughput"] = throughput_figures(500, 200 if args.quick else 300, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    Path(args.out).write_text(report(results, args))
    (Path(args.out).with_suffix(".json")).write_text(json.dumps(results, indent=1, default=str))
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

