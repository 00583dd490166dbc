"""The reflector and live source against a fake apiserver: sync, events, resume, relist on 410, auth, bind."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from builders import make_node, make_pod
from fake_apiserver import FakeApiserver

from extender.cluster.cache import ClusterCache
from extender.cluster.live import LiveSource
from extender.cluster.reflector import Backoff, Reflector
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.scheduler import BindError, Scheduler
from extender.kubeapi.binder import ApiBinder
from extender.kubeapi.client import RESOURCES, KubeClient
from extender.kubeapi.config import ClusterConfig, FileToken, StaticToken


def client_for(server: FakeApiserver, token: str = "good") -> KubeClient:
    return KubeClient(ClusterConfig("http://fake", tokens=StaticToken(token)), transport=server.transport())


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


def cache_pods(cache: ClusterCache) -> dict[str, str]:
    snap = cache.snapshot()
    return {p.name: info.name for info in snap.node_list for p in info.pods}


def server_with_cluster() -> FakeApiserver:
    server = FakeApiserver()
    for i in range(3):
        node = make_node(f"n{i}")
        del node["kind"]
        server.put("Node", node)
    for i in range(7):
        pod = make_pod(f"p{i}", node=f"n{i % 3}", requests=[{"cpu": "100m"}])
        del pod["kind"]
        server.put("Pod", pod)
    return server


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_list_paginates_and_replaces() -> None:
    async def main() -> None:
        server = server_with_cluster()
        cache = ClusterCache()
        reflector = Reflector(client_for(server), RESOURCES["Pod"], cache, page_size=2)
        await reflector.list_and_replace()
        assert len(cache_pods(cache)) == 0  # no nodes yet: pods sit on placeholders
        assert cache.counts()["assigned_pods"] == 7
        # The first list asks for the watch cache's contents, whole, as client-go's reflector does.
        assert len(server.requests) == 1 and "resourceVersion=0" in server.requests[0]
        assert "limit=" not in server.requests[0]
        # A relist reads consistently, page by page, and drops what the server no longer has.
        server.delete("Pod", {"metadata": {"name": "p0", "namespace": "default"}})
        await reflector.list_and_replace()
        assert cache.counts()["assigned_pods"] == 6
        relist = server.requests[1:]
        assert sum("continue=" in r for r in relist) == 2 and not any("resourceVersion=" in r for r in relist)
    run(main())


def test_watch_applies_events_and_resumes_after_disconnect() -> None:
    async def main() -> None:
        server = server_with_cluster()
        cache = ClusterCache()
        source = LiveSource(cache, client_for(server), kinds=("Node", "Pod"), min_watch_timeout=1)
        for r in source.reflectors:
            r.backoff = Backoff(0.01, 0.05)
        await source.start()
        assert await source.wait_synced(5)
        ready, details = source.readiness()
        assert ready and details["unsynced"] == []
        assert len(cache_pods(cache)) == 7
        server.drop_watches_after = 2
        for i in range(7, 12):
            pod = make_pod(f"p{i}", node="n1")
            del pod["kind"]
            server.put("Pod", pod)
        await until(lambda: len(cache_pods(cache)) == 12)
        pod_reflector = next(r for r in source.reflectors if r.kind == "Pod")
        assert pod_reflector.restarts >= 1
        assert pod_reflector.relists == 1  # resumed from the last version, no relist
        server.drop_watches_after = None
        server.delete("Pod", {"metadata": {"name": "p3", "namespace": "default"}})
        done = make_pod("p4", node="n1", phase="Succeeded")
        del done["kind"]
        server.put("Pod", done)  # leaves the field selector: arrives as DELETED
        await until(lambda: "p3" not in cache_pods(cache) and "p4" not in cache_pods(cache))
        info = cache.snapshot().get("n1")
        # p1 (100m) and p7..p11 (no requests) remain on n1: nothing counted twice, p4 gone with its 100m.
        assert info is not None and info.requested.milli_cpu == 100 and len(info.pods) == 6
        await source.stop()
    run(main())


def test_relist_on_410_converges() -> None:
    async def main() -> None:
        server = server_with_cluster()
        cache = ClusterCache()
        source = LiveSource(cache, client_for(server), kinds=("Node", "Pod"), min_watch_timeout=1)
        await source.start()
        assert await source.wait_synced(5)
        pod_reflector = next(r for r in source.reflectors if r.kind == "Pod")
        task = next(t for t in source._tasks if t.get_name() == "reflector-Pod")
        task.cancel()  # stop the pod watch while the server moves on
        await asyncio.sleep(0)
        server.delete("Pod", {"metadata": {"name": "p1", "namespace": "default"}})
        extra = make_pod("late", node="n2")
        del extra["kind"]
        server.put("Pod", extra)
        server.compact()
        source._tasks.append(asyncio.create_task(pod_reflector.run()))
        await until(lambda: set(cache_pods(cache)) == {"p0", "p2", "p3", "p4", "p5", "p6", "late"})
        assert pod_reflector.relists == 2
        await source.stop()
    run(main())


def test_bad_events_are_skipped_not_fatal() -> None:
    async def main() -> None:
        server = server_with_cluster()
        cache = ClusterCache()
        source = LiveSource(cache, client_for(server), kinds=("Pod",), min_watch_timeout=1)
        await source.start()
        assert await source.wait_synced(5)
        bad = make_pod("bad", node="n1", requests=[{"cpu": "lots"}])
        del bad["kind"]
        server.put("Pod", bad)
        good = make_pod("good", node="n1")
        del good["kind"]
        server.put("Pod", good)
        await until(lambda: cache.get_pod("uid-good") is not None)
        assert cache.get_pod("uid-bad") is None
        await source.stop()
    run(main())


def test_token_is_reread_after_401(tmp_path: Any) -> None:
    async def main() -> None:
        server = server_with_cluster()
        token = tmp_path / "token"
        token.write_text("old")
        client = KubeClient(ClusterConfig("http://fake", tokens=FileToken(token, max_age_seconds=3600)),
                            transport=server.transport())
        server.valid_token = "rotated"
        token.write_text("rotated")  # the kubelet rotated it
        items, _ = await client.list(RESOURCES["Node"])
        assert len(items) == 3
        assert all(item["kind"] == "Node" for item in items)
    run(main())


def test_bind_through_apiserver_assumes_and_is_never_applied_twice() -> None:
    async def main() -> None:
        server = server_with_cluster()
        pending = make_pod("web", requests=[{"cpu": "1"}])
        del pending["kind"]
        server.put("Pod", pending)
        cache = ClusterCache(assumed_ttl_seconds=30)
        client = client_for(server)
        source = LiveSource(cache, client, kinds=("Node", "Pod"), min_watch_timeout=1)
        await source.start()
        assert await source.wait_synced(5)
        scheduler = Scheduler(cache, [Framework(build_profile(None))], binder=ApiBinder(client))
        await scheduler.bind("default", "web", "uid-web", "n2")
        assert server.bindings == [("default", "web", "n2")]
        info = cache.snapshot().get("n2")
        assert info is not None and any(p.name == "web" for p in info.pods)  # counted at once
        with pytest.raises(BindError, match="already bound"):
            await scheduler.bind("default", "web", "uid-web", "n1")
        await until(lambda: not cache.is_assumed("uid-web"))  # the watch confirmed it
        info = cache.snapshot().get("n2")
        assert info is not None and sum(p.name == "web" for p in info.pods) == 1
        # A failed bind is forgotten: nothing stays assumed.
        ghost = make_pod("ghost", requests=[{"cpu": "1"}])
        scheduler.pod_record(ghost)
        with pytest.raises(BindError, match="not found"):
            await scheduler.bind("default", "ghost", "uid-ghost", "n0")
        assert cache.counts()["assumed_pods"] == 0
        assert server.bindings == [("default", "web", "n2")]
        await source.stop()
    run(main())


def test_readiness_names_lagging_kinds() -> None:
    async def main() -> None:
        server = server_with_cluster()
        source = LiveSource(ClusterCache(), client_for(server, token="wrong"), kinds=("Node", "Pod"))
        for r in source.reflectors:
            r.backoff = Backoff(0.01, 0.02)
        await source.start()
        await asyncio.sleep(0.2)
        ready, details = source.readiness()
        assert not ready
        assert details["unsynced"] == ["Node", "Pod"]
        assert "Unauthorized" in details["kinds"]["Node"]["lastError"]
        await source.stop()
    run(main())


def test_ready_only_once_warmed_up_on_the_loaded_cache() -> None:
    async def main() -> None:
        server = server_with_cluster()
        cache = ClusterCache()
        seen: list[tuple[bool, int, int]] = []

        def warm_up() -> None:  # what Scheduler.warm_up reads: the cache, every kind listed
            counts = cache.counts()
            seen.append((source.readiness()[0], counts["nodes"], counts["assigned_pods"]))

        source = LiveSource(cache, client_for(server), kinds=("Node", "Pod"), min_watch_timeout=1, warm_up=warm_up)
        assert source.readiness()[1]["warmedUp"] is False
        await source.start()
        assert await source.wait_synced(5)
        await until(lambda: source.readiness()[0])
        assert seen == [(False, 3, 7)]  # once, on the synced cache, while not yet ready
        assert source.readiness()[1]["warmedUp"] is True
        await source.stop()
    run(main())


def test_a_failing_warm_up_does_not_keep_the_service_unready() -> None:
    async def main() -> None:
        def warm_up() -> None:
            raise RuntimeError("boom")

        source = LiveSource(ClusterCache(), client_for(server_with_cluster()), kinds=("Node",), min_watch_timeout=1,
                            warm_up=warm_up)
        await source.start()
        await until(lambda: source.readiness()[0])
        await source.stop()
    run(main())
