"""Regenerate bench/RESULTS.md: the extender against its targets, side by side with upstream's code.

    python -m bench.run              # 500 and 5000 nodes x 30 pods, ingest, apiserver sync, throughput
    python -m bench.run --quick      # the same comparison with fewer rounds; no ingest, sync or throughput

Every figure comes from one run on this machine. A machine shared with other work slows both sides, so
the headline comparison never sets a figure of ours against one of Go's taken at another moment:

1. Go and the service, alternated (A B A B): kube-scheduler v1.36.3's framework runtime (the oracle's
   ``-bench-stream`` mode: built once, then timed on request) and a real `extender serve` process on the
   same cluster and the same pod, round after round. Each round times a few Go cycles, then as many warm
   replicas (later pods of one template) and as many new templates (no equivalence-cache hit) through
   HTTP (filter, then prioritize, with node names as nodeCacheCapable sends them). Reported per pod: our
   p50/p99 and the median of the rounds' ratios (ours ÷ Go) with their range. Each pod is measured with
   every node as candidate and with what the default percentageOfNodesToScore sends (Go stops Filter
   after the adaptive count of feasible nodes and scores those; the service gets those nodes). Then
   filter with a full NodeList, load time and RSS of the service.
2. Cache ingest: objects per second into the cache, and watch events per second through a reflector.
3. Against a real kube-apiserver: time for our service to sync (list+watch to /readyz) and its RSS, next
   to kube-scheduler's sync time (to /readyz) and RSS for the same cluster.
4. kube-scheduler throughput (pods bound per second) at 500 and 5000 nodes, alone and with our extender
   (filter + prioritize + bind, nodeCacheCapable), alternated; ``--only throughput`` runs just this part
   (see throughput_figures for the method).
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
from bench.verb_client import VerbClient

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
    """A distinct replica of a pod (new name and UID), as a controller would create, with the resourceVersion
    every pod kube-scheduler sends carries (from its informer): the service finds filter's record of the pod
    again for prioritize by UID and resourceVersion, as it does for kube-scheduler's requests."""
    meta = pod["metadata"]
    return {**pod, "metadata": {**meta, "name": f"{meta['name']}-{i}", "uid": f"{meta['uid']}-{i}",
                                "resourceVersion": str(1_000_000 + i)}}


# ---------------------------------------------------------------------------------------------- 1. Go
def oracle_binary() -> str | None:
    """The oracle's binary (built by tests/oracle/build), or None without Go."""
    try:
        return subprocess.run([str(ROOT / "tests" / "oracle" / "build")], capture_output=True, text=True,
                              check=True).stdout.strip().splitlines()[-1]
    except (OSError, subprocess.CalledProcessError, IndexError) as err:
        log(f"Go oracle unavailable ({err}); Go figures skipped")
        return None


