"""Health under attack: each hostile load of issue 25 against a real ``extender serve``, probed as kubelet does.

Starts two services on the demo cluster, each with a plain health port (``--health-port``): one serving the
verbs in plain HTTP on loopback (the sidecar layout) and one serving them over mutual TLS (the standalone
layout). Then runs each attack for ``--seconds`` while a separate prober process opens a fresh connection to
the health port every 20 ms and alternates ``GET /healthz`` and ``GET /readyz`` (timeout 3 s; anything but a
200 in time is a failure):

- ``none``: no attack, the baseline;
- ``placements``: 10 clients looping the hostile multi-cluster placements of tests/ops/test_ops_multicluster.py
  (2,147,483,647 replicas by static weights, 300 affinity terms over 2,000 clusters, a region search over
  2,000 regions, 6,000 clusters, a non-string kind), each checked for its expected status, while one
  kube-scheduler-shaped client sends ``/filter`` (its latencies are reported too);
- ``tls-flood``: ``--flood-sockets`` sockets to the TLS port that never send a ClientHello, opened at once,
  then 200 that send half a ClientHello; the service's open descriptors are sampled every 10 ms (peak
  against ``--max-connections``, 512) and read again once the flood is closed; an mTLS client must still
  get in;
- ``health-idle``: ``--health-idle`` idle sockets on the health port (its cap is 64), one more every 20 ms;
- ``pod-flood``: two clients sending distinct ~80 KB pods through ``/filter`` (the body of
  tests/ops/test_ops_memory.py), the service's RSS before and after;
- ``clients-64``: ``bench/load.py`` in its own process, 64 keep-alive clients on filter and prioritize;
- ``head-stream``, ``body-hold``, ``decode-bomb``: the memory attacks of the third round (4 clients streaming
  request heads without end, 20 connections holding 249 MiB bodies they never finish, 2 clients posting 100 MB
  of ``0,0,0,...``), each with the service's RSS before, at its peak and after, and its answers' statuses.

    python -m bench.attacks                          # every attack, 10 s each
    python -m bench.attacks --only tls-flood --flood-sockets 10000 --json

Prints one row per attack and probed path (count, p50, p99, max, failures) and each attack's own figures:
the verbs' answers as the service itself timed them (its /metrics, before and after), and the machine's count
of SYNs dropped at full listen queues (a probe whose SYN was dropped waits a second for its retransmission).
Everything runs on this machine, client and service sharing its cores: read the figures as an upper bound.
The prober runs in a session of its own, so that the kernel's per-session CPU shares (autogroups) do not make
it wait behind the attack's clients, which a kubelet on another machine would not.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "ops"))
sys.path.insert(0, str(REPO / "tests" / "e2e"))

import httpx  # noqa: E402
from controlplane import free_port  # noqa: E402
from ops_support import (  # noqa: E402
    Peak,
    Pki,
    Service,
    make_pki,
    open_fds,
    open_idle_sockets,
    oversized_head,
    probe,
    raise_fd_limit,
    read_until_closed,
    send_until_answered,
    settled_fds,
    summary,
)
from test_ops_memory import distinct_pod_template, rss_bytes  # noqa: E402
from test_ops_multicluster import FILTER_BODY, hostile_bodies  # noqa: E402

PROBE_PATHS = ("/healthz", "/readyz")
PROBE_INTERVAL = 0.02
PROBE_TIMEOUT = 3.0
CAP = 512  # the services' --max-connections (the default)
HEAD_TIMEOUT = 10.0  # their --head-timeout (the default): a connection's handshake and first head, from accept
PARTIAL_HELLO = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"  # a ClientHello's first bytes, then nothing
JSON_HEADERS = {"content-type": "application/json"}


# --------------------------------------------------------------------------- the prober, in its own process


def _probe_loop(port: int, stop: Any, results: Connection) -> None:
    """Say "ready", probe until ``stop`` is set, then send back {path: [latency, ...]} and the failures. The
    prober leaves this session first: the kernel shares CPU time between sessions (autogroups), and the
    attack's clients here must not delay the probes as they would not delay a kubelet."""
    with contextlib.suppress(OSError):
        os.setsid()
    results.send("ready")
    latencies: dict[str, list[float]] = {path: [] for path in PROBE_PATHS}
    failures: list[str] = []
    turn = 0
    while not stop.is_set():
        path = PROBE_PATHS[turn % len(PROBE_PATHS)]
        turn += 1
        try:
            latencies[path].append(probe(port, path, timeout=PROBE_TIMEOUT))
        except (OSError, AssertionError) as err:
            failures.append(f"{path}: {err!r}"[:200])
        time.sleep(PROBE_INTERVAL)
    results.send((latencies, failures))
    results.close()


