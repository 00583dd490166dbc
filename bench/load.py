"""A bounded load generator for the extender: concurrent keep-alive clients for a fixed time, mixed verbs.

Each of ``--concurrency`` workers holds one keep-alive connection and, until ``--duration`` seconds have
passed, sends what kube-scheduler sends with ``nodeCacheCapable: true``: ``filter`` and ``prioritize`` with
every node's name, and now and then (``--binds`` in all, each a distinct pod) a filter followed by a
``bind`` of that pod to a node the filter kept. It prints the count, error count and latency percentiles
per verb and exits 1 if any request failed. Latencies are measured from the client, so they include
Python's own HTTP client on the same cores: read them as an upper bound of the service's.

    python bench/load.py                         # starts `extender serve` on the demo cluster, 10 s
    python bench/load.py --duration 60           # a longer run
    python bench/load.py --url http://127.0.0.1:8888 --cluster config/demo-cluster.yaml

Only loopback URLs are accepted: this is a load generator, and it aims at a service on this machine.
The request loop is bounded by time and by the bind budget, and stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import ipaddress
import json
import os
import random
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

REPO = Path(__file__).resolve().parents[1]
DEMO_CLUSTER = REPO / "config" / "demo-cluster.yaml"
VERBS = ("filter", "prioritize", "bind")
MAX_ERRORS_KEPT = 20


@dataclass
class VerbStats:
    """Latencies (seconds) and failures of one verb."""

    latencies: list[float] = field(default_factory=list)
    errors: int = 0

    @property
    def count(self) -> int:
        """Requests sent, failed or not."""
        return len(self.latencies) + self.errors

    def percentile(self, q: float) -> float:
        """The q-th percentile (0..100) of the successful requests' latencies, nearest rank; 0 if none."""
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 100))))
        return ordered[rank - 1]


@dataclass
class Report:
    """What one run measured."""

    duration: float
    concurrency: int
    verbs: dict[str, VerbStats]
    samples: list[str]  # the first few error messages

    @property
    def errors(self) -> int:
        """Failed requests over every verb."""
        return sum(s.errors for s in self.verbs.values())

    @property
    def requests(self) -> int:
        """Requests over every verb."""
        return sum(s.count for s in self.verbs.values())

    def table(self) -> str:
        """A readable summary: one line per verb, latencies in milliseconds."""
        lines = [f"{self.requests} requests in {self.duration:.1f} s from {self.concurrency} keep-alive clients "
                 f"({self.requests / self.duration:.0f} req/s), {self.errors} errors",
                 f"{'verb':<11}{'requests':>9}{'errors':>8}{'req/s':>8}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}"
                 f"{'max ms':>9}"]
        for verb, s in self.verbs.items():
            lines.append(f"{verb:<11}{s.count:>9}{s.errors:>8}{s.count / self.duration:>8.0f}"
                         f"{s.percentile(50) * 1e3:>9.2f}{s.percentile(90) * 1e3:>9.2f}"
                         f"{s.percentile(99) * 1e3:>9.2f}{max(s.latencies, default=0) * 1e3:>9.2f}")
        lines += [f"  error: {m}" for m in self.samples]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """The figures as JSON-ready data."""
        return {"duration_seconds": round(self.duration, 3), "concurrency": self.concurrency,
                "requests": self.requests, "errors": self.errors, "error_samples": self.samples,
                "verbs": {v: {"requests": s.count, "errors": s.errors,
                              **{f"p{q}_ms": round(s.percentile(q) * 1e3, 3) for q in (50, 90, 99)}}
                          for v, s in self.verbs.items()}}


def node_names(cluster: Path) -> list[str]:
    """The names of the Nodes in a dump (a List, multi-document YAML, or a directory of them)."""
    files = sorted(p for p in cluster.rglob("*") if p.suffix in (".yaml", ".yml", ".json")) if cluster.is_dir() \
        else [cluster]
    names: list[str] = []
    for path in files:
        for doc in yaml.safe_load_all(path.read_text()):
            for obj in (doc or {}).get("items") or [doc or {}]:
                if isinstance(obj, dict) and obj.get("kind") == "Node":
                    names.append(str(obj["metadata"]["name"]))
    if not names:
        raise SystemExit(f"load: no Node in {cluster}")
    return names


