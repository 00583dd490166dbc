"""Helpers for the end-to-end tests of the live cluster cache (``serve --kubeconfig``).

Composed from what ``controlplane.py`` offers, without changing it:

- :class:`LiveService`: our service on a kubeconfig (live list/watch cache, binds through the apiserver),
  with /readyz, /metrics and /filter helpers;
- :class:`InProcessSource`: ``extender.cluster.live.LiveSource`` run in a thread of this process, so the
  cache can be read exactly (per-node pod sets, aggregates, resourceVersions);
- :class:`SpareControlPlane`: a private etcd and kube-apiserver that can be killed and restarted, a second
  apiserver on the same etcd to write through while the first is down, and etcd compaction;
- :class:`ClusterView`: the state that matters to the cache, from a fresh LIST or from the cache, with
  an independent computation of the per-node requests;
- :func:`run_burst`: concurrent create/update/delete bursts of Nodes, Pods, Services, PVCs, Namespaces;
- :func:`wait_converged`: poll until every check reports no difference, or fail with the differences.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import os
import random
import re
import shutil
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from pathlib import Path
from typing import Any, TypeVar

import httpx
import yaml
from controlplane import REPO, ControlPlane, KubeClient, ManagedProcess, Obj, free_port, wait_until
from prometheus_client.parser import text_string_to_metric_families

from extender.cluster.cache import ClusterCache
from extender.cluster.dra_objects import DRA_KINDS
from extender.cluster.keys import object_key
from extender.cluster.live import LiveSource, resource_of, watched_kinds
from extender.cluster.reflector import Backoff
from extender.kube.release import Release, choose, release
from extender.kubeapi import config as kubeconfig_module
from extender.kubeapi.client import RESOURCES
from extender.kubeapi.client import KubeClient as ApiClient

T = TypeVar("T")



def apiserver_release(kube: KubeClient) -> Release:
    """The release a control plane runs (its /version), with upstream's default gates: which kinds its
    kube-scheduler and our service (kubernetesVersion auto) watch, and at which API version."""
    return release_of_version(kube.get("/version"))


def release_of_version(answer: Mapping[str, Any]) -> Release:
    """The release kubernetesVersion auto follows for an apiserver's /version answer (default gates)."""
    return release(choose(None, str(answer.get("gitVersion") or ""), source="apiserver",
                          reported_minor_field=str(answer.get("minor") or "")).minor)


def object_kinds(chosen: Release) -> list[str]:
    """The kinds other than Node and Pod that a release's live source watches."""
    return [k for k in watched_kinds(chosen) if k not in ("Node", "Pod")]


TERMINAL = ("Succeeded", "Failed")

# Our service's profile in these tests: the node-local plugins only, so that the answers depend on the
# cache's per-node aggregates and not on plugins other engineers are changing.
NODE_LOCAL_PROFILE: Obj = {
    "assumedPodTTLSeconds": 30,
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {
                    "enabled": [
                        {"name": "NodeUnschedulable"},
                        {"name": "NodeName"},
                        {"name": "TaintToleration", "weight": 3},
                        {"name": "NodeAffinity", "weight": 2},
                        {"name": "NodePorts"},
                        {"name": "NodeResourcesFit", "weight": 1},
                        {"name": "NodeResourcesBalancedAllocation", "weight": 1},
                    ],
                    "disabled": [{"name": "*"}],
                }
            },
        }
    ],
}


# --------------------------------------------------------------------------- quantities (independent of extender)

_SUFFIXES = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")


def _quantity(text: str) -> Decimal:
    match = _QUANTITY.match(str(text))
    if match is None:
        raise ValueError(f"quantity {text!r}: not a form these tests use")
    number, suffix = Decimal(match.group(1)), match.group(2) or ""
    return number / 1000 if suffix == "m" else number * _SUFFIXES[suffix]


def milli_cpu(text: str) -> int:
    """CPU in millicores, rounded up as the scheduler does."""
    return int((_quantity(text) * 1000).to_integral_value(ROUND_CEILING))


def memory_bytes(text: str) -> int:
    """Memory in bytes, rounded up."""
    return int(_quantity(text).to_integral_value(ROUND_CEILING))


def pod_requests(pod: Mapping[str, Any]) -> tuple[int, int]:
    """(milli-CPU, memory bytes) a pod requests: the sum over its containers (no init containers here)."""
    spec = pod.get("spec") or {}
    if spec.get("initContainers") or spec.get("overhead") or spec.get("resources"):
        raise ValueError(f"pod {pod['metadata']['name']}: init containers, overhead or pod-level resources")
    cpu = mem = 0
    for container in spec.get("containers") or []:
        requests = (container.get("resources") or {}).get("requests") or {}
        cpu += milli_cpu(requests["cpu"]) if "cpu" in requests else 0
        mem += memory_bytes(requests["memory"]) if "memory" in requests else 0
    return cpu, mem


# --------------------------------------------------------------------------- the state the cache must mirror


