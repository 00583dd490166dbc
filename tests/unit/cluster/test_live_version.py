"""The live source settles the release from the apiserver's /version before it lists anything, and a one-shot read
lists the kinds of the release chosen from it; a dump records its cluster's version."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from builders import make_node
from fake_apiserver import FakeApiserver

from extender.cluster.cache import ClusterCache
from extender.cluster.dump import DumpError, read_dump
from extender.cluster.live import WATCHED_KINDS, LiveSource, resource_of, watched_kinds
from extender.cluster.oneshot import read_cluster
from extender.cluster.reflector import Backoff
from extender.kube.release import Release, choose, release
from extender.kubeapi.client import KubeClient
from extender.kubeapi.config import ClusterConfig, StaticToken

CONFIG = ClusterConfig("http://fake", tokens=StaticToken("good"))


def client_for(server: FakeApiserver) -> KubeClient:
    return KubeClient(CONFIG, transport=server.transport())


def server_with_node() -> FakeApiserver:
    server = FakeApiserver()
    node = make_node("n1")
    del node["kind"]
    server.put("Node", node)
    return server


def test_the_kinds_follow_the_release() -> None:
    assert "DeviceTaintRule" in watched_kinds(release(37))
    assert "DeviceTaintRule" not in watched_kinds(release(36))
    gated = release(36, {"DRADeviceTaintRules": True})
    assert "DeviceTaintRule" in watched_kinds(gated)
    assert resource_of("DeviceTaintRule", gated).path == "/apis/resource.k8s.io/v1beta2/devicetaintrules"
    assert resource_of("DeviceTaintRule", release(37)).path == "/apis/resource.k8s.io/v1/devicetaintrules"
    assert set(watched_kinds(release(37))) == set(WATCHED_KINDS)  # what the RBAC grants cover


@pytest.mark.parametrize(("git_version", "minor"), [("v1.36.3", 36), ("v1.37.2", 37)])
def test_the_release_is_settled_from_version_before_anything_is_listed(git_version: str, minor: int) -> None:
    async def main() -> None:
        server = server_with_node()
        server.git_version = git_version
        server.version_failures = 2
        cache = ClusterCache()
        settled: list[Release] = []

        async def settle(version: dict[str, Any]) -> Release:
            chosen = release(choose(None, version["gitVersion"], source="apiserver").minor)
            cache.follow(chosen)
            settled.append(chosen)
            return chosen

        source = LiveSource(cache, client_for(server), settle=settle, min_watch_timeout=1)
        ready, details = source.readiness()
        assert not ready and details["unsynced"] == ["(the apiserver's /version)"]
        assert details["kubernetesVersion"]["pending"] == "reading the apiserver's /version"
        original = Backoff.__init__

        def quick(self: Backoff, initial: float = 0.01, maximum: float = 0.02, rng: Any = None) -> None:
            original(self, initial, maximum, rng)

        Backoff.__init__ = quick  # type: ignore[method-assign]
        try:
            await source.start()
            assert await source.wait_synced(10)
        finally:
            Backoff.__init__ = original  # type: ignore[method-assign]
        assert [r.minor for r in settled] == [minor] and cache.release.minor == minor
        # /version was asked (three times: two refusals) before the first list.
        paths = [r.split("?")[0] for r in server.requests]
        assert paths[:3] == ["GET /version"] * 3 and "GET /version" not in paths[3:]
        kinds = {r.kind for r in source.reflectors}
        assert ("DeviceTaintRule" in kinds) == (minor == 37)
        assert source.readiness()[0] and cache.snapshot().get("n1") is not None
        await source.stop()
    asyncio.run(main())


def test_a_configuration_not_valid_for_the_cluster_release_keeps_the_source_unready() -> None:
    async def main() -> None:
        server = server_with_node()

        async def settle(version: dict[str, Any]) -> Release:
            raise ValueError("configuration: featureGates: unrecognized feature gate: SidecarContainers")

        source = LiveSource(ClusterCache(), client_for(server), settle=settle)
        await source.start()
        assert not await source.wait_synced(0.5)
        ready, details = source.readiness()
        assert not ready and "SidecarContainers" in details["kubernetesVersion"]["lastError"]
        assert "'v1.37.2'" in details["kubernetesVersion"]["lastError"]
        await source.stop()
    asyncio.run(main())


def test_a_kind_the_apiserver_does_not_serve_is_held_empty() -> None:
    async def main() -> None:
        server = server_with_node()
        server.not_served = {"DeviceTaintRule"}
        source = LiveSource(ClusterCache(), client_for(server), release=release(37), min_watch_timeout=1)
        await source.start()
        assert await source.wait_synced(5)
        ready, details = source.readiness()
        assert ready and details["kinds"]["DeviceTaintRule"]["served"] is False
        await source.stop()
    asyncio.run(main())


def test_a_one_shot_read_lists_the_kinds_of_the_release_it_chooses() -> None:
    server = server_with_node()
    server.git_version = "v1.36.3"
    cache = ClusterCache()
    seen: list[dict[str, Any]] = []

    def kinds_for(version: dict[str, Any]) -> tuple[str, ...]:
        seen.append(version)
        return watched_kinds(release(36))

    read_cluster(CONFIG, cache, client=client_for(server), kinds_for_version=kinds_for)
    assert seen[0]["gitVersion"] == "v1.36.3"
    assert not any("devicetaintrules" in r for r in server.requests)


def test_a_dump_records_its_cluster_version(tmp_path: Path) -> None:
    (tmp_path / "nodes.json").write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": [make_node("a")]}))
    assert read_dump(tmp_path).version is None
    # kubectl get --raw /version > version.json
    (tmp_path / "version.json").write_text(json.dumps({"major": "1", "minor": "36", "gitVersion": "v1.36.3"}))
    recorded = read_dump(tmp_path).version
    assert recorded is not None and (recorded.git_version, recorded.minor) == ("v1.36.3", "36")
    # kubectl version -o yaml, as another document of a YAML file
    (tmp_path / "version.json").unlink()
    (tmp_path / "z.yaml").write_text("clientVersion: {gitVersion: v1.38.0, minor: '38'}\n"
                                     "serverVersion: {gitVersion: v1.37.2, minor: '37', major: '1'}\n")
    recorded = read_dump(tmp_path).version
    assert recorded is not None and recorded.git_version == "v1.37.2"
    (tmp_path / "other.json").write_text(json.dumps({"major": "1", "minor": "36", "gitVersion": "v1.36.3"}))
    with pytest.raises(DumpError, match="records two cluster versions"):
        read_dump(tmp_path)