class GoFramework:
    """kube-scheduler v1.36.3's framework runtime over one cluster, in a process of its own (the oracle's
    ``-bench-stream`` mode): built once, then timed on request, so that its timings interleave with ours."""

    def __init__(self, binary: str, objects: list[dict[str, Any]], pod: dict[str, Any]) -> None:
        self.proc = subprocess.Popen([binary, "-bench-stream"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(orjson.dumps({"id": "bench", "objects": objects, "pod": pod}) + b"\n")
        self.proc.stdin.flush()
        self._read()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the Go framework exited ({self.proc.wait()})")
        answer: dict[str, Any] = orjson.loads(line)
        if answer.get("error"):
            raise RuntimeError(f"the Go framework: {answer['error']}")
        return answer

    def run(self, pod: dict[str, Any], runs: int, sample: bool) -> dict[str, Any]:
        """Times `runs` cycles of one pod: {"millis": [...], "feasible": n, "candidates": [...] if sample}."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(orjson.dumps({"pod": pod, "runs": runs, "sample": sample}) + b"\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        """End the process."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ---------------------------------------------------------------------------------------------- 2. service
@contextmanager
def service(argv: list[str], env: dict[str, str] | None = None, ready_timeout: float = 900,
            source: Path = ROOT, module: str = "extender") -> Iterator[tuple[str, subprocess.Popen[bytes], float]]:
    """A running `extender serve` process: (url, process, seconds until /readyz answered 200).

    ``source`` is the checkout whose package runs (another one measures an earlier version beside this);
    ``module`` the one run with ``python -m`` (bench.hollow: the service without the engine's work)."""
    from controlplane import free_port

    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", module, "serve", "--port", str(port), "--log-level",
                             "warning", *argv], cwd=source, env={**os.environ, **(env or {})},
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


def filter_prioritize(client: VerbClient, pod: dict[str, Any], names: list[str]) -> tuple[float, int]:
    """One pod through /filter then /prioritize, as kube-scheduler calls them: (ms, nodes passed)."""
    started = time.perf_counter()
    answer = client.post("/filter", orjson.dumps({"Pod": pod, "Nodes": None, "NodeNames": names}))
    passed = orjson.loads(answer)["NodeNames"] or []
    if len(passed) > 1:  # kube-scheduler does not call prioritize for a single feasible node
        client.post("/prioritize", orjson.dumps({"Pod": pod, "Nodes": None, "NodeNames": passed}))
    return 1000 * (time.perf_counter() - started), len(passed)


def new_template(pod: dict[str, Any], i: int) -> dict[str, Any]:
    """A replica that is also a new pod template: a toleration of a taint no node has changes what the
    equivalence cache keys on (so nothing of an earlier pod is reused) and nothing else."""
    replica = named(pod, 20_000 + i)
    spec = replica["spec"]
    replica["spec"] = {**spec, "tolerations": [*spec.get("tolerations", []), {
        "key": f"bench.example.com/template-{i}", "operator": "Exists", "effect": "NoSchedule"}]}
    return replica


MODES = ("all nodes", "percentageOfNodesToScore")


def compared_figures(dump: Path, objects: list[dict[str, Any]], binary: str | None, rounds: int,
                     per_round: int, nodelist_iterations: int) -> dict[str, Any]:
    """Per incoming pod and candidate mode, Go and the service measured in alternation (A B A B).

    Each round times ``per_round`` Go cycles, then ``per_round`` warm replicas and ``per_round`` new
    templates through the service, on the same candidates: every node, or the nodes kube-scheduler would
    send with its default percentageOfNodesToScore (the feasible nodes Go's sampled Filter found). A round's
    ratio is our median over Go's median of that round, so a machine that slows down moves both.
    """
    nodes = [o for o in objects if o["kind"] == "Node"]
    names = [n["metadata"]["name"] for n in nodes]
    nodelist = {"metadata": {}, "items": [{k: v for k, v in n.items() if k != "kind"} for n in nodes]}
    pods = incoming_pods()
    go = GoFramework(binary, objects, pods["plain"]) if binary else None
    out: dict[str, Any] = {"pods": {}, "rounds": rounds, "per_round": per_round}
    serial = 0
    try:
        with service(["--cluster", str(dump)]) as (url, proc, load_seconds), VerbClient.for_url(url) as client:
            out["load_seconds"] = load_seconds
            out["rss_mb"] = rss_mb(proc.pid)
            for label, pod in pods.items():
                log(f"  {label}")
                # The first request of a template builds per-template state: reported on its own.
                first, _ = filter_prioritize(client, named(pod, 0), names)
                entry: dict[str, Any] = {"first": first, "modes": {}}
                for mode in MODES:
                    samples: dict[str, list[float]] = {"go": [], "warm": [], "cold": []}
                    ratios: dict[str, list[float]] = {"warm": [], "cold": []}
                    feasible: dict[str, int] = {}
                    for _ in range(rounds):
                        candidates = names
                        go_median = None
                        if go is not None:
                            timed = go.run(pod, per_round, sample=mode != MODES[0])
                            samples["go"] += timed["millis"]
                            go_median = statistics.median(timed["millis"])
                            feasible["go"] = timed["feasible"]
                            candidates = timed.get("candidates") or names
                        for kind in ("warm", "cold"):
                            times = []
                            for _ in range(per_round):
                                serial += 1
                                replica = named(pod, serial) if kind == "warm" else new_template(pod, serial)
                                ms, feasible[kind] = filter_prioritize(client, replica, candidates)
                                times.append(ms)
                            samples[kind] += times
                            if go_median:
                                ratios[kind].append(statistics.median(times) / go_median)
                    entry["modes"][mode] = {
                        "candidates": len(candidates), "feasible": feasible,
                        **{f"{k}_p50": statistics.median(v) for k, v in samples.items() if v},
                        **{f"{k}_p99": pct(v, 0.99) for k, v in samples.items() if v},
                        **{f"ratio_{k}": {"median": statistics.median(v), "min": min(v), "max": max(v)}
                           for k, v in ratios.items() if v},
                    }
                full = []
                for i in range(nodelist_iterations):
                    body = orjson.dumps({"Pod": named(pod, 10_000 + i), "Nodes": nodelist, "NodeNames": None})
                    started = time.perf_counter()
                    client.post("/filter", body)
                    full.append(1000 * (time.perf_counter() - started))
                entry.update(nodelist_p50=statistics.median(full), nodelist_p99=pct(full, 0.99))
                out["pods"][label] = entry
            out["nodelist_mb"] = len(orjson.dumps(nodelist)) / 1e6
            out["rss_after_mb"] = rss_mb(proc.pid)
    finally:
        if go is not None:
            go.close()
    return out


# ---------------------------------------------------------------------------------------------- 3. ingest
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
    # Snapshots: a request after one pod changed copies one node; a full copy is what it avoids. The change is
    # one the scheduler reads (a label): a new resourceVersion alone leaves the cache as it was.
    cache.snapshot()
    incremental = []
    for event in events[:200]:
        meta = event["object"]["metadata"]
        reflector.apply({"type": "MODIFIED", "object": {**event["object"], "metadata": {
            **meta, "resourceVersion": "x" + meta["resourceVersion"], "labels": {**meta["labels"], "rev": "3"}}}})
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


# ---------------------------------------------------------------------------------------------- 4. apiserver
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


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process has used so far: unlike wall time, barely moved by other load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def apiserver_figures(objects: list[dict[str, Any]], workdir: Path, baseline: Path | None = None,
                      rounds: int = 1) -> dict[str, float]:
    """Sync time, CPU and RSS of our service and of kube-scheduler, from the same populated apiserver.

    With ``baseline`` (a checkout of an earlier version), its service is measured too, on the same apiserver:
    ours, kube-scheduler, the baseline, round after round (the last round's figures are reported, the
    others under ``*_all``), so that a change of the machine's load moves all three.
    """
    from controlplane import ControlPlane, Scheduler, build_binaries, scheduler_configuration

    bin_dir = build_binaries(workdir / "build.log")
    cp = ControlPlane(bin_dir, workdir / "cp")
    cp.start()
    try:
        out: dict[str, Any] = {"populate_seconds": populate(cp, objects)}
        log(f"apiserver populated in {out['populate_seconds']:.0f}s")
        sides = [("extender", ROOT)] + ([("baseline", baseline)] if baseline else [])
        for round_ in range(rounds):
            for name, source in sides[:1]:
                measure_service(cp, name, source, out)
            started = time.perf_counter()
            scheduler = Scheduler(cp, workdir / f"sched-{round_}", scheduler_configuration(cp.kubeconfig, []),
                                  verbosity=1)
            scheduler.wait_ready(timeout=900)
            record(out, "scheduler", time.perf_counter() - started, cpu_seconds(scheduler.process.pid))
            time.sleep(2)
            out["scheduler_rss_mb"] = rss_mb(scheduler.process.pid)
            scheduler.stop()
            for name, source in sides[1:]:
                measure_service(cp, name, source, out)
            log("sync: " + ", ".join(f"{n} {out[f'{n}_sync_seconds']:.1f}s" for n in
                                     ("extender", "scheduler", "baseline") if f"{n}_sync_seconds" in out))
        return out
    finally:
        cp.stop()


def record(out: dict[str, Any], name: str, seconds: float, cpu: float) -> None:
    """A side's sync time and CPU seconds, the latest as the figure and every round's in a list."""
    out[f"{name}_sync_seconds"], out[f"{name}_sync_cpu_seconds"] = seconds, cpu
    out.setdefault(f"{name}_sync_seconds_all", []).append(round(seconds, 2))


def measure_service(cp: Any, name: str, source: Path, out: dict[str, Any]) -> None:
    """One `extender serve --kubeconfig` from ``source``: seconds and CPU to /readyz, RSS after it."""
    with service(["--kubeconfig", str(cp.kubeconfig)], source=source) as (_url, proc, seconds):
        record(out, name, seconds, cpu_seconds(proc.pid))
        time.sleep(2)
        out[f"{name}_rss_mb"] = rss_mb(proc.pid)


# ---------------------------------------------------------------------------------------------- 5. throughput
# kube-scheduler's client rate limits for these runs, both sides alike: upstream's scheduler_perf harness
# uses the same (test/integration/scheduler_perf/util.go). With the test configuration's 100 qps / burst 200,
# kube-scheduler alone is bounded by its own Binding rate limiter (200 at once, then 100/s) rather than by
# scheduling, while binds through the extender skip that limiter: neither side would measure scheduling.
THROUGHPUT_QPS = 5000
_BIND_VERB = "bind"  # "" to let kube-scheduler bind (for finding where time goes; never in the report)


def _watch_binds(cp: Any, label: str, version: str, expected: int, bound: dict[str, float],
                 done: threading.Event) -> None:
    """Record when each pod of a run is first seen bound (a watch, resumed if the server ends it)."""
    client = cp.client()
    try:
        while len(bound) < expected and not done.is_set():
            params = {"labelSelector": f"run={label}", "watch": "true", "resourceVersion": version,
                      "timeoutSeconds": "600"}
            with client.http.stream("GET", "/api/v1/namespaces/shop/pods", params=params,
                                    timeout=httpx.Timeout(30, read=None)) as response:
                if response.status_code != 200:
                    raise RuntimeError(f"watch: {response.status_code} {response.read()[:200]!r}")
                for line in response.iter_lines():
                    if not line:
                        continue
                    event = orjson.loads(line)
                    obj = event.get("object") or {}
                    meta = obj.get("metadata") or {}
                    if event.get("type") == "ERROR":
                        raise RuntimeError(f"watch: {obj.get('message')}")
                    version = meta.get("resourceVersion") or version
                    name = meta.get("name")
                    if name and (obj.get("spec") or {}).get("nodeName") and name not in bound:
                        bound[name] = time.perf_counter()
                    if len(bound) >= expected or done.is_set():
                        break
    except Exception as err:  # reported by the caller as pods not bound
        log(f"watch of {label} failed: {err!r}")
    finally:
        client.close()


def _verb_seconds(url: str) -> dict[str, float]:
    """Mean time the service took per verb (from its request-duration histogram: read to answer)."""
    sums: dict[str, float] = {}
    counts: dict[str, float] = {}
    for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
        for suffix, into in (("_sum", sums), ("_count", counts)):
            if line.startswith(f"extender_request_duration_seconds{suffix}{{"):
                verb = line.split('verb="', 1)[1].split('"', 1)[0]
                into[verb] = into.get(verb, 0.0) + float(line.rsplit(" ", 1)[1])
    return {verb: sums[verb] / counts[verb] for verb in sums if counts.get(verb)}


@contextmanager
def null_extender(bin_dir: Path, kubeconfig: Path, log_path: Path) -> Iterator[tuple[str, int]]:
    """tests/k8s/go/cmd/nullextender serving on a free port, (its URL, its pid): an extender that passes every
    node, scores each 0 and binds, doing no scheduling work: the ceiling the issue's targets are set against.
    Not the most any extender reaches nor the least CPU it spends: bench.floor_extender, in Python, passes it."""
    from controlplane import free_port

    port = free_port()
    with log_path.open("ab") as log_file:
        proc = subprocess.Popen([str(bin_dir / "nullextender"), "-listen", f"127.0.0.1:{port}", "-kubeconfig",
                                 str(kubeconfig)], stdout=log_file, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.perf_counter() + 30
        while True:
            try:
                httpx.get(url + "/healthz", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if proc.poll() is not None or time.perf_counter() > deadline:
                    raise RuntimeError(f"nullextender did not start; see {log_path}") from None
                time.sleep(0.05)
        yield url, proc.pid
    finally:
        proc.terminate()
        proc.wait(10)


def throughput_figures(nodes: int, pods: int, workdir: Path, rounds: int = 2, on_extender: Any = None,
                       before: Path | None = None, hollow: bool = False, floor: bool = False) -> dict[str, float]:
    """Pods bound per second by kube-scheduler alone and with our extender (filter, prioritize, bind).

    Each run starts from the same empty cluster: its pods are created first (pending, no scheduler running),
    so the client creating them is not what is measured; then kube-scheduler starts and a watch records when
    each pod is bound. The rate is over the span from the first bind to the last, which leaves out start-up
    (informer sync) on both sides. The pods are force-deleted after each run. Runs alternate (alone, with,
    alone, with, ...) and each side reports its median and range, with the extender's CPU per pod and its
    mean time per verb. ``before``: a directory holding an earlier ``extender`` package, measured as a third
    side of every round (before and after a change, in the same run). ``hollow``: this checkout's service
    with the engine's work left out (bench.hollow) as another side: the most any engine behind it could reach.
    ``floor``: bench.floor_extender as another side, the least a Python extender with a watch spends.
    """
    from controlplane import ControlPlane, ExtenderConfig, Scheduler, build_binaries, scheduler_configuration

    bin_dir = build_binaries(workdir / "build.log")
    cp = ControlPlane(bin_dir, workdir / f"tp-{nodes}")
    cp.start()
    objects = [o for o in generate(nodes, pods_per_node=0) if o["kind"] in ("Node", "Namespace", "Service")]
    populate(cp, objects)
    client = cp.client()
    template = incoming_pods()["plain"]
    body = {k: v for k, v in template.items() if k != "status"}

    def create(label: str) -> str:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: client.post("/api/v1/namespaces/shop/pods", {
                **body, "metadata": {"name": f"{label}-{i}", "namespace": "shop",
                                     "labels": {"app": "web", "run": label}}}), range(pods)))
        return str(client.get("/api/v1/namespaces/shop/pods", labelSelector=f"run={label}",
                              limit="1")["metadata"]["resourceVersion"])

    def clear() -> None:
        client.delete_pods("shop")
        deadline = time.perf_counter() + 300
        while client.get("/api/v1/namespaces/shop/pods", limit="1")["items"]:
            if time.perf_counter() > deadline:
                raise RuntimeError("the benchmark's pods were not deleted")
            time.sleep(0.2)

    cpu_per_pod: list[float] = []

    def run(label: str, extender_url: str | None, extender_pid: int = 0) -> float:
        cpu_before = cpu_seconds(extender_pid) if extender_pid else 0.0  # its pods' watch events count too
        version = create(label)
        bound: dict[str, float] = {}
        done = threading.Event()
        watcher = threading.Thread(target=_watch_binds, args=(cp, label, version, pods, bound, done), daemon=True)
        watcher.start()
        time.sleep(0.5)  # the watch is open before anything can bind
        config = scheduler_configuration(cp.kubeconfig, [ExtenderConfig(
            url_prefix=extender_url, filter_verb="filter", prioritize_verb="prioritize", bind_verb=_BIND_VERB,
            weight=1, node_cache_capable=True)] if extender_url else [])
        config["clientConnection"].update(qps=THROUGHPUT_QPS, burst=THROUGHPUT_QPS)
        scheduler = Scheduler(cp, workdir / f"sched-{nodes}-{label}", config, verbosity=1)
        try:
            watcher.join(600)
        finally:
            done.set()
            scheduler.stop()
        if len(bound) < pods:
            raise RuntimeError(f"{label}: only {len(bound)} of {pods} pods were bound within 600 s")
        times = sorted(bound.values())
        rate = (len(times) - 1) / (times[-1] - times[0])
        extra = ""
        if extender_pid:
            cpu_per_pod.append(1000 * (cpu_seconds(extender_pid) - cpu_before) / pods)
            extra = f", extender CPU {cpu_per_pod[-1]:.2f} ms per pod"
        log(f"throughput {nodes} nodes, {label}: {rate:.1f} pods/s{extra}")
        clear()
        return rate

    def run_with(label: str, directory: Path, module: str) -> tuple[float, float, dict[str, float]]:
        with service(["--kubeconfig", str(cp.kubeconfig)], source=directory, module=module) as (url, proc, _seconds):
            if on_extender is not None:
                on_extender(proc)
            rate = run(label, url, proc.pid)
            return rate, cpu_per_pod.pop(), _verb_seconds(url)

    def run_null(label: str) -> tuple[float, float]:
        with null_extender(bin_dir, cp.kubeconfig, workdir / f"null-{nodes}.log") as (url, pid):
            return run(label, url, pid), cpu_per_pod.pop()

    try:
        # Alternated rounds: alone, with the extender (and with the earlier extender when one is given), so
        # that a machine shared with other work moves every side. The extender runs only during its own
        # runs: its watches would otherwise spend CPU during kube-scheduler's runs alone.
        sides = {"extender": (ROOT, "extender"), **({"before": (before, "extender")} if before is not None else {}),
                 **({"hollow": (ROOT, "bench.hollow")} if hollow else {}),
                 **({"floor": (ROOT, "bench.floor_extender")} if floor else {})}
        rates: dict[str, list[float]] = {"alone": [], "null": [], **{side: [] for side in sides}}
        cpu: dict[str, list[float]] = {"null": [], **{side: [] for side in sides}}
        served: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
        for round_ in range(rounds):
            rates["alone"].append(run(f"alone{round_}", None))
            rate, cpu_ms = run_null(f"null{round_}")
            rates["null"].append(rate)
            cpu["null"].append(cpu_ms)
            for side, (directory, module) in sides.items():
                rate, cpu_ms, seconds = run_with(f"{side}{round_}", directory, module)
                rates[side].append(rate)
                cpu[side].append(cpu_ms)
                for verb, value in seconds.items():
                    served[side].setdefault(verb, []).append(value)
        out = {"nodes": float(nodes), "pods": float(pods), "runs": float(rounds), "qps": float(THROUGHPUT_QPS)}
        for side, values in rates.items():
            out.update({f"{side}_pods_per_s": statistics.median(values), f"{side}_min": min(values),
                        f"{side}_max": max(values)})
            if side == "alone":
                continue
            ratios = [e / a for a, e in zip(rates["alone"], values, strict=True)]
            prefix = "ratio" if side == "extender" else f"{side}_ratio"
            out.update({f"{prefix}_median": statistics.median(ratios), f"{prefix}_min": min(ratios),
                        f"{prefix}_max": max(ratios)})
            if side in cpu:
                out[f"{side}_cpu_ms_per_pod"] = statistics.median(cpu[side])
            if side in served:  # our extender's sides (the do-nothing one has no metrics)
                out.update({f"{side}_{verb}_mean_ms": 1000 * statistics.median(v) for verb, v in served[side].items()})
        return out
    finally:
        client.close()
        cp.stop()


# ---------------------------------------------------------------------------------------------- report
TARGETS = """| Target | Figure | Met |
|---|---|---|
{rows}"""


def span(ratio: dict[str, float] | None) -> str:
    """A per-round ratio as "median (min–max)"."""
    if not ratio:
        return "n/a"
    return f"{ratio['median']:.2f} ({ratio['min']:.2f}–{ratio['max']:.2f})"


def report(results: dict[str, Any], args: argparse.Namespace, beside: dict[str, Any] | None = None) -> str:
    """bench/RESULTS.md; ``beside``, the JSON of another run, adds its ratios next to this run's."""
    command = "python -m bench.run" + (" --quick" if args.quick or results.get("quick") else "")
    generated = results.get("generated") or time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    lines = ["# Benchmark results", "",
             f"Generated by `{command}` on {generated} UTC on this machine "
             f"({os.cpu_count()} cores). Clusters: generated by bench/cluster.py, 30 pods per node (labels, owner "
             "references, two containers, 1 in 20 with required anti-affinity, 1 in 10 with spread constraints); "
             "incoming pods: plain, node affinity + tolerations, pod anti-affinity, topology spread.", "",
             "How the comparison is made: upstream's framework runtime (kube-scheduler v1.36.3 built from Go, 16 "
             "Filter workers) and our service over HTTP (`extender serve`; a minimal keep-alive client, "
             "bench/verb_client.py, as cheap as kube-scheduler's Go client, where httpx cost about 0.5 ms a call "
             "before 2026-11-26; filter then "
             "prioritize as kube-scheduler calls them with nodeCacheCapable) time the same pod on the same "
             "cluster in alternation: each round is a few Go cycles, then as many warm replicas (later pods of "
             "one template, as a ReplicaSet's arrive), then as many new templates (every pod a template of its "
             "own, so the equivalence cache holds nothing for it). A round's ratio is our median ÷ Go's median "
             "of that round; the table gives the median of the rounds' ratios and their range, so that a busy "
             "machine moves both sides. 'percentageOfNodesToScore' is what kube-scheduler does at that size by "
             "default: Go stops Filter after the adaptive count of feasible nodes (500 of 5000) and scores "
             "those, and the service is sent exactly those nodes; 'all nodes' filters and scores every node.",
             ""]
    if "loadavg_start" in results:
        lines += [f"Machine load (5-minute load average) at the start and end of the run: "
                  f"{results['loadavg_start']:.1f} and {results.get('loadavg_end', float('nan')):.1f} "
                  f"on {os.cpu_count()} cores.", ""]
    rows: list[str] = []
    sizes = {int(size): figures for size, figures in results["sizes"].items()}  # JSON keys are strings
    largest = max(sizes) if sizes else 0
    for size, figures in sizes.items():
        svc = figures["service"]
        other = ((beside or {}).get("sizes", {}).get(str(size)) or {}).get("service", {}).get("pods", {})
        lines += [f"## {size} nodes, {figures['pods']} pods", "",
                  "| incoming pod | candidates | feasible (Go / ours) | Go p50 (ms) | warm p50 / p99 (ms) "
                  "| new template p50 / p99 (ms) | ratio warm ÷ Go | ratio new template ÷ Go |"
                  + (" other run: warm / new template ratio |" if other else ""),
                  "|---|---|---|---|---|---|---|---|" + ("---|" if other else "")]
        for label, entry in svc["pods"].items():
            for mode, m in entry["modes"].items():
                feasible = m["feasible"]
                o = other.get(label, {}).get("modes", {}).get(mode, {})
                lines.append(
                    f"| {label} | {mode} ({m['candidates']}) | {feasible.get('go', 'n/a')} / {feasible.get('warm')} "
                    f"| {fmt(m.get('go_p50'))} | {fmt(m['warm_p50'])} / {fmt(m['warm_p99'])} "
                    f"| {fmt(m['cold_p50'])} / {fmt(m['cold_p99'])} | {span(m.get('ratio_warm'))} "
                    f"| {span(m.get('ratio_cold'))} |"
                    + (f" {span(o.get('ratio_warm'))} / {span(o.get('ratio_cold'))} |" if other else ""))
        lines += ["", f"{svc['rounds']} rounds of {svc['per_round']} pods per side and kind. First request of a "
                      "template (builds its per-template state): "
                      + ", ".join(f"{label} {fmt(e['first'])} ms" for label, e in svc["pods"].items()) + ".", "",
                  f"Full NodeList ({fmt(svc['nodelist_mb'])} MB of JSON per request), filter p50 / p99 (ms): "
                  + ", ".join(f"{label} {fmt(e['nodelist_p50'])} / {fmt(e['nodelist_p99'])}"
                              for label, e in svc["pods"].items()) + ".", "",
                  f"Service: loaded the {figures['pods']}-pod dump and answered /readyz in "
                  f"{fmt(svc['load_seconds'])} s; RSS {fmt(svc['rss_mb'], 0)} MB after load, "
                  f"{fmt(svc['rss_after_mb'], 0)} MB after the run.", ""]
        ing = figures.get("ingest")
        if ing:
            lines += [f"Cache ingest: {fmt(ing['objects_per_s'], 0)} objects/s from a dump; "
                      f"{fmt(ing['events_per_s'], 0)} pod watch events/s applied through a reflector. "
                      f"Snapshot for a request after one pod changed: {fmt(ing['snapshot_one_change_ms'], 2)} ms "
                      f"(median), against {fmt(ing['snapshot_full_copy_ms'], 1)} ms to copy every node.", ""]
        if size == largest:
            modes = [m for e in svc["pods"].values() for m in e["modes"].values()]
            if all(m.get("ratio_warm") for m in modes):
                worst = max(max(m["ratio_warm"]["median"], m["ratio_cold"]["median"]) for m in modes)
                rows.append(f"| {size} nodes, names only: service filter+prioritize p50 ≤ 0.3× the Go framework, "
                            f"warm replicas and new templates | worst median ratio {worst:.2f} "
                            f"| {'yes' if worst <= 0.3 else 'no'} |")
            p99 = max(max(m["warm_p99"], m["cold_p99"]) for m in modes)
            rows.append(f"| {size} nodes, names only: p99 < 30 ms | worst p99 {fmt(p99)} ms "
                        f"| {'yes' if p99 < 30 else 'no'} |")
            full = max(e["nodelist_p50"] for e in svc["pods"].values())
            rows.append(f"| {size} nodes, full NodeList: filter p50 < 150 ms | worst p50 {fmt(full)} ms "
                        f"| {'yes' if full < 150 else 'no'} |")
    api = results.get("apiserver")
    if api:
        lines += [f"## Sync from a real kube-apiserver ({api['nodes']} nodes, {api['pods']} pods)", "",
                  "| | sync to ready (s) | CPU used to ready (s) | RSS (MB) |", "|---|---|---|---|",
                  f"| extender (`serve --kubeconfig`) | {fmt(api['extender_sync_seconds'])} | "
                  f"{fmt(api.get('extender_sync_cpu_seconds'))} | {fmt(api['extender_rss_mb'], 0)} |",
                  f"| kube-scheduler v1.36.3 | {fmt(api['scheduler_sync_seconds'])} | "
                  f"{fmt(api.get('scheduler_sync_cpu_seconds'))} | {fmt(api['scheduler_rss_mb'], 0)} |", "",
                  f"(Populating the apiserver took {fmt(api['populate_seconds'], 0)} s.)", ""]
        rows.append(f"| {api['nodes']} nodes / {api['pods']} pods: RSS ≤ kube-scheduler's | "
                    f"{fmt(api['extender_rss_mb'], 0)} MB vs {fmt(api['scheduler_rss_mb'], 0)} MB | "
                    f"{'yes' if api['extender_rss_mb'] <= api['scheduler_rss_mb'] else 'no'} |")
        ratio = api["extender_sync_seconds"] / api["scheduler_sync_seconds"]
        rows.append(f"| sync time ≤ 1.5× kube-scheduler's | {fmt(ratio, 2)}× | {'yes' if ratio <= 1.5 else 'no'} |")
    tp_runs = results.get("throughput") or []
    for tp in [tp_runs] if isinstance(tp_runs, dict) else tp_runs:  # one dict in older RESULTS.json files
        ratio = tp.get("ratio_median", tp["extender_pods_per_s"] / tp["alone_pods_per_s"])
        qps = f"client qps/burst {int(tp['qps'])} on both sides, " if "qps" in tp else ""
        lines += [f"## kube-scheduler throughput ({int(tp['nodes'])} nodes, {int(tp['pods'])} pods per run, "
                  f"{qps}median of {int(tp.get('runs', 1))} alternated runs each)", "",
                  "| | pods/s (median) | min–max |", "|---|---|---|",
                  f"| kube-scheduler alone | {fmt(tp['alone_pods_per_s'])} | "
                  f"{fmt(tp.get('alone_min'))}–{fmt(tp.get('alone_max'))} |",
                  f"| with the extender (filter + prioritize + bind, nodeCacheCapable) | "
                  f"{fmt(tp['extender_pods_per_s'])} | {fmt(tp.get('extender_min'))}–{fmt(tp.get('extender_max'))} |",
                  *([f"| with the earlier extender (--throughput-before) | {fmt(tp['before_pods_per_s'])} | "
                     f"{fmt(tp['before_min'])}–{fmt(tp['before_max'])} |"] if "before_pods_per_s" in tp else []),
                  *([f"| ours with the engine hollowed out (--throughput-hollow, bench/hollow.py) | "
                     f"{fmt(tp['hollow_pods_per_s'])} | {fmt(tp['hollow_min'])}–{fmt(tp['hollow_max'])} |"]
                    if "hollow_pods_per_s" in tp else []),
                  *([f"| the least a Python extender with a watch does (--throughput-floor, bench/floor_extender.py) | "
                     f"{fmt(tp['floor_pods_per_s'])} | {fmt(tp['floor_min'])}–{fmt(tp['floor_max'])} |"]
                    if "floor_pods_per_s" in tp else []),
                  *([f"| with an extender that does nothing (Go, tests/k8s/go/cmd/nullextender) | "
                     f"{fmt(tp['null_pods_per_s'])} | {fmt(tp['null_min'])}–{fmt(tp['null_max'])} |"]
                    if "null_pods_per_s" in tp else []),
                  "", f"With ÷ alone, median of the rounds' ratios: {fmt(100 * ratio, 0)}% "
                  f"({fmt(100 * tp.get('ratio_min', ratio), 0)}–{fmt(100 * tp.get('ratio_max', ratio), 0)}%)"
                  + (f"; the earlier extender {fmt(100 * tp['before_ratio_median'], 0)}% "
                     f"({fmt(100 * tp['before_ratio_min'], 0)}–{fmt(100 * tp['before_ratio_max'], 0)}%)"
                     if "before_ratio_median" in tp else "") + ".", ""]
        if "null_ratio_median" in tp:
            lines += [f"The extender that does nothing reached {fmt(100 * tp['null_ratio_median'], 0)}% "
                      f"({fmt(100 * tp['null_ratio_min'], 0)}–{fmt(100 * tp['null_ratio_max'], 0)}%) of alone: what "
                      "the extender protocol itself costs here (kube-scheduler's HTTP calls and JSON, and the "
                      "Binding), the ceiling the targets are set against. Ours reached "
                      f"{fmt(100 * ratio / tp['null_ratio_median'], 0)}% of that ceiling.", ""]
        if "null_ratio_median" in tp and "hollow_ratio_median" in tp:
            lines += [f"Ours with the engine hollowed out reached {fmt(100 * tp['hollow_ratio_median'], 0)}% of alone, "
                      f"{fmt(100 * tp['hollow_ratio_median'] / tp['null_ratio_median'], 0)}% of the do-nothing "
                      "extender: the most any engine behind this service reaches here.", ""]
        if "null_ratio_median" in tp and "floor_ratio_median" in tp:
            lines += [f"The Python floor (bench/floor_extender.py) reached "
                      f"{fmt(100 * tp['floor_ratio_median'], 0)}% of alone, "
                      f"{fmt(100 * tp['floor_ratio_median'] / tp['null_ratio_median'], 0)}% of the do-nothing "
                      f"extender, and used {fmt(tp['floor_cpu_ms_per_pod'], 2)} ms of CPU per pod: the most a Python "
                      "extender that watches pods reaches here, and the least it spends.", ""]
        for key, who in (("extender", "The extender"), ("before", "The earlier extender"),
                         ("hollow", "The hollow service")):
            if f"{key}_cpu_ms_per_pod" in tp:
                lines += [f"{who} used {fmt(tp[f'{key}_cpu_ms_per_pod'], 2)} ms of CPU per pod; mean time in the "
                          "service per verb: " + ", ".join(
                              f"{verb} {fmt(tp.get(f'{key}_{verb}_mean_ms'), 1)} ms"
                              for verb in ("filter", "prioritize", "bind")) + ".", ""]
        if "null_cpu_ms_per_pod" in tp:
            lines += [f"The extender that does nothing used {fmt(tp['null_cpu_ms_per_pod'], 2)} ms of CPU per pod (its "
                      "HTTP, JSON and Binding alone).", ""]
        if int(tp["nodes"]) == 500:
            ceiling = (f" (an extender doing nothing: {fmt(100 * tp['null_ratio_median'], 0)}%)"
                       if "null_ratio_median" in tp else "")
            rows.append(f"| throughput with the extender ≥ 70% of without at {int(tp['nodes'])} nodes | "
                        f"{fmt(100 * ratio, 0)}%{ceiling} | {'yes' if ratio >= 0.7 else 'no'} |")
    lines += ["## Targets", "", TARGETS.format(rows="\n".join(rows)), ""]
    return "\n".join(lines) + "\n"


def sync_only(nodes: int, baseline: Path | None, rounds: int) -> int:
    """The apiserver sync part alone; its figures go to stdout as JSON."""
    workdir = Path(tempfile.mkdtemp(prefix="extender-bench-"))
    try:
        objects = generate(nodes)
        figures = {"nodes": nodes, "pods": sum(1 for o in objects if o["kind"] == "Pod"),
                   "loadavg_start": os.getloadavg()[1],
                   **apiserver_figures(objects, workdir, baseline=baseline, rounds=rounds)}
        figures["loadavg_end"] = os.getloadavg()[1]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(figures, indent=1))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run everything and write the report."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="fewer rounds, no ingest, apiserver sync or throughput runs (~5 min on 2 cores)")
    parser.add_argument("--sizes", help="comma-separated node counts (default 500,5000)")
    parser.add_argument("--rounds", type=int, help="alternated rounds per pod and mode (default 6; quick: 3)")
    parser.add_argument("--per-round", type=int, help="pods per side and kind in a round (default 5; quick: 3)")
    parser.add_argument("--no-apiserver", action="store_true", help="skip the sync and throughput runs")
    parser.add_argument("--only", choices=["sync", "throughput"],
                        help="run only this part: sync (the apiserver sync at the largest of --sizes, its figures "
                             "printed as JSON instead of the report) or throughput (kube-scheduler alone and with "
                             "the extender)")
    parser.add_argument("--baseline", type=Path,
                        help="with --only sync: a checkout of an earlier version, measured on the same apiserver")
    parser.add_argument("--sync-rounds", type=int, default=1, help="with --only sync: rounds of the three syncs")
    parser.add_argument("--out", default=str(ROOT / "bench" / "RESULTS.md"))
    parser.add_argument("--beside", type=Path, help="the RESULTS.json of an earlier run, to show its ratios too")
    parser.add_argument("--throughput-sizes", default="500,5000",
                        help="comma-separated node counts for the throughput runs (default 500,5000)")
    parser.add_argument("--throughput-pods", type=int, default=1000, help="pods per throughput run (default 1000)")
    parser.add_argument("--throughput-rounds", type=int, default=3,
                        help="alternated rounds (alone, with) per size (default 3)")
    parser.add_argument("--throughput-before", type=Path,
                        help="a directory holding an earlier checkout's extender package (e.g. from git archive), "
                             "measured as a third side of every throughput round")
    parser.add_argument("--throughput-hollow", action="store_true",
                        help="measure our service with the engine's work left out (bench/hollow.py) as another side "
                             "of every throughput round: the ceiling of any engine behind this service")
    parser.add_argument("--throughput-floor", action="store_true",
                        help="measure bench/floor_extender.py (the verbs on httptools, the Binding POST, the Pod watch "
                             "counted, nothing else) as another side of every throughput round: the least a Python "
                             "extender with a watch spends")
    parser.add_argument("--report-only", type=Path,
                        help="rewrite the report from this RESULTS.json instead of measuring")
    args = parser.parse_args(argv)
    beside = json.loads(args.beside.read_text()) if args.beside else None
    if args.report_only:
        Path(args.out).write_text(report(json.loads(args.report_only.read_text()), args, beside))
        return 0
    sizes = [int(s) for s in (args.sizes or "500,5000").split(",")]
    if args.only == "sync":
        return sync_only(max(sizes), args.baseline, args.sync_rounds)
    rounds = args.rounds or (3 if args.quick else 6)
    per_round = args.per_round or (3 if args.quick else 5)
    results: dict[str, Any] = {"sizes": {}, "quick": args.quick, "loadavg_start": os.getloadavg()[1],
                               "generated": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    workdir = Path(tempfile.mkdtemp(prefix="extender-bench-"))
    binary = oracle_binary()
    try:
        for size in [] if args.only else sizes:
            log(f"{size} nodes: generating")
            objects = generate(size)
            dump = workdir / f"cluster-{size}.json"
            dump.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
            figures: dict[str, Any] = {"pods": sum(1 for o in objects if o["kind"] == "Pod")}
            log(f"{size} nodes: Go framework and service, alternated")
            figures["service"] = compared_figures(dump, objects, binary, rounds, per_round,
                                                  2 if args.quick else 5)
            if not args.quick:
                log(f"{size} nodes: ingest")
                figures["ingest"] = ingest_figures(objects)
            results["sizes"][size] = figures
            del objects
            gc.collect()
        if not (args.no_apiserver or args.quick or args.only):
            sync_nodes = max(sizes)
            log(f"apiserver sync with {sync_nodes} nodes")
            objects = generate(sync_nodes)
            results["apiserver"] = {"nodes": sync_nodes, "pods": sum(1 for o in objects if o["kind"] == "Pod"),
                                    **apiserver_figures(objects, workdir)}
            del objects
        if args.only == "throughput" or not (args.no_apiserver or args.quick):
            results["throughput"] = []
            for nodes in (int(n) for n in args.throughput_sizes.split(",")):
                log(f"throughput at {nodes} nodes")
                results["throughput"].append(throughput_figures(nodes, args.throughput_pods, workdir,
                                                                args.throughput_rounds,
                                                                before=args.throughput_before,
                                                                hollow=args.throughput_hollow,
                                                                floor=args.throughput_floor))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    results["loadavg_end"] = os.getloadavg()[1]
    Path(args.out).write_text(report(results, args, beside))
    (Path(args.out).with_suffix(".json")).write_text(json.dumps(results, indent=1, default=str))
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