def _rv(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


@dataclass
class ClusterView:
    """What the scheduler cache must hold, from the apiserver or read back from a cache.

    ``pods`` holds non-terminal pods (what kube-scheduler's pod informer sees); ``per_node`` lists the
    UIDs counted on each node, placeholders (nodes gone or never created, with pods) included, as a
    sorted list so that a pod counted twice shows.
    """

    nodes: dict[str, str] = field(default_factory=dict)  # name -> resourceVersion
    allocatable: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (milli-CPU, bytes)
    pods: dict[str, tuple[str, str]] = field(default_factory=dict)  # uid -> (nodeName or "", resourceVersion)
    per_node: dict[str, list[str]] = field(default_factory=dict)  # node -> sorted UIDs
    requested: dict[str, tuple[int, int]] = field(default_factory=dict)  # node -> (milli-CPU, bytes)
    objects: dict[str, dict[str, str]] = field(default_factory=dict)  # kind -> key -> resourceVersion
    assumed: int = 0

    @classmethod
    def from_api(cls, kube: KubeClient) -> ClusterView:
        """A fresh LIST of every kind the control plane's release watches, across namespaces."""
        view = cls()
        chosen = apiserver_release(kube)
        for node in kube.get(RESOURCES["Node"].path).get("items") or []:
            name = node["metadata"]["name"]
            view.nodes[name] = _rv(node)
            alloc = (node.get("status") or {}).get("allocatable") or {}
            view.allocatable[name] = (milli_cpu(alloc.get("cpu", "0")), memory_bytes(alloc.get("memory", "0")))
        selector = ",".join(f"status.phase!={p}" for p in TERMINAL)
        per_node: dict[str, list[str]] = {}
        requested: dict[str, tuple[int, int]] = {}
        for pod in kube.get(RESOURCES["Pod"].path, fieldSelector=selector).get("items") or []:
            uid, node = pod["metadata"]["uid"], (pod.get("spec") or {}).get("nodeName") or ""
            view.pods[uid] = (node, _rv(pod))
            if node:
                per_node.setdefault(node, []).append(uid)
                cpu, mem = pod_requests(pod)
                old = requested.get(node, (0, 0))
                requested[node] = (old[0] + cpu, old[1] + mem)
        view.per_node = {n: sorted(uids) for n, uids in per_node.items()}
        view.requested = {n: requested.get(n, (0, 0)) for n in set(per_node) | set(view.nodes)}
        for kind in object_kinds(chosen):
            items = kube.get(resource_of(kind, chosen).path).get("items") or []
            # DRA objects are kept as records without their resourceVersion: compared by key only.
            view.objects[kind] = {object_key(obj, kind): "" if kind in DRA_KINDS else _rv(obj) for obj in items}
        return view

    @classmethod
    def from_cache(cls, cache: ClusterCache) -> ClusterView:
        """The same, read from a cache (call on the cache's event loop thread)."""
        view = cls()
        for name in cache.node_names():
            info = cache.node_info(name)
            assert info is not None and info.node is not None
            view.nodes[name] = info.node.resource_version
            view.allocatable[name] = (info.allocatable.milli_cpu, info.allocatable.memory)
        for key in cache.keys("Pod"):
            pod = cache.get_pod(key)
            assert pod is not None
            view.pods[pod.uid] = (pod.node_name, _rv(pod.raw))
        view.assumed = cache.counts()["assumed_pods"]
        names = set(view.nodes) | {node for node, _ in view.pods.values() if node}
        for name in names:
            info = cache.node_info(name)
            if info is None:
                view.requested[name] = (0, 0)
                continue
            if info.pods:
                view.per_node[name] = sorted(p.uid for p in info.pods)
            view.requested[name] = (info.requested.milli_cpu, info.requested.memory)
        snapshot = cache.snapshot()
        for kind in object_kinds(cache.release):
            if kind in DRA_KINDS:
                view.objects[kind] = dict.fromkeys(cache.keys(kind), "")
                continue
            # The latest versions the cache holds; the snapshot holds the same objects, the version of each that
            # last changed something the engine reads (a controller's status update leaves it as it was).
            held = snapshot.objects.get(kind) or {}
            view.objects[kind] = {}
            for key in cache.keys(kind):
                obj = cache.get_object(kind, key)
                assert obj is not None and key in held, f"{kind} {key}: in the cache, not in its snapshot"
                view.objects[kind][key] = _rv(obj)
            extra = set(held) - set(view.objects[kind])
            assert not extra, f"{kind}: in the snapshot, not in the cache: {sorted(extra)[:5]}"
        return view

    def counts(self) -> dict[str, int]:
        """The counts the service's /readyz reports under ``cache``."""
        out = {
            "nodes": len(self.nodes),
            "placeholder_nodes": len(set(self.per_node) - set(self.nodes)),
            "assigned_pods": sum(1 for node, _ in self.pods.values() if node),
            "assumed_pods": self.assumed,
            "pending_pods": sum(1 for node, _ in self.pods.values() if not node),
        }
        out.update({kind: len(objs) for kind, objs in self.objects.items()})
        return out

    def diff(self, other: ClusterView, mine: str = "apiserver", theirs: str = "cache") -> list[str]:
        """Readable differences (empty when equal)."""
        out: list[str] = []

        def compare(what: str, a: Mapping[str, Any], b: Mapping[str, Any]) -> None:
            missing = sorted(set(a) - set(b))
            extra = sorted(set(b) - set(a))
            changed = sorted(k for k in set(a) & set(b) if a[k] != b[k])
            if missing:
                out.append(f"{what}: in {mine} only: {missing[:8]}{' ...' if len(missing) > 8 else ''}")
            if extra:
                out.append(f"{what}: in {theirs} only: {extra[:8]}{' ...' if len(extra) > 8 else ''}")
            for k in changed[:8]:
                out.append(f"{what}[{k}]: {mine} {a[k]} != {theirs} {b[k]}")

        compare("nodes", self.nodes, other.nodes)
        compare("allocatable", self.allocatable, other.allocatable)
        compare("pods", self.pods, other.pods)
        for node in sorted(set(self.per_node) | set(other.per_node)):
            a, b = Counter(self.per_node.get(node, [])), Counter(other.per_node.get(node, []))
            if a != b:
                out.append(f"pods on {node}: {len(b - a)} only in {theirs} {sorted(b - a)[:3]}, "
                           f"{len(a - b)} only in {mine} {sorted(a - b)[:3]}")
        compare("requested", self.requested, other.requested)
        for kind in sorted(set(self.objects) | set(other.objects)):
            compare(kind, self.objects.get(kind, {}), other.objects.get(kind, {}))
        if self.assumed != other.assumed:
            out.append(f"assumed pods: {mine} {self.assumed} != {theirs} {other.assumed}")
        return out


def wait_converged(
    kube: KubeClient,
    checks: Mapping[str, Callable[[ClusterView], list[str]]],
    timeout: float = 60.0,
    interval: float = 0.3,
) -> ClusterView:
    """Poll until every check finds no difference with a fresh LIST; return that LIST's view.

    On timeout, fail with each check's differences at the last attempt.
    """
    deadline = time.monotonic() + timeout
    while True:
        view = ClusterView.from_api(kube)
        diffs = {name: check(view) for name, check in checks.items()}
        if not any(diffs.values()):
            return view
        if time.monotonic() > deadline:
            report = "\n".join(f"  {name}: {d}" for name, ds in diffs.items() for d in ds[:12])
            raise AssertionError(f"the caches did not converge to the apiserver's state in {timeout:.0f}s:\n{report}")
        time.sleep(interval)


def poll(what: str, check: Callable[[], T | None], timeout: float, interval: float = 0.2) -> T:
    """Poll until ``check`` returns something other than None/False; return it."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while True:
        try:
            result = check()
            if result is not None and result is not False:
                return result
        except (httpx.HTTPError, OSError) as exc:
            last = exc
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}" + (f" ({last})" if last else ""))
        time.sleep(interval)


# --------------------------------------------------------------------------- our service on a kubeconfig


@dataclass
class LiveService:
    """``python -m extender serve --kubeconfig PATH`` on a free loopback port."""

    workdir: Path
    kubeconfig: Path
    config: Obj | None = None
    port: int = field(default_factory=free_port)
    process: ManagedProcess | None = None

    @property
    def url(self) -> str:
        """Base URL (the extender's urlPrefix)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> LiveService:
        """Start the service and wait until it serves /healthz (not until it is ready)."""
        argv = [sys.executable, "-m", "extender", "serve", "--host", "127.0.0.1", "--port", str(self.port),
                "--kubeconfig", str(self.kubeconfig)]
        if self.config is not None:
            cfg = self.workdir / f"extender-live-config-{self.port}.yaml"
            cfg.write_text(yaml.safe_dump(self.config, sort_keys=False))
            argv += ["--config", str(cfg)]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
        env.pop("EXTENDER_CLUSTER", None)
        self.process = ManagedProcess("extender-live", argv, self.workdir / f"extender-live-{self.port}.log",
                                      env=env, cwd=REPO)
        wait_until("extender /healthz", lambda: httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200,
                   timeout=timeout, interval=0.1, procs=[self.process])
        return self

    def stop(self) -> None:
        """Stop the service (SIGTERM, then SIGKILL)."""
        if self.process is not None:
            self.process.stop(timeout=10)

    def readyz(self) -> tuple[int, Obj]:
        """/readyz: status code and body."""
        r = httpx.get(f"{self.url}/readyz", timeout=5)
        return r.status_code, r.json()

    def wait_ready(self, timeout: float = 60.0) -> Obj:
        """Wait for /readyz 200; return its body."""
        assert self.process is not None
        self.process.check_alive()

        def ready() -> Obj | None:
            status, body = self.readyz()
            return body if status == 200 else None

        return poll("extender /readyz 200", ready, timeout)

    def metrics(self) -> list[tuple[str, dict[str, str], float]]:
        """Every sample of /metrics as (name, labels, value)."""
        text = httpx.get(f"{self.url}/metrics", timeout=5).text
        return [(s.name, dict(s.labels), float(s.value))
                for family in text_string_to_metric_families(text) for s in family.samples]

    def metric(self, name: str, **labels: str) -> float:
        """The sum of the samples of ``name`` whose labels include ``labels`` (0 when none)."""
        return sum(v for n, ls, v in self.metrics() if n == name and all(ls.get(k) == x for k, x in labels.items()))

    def filter(self, pod: Obj, names: Sequence[str]) -> Obj:
        """POST /filter with node names (nodeCacheCapable)."""
        r = httpx.post(f"{self.url}/filter", json={"Pod": pod, "NodeNames": list(names)}, timeout=10)
        r.raise_for_status()
        body: Obj = r.json()
        return body

    def probe(self, node: str, cpu_m: int, mem: int, name: str = "probe") -> str:
        """Filter a probe pod with these requests on one node: '' when it fits, else the reason."""
        requests = {"cpu": f"{cpu_m}m", "memory": str(mem)}
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "e2e-probe", "uid": f"probe-{name}"},
            "spec": {"containers": [{"name": "c", "image": "pause", "resources": {"requests": requests}}]},
        }
        answer = self.filter(pod, [node])
        if answer.get("Error"):
            raise AssertionError(f"/filter answered Error: {answer['Error']}")
        if node in (answer.get("NodeNames") or []):
            return ""
        failed = {**(answer.get("FailedNodes") or {}), **(answer.get("FailedAndUnresolvableNodes") or {})}
        return str(failed.get(node, "node not in the answer"))

    def diffs(self, view: ClusterView, probe: bool = True) -> list[str]:
        """How the service's cache differs from ``view``: /readyz counts, then per-node requests.

        Requests are read through /filter: a probe asking for exactly what the apiserver says is free on
        the node must fit, and one asking 1m CPU and 1 byte more must not, for both resources.
        """
        status, body = self.readyz()
        if status != 200:
            return [f"/readyz {status}: unsynced {body.get('unsynced')}"]
        counts = body.get("cache") or {}
        out = [f"{k}: service {counts.get(k)} != apiserver {v}" for k, v in view.counts().items() if counts.get(k) != v]
        if out or not probe:
            return out
        for node, (cpu_alloc, mem_alloc) in sorted(view.allocatable.items()):
            cpu_req, mem_req = view.requested.get(node, (0, 0))
            free_cpu, free_mem = cpu_alloc - cpu_req, mem_alloc - mem_req
            if free_cpu < 1 or free_mem < 1:
                out.append(f"{node}: no room left to probe (free {free_cpu}m, {free_mem}B)")
                continue
            fits = self.probe(node, free_cpu, free_mem, f"fit-{node}")
            if fits:
                out.append(f"{node}: a pod asking for the free {free_cpu}m/{free_mem}B does not fit: {fits}")
            over = self.probe(node, free_cpu + 1, free_mem + 1, f"over-{node}")
            for resource in ("cpu", "memory"):
                if f"Insufficient {resource}" not in over:
                    out.append(f"{node}: a pod asking for 1 more than the free {resource} is not refused ({over!r})")
        return out


