"""Memory held for request data is bounded in bytes (the real process, RSS read from /proc).

- Pods with a 512 KB annotation (never kept) and about 70 KB of labels (kept for the bind that may follow,
  within the recent-pod store's 16 MiB of pod JSON): once the store is full, hundreds more distinct pods do
  not grow the process.
- Tens of thousands of distinct ~80 KB pods (tolerations, labels, node affinity, spreading: what reaches the
  memos keyed by request data) through /filter: RSS stays under ``RSS_LIMIT_MIB``, the figure
  docs/operations.md states, and levels off. ``EXTENDER_MEMORY_PODS`` sets how many (default 12,000, about
  a minute and a half on 2 cores); ``EXTENDER_MEMORY_PODS=40000 python -m pytest tests/ops/test_ops_memory.py
  -k distinct -s`` is the long run.
- Prioritize requests whose preferred node affinity has hundreds of invalid values (each answered 400 with
  a message of hundreds of KB): neither memory nor the log grows with them.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from ops_support import Service, running

PODS_TO_FILL = 320  # the store is full after ~240 of these pods
PODS_AFTER = 400
GROWTH_ALLOWED_BYTES = 48 * 1024 * 1024
DISTINCT_PODS = int(os.environ.get("EXTENDER_MEMORY_PODS", "12000"))
#: The process on the demo cluster, plus every memo's byte budget (docs/operations.md, *Memory*).
RSS_LIMIT_MIB = 320
#: Growth allowed over the second half of the flood, once the memos are full.
LEVEL_OFF_MIB = 24


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    if not Path("/proc/self/status").exists():
        pytest.skip("reads RSS from /proc")
    svc = Service(tmp_path_factory.mktemp("memory"), ["--log-level", "warning"], env=None)
    with running(svc):
        yield svc


def body_template() -> str:
    labels = {f"label-{j:04d}": "v" * 60 for j in range(1000)}
    pod = {"metadata": {"name": "NAME", "namespace": "memory", "uid": "UID", "labels": labels,
                        "annotations": {"blob": "x" * 512 * 1024}},
           "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                    "resources": {"requests": {"cpu": "10m"}}}]}}
    return json.dumps({"Pod": pod, "NodeNames": ["zone-a-01", "zone-b-01"]})


def send(client: httpx.Client, template: str, start: int, count: int) -> None:
    for i in range(start, start + count):
        body = template.replace('"NAME"', f'"big-{i}"').replace('"UID"', f'"uid-big-{i}"')
        answer = client.post("/filter", content=body, headers={"content-type": "application/json"})
        assert answer.status_code == 200 and answer.json()["Error"] == "", answer.text[:300]


def test_distinct_large_pods_do_not_grow_the_process(service: Service) -> None:
    assert service.process is not None
    pid = service.process.popen.pid
    template = body_template()
    with service.client(timeout=60) as client:
        send(client, template, 0, PODS_TO_FILL)
        filled = rss_bytes(pid)
        send(client, template, PODS_TO_FILL, PODS_AFTER)
        after = rss_bytes(pid)
    print(f"\nRSS after {PODS_TO_FILL} pods: {filled / 2**20:.0f} MiB; "
          f"after {PODS_AFTER} more: {after / 2**20:.0f} MiB")
    assert after - filled < GROWTH_ALLOWED_BYTES, (filled, after)


def distinct_pod_template() -> str:
    """A filter body of about 80 KB whose every part differs per pod once UNIQ is replaced: tolerations (the
    toleration memo), labels (the recent-pod store), node affinity and a spreading selector (memos keyed by
    selectors), and a 60 KB annotation (dropped on arrival)."""
    pod = {"metadata": {"name": "p-UNIQ", "namespace": "memory", "uid": "uid-UNIQ",
                        "labels": {f"label-UNIQ-{j}": f"value-UNIQ-{j}" for j in range(200)},
                        "annotations": {"blob": "UNIQ" + "x" * 60000}},
           "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                    "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}],
                    "tolerations": [{"key": f"example.com/UNIQ-{j}", "operator": "Equal", "value": f"UNIQ-{j}",
                                     "effect": "NoSchedule"} for j in range(100)],
                    "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "preference": {"matchExpressions": [
                            {"key": "example.com/UNIQ", "operator": "In",
                             "values": [f"UNIQ-{j}" for j in range(100)]}]}}]}},
                    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                   "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {
                                                       "matchLabels": {f"label-UNIQ-{j}": f"value-UNIQ-{j}"
                                                                       for j in range(20)}}}]}}
    return json.dumps({"Pod": pod, "NodeNames": ["zone-a-01", "zone-b-01", "zone-c-01", "zone-a-07"]})


def test_tens_of_thousands_of_distinct_large_pods_keep_rss_under_the_stated_figure(service: Service) -> None:
    assert service.process is not None
    pid = service.process.popen.pid
    template = distinct_pod_template()
    assert 75_000 < len(template) < 90_000
    half = DISTINCT_PODS // 2
    failures: list[str] = []

    def flood(start: int, stop: int, step: int) -> None:
        with service.client(timeout=60) as client:
            for i in range(start, stop, step):
                answer = client.post("/filter", content=template.replace("UNIQ", f"d{i}"),
                                     headers={"content-type": "application/json"})
                if answer.status_code != 200 or answer.json()["Error"]:
                    failures.append(answer.text[:300])
                    return

    def run(start: int, stop: int) -> None:
        workers = [threading.Thread(target=flood, args=(start + k, stop, 2)) for k in range(2)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

    before = rss_bytes(pid)
    run(0, half)
    middle = rss_bytes(pid)
    run(half, DISTINCT_PODS)
    after = rss_bytes(pid)
    print(f"\n{DISTINCT_PODS} distinct pods of {len(template) // 1024} KB through /filter: RSS "
          f"{before / 2**20:.0f} -> {middle / 2**20:.0f} (half) -> {after / 2**20:.0f} MiB")
    assert not failures, failures[:3]
    assert after < RSS_LIMIT_MIB * 2**20, after
    assert after - middle < LEVEL_OFF_MIB * 2**20, (middle, after)


def test_invalid_preferred_affinity_values_grow_neither_memory_nor_the_log(service: Service) -> None:
    """Each request's 300 invalid values make a message of about 100 KB: the answer carries it, the log line
    is cut, repeated lines are held back, and nothing of the request is kept."""
    assert service.process is not None
    pid = service.process.popen.pid
    log = service.process.log_path

    def body(i: int) -> str:
        values = [f"-bad-{i}-{j}-" for j in range(300)]
        pod = {"metadata": {"name": f"bad-{i}", "namespace": "memory", "uid": f"uid-bad-{i}"},
               "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                        "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 1, "preference": {"matchExpressions": [
                                {"key": "disktype", "operator": "In", "values": values}]}}]}}}}
        return json.dumps({"Pod": pod, "NodeNames": ["zone-a-01", "zone-b-01"]})

    with service.client(timeout=60) as client:
        def send(start: int, count: int) -> None:
            for i in range(start, start + count):
                answer = client.post("/prioritize", content=body(i), headers={"content-type": "application/json"})
                assert answer.status_code == 400 and "Invalid value" in answer.json()["Error"], answer.text[:300]

        send(0, 200)
        rss_before, log_before = rss_bytes(pid), log.stat().st_size
        send(200, 800)
        rss_after, log_after = rss_bytes(pid), log.stat().st_size
    print(f"\n800 prioritize requests with invalid preferred values: RSS {rss_before / 2**20:.0f} -> "
          f"{rss_after / 2**20:.0f} MiB, log +{log_after - log_before} bytes")
    assert rss_after - rss_before < 16 * 2**20, (rss_before, rss_after)
    assert log_after - log_before < 64 * 1024, log_after - log_before