@contextlib.contextmanager
def probing(port: int) -> Iterator[dict[str, Any]]:
    """Probe the health port from another process (so that the attack's threads here do not slow the prober)
    for the duration of the block; the figures are in the yielded dict afterwards."""
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_probe_loop, args=(port, stop, sender), daemon=True)
    process.start()
    figures: dict[str, Any] = {}
    if not receiver.poll(120) or receiver.recv() != "ready":
        process.kill()
        raise RuntimeError("the prober did not start")
    try:
        yield figures
    finally:
        stop.set()
        latencies, failures = receiver.recv() if receiver.poll(30) else ({}, ["the prober did not answer"])
        process.join(10)
        if process.is_alive():
            process.kill()
        figures["probes"] = {path: summary(values) for path, values in latencies.items()}
        figures["failures"] = failures


def verb_totals(target: Target) -> dict[str, tuple[float, float]]:
    """Per verb, the service's own count of answered requests and their total seconds (from /metrics)."""
    text = httpx.get(f"http://127.0.0.1:{target.health}/metrics", timeout=30).text
    totals: dict[str, list[float]] = {}
    for line in text.splitlines():
        for suffix, slot in (("_count", 0), ("_sum", 1)):
            if line.startswith(f"extender_request_duration_seconds{suffix}{{"):
                verb = line.split('verb="', 1)[1].split('"', 1)[0]
                totals.setdefault(verb, [0.0, 0.0])[slot] += float(line.rsplit(" ", 1)[1])
    return {verb: (count, seconds) for verb, (count, seconds) in totals.items()}


def served_since(target: Target, before: dict[str, tuple[float, float]]) -> dict[str, Any]:
    """Requests the service answered per verb since ``before``, and their mean time as it measured them."""
    out: dict[str, Any] = {}
    for verb, (count, seconds) in verb_totals(target).items():
        done = count - before.get(verb, (0.0, 0.0))[0]
        if done:
            spent = seconds - before.get(verb, (0.0, 0.0))[1]
            out[verb] = {"answered": int(done), "mean_ms": round(spent / done * 1e3, 2)}
    return out


def listen_drops() -> int:
    """The machine's count of SYNs dropped because a listen queue was full (TcpExt ListenDrops), for
    telling a probe that waited for a SYN retransmission (1 s) from one the service was slow to answer."""
    lines = Path("/proc/net/netstat").read_text().splitlines()
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:"):
            return int(dict(zip(names.split(), values.split(), strict=True)).get("ListenDrops", 0))
    return 0


# --------------------------------------------------------------------------- the attacks


@dataclass
class Target:
    """A running service and its health port."""

    service: Service
    health: int

    @property
    def pid(self) -> int:
        assert self.service.process is not None
        return int(self.service.process.pid)


@dataclass
class Targets:
    """The plain service (sidecar layout) and the mutual-TLS one (standalone layout)."""

    plain: Target
    tls: Target
    seconds: float
    flood_sockets: int
    health_idle: int


def for_a_while(loops: list[Callable[[], None]], seconds: float, stop: threading.Event) -> None:
    """Run each of ``loops`` in a thread of its own for ``seconds``, then set ``stop`` and wait for them."""
    threads = [threading.Thread(target=loop, daemon=True) for loop in loops]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join(60)


def attack_none(targets: Targets) -> tuple[Target, Callable[[], dict[str, Any]]]:
    def run() -> dict[str, Any]:
        time.sleep(targets.seconds)
        return {}

    return targets.plain, run