class LiveServices:
    """Starts LiveService instances and stops them all at the end (a fixture's body)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.started: list[LiveService] = []

    def start(self, kubeconfig: Path, config: Obj | None = NODE_LOCAL_PROFILE) -> LiveService:
        """Start one service on a kubeconfig (returns once /healthz answers)."""
        svc = LiveService(self.workdir, kubeconfig, config)
        self.started.append(svc)
        return svc.start()

    def stop_all(self) -> None:
        """Stop every service started."""
        for svc in self.started:
            with contextlib.suppress(Exception):
                svc.stop()


# --------------------------------------------------------------------------- the live source in this process


class CountingObserver:
    """ReflectorObserver that counts restarts by (kind, reason) and events by (kind, type)."""

    def __init__(self) -> None:
        self.restarts: Counter[tuple[str, str]] = Counter()
        self.events: Counter[tuple[str, str]] = Counter()

    def watch_restarted(self, kind: str, reason: str) -> None:
        """Count a restart."""
        self.restarts[kind, reason] += 1

    def event_applied(self, kind: str, event_type: str) -> None:
        """Count an event."""
        self.events[kind, event_type] += 1


class InProcessSource:
    """extender.cluster.live.LiveSource on its own event loop thread; the cache is read on that thread.

    Reflectors back off fast (0.1 s to 1 s) and watches end every 5-10 s, so resumes after a normal end
    happen during the tests too.
    """

    def __init__(self, kubeconfig: Path, min_watch_timeout: int = 5) -> None:
        self.kubeconfig = kubeconfig
        self.min_watch_timeout = min_watch_timeout
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="in-process-source", daemon=True)
        self.cache = ClusterCache(assumed_ttl_seconds=0)
        self.observer = CountingObserver()
        self.source: LiveSource | None = None

    def __enter__(self) -> InProcessSource:
        self.thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(30)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    async def _start(self) -> None:
        client = ApiClient(kubeconfig_module.from_kubeconfig(self.kubeconfig), timeout=10)
        # As the service does with kubernetesVersion auto: the kinds (and API versions) of the apiserver's release.
        chosen = release_of_version(await client.server_version())
        self.cache.follow(chosen)
        self.source = LiveSource(self.cache, client, observer=self.observer,
                                 min_watch_timeout=self.min_watch_timeout, release=chosen)
        for reflector in self.source.reflectors:
            reflector.backoff = Backoff(0.1, 1.0)
        await self.source.start()

    def __exit__(self, *exc: object) -> None:
        if self.source is not None:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self.source.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        if not self.thread.is_alive():
            self.loop.close()

    def call(self, fn: Callable[[], T], timeout: float = 30.0) -> T:
        """Run ``fn`` on the source's loop thread (where the cache may be read) and return its result."""

        async def run() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout)

    def view(self) -> ClusterView:
        """The cache as a ClusterView."""
        return self.call(lambda: ClusterView.from_cache(self.cache))

    def diffs(self, expected: ClusterView) -> list[str]:
        """How the cache differs from ``expected`` (apiserver first), or that it has not synced."""
        assert self.source is not None
        ready, details = self.call(self.source.readiness)
        if not ready:
            return [f"not synced: {details['unsynced']}"]
        return expected.diff(self.view())

    def stats(self) -> dict[str, tuple[int, int]]:
        """kind -> (relists, restarts) of each reflector."""
        assert self.source is not None
        source = self.source
        return self.call(lambda: {r.kind: (r.relists, r.restarts) for r in source.reflectors})


