"""The one-shot cluster reader: every watched kind listed once into a cache, failures as one-line errors."""

from __future__ import annotations

import httpx
import pytest
from builders import make_node, make_pod
from fake_apiserver import FakeApiserver

from extender.cluster.cache import ClusterCache
from extender.cluster.live import WATCHED_KINDS
from extender.cluster.oneshot import ClusterReadError, read_cluster
from extender.kubeapi.client import KubeClient
from extender.kubeapi.config import ClusterConfig, StaticToken

CONFIG = ClusterConfig("http://fake", tokens=StaticToken("good"))


def populated() -> FakeApiserver:
    server = FakeApiserver()
    server.put("Node", make_node("a"))
    server.put("Node", make_node("b"))
    server.put("Pod", make_pod("running", "shop", node="a", requests=[{"cpu": "1"}], uid="u1"))
    server.put("Pod", make_pod("done", "shop", node="a", requests=[{"cpu": "3"}], uid="u2", phase="Succeeded"))
    server.put("Pod", make_pod("waiting", "shop", requests=[{"cpu": "1"}], uid="u3"))
    server.put("Service", {"metadata": {"name": "web", "namespace": "shop"}, "spec": {"selector": {"app": "web"}}})
    return server


def test_every_kind_is_listed_once_and_nothing_watched() -> None:
    server = populated()
    cache = ClusterCache(assumed_ttl_seconds=0)
    read_cluster(CONFIG, cache, client=KubeClient(CONFIG, transport=server.transport()))
    snapshot = cache.snapshot()
    assert sorted(snapshot.node_infos) == ["a", "b"]
    assert [p.name for p in snapshot.get("a").pods] == ["running"]  # type: ignore[union-attr]
    assert cache.counts()["pending_pods"] == 1 and cache.counts()["Service"] == 1
    lists = [r for r in server.requests if r.startswith("GET ")]
    assert not [r for r in lists if "watch=true" in r]
    assert len({r.split("?")[0] for r in lists}) == len(WATCHED_KINDS)
    assert any("fieldSelector=status.phase" in r for r in lists if r.startswith("GET /api/v1/pods"))


def test_a_missing_pod_is_a_clear_error() -> None:
    server = populated()
    with pytest.raises(ClusterReadError, match=r"^pod shop/nope not found$"):
        read_cluster(CONFIG, ClusterCache(), ("shop", "nope"), client=KubeClient(CONFIG, transport=server.transport()))


def test_forbidden_and_unreachable_are_one_line_errors() -> None:
    server = populated()

    async def forbid_pvcs(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1/persistentvolumeclaims":
            return httpx.Response(403, json={"kind": "Status", "reason": "Forbidden",
                                             "message": "persistentvolumeclaims is forbidden: User cannot list"})
        return await server.handle(request)

    with pytest.raises(ClusterReadError, match="listing PersistentVolumeClaim: 403 Forbidden: persistentvolume"):
        read_cluster(CONFIG, ClusterCache(), client=KubeClient(CONFIG, transport=httpx.MockTransport(forbid_pvcs)))

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(ClusterReadError, match=r"^cannot reach http://fake: connection refused$"):
        read_cluster(CONFIG, ClusterCache(), client=KubeClient(CONFIG, transport=httpx.MockTransport(refuse)))