def pod(name: str, uid: str, cpu: str, memory: str, tolerate: bool) -> dict[str, Any]:
    """A one-container pod in namespace ``load``."""
    spec: dict[str, Any] = {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if tolerate:
        spec["tolerations"] = [{"operator": "Exists", "effect": "NoSchedule"}]
    return {"metadata": {"name": name, "namespace": "load", "uid": uid, "labels": {"app": name.rsplit("-", 1)[0]}},
            "spec": spec}


# Pods like a few ReplicaSets' replicas: what kube-scheduler sends most.
TEMPLATES = [("web", "100m", "128Mi", False), ("api", "500m", "512Mi", False), ("batch", "2", "2Gi", True),
             ("cache", "250m", "1Gi", False)]


def check_loopback(url: str) -> None:
    """Refuse any target that is not this machine's loopback."""
    host = httpx.URL(url).host
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise SystemExit(f"load: {url} is not a loopback address; this generator only targets 127.0.0.0/8 or ::1")


class Load:
    """One run: the shared bind budget, the stats, and the workers."""

    def __init__(self, url: str, names: Sequence[str], *, concurrency: int, duration: float, binds: int,
                 verify: ssl.SSLContext | bool, seed: int) -> None:
        check_loopback(url)
        self.url = url.rstrip("/")
        self.names = list(names)
        self.concurrency = concurrency
        self.duration = duration
        self.binds = binds
        self.bind_due: collections.deque[float] = collections.deque()
        self.verify = verify
        self.seed = seed
        self.stats = {verb: VerbStats() for verb in VERBS}
        self.samples: list[str] = []

    def fail(self, verb: str, message: str) -> None:
        """Count one failure, keeping the first few messages."""
        self.stats[verb].errors += 1
        if len(self.samples) < MAX_ERRORS_KEPT:
            self.samples.append(f"{verb}: {message}")

    async def call(self, client: httpx.AsyncClient, verb: str, body: dict[str, Any]) -> Any:
        """POST one verb; record its latency or its failure; the decoded answer, or None on failure."""
        started = time.perf_counter()
        try:
            response = await client.post(f"/{verb}", content=json.dumps(body).encode(),
                                         headers={"content-type": "application/json"})
        except httpx.HTTPError as err:
            self.fail(verb, f"{type(err).__name__}: {err}")
            return None
        elapsed = time.perf_counter() - started
        if response.status_code != 200:
            self.fail(verb, f"HTTP {response.status_code}: {response.text[:200]}")
            return None
        answer = response.json()
        problem = self.problem(verb, answer, body)
        if problem:
            self.fail(verb, problem)
            return None
        self.stats[verb].latencies.append(elapsed)
        return answer

    def problem(self, verb: str, answer: Any, body: dict[str, Any]) -> str:
        """Why an HTTP 200 answer is still wrong ('' when it is right)."""
        if verb == "prioritize":
            if not isinstance(answer, list) or len(answer) != len(body["NodeNames"]):
                return f"expected one score per node, got {str(answer)[:200]}"
            bad = [a for a in answer if not 0 <= a.get("Score", -1) <= 10 or a.get("Host") not in self.names]
            return f"scores out of 0..10 or unknown hosts: {bad[:3]}" if bad else ""
        if not isinstance(answer, dict) or answer.get("Error"):
            return f"Error: {str(answer)[:200]}"
        if verb == "filter":
            kept = answer.get("NodeNames") or []
            failed = {**(answer.get("FailedNodes") or {}), **(answer.get("FailedAndUnresolvableNodes") or {})}
            if sorted([*kept, *failed]) != sorted(body["NodeNames"]):
                return "filter answer does not account for every node sent"
        return ""

    async def worker(self, index: int, deadline: float) -> None:
        """Send requests on one keep-alive connection until the deadline."""
        rng = random.Random(self.seed * 1000 + index)
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        async with httpx.AsyncClient(base_url=self.url, verify=self.verify, limits=limits, timeout=30) as client:
            sequence = 0
            while (now := time.monotonic()) < deadline:
                sequence += 1
                if self.bind_due and now >= self.bind_due[0]:
                    self.bind_due.popleft()
                    await self.filter_then_bind(client, f"{index}-{sequence}")
                    continue
                name, cpu, memory, tolerate = rng.choice(TEMPLATES)
                replica = f"{name}-{rng.randrange(1000)}"
                body = {"Pod": pod(replica, f"uid-{replica}", cpu, memory, tolerate), "NodeNames": self.names,
                        "Nodes": None}
                await self.call(client, "filter" if rng.random() < 0.5 else "prioritize", body)

    async def filter_then_bind(self, client: httpx.AsyncClient, suffix: str) -> None:
        """What kube-scheduler does for one pod when bindVerb is set: filter, then bind to a kept node."""
        name = f"bound-{suffix}"
        body = {"Pod": pod(name, f"uid-{name}", "10m", "16Mi", True), "NodeNames": self.names, "Nodes": None}
        answer = await self.call(client, "filter", body)
        if answer is None:
            self.fail("bind", f"{name}: its filter failed")
            return
        if not answer.get("NodeNames"):
            self.fail("bind", f"{name}: no node passed the filter")
            return
        await self.call(client, "bind", {"PodName": name, "PodNamespace": "load", "PodUID": f"uid-{name}",
                                         "Node": answer["NodeNames"][0]})

    async def run(self) -> Report:
        """All workers for the duration, then the report."""
        started = time.monotonic()
        deadline = started + self.duration
        # Binds spread evenly over the run, each taken by whichever worker comes next.
        self.bind_due.extend(started + self.duration * (i + 0.5) / self.binds for i in range(self.binds))
        await asyncio.gather(*(self.worker(i, deadline) for i in range(self.concurrency)))
        # Any bind not yet sent (a run too short for its budget) goes now: every run binds its budget.
        async with httpx.AsyncClient(base_url=self.url, verify=self.verify, timeout=30) as client:
            extra = 0
            while self.bind_due:
                self.bind_due.popleft()
                extra += 1
                await self.filter_then_bind(client, f"final-{extra}")
        return Report(time.monotonic() - started, self.concurrency, self.stats, self.samples)


def run_load(url: str, names: Sequence[str], *, concurrency: int = 64, duration: float = 10.0, binds: int = 32,
             verify: ssl.SSLContext | bool = True, seed: int = 1) -> Report:
    """Run the load against a running service and return the report."""
    load = Load(url, names, concurrency=concurrency, duration=duration, binds=binds, verify=verify, seed=seed)
    return asyncio.run(load.run())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_service(cluster: Path, extra: Sequence[str] = ()) -> tuple[subprocess.Popen[bytes], str]:
    """``extender serve`` on a free loopback port, waited for until ready."""
    port = _free_port()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.setdefault("EXTENDER_LOG_LEVEL", "warning")
    proc = subprocess.Popen([sys.executable, "-m", "extender", "serve", "--host", "127.0.0.1", "--port", str(port),
                             "--cluster", str(cluster), *extra], env=env, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("load: the service did not become ready")
        time.sleep(0.1)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run, print the table (or JSON), exit 1 on any error."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--url", help="a running service (loopback only); default: start one on --cluster")
    p.add_argument("--cluster", type=Path, default=DEMO_CLUSTER, help="the dump whose node names to send")
    p.add_argument("--duration", type=float, default=10.0, help="seconds of load (default 10)")
    p.add_argument("--concurrency", type=int, default=64, help="keep-alive clients (default 64)")
    p.add_argument("--binds", type=int, default=32, help="distinct pods to bind over the run (default 32)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)
    if not 0 < args.duration <= 3600 or not 0 < args.concurrency <= 1024 or args.binds < 0:
        p.error("--duration must be in (0, 3600], --concurrency in 1..1024, --binds >= 0")
    names = node_names(args.cluster)
    proc = None
    url = args.url
    if url is None:
        proc, url = start_service(args.cluster)
    try:
        report = run_load(url, names, concurrency=args.concurrency, duration=args.duration, binds=args.binds,
                          seed=args.seed)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
    print(json.dumps(report.as_dict(), indent=1) if args.json else report.table())
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