# --------------------------------------------------------------------------- a private, breakable control plane


class SpareControlPlane:
    """A private etcd and kube-apiserver ("A", watched by the caches under test) that can be killed and
    restarted on the same port, certificates and token, plus a second apiserver ("B") on the same etcd to
    write through while A is down. Built by composing controlplane.ControlPlane and ManagedProcess.
    """

    def __init__(self, bin_dir: Path, workdir: Path) -> None:
        self.cp = ControlPlane(bin_dir, workdir)
        self.workdir = workdir
        self.base_argv: list[str] = []
        self.writer_process: ManagedProcess | None = None
        self.writer_port = 0
        self.watch_cache = True

    def start(self) -> None:
        """Start etcd and A (ControlPlane.start) on a fresh data directory, then B."""
        if self.workdir.exists():  # a fixed EXTENDER_E2E_WORKDIR keeps it between runs
            shutil.rmtree(self.workdir)
        self.cp.start()
        assert self.cp.apiserver is not None
        self.base_argv = list(self.cp.apiserver.argv)
        self.writer_port = free_port()
        argv = [
            f"--secure-port={self.writer_port}" if a.startswith("--secure-port=")
            else f"--cert-dir={self.workdir / 'certs-writer'}" if a.startswith("--cert-dir=")
            else a
            for a in self.base_argv
        ]
        self.writer_process = ManagedProcess("kube-apiserver-writer", argv, self.workdir / "logs" / "writer.log")
        self._wait_ready(f"https://127.0.0.1:{self.writer_port}", self.writer_process)

    def _wait_ready(self, url: str, process: ManagedProcess) -> None:
        wait_until(f"{process.name} /readyz",
                   lambda: httpx.get(f"{url}/readyz", headers=self.cp.headers, verify=False, timeout=5).status_code
                   == 200, timeout=90, interval=0.2, procs=[process])

    @property
    def kubeconfig(self) -> Path:
        """Admin kubeconfig of A."""
        return self.cp.kubeconfig

    def admin(self) -> KubeClient:
        """An admin client of A."""
        return self.cp.client()

    def writer(self) -> KubeClient:
        """An admin client of B (works while A is down)."""
        return KubeClient(f"https://127.0.0.1:{self.writer_port}", self.cp.token,
                          self.workdir / "certs-writer" / "apiserver.crt")

    def kill_apiserver(self) -> None:
        """SIGKILL A (its whole process group) and wait for it to be gone."""
        proc = self.cp.apiserver
        assert proc is not None
        proc.stopped = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.popen.wait(10)

    def start_apiserver(self, watch_cache: bool = True) -> None:
        """Start A again (same port, certificates, token); with watch_cache=False watches go to etcd."""
        argv = self.base_argv + ([] if watch_cache else ["--watch-cache=false"])
        assert self.cp.apiserver is not None
        self.cp.apiserver = ManagedProcess("kube-apiserver", argv, self.cp.apiserver.log_path)
        self.watch_cache = watch_cache
        self._wait_ready(self.cp.url, self.cp.apiserver)

    def restart_apiserver(self, watch_cache: bool = True) -> None:
        """Kill A and start it again."""
        self.kill_apiserver()
        self.start_apiserver(watch_cache)

    def ensure_apiserver(self, watch_cache: bool) -> None:
        """A running, in the given watch-cache mode (a test that failed may have left it down)."""
        if self.cp.apiserver is None or not self.cp.apiserver.alive() or self.watch_cache != watch_cache:
            self.restart_apiserver(watch_cache)

    @property
    def etcd_url(self) -> str:
        """etcd's client URL (its JSON gateway serves /v3/...)."""
        assert self.cp.etcd is not None
        return next(a.split("=", 1)[1] for a in self.cp.etcd.argv if a.startswith("--listen-client-urls="))

    def etcd_revision(self) -> int:
        """etcd's current revision (the header of a range request)."""
        key = base64.b64encode(b"\x00").decode()
        r = httpx.post(f"{self.etcd_url}/v3/kv/range", json={"key": key, "limit": 1}, timeout=10)
        r.raise_for_status()
        return int(r.json()["header"]["revision"])

    def compact(self, revision: int) -> None:
        """Compact etcd's history up to ``revision`` (physically, before returning)."""
        r = httpx.post(f"{self.etcd_url}/v3/kv/compaction", json={"revision": str(revision), "physical": True},
                       timeout=30)
        r.raise_for_status()

    def stop(self) -> None:
        """Stop B, A and etcd."""
        if self.writer_process is not None:
            self.writer_process.stop(timeout=15)
        self.cp.stop()


