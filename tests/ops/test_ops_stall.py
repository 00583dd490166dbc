"""No request stalls the service: health and readiness answer within 100 ms while the heaviest request the
limits allow is computed and 64 clients hammer the verbs (the real ``extender serve`` process).

The cluster is generated: 1,500 nodes and 3,000 pods. The heavy request is a prioritize with full Node
objects up to ``--max-request-nodes`` (every Node built from the request, not taken from the cache), with
pod anti-affinity and topology spreading to score; it runs in a loop on its own connection while
``bench/load.py`` runs 64 keep-alive clients in another process. Probes open a new connection each time, as
kubelet does, on the verbs' port and on the plain health port. A request past the limits (the issue's
2,000,000 repeated names) is refused at once with 413.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ops_support import DEMO_CLUSTER, Service, free_port, probe, running

REPO = Path(__file__).resolve().parents[2]
NODES = 1500
PODS = 3000
MAX_NODES = 4000  # --max-request-nodes for this service: the heavy request sends exactly this many Nodes
PROBE_BUDGET_SECONDS = 0.1
OUTLIER_CEILING_SECONDS = 0.4  # below the shortest heavy request: no probe waited for one
LOAD_SECONDS = 12.0


def _demo_node() -> dict[str, Any]:
    import yaml

    for doc in yaml.safe_load_all(DEMO_CLUSTER.read_text()):
        for obj in (doc or {}).get("items") or [doc]:
            if obj.get("kind") == "Node" and not (obj.get("spec") or {}).get("taints"):
                return dict(obj)
    raise AssertionError("no untainted node in the demo cluster")


def make_node(template: dict[str, Any], i: int) -> dict[str, Any]:
    """A copy of a demo node named node-<i>, in one of 10 zones."""
    node = copy.deepcopy(template)
    meta = node["metadata"]
    meta["name"] = f"node-{i:05d}"
    meta.pop("resourceVersion", None)
    meta["labels"] = {**meta.get("labels", {}), "kubernetes.io/hostname": meta["name"],
                      "topology.kubernetes.io/zone": f"zone-{i % 10}"}
    return node


def make_cluster(path: Path) -> None:
    """NODES nodes and PODS running pods (labelled app=a..j) as a JSON List."""
    template = _demo_node()
    items: list[dict[str, Any]] = [make_node(template, i) for i in range(NODES)]
    for i in range(PODS):
        items.append({"kind": "Pod", "apiVersion": "v1",
                      "metadata": {"name": f"p-{i}", "namespace": "work", "uid": f"uid-p-{i}",
                                   "labels": {"app": "abcdefghij"[i % 10]}},
                      "spec": {"nodeName": f"node-{i % NODES:05d}", "containers": [
                          {"name": "c", "image": "registry.k8s.io/pause:3.10",
                           "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]},
                      "status": {"phase": "Running"}})
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def heavy_body() -> bytes:
    """prioritize with MAX_NODES full Nodes and a pod with anti-affinity and spreading to score."""
    template = _demo_node()
    pod = {"metadata": {"name": "heavy", "namespace": "work", "uid": "uid-heavy", "labels": {"app": "a"}},
           "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
                    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "a"}},
                                                           "topologyKey": "kubernetes.io/hostname"}}]}},
                    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                   "whenUnsatisfiable": "ScheduleAnyway",
                                                   "labelSelector": {"matchLabels": {"app": "a"}}}]}}
    return json.dumps({"Pod": pod, "Nodes": {"items": [make_node(template, i) for i in range(MAX_NODES)]}}).encode()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, int]]:
    """The service on the generated cluster, with a health port (returned too) and a node cap of MAX_NODES."""
    workdir = tmp_path_factory.mktemp("stall")
    cluster = workdir / "cluster.json"
    make_cluster(cluster)
    health = free_port()
    svc = Service(workdir, ["--log-level", "warning", "--health-port", str(health), "--health-host", "127.0.0.1",
                            "--max-request-nodes", str(MAX_NODES), "--request-timeout", "60"], cluster=cluster)
    with running(svc, timeout=120):
        yield svc, health


def test_repeated_names_past_the_limit_are_refused_at_once(served: tuple[Service, int]) -> None:
    """The issue's request: the node names repeated to 2,000,000 entries. 413 naming the limit."""
    service, _ = served
    names = [f"node-{i:05d}" for i in range(33)] * (2_000_000 // 33)
    body = json.dumps({"Pod": {"metadata": {"name": "x", "namespace": "work", "uid": "uid-x"}},
                       "NodeNames": names}).encode()
    with service.client(timeout=60) as client:
        answer = client.post("/prioritize", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 413, answer.text
    assert f"exceed the limit of {MAX_NODES}" in answer.json()["Error"]
    duplicated = json.dumps({"Pod": {"metadata": {"name": "x"}}, "NodeNames": ["node-00001", "node-00001"]})
    with service.client() as client:
        answer = client.post("/filter", content=duplicated, headers={"content-type": "application/json"})
    assert answer.status_code == 400 and "appears more than once" in answer.json()["Error"]


def test_probes_answer_within_100ms_under_the_heaviest_request_and_64_clients(served: tuple[Service, int]) -> None:
    """Health and readiness on both ports stay under 100 ms while the heavy request loops and 64 clients load
    the verbs from another process; every heavy answer is a complete, valid prioritize answer."""
    service, health_port = served
    body = heavy_body()
    stop = threading.Event()
    heavy: list[float] = []
    failures: list[str] = []

    def heavy_loop() -> None:
        with httpx.Client(base_url=service.url, timeout=120) as client:
            while not stop.is_set():
                started = time.perf_counter()
                answer = client.post("/prioritize", content=body, headers={"content-type": "application/json"})
                if answer.status_code != 200 or len(answer.json()) != MAX_NODES:
                    failures.append(f"{answer.status_code}: {answer.text[:300]}")
                    return
                heavy.append(time.perf_counter() - started)

    load = subprocess.Popen([sys.executable, str(REPO / "bench" / "load.py"), "--url", service.url,
                             "--cluster", str(service.cluster), "--duration", str(LOAD_SECONDS),
                             "--concurrency", "64", "--binds", "0", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    worker = threading.Thread(target=heavy_loop, daemon=True)
    worker.start()
    latencies: dict[str, list[float]] = {}
    try:
        deadline = time.monotonic() + LOAD_SECONDS
        while time.monotonic() < deadline:
            for port, where in ((service.port, "verbs port"), (health_port, "health port")):
                for path in ("/healthz", "/readyz"):
                    latencies.setdefault(f"{where} {path}", []).append(probe(port, path))
            time.sleep(0.05)
    finally:
        stop.set()
        out, err = load.communicate(timeout=120)
        worker.join(timeout=120)
    assert not failures, failures
    assert heavy, "the heavy request never completed"
    report = json.loads(out)
    assert load.returncode == 0 and report["errors"] == 0, (out, err)
    print(f"\nheavy prioritize ({MAX_NODES} full Nodes): {len(heavy)} answers, {min(heavy):.2f}-{max(heavy):.2f} s; "
          f"load: {report['requests']} requests")
    for name, values in latencies.items():
        ordered = sorted(values)
        print(f"  {name}: {len(values)} probes, p50 {ordered[len(values) // 2] * 1e3:.1f} ms, "
              f"p98 {ordered[int(len(values) * 0.98)] * 1e3:.1f} ms, max {ordered[-1] * 1e3:.1f} ms")
        # This machine's own scheduling noise (2 shared cores) gives an idle service an outlier now and then,
        # so the bound is on the 98th percentile; no probe may wait anywhere near a whole heavy request.
        assert ordered[int(len(values) * 0.98)] < PROBE_BUDGET_SECONDS, (name, ordered[-10:])
        assert ordered[-1] < OUTLIER_CEILING_SECONDS, (name, ordered[-10:])