def attack_placements(targets: Targets) -> tuple[Target, Callable[[], dict[str, Any]]]:
    service = targets.plain.service
    bodies = hostile_bodies()

    def run() -> dict[str, Any]:
        stop = threading.Event()
        filters: list[float] = []
        filter_failures: list[str] = []
        answers: dict[str, collections.Counter[int]] = {name: collections.Counter() for name in bodies}
        wrong: list[str] = []

        def kube_scheduler() -> None:
            with httpx.Client(base_url=service.url, timeout=10) as client:
                while not stop.is_set():
                    started = time.perf_counter()
                    answer = client.post("/filter", content=FILTER_BODY, headers=JSON_HEADERS)
                    filters.append(time.perf_counter() - started)
                    if answer.status_code != 200:
                        filter_failures.append(f"{answer.status_code} {answer.text[:200]}")
                    time.sleep(0.005)

        def attacker() -> None:
            with httpx.Client(base_url=service.url, timeout=30) as client:
                while not stop.is_set():
                    for name, (body, want) in bodies.items():
                        status = client.post("/multicluster/schedule", content=body, headers=JSON_HEADERS).status_code
                        answers[name][status] += 1
                        if status not in (want, 503):  # 503: the placement queue was full, as designed
                            wrong.append(f"{name}: {status}")

        before = verb_totals(targets.plain)
        for_a_while([kube_scheduler] + [attacker] * 10, targets.seconds, stop)
        return {"filter": summary(filters), "filter_failures": len(filter_failures), "wrong_status": wrong[:5],
                "service_side": served_since(targets.plain, before),
                "placements": {name: dict(codes) for name, codes in answers.items()}}

    return targets.plain, run


def attack_tls_flood(targets: Targets) -> tuple[Target, Callable[[], dict[str, Any]]]:
    target = targets.tls

    def run() -> dict[str, Any]:
        pid = target.pid
        baseline = settled_fds(pid)
        limit = raise_fd_limit(targets.flood_sockets + 1024)
        count = min(targets.flood_sockets, limit - 1024)
        with Peak(pid) as fds:
            started = time.perf_counter()
            flood = open_idle_sockets(target.service.port, count)
            opened = time.perf_counter() - started
            partial: list[socket.socket] = []
            try:
                time.sleep(max(0.0, targets.seconds / 2 - opened))
                partial = open_idle_sockets(target.service.port, 200)
                time.sleep(0.5)
                for sock in partial:
                    with contextlib.suppress(OSError):
                        sock.send(PARTIAL_HELLO)
                client_started = time.perf_counter()
                with target.service.client() as client:
                    client_ok = client.get("/healthz").text == "ok"
                client_ms = round((time.perf_counter() - client_started) * 1e3, 1)
                time.sleep(max(0.0, targets.seconds / 2 - 0.5))
                during = open_fds(pid)
            finally:
                for sock in flood + partial:
                    sock.close()
            time.sleep(0.5)
        closed = time.perf_counter()
        after = settled_fds(pid, at_most=baseline + 8, within=2 * HEAD_TIMEOUT)
        figures = {"baseline": baseline, "peak": fds.peak, "at_end_of_flood": during, "after": after,
                   "after_s": round(time.perf_counter() - closed, 1), "cap": CAP}
        return {"sockets": count, "opened_s": round(opened, 2), "fds": figures,
                "mtls_client_ok": client_ok, "mtls_client_ms": client_ms}

    return target, run


def attack_health_idle(targets: Targets) -> tuple[Target, Callable[[], dict[str, Any]]]:
    target = targets.plain

    def run() -> dict[str, Any]:
        idle = open_idle_sockets(target.health, targets.health_idle)
        try:
            deadline = time.monotonic() + targets.seconds
            while time.monotonic() < deadline:
                idle += open_idle_sockets(target.health, 1)  # the attack goes on
                time.sleep(PROBE_INTERVAL)
        finally:
            for sock in idle:
                sock.close()
        return {"idle_sockets": len(idle)}

    return target, run


def attack_pod_flood(targets: Targets) -> tuple[Target, Callable[[], dict[str, Any]]]:
    target = targets.plain
    template = distinct_pod_template()

    def run() -> dict[str, Any]:
        before = rss_bytes(target.pid)
        stop = threading.Event()
        sent = [0, 0]
        failures: list[str] = []

        def flood(worker: int) -> None:
            with target.service.client(timeout=60) as client:
                while not stop.is_set():
                    i = sent[worker] * 2 + worker
                    answer = client.post("/filter", content=template.replace("UNIQ", f"a{time.time_ns()}x{i}"),
                                         headers=JSON_HEADERS)
                    sent[worker] += 1
                    if answer.status_code != 200 or answer.json()["Error"]:
                        failures.append(answer.text[:200])

        for_a_while([lambda: flood(0), lambda: flood(1)], targets.seconds, stop)
        return {"pods": sum(sent), "pod_kb": len(template) // 1024, "failures": len(failures),
                "rss_mib": [round(before / 2**20), round(rss_bytes(target.pid) / 2**20)]}

    return target, run


