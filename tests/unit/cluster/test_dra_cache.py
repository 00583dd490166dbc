"""DRA objects in the cache: records per kind, relists, dumps, and claim allocations assumed at bind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import make_node
from dra_builders import claim, device_class, exact_request, gpu, pod_with_claims, resource_slice

from extender.cluster.cache import ClusterCache
from extender.cluster.dump import DumpError, load_cache
from extender.cluster.records import PodRecord
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.simulate import Simulator


def gpu_cluster() -> ClusterCache:
    cache = ClusterCache()
    cache.load([make_node("n1"), device_class(), resource_slice("n1", [gpu("gpu-0")])])
    return cache


def test_records_per_kind_and_counts() -> None:
    cache = gpu_cluster()
    cache.apply(claim("c", [exact_request()]))
    view = cache.snapshot().dra
    assert [s.name for s in view.slices] == ["n1-gpu.example.com"]
    assert set(view.classes) == {"gpu.example.com"}
    entry = view.claim("default", "c")
    assert entry is not None and entry.record.name == "c" and entry.raw["metadata"]["name"] == "c"
    counts = cache.counts()
    assert (counts["ResourceSlice"], counts["ResourceClaim"], counts["DeviceClass"]) == (1, 1, 1)


def test_allocated_devices_are_counted_and_released() -> None:
    cache = gpu_cluster()
    held = claim("held", [exact_request()], allocated_on="n1", devices=["gpu-0"])
    cache.apply(held)
    assert cache.snapshot().dra.allocated().is_allocated(("gpu.example.com", "n1", "gpu-0"))
    cache.delete(held)
    after = cache.snapshot().dra
    assert after.claim("default", "held") is None
    assert not after.allocated().is_allocated(("gpu.example.com", "n1", "gpu-0"))


def test_relist_drops_what_the_list_lacks() -> None:
    cache = gpu_cluster()
    cache.apply(claim("a", [exact_request()]))
    cache.apply(claim("b", [exact_request()]))
    failures = cache.replace("ResourceClaim", [claim("b", [exact_request()])])
    assert failures == []
    assert cache.keys("ResourceClaim") == {"default/b"}


def test_malformed_object_is_skipped_by_a_relist_with_its_error() -> None:
    cache = gpu_cluster()
    bad = resource_slice("n1", [{"name": "gpu-9", "capacity": {"memory": {"value": "lots"}}}], name="bad")
    failures = cache.replace("ResourceSlice", [bad, resource_slice("n1", [gpu("gpu-0")])])
    assert len(failures) == 1 and isinstance(failures[0][1], ValueError)
    assert cache.keys("ResourceSlice") == {"n1-gpu.example.com"}


def test_dump_with_dra_objects(tmp_path: Path) -> None:
    objects = [make_node("n1"), device_class(), resource_slice("n1", [gpu("gpu-0")]), claim("c", [exact_request()])]
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"kind": "List", "items": objects}))
    cache, contents = load_cache(path)
    assert not contents.skipped
    assert cache.counts()["ResourceClaim"] == 1


def test_dump_with_a_malformed_claim_names_it(tmp_path: Path) -> None:
    bad = claim("c", [exact_request()])
    bad["spec"]["devices"]["requests"] = "everything"
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"kind": "List", "items": [bad]}))
    with pytest.raises(DumpError, match="ResourceClaim 'default/c'"):
        load_cache(path)


def _assumed_claim(cache: ClusterCache) -> dict[str, object]:
    entry = cache.snapshot().dra.claim("default", "c")
    assert entry is not None
    return {**entry.raw, "status": {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}}}}


def test_assumed_claim_counts_until_forgotten() -> None:
    cache = gpu_cluster()
    cache.apply(claim("c", [exact_request()]))
    pod = PodRecord(pod_with_claims({"name": "x", "resourceClaimName": "c"}))
    cache.assume_pod(pod, "n1", [_assumed_claim(cache)])
    entry = cache.snapshot().dra.claim("default", "c")
    assert entry is not None and entry.record.allocation is not None
    assert cache.counts()["assumed_claims"] == 1
    cache.forget_pod(pod.cache_key)
    entry = cache.snapshot().dra.claim("default", "c")
    assert entry is not None and entry.record.allocation is None
    assert cache.counts()["assumed_claims"] == 0


def test_a_newer_claim_from_the_source_replaces_the_assumption() -> None:
    cache = gpu_cluster()
    cache.apply(claim("c", [exact_request()]))
    pod = PodRecord(pod_with_claims({"name": "x", "resourceClaimName": "c"}))
    cache.assume_pod(pod, "n1", [_assumed_claim(cache)])
    cache.apply(claim("c", [exact_request()], resource_version="2"))  # e.g. deallocated meanwhile
    entry = cache.snapshot().dra.claim("default", "c")
    assert entry is not None and entry.record.allocation is None
    assert cache.counts()["assumed_claims"] == 0


def test_simulation_consumes_devices_placement_by_placement() -> None:
    cache = ClusterCache()
    cache.load([make_node("n1"), make_node("n2"), device_class(),
                resource_slice("n1", [gpu("gpu-0")]), resource_slice("n2", [gpu("gpu-0")]),
                *(claim(f"c{i}", [exact_request()]) for i in range(3))])
    sim = Simulator(Framework(build_profile(None)), cache, seed=1)
    pods = [pod_with_claims({"name": "g", "resourceClaimName": f"c{i}"}, name=f"p{i}", uid=f"u{i}")
            for i in range(3)]
    result = sim.run(pods)
    placed = [p.node for p in result.placements]
    assert sorted(placed[:2]) == ["n1", "n2"]
    assert placed[2] == ""
    assert "cannot allocate all claims" in result.placements[2].message


def test_deleting_an_assumed_pod_releases_its_assumed_claims() -> None:
    cache = gpu_cluster()
    cache.apply(claim("c", [exact_request()]))
    pod = PodRecord(pod_with_claims({"name": "x", "resourceClaimName": "c"}))
    cache.assume_pod(pod, "n1", [_assumed_claim(cache)])
    cache.remove_pod(pod.cache_key)
    entry = cache.snapshot().dra.claim("default", "c")
    assert entry is not None and entry.record.allocation is None