# --------------------------------------------------------------------------- apiserver objects and cleanup


class Janitor:
    """Cleanup actions run in reverse order at teardown; each failure is kept, none stops the others."""

    def __init__(self) -> None:
        self.actions: list[tuple[str, Callable[[], object]]] = []

    def add(self, what: str, action: Callable[[], object]) -> None:
        """Register an action."""
        self.actions.append((what, action))

    def run(self) -> list[str]:
        """Run every action (last registered first); return the failures."""
        failures = []
        for what, action in reversed(self.actions):
            try:
                action()
            except Exception as exc:
                failures.append(f"{what}: {exc}")
        self.actions.clear()
        return failures


def delete_options(grace: int) -> Obj:
    """DeleteOptions with a grace period."""
    return {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": grace}


def remove_namespace(kube: KubeClient, name: str) -> None:
    """Delete a namespace and finalize it at once (no namespace controller runs here)."""
    kube.delete(f"/api/v1/namespaces/{name}")
    ns = kube.request("GET", f"/api/v1/namespaces/{name}", ok=(404,))
    if ns.get("kind") == "Namespace":
        ns.setdefault("spec", {})["finalizers"] = []
        kube.request("PUT", f"/api/v1/namespaces/{name}/finalize", ns, ok=(404, 409))


def clean_namespace(kube: KubeClient, ns: str) -> None:
    """Force-delete the pods, Services and PVCs (finalizers dropped) of a namespace."""
    kube.delete_pods(ns)
    for svc in kube.get(f"/api/v1/namespaces/{ns}/services").get("items") or []:
        kube.delete(f"/api/v1/namespaces/{ns}/services/{svc['metadata']['name']}")
    for pvc in kube.get(f"/api/v1/namespaces/{ns}/persistentvolumeclaims").get("items") or []:
        path = f"/api/v1/namespaces/{ns}/persistentvolumeclaims/{pvc['metadata']['name']}"
        kube.request("PATCH", path, {"metadata": {"finalizers": None}},
                     content_type="application/merge-patch+json", ok=(404,))
        kube.delete(path)


def service_account_token(kube: KubeClient, ns: str, name: str) -> str:
    """A bound token of a ServiceAccount (TokenRequest), creating the account if needed."""
    kube.request("POST", f"/api/v1/namespaces/{ns}/serviceaccounts", {"metadata": {"name": name}}, ok=(409,))
    answer = kube.post(f"/api/v1/namespaces/{ns}/serviceaccounts/{name}/token",
                       {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                        "spec": {"expirationSeconds": 3600}})
    return str(answer["status"]["token"])


def write_kubeconfig(path: Path, server: str, ca_file: Path, *, token: str | None = None,
                     token_file: Path | None = None) -> Path:
    """A kubeconfig with a bearer token, inline or in a file (re-read by our client after a 401)."""
    user: Obj = {"token": token} if token is not None else {"tokenFile": str(token_file)}
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": {"server": server, "certificate-authority": str(ca_file)}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "u"}}],
        "current-context": "e2e",
    }
    path.write_text(yaml.safe_dump(cfg))
    return path