def _memory_attack(targets: Targets, client: Callable[[threading.Event, collections.Counter[str]], None],
                   clients: int) -> tuple[Target, Callable[[], dict[str, Any]]]:
    """``clients`` threads running ``client`` against the plain service for the attack's time: the answers'
    status lines counted, and the service's RSS before, at its peak (sampled every 10 ms) and 3 s after."""
    target = targets.plain

    def run() -> dict[str, Any]:
        before = rss_bytes(target.pid)
        stop = threading.Event()
        answers: collections.Counter[str] = collections.Counter()
        with Peak(target.pid, rss_bytes) as peak:
            for_a_while([lambda: client(stop, answers) for _ in range(clients)], targets.seconds, stop)
        time.sleep(3)  # the service closes what the clients left
        return {"answers": dict(answers), "rss_mib": {"before": round(before / 2**20), "peak": round(
            peak.peak / 2**20), "after": round(rss_bytes(target.pid) / 2**20)}}

    return target, run


def _status(answer: bytes) -> str:
    return answer.split(b"\r\n", 1)[0].decode("latin-1")[9:12] if answer else "closed"


def attack_head_stream(targets: Targets) -> tuple[Target, Callable[[], dict[str, Any]]]:
    """4 clients, each connection streaming header lines without end (before the limit, one such connection
    made the service hold 3 GB in 8 s)."""
    port = targets.plain.service.port

    def client(stop: threading.Event, answers: collections.Counter[str]) -> None:
        while not stop.is_set():
            with socket.create_connection(("127.0.0.1", port)) as sock:
                answers[_status(send_until_answered(sock, oversized_head(
                    b"POST /filter HTTP/1.1\r\nHost: x\r\n"), piece=65536))] += 1

    return _memory_attack(targets, client, 4)


def attack_body_hold(targets: Targets) -> tuple[Target, Callable[[], dict[str, Any]]]:
    """20 connections at a time, each declaring a body of 249 MiB and sending it as fast as it is taken,
    never finishing it (before the budget, twenty made the service hold 5 GB)."""
    port = targets.plain.service.port
    size = 249 * 2**20

    def client(stop: threading.Event, answers: collections.Counter[str]) -> None:
        while not stop.is_set():
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n" % size)
                sent, chunk = 0, b" " * 2**20
                sock.settimeout(0.5)
                while not stop.is_set() and sent < size - len(chunk):
                    try:
                        sock.sendall(chunk)
                        sent += len(chunk)
                    except TimeoutError:
                        continue  # its buffers are full: the service holds it, or reads no more of it
                    except OSError:
                        break
                answers[_status(read_until_closed(sock, 1))] += 1

    return _memory_attack(targets, client, 20)


def attack_decode_bomb(targets: Targets) -> tuple[Target, Callable[[], dict[str, Any]]]:
    """2 clients posting 100 MB filter bodies of ``0,0,0,...`` (before the estimate, 200 MB of it made the
    service peak at 7.5 GB)."""
    body = b'{"Pod":{"metadata":{"name":"a"}},"Nodes":{"items":[' + b"0," * (50 * 2**20) + b'0]}}'

    def client(stop: threading.Event, answers: collections.Counter[str]) -> None:
        with targets.plain.service.client(timeout=120) as http:
            while not stop.is_set():
                answers[str(http.post("/filter", content=body, headers=JSON_HEADERS).status_code)] += 1

    return _memory_attack(targets, client, 2)


def attack_clients_64(targets: Targets) -> tuple[Target, Callable[[], dict[str, Any]]]:
    target = targets.plain

    def run() -> dict[str, Any]:
        before = verb_totals(target)
        load = subprocess.run([sys.executable, str(REPO / "bench" / "load.py"), "--url", target.service.url,
                               "--duration", str(targets.seconds), "--concurrency", "64", "--binds", "0", "--json"],
                              capture_output=True, text=True, cwd=REPO, timeout=targets.seconds + 120)
        report = json.loads(load.stdout)
        verbs = report.get("verbs", {})
        return {"requests": report.get("requests"), "errors": report.get("errors"),
                "service_side": served_since(target, before),
                "verbs": {verb: {k: v for k, v in figures.items() if k in ("requests", "p50_ms", "p99_ms")}
                          for verb, figures in verbs.items() if isinstance(figures, dict)}}

    return target, run


