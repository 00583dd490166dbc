"""Memory held for request data levels off: distinct large pods filtered one after another (the real process).

Each pod carries a 512 KB annotation (never kept) and about 70 KB of labels (kept for the bind that may
follow, within the recent-pod store's 16 MiB of pod JSON). After the store is full, sending hundreds more
distinct pods must not grow the process: RSS is read from /proc before and after.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from ops_support import Service, running

PODS_TO_FILL = 320  # the store is full after ~240 of these pods
PODS_AFTER = 400
GROWTH_ALLOWED_BYTES = 48 * 1024 * 1024


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    if not Path("/proc/self/status").exists():
        pytest.skip("reads RSS from /proc")
    svc = Service(tmp_path_factory.mktemp("memory"), ["--log-level", "warning"])
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