# --------------------------------------------------------------------------- bursts

REQUESTS: tuple[tuple[str | None, str | None], ...] = (
    ("100m", "128Mi"),
    ("250m", "256Mi"),
    ("500m", "512Mi"),
    (None, None),
    ("50m", None),
    (None, "64Mi"),
    ("1", "1Gi"),
    ("1500m", "1536Mi"),
)


@dataclass
class Burst:
    """What one burst creates and changes; every object name starts with ``prefix``."""

    prefix: str
    ns: str
    nodes: int = 8
    pod_workers: int = 3
    pods_per_worker: int = 30
    services: int = 10
    pvcs: int = 10
    namespaces: int = 4
    seed: int = 1
    node_names: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.node_names = [f"{self.prefix}-n{i}" for i in range(self.nodes)]

    @property
    def ghost_node(self) -> str:
        """A node name pods are bound to that never exists: a placeholder in the cache."""
        return f"{self.prefix}-ghost"


def _nodes_worker(kube: KubeClient, burst: Burst, rng: random.Random) -> None:
    for name in burst.node_names:
        kube.create_node(name, cpu="64", memory="256Gi", labels={"e2e-burst": burst.prefix})
    for name in burst.node_names[: len(burst.node_names) // 2]:
        kube.merge_patch(f"/api/v1/nodes/{name}", {"metadata": {"labels": {"zone": f"z{rng.randrange(3)}"}}})
    if len(burst.node_names) > 1:
        kube.merge_patch(f"/api/v1/nodes/{burst.node_names[1]}/status",
                         {"status": {"allocatable": {"cpu": "48", "memory": "200Gi"}}})
    # The last node goes while pods are (or will be) bound to it: a placeholder from then on.
    if len(burst.node_names) > 2:
        kube.delete(f"/api/v1/nodes/{burst.node_names[-1]}")


def _pods_worker(kube: KubeClient, *, burst: Burst, worker: int, rng: random.Random) -> None:
    pod_path = f"/api/v1/namespaces/{burst.ns}/pods"
    targets = [*burst.node_names, burst.ghost_node]
    created: list[Obj] = []
    for i in range(burst.pods_per_worker):
        cpu, mem = rng.choice(REQUESTS)
        node = rng.choice(targets) if rng.random() < 0.6 else None
        created.append(kube.create_pod(burst.ns, f"{burst.prefix}-w{worker}-p{i}", cpu=cpu, memory=mem,
                                       node_name=node, labels={"burst": burst.prefix, "worker": str(worker)}))
    for pod in created:
        name, node = pod["metadata"]["name"], pod["spec"].get("nodeName")
        roll = rng.random()
        if roll < 0.15:
            kube.request("DELETE", f"{pod_path}/{name}", delete_options(0))
        elif roll < 0.30 and node:
            kube.merge_patch(f"{pod_path}/{name}/status", {"status": {"phase": "Succeeded"}})
        elif roll < 0.36 and node:
            # Graceful: it stays, terminating, counted on its node (no kubelet will confirm).
            kube.request("DELETE", f"{pod_path}/{name}", delete_options(300))
        elif roll < 0.50 and not node:
            kube.bind(burst.ns, name, pod["metadata"]["uid"], rng.choice(burst.node_names[:-1] or targets))
        elif roll < 0.70:
            kube.merge_patch(f"{pod_path}/{name}", {"metadata": {"labels": {"touched": "yes"}}})


def _services_worker(kube: KubeClient, burst: Burst, rng: random.Random) -> None:
    path = f"/api/v1/namespaces/{burst.ns}/services"
    for i in range(burst.services):
        spec: Obj = {"selector": {"burst": burst.prefix}, "ports": [{"port": 80 + i}]}
        if i % 2:
            spec["clusterIP"] = "None"
        kube.post(path, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"{burst.prefix}-s{i}"},
                         "spec": spec})
    for i in range(burst.services):
        roll = rng.random()
        if roll < 0.3:
            kube.delete(f"{path}/{burst.prefix}-s{i}")
        elif roll < 0.6:
            kube.merge_patch(f"{path}/{burst.prefix}-s{i}", {"metadata": {"labels": {"v": str(i)}}})