ATTACKS: dict[str, Callable[[Targets], tuple[Target, Callable[[], dict[str, Any]]]]] = {
    "none": attack_none,
    "placements": attack_placements,
    "tls-flood": attack_tls_flood,
    "health-idle": attack_health_idle,
    "pod-flood": attack_pod_flood,
    "clients-64": attack_clients_64,
    "head-stream": attack_head_stream,
    "body-hold": attack_body_hold,
    "decode-bomb": attack_decode_bomb,
}


# --------------------------------------------------------------------------- the services and the run


@contextlib.contextmanager
def services(workdir: Path, pki: Pki) -> Iterator[tuple[Target, Target]]:
    """The plain and the mutual-TLS service, each with a health port, for the duration of the block."""
    started: list[Service] = []
    try:
        targets = []
        for tls in (False, True):
            health = free_port()
            args = ["--log-level", "warning", "--health-port", str(health), "--health-host", "127.0.0.1"]
            if tls:
                args += ["--tls-cert-file", str(pki.server.cert), "--tls-key-file", str(pki.server.key),
                         "--client-ca-file", str(pki.ca)]
            service = Service(workdir, args, tls=pki.client_context(pki.client) if tls else None)
            started.append(service)
            targets.append(Target(service.start(timeout=120), health))
        yield targets[0], targets[1]
    finally:
        for service in started:
            service.stop()


def load_average() -> str:
    """The machine's 1-minute load average and core count, for the record."""
    return f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def run(names: list[str], seconds: float, flood_sockets: int, health_idle: int) -> list[dict[str, Any]]:
    """Each named attack in turn; one result per attack."""
    results = []
    with tempfile.TemporaryDirectory(prefix="extender-attacks-") as tmp:
        workdir = Path(tmp)
        with services(workdir, make_pki(workdir / "pki")) as (plain, tls):
            targets = Targets(plain, tls, seconds, flood_sockets, health_idle)
            for name in names:
                target, attack = ATTACKS[name](targets)
                load_before, drops = load_average(), listen_drops()
                with probing(target.health) as figures:
                    figures.update(attack=attack())
                results.append({"name": name, "load_before": load_before, "load_after": load_average(),
                                "listen_drops": listen_drops() - drops, **figures})
                print(f"{name}: done ({load_before})", file=sys.stderr, flush=True)
    return results


def table(results: list[dict[str, Any]]) -> str:
    """One row per attack and probed path, then each attack's own figures."""
    rows = ["| attack | probe | count | p50 ms | p99 ms | max ms | failures |", "|---|---|---|---|---|---|---|"]
    for result in results:
        for path, figures in result["probes"].items():
            rows.append(f"| {result['name']} | {path} | {figures.get('count', 0)} | {figures.get('p50_ms', '-')} | "
                        f"{figures.get('p99_ms', '-')} | {figures.get('max_ms', '-')} | {len(result['failures'])} |")
    rows.append("")
    for result in results:
        rows.append(f"- {result['name']} ({result['load_before']} before, {result['load_after']} after; "
                    f"SYNs dropped at full listen queues, machine-wide: {result.get('listen_drops', '?')}): "
                    f"{json.dumps(result['attack'])}")
        rows += [f"  - probe failure: {failure}" for failure in result["failures"][:5]]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Command line: run the attacks, print the table (or JSON); exit 1 if any probe failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--only", nargs="+", choices=list(ATTACKS), default=list(ATTACKS), help="these attacks")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds per attack (default 10)")
    parser.add_argument("--flood-sockets", type=int, default=5000, help="idle sockets in the TLS flood")
    parser.add_argument("--health-idle", type=int, default=150, help="idle sockets on the health port at first")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    if not 1 <= args.seconds <= 600 or not 1 <= args.flood_sockets <= 100_000 or args.health_idle < 1:
        parser.error("--seconds must be in 1..600, --flood-sockets in 1..100000, --health-idle >= 1")
    results = run(args.only, args.seconds, args.flood_sockets, args.health_idle)
    print(json.dumps(results, indent=1) if args.json else table(results))
    return 1 if any(result["failures"] for result in results) else 0


if __name__ == "__main__":
    sys.exit(main())