def _pvcs_worker(kube: KubeClient, burst: Burst, rng: random.Random) -> None:
    path = f"/api/v1/namespaces/{burst.ns}/persistentvolumeclaims"
    for i in range(burst.pvcs):
        kube.post(path, {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                         "metadata": {"name": f"{burst.prefix}-c{i}"},
                         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    for i in range(burst.pvcs):
        name, roll = f"{burst.prefix}-c{i}", rng.random()
        if roll < 0.2:  # kept, terminating: the pvc-protection finalizer stays (no controller)
            kube.delete(f"{path}/{name}")
        elif roll < 0.4:  # really gone
            kube.request("PATCH", f"{path}/{name}", {"metadata": {"finalizers": None}},
                         content_type="application/merge-patch+json")
            kube.delete(f"{path}/{name}")
        elif roll < 0.7:
            kube.merge_patch(f"{path}/{name}", {"metadata": {"labels": {"v": str(i)}}})


def _namespaces_worker(kube: KubeClient, burst: Burst, rng: random.Random) -> None:
    names = [f"{burst.prefix}-ns{i}" for i in range(burst.namespaces)]
    for name in names:
        kube.post("/api/v1/namespaces", {"metadata": {"name": name}})
    for i, name in enumerate(names):
        if i % 4 == 1:
            kube.delete(f"/api/v1/namespaces/{name}")  # Terminating for good (no namespace controller)
        elif i % 4 == 2:
            remove_namespace(kube, name)
        else:
            kube.merge_patch(f"/api/v1/namespaces/{name}", {"metadata": {"labels": {"r": str(rng.randrange(9))}}})


def run_burst(make_client: Callable[[], KubeClient], burst: Burst) -> None:
    """Run the burst's workers concurrently (one client each); re-raise the first failure."""
    jobs: list[Callable[[KubeClient], None]] = [
        lambda k: _nodes_worker(k, burst, random.Random(burst.seed)),
        lambda k: _services_worker(k, burst, random.Random(burst.seed + 1)),
        lambda k: _pvcs_worker(k, burst, random.Random(burst.seed + 2)),
        lambda k: _namespaces_worker(k, burst, random.Random(burst.seed + 3)),
    ]
    jobs += [functools.partial(_pods_worker, burst=burst, worker=w, rng=random.Random(burst.seed * 100 + w))
             for w in range(burst.pod_workers)]

    def run(job: Callable[[KubeClient], None]) -> None:
        client = make_client()
        try:
            job(client)
        finally:
            client.close()

    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        for future in [pool.submit(run, job) for job in jobs]:
            future.result()


def register_burst_cleanup(janitor: Janitor, make_client: Callable[[], KubeClient], burst: Burst) -> None:
    """Remove everything a burst may have created (namespaced objects, its namespaces, its nodes)."""

    def clean() -> None:
        kube = make_client()
        try:
            clean_namespace(kube, burst.ns)
            for i in range(burst.namespaces):
                remove_namespace(kube, f"{burst.prefix}-ns{i}")
            for name in burst.node_names:
                kube.delete(f"/api/v1/nodes/{name}")
        finally:
            kube.close()

    janitor.add(f"burst {burst.prefix}", clean)


def pods_by_node(kube: KubeClient, ns: str) -> dict[str, list[str]]:
    """node -> sorted pod names of a namespace (pods without a node under '')."""
    out: dict[str, list[str]] = {}
    for pod in kube.get(f"/api/v1/namespaces/{ns}/pods").get("items") or []:
        out.setdefault(pod["spec"].get("nodeName") or "", []).append(pod["metadata"]["name"])
    return {node: sorted(names) for node, names in out.items()}


def restarts_by_reason(svc: LiveService, reason: str) -> dict[str, float]:
    """kind -> extender_watch_restarts_total{reason} of the service."""
    return {ls["kind"]: v for n, ls, v in svc.metrics() if n == "extender_watch_restarts_total"
            and ls.get("reason") == reason}


def all_kinds(kube: KubeClient) -> list[str]:
    """Every kind the live source watches for the control plane's release, in its order."""
    return list(watched_kinds(apiserver_release(kube)))


def churn(kube: KubeClient, burst: Burst, seed: int) -> None:
    """Change what a burst created: delete, finish, bind and relabel pods, delete a node that has pods,
    resize another, replace a Service and a PVC."""
    rng = random.Random(seed)
    path = f"/api/v1/namespaces/{burst.ns}/pods"
    for pod in kube.get(path, labelSelector=f"burst={burst.prefix}").get("items") or []:
        name, node = pod["metadata"]["name"], pod["spec"].get("nodeName")
        if pod["metadata"].get("deletionTimestamp"):
            continue
        roll = rng.random()
        if roll < 0.2:
            kube.request("DELETE", f"{path}/{name}", delete_options(0))
        elif roll < 0.3 and node and pod["status"].get("phase") not in TERMINAL:
            kube.merge_patch(f"{path}/{name}/status", {"status": {"phase": "Succeeded"}})
        elif roll < 0.5 and not node:
            kube.bind(burst.ns, name, pod["metadata"]["uid"], burst.node_names[1])
        elif roll < 0.6:
            kube.merge_patch(f"{path}/{name}", {"metadata": {"labels": {"churned": str(seed)}}})
    for i in range(3):
        cpu, mem = REQUESTS[i]
        kube.create_pod(burst.ns, f"{burst.prefix}-churn{seed}-{i}", cpu=cpu, memory=mem,
                        node_name=burst.node_names[i % len(burst.node_names)], labels={"burst": burst.prefix})
    kube.delete(f"/api/v1/nodes/{burst.node_names[0]}")
    if len(burst.node_names) > 2:  # the last one is gone already
        kube.merge_patch(f"/api/v1/nodes/{burst.node_names[-2]}/status",
                         {"status": {"allocatable": {"cpu": "40", "memory": "100Gi"}}})
    svc_path = f"/api/v1/namespaces/{burst.ns}/services"
    kube.delete(f"{svc_path}/{burst.prefix}-s0")
    kube.post(svc_path, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"{burst.prefix}-churn{seed}"},
                         "spec": {"clusterIP": "None", "ports": [{"port": 443}]}})
    kube.post(f"/api/v1/namespaces/{burst.ns}/persistentvolumeclaims",
              {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": f"{burst.prefix}-churn{seed}"},
               "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}})


def check_pod_counts(svc: LiveService, kube: KubeClient, view: ClusterView, timeout: float = 20.0) -> None:
    """Check the number of pods the service counts on each real node, through /filter.

    A node's allocatable ``pods`` is set to the apiserver's count n: a probe must then be refused with
    "Too many pods" (so the service counts >= n, and has seen the update); then to n + 1: the probe must
    fit (so it counts <= n). A wrong count never reaches the expected answer and times out.
    """
    nodes = sorted(view.nodes)

    def set_allocatable_pods(extra: int) -> None:
        for node in nodes:
            count = len(view.per_node.get(node, []))
            kube.merge_patch(f"/api/v1/nodes/{node}/status", {"status": {"allocatable": {"pods": str(count + extra)}}})

    def all_answer(want_fit: bool) -> bool:
        for node in nodes:
            reason = svc.probe(node, 1, 1, f"count-{node}")
            if (reason == "") != want_fit or (not want_fit and "Too many pods" not in reason):
                return False
        return True

    set_allocatable_pods(0)
    poll("every node refusing one pod more than the apiserver counts on it (Too many pods)",
         lambda: all_answer(want_fit=False), timeout)
    set_allocatable_pods(1)
    poll("every node taking exactly one pod more than the apiserver counts on it",
         lambda: all_answer(want_fit=True), timeout)
