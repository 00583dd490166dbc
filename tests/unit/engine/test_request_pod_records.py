"""The pod of filter is not parsed again for prioritize nor for its bind, and never reused for a pod that differs."""

from __future__ import annotations

import asyncio
import copy

import pytest
from builders import make_node, make_pod

from extender.cluster.cache import ClusterCache
from extender.cluster.records import PodRecord
from extender.engine.profile import build_profile
from extender.engine.recent import RecentPods
from extender.engine.runtime import Framework
from extender.engine.scheduler import BindError, Scheduler


def scheduler() -> Scheduler:
    cache = ClusterCache()
    for name in ("a", "b"):
        cache.upsert_node(make_node(name, cpu="2", memory="4Gi"))
    return Scheduler(cache, [Framework(build_profile(None))])


def versioned(pod: dict, version: str = "7") -> dict:
    pod["metadata"].update(uid="u-1", resourceVersion=version)
    return pod


def test_same_object_sent_again_is_the_same_record() -> None:
    s = scheduler()
    pod = versioned(make_pod("p", requests=[{"cpu": "1"}]))
    first = s.pod_record(pod)
    assert s.pod_record(copy.deepcopy(pod)) is first  # decoded afresh from the next request's body


def test_changed_content_under_the_same_version_is_parsed_again() -> None:
    s = scheduler()
    small = versioned(make_pod("p", requests=[{"cpu": "1"}]))
    large = versioned(make_pod("p", requests=[{"cpu": "3"}]))
    s.pod_record(small)
    assert s.filter(None, large, ["a", "b"], None).passed == []  # 3 CPUs fit nowhere: not the 1-CPU record
    assert s.filter(None, small, ["a", "b"], None).passed == ["a", "b"]


def test_pods_without_identity_are_never_shared() -> None:
    s = scheduler()
    pod = make_pod("p", requests=[{"cpu": "1"}])
    pod["metadata"].pop("uid", None)
    assert s.pod_record(pod) is not s.pod_record(copy.deepcopy(pod))


def test_a_reused_record_follows_services_added_between_requests() -> None:
    """Default spreading reads the Services selecting the pod: a pod sent again after a Service appeared
    must be scored with it, as a scheduler that never saw the pod before scores it."""
    from extender.cluster.cache import ClusterCache

    def cluster(with_service: bool) -> Scheduler:
        cache = ClusterCache()
        for name, zone in (("a", "z1"), ("b", "z2")):
            cache.upsert_node(make_node(name, cpu="8", memory="16Gi", labels={
                "topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": name}))
        for i in range(3):  # three pods of the service's app on a, none on b
            cache.upsert_pod(make_pod(f"web-{i}", node="a", labels={"app": "web"}, requests=[{"cpu": "100m"}]))
        if with_service:
            add_service(cache)
        return Scheduler(cache, [Framework(build_profile(None))])

    def add_service(cache: ClusterCache) -> None:
        cache.upsert_object("Service", {"apiVersion": "v1", "kind": "Service", "metadata": {
            "name": "web", "namespace": "default"}, "spec": {"selector": {"app": "web"}}})

    incoming = versioned(make_pod("new", labels={"app": "web"}, requests=[{"cpu": "100m"}]))
    s = cluster(with_service=False)
    before = dict(s.prioritize(None, incoming, ["a", "b"], None))
    add_service(s.cache)
    after = dict(s.prioritize(None, copy.deepcopy(incoming), ["a", "b"], None))
    fresh = dict(cluster(with_service=True).prioritize(None, copy.deepcopy(incoming), ["a", "b"], None))
    assert after == fresh
    assert after != before  # the Service makes spreading prefer b, where none of its pods run


# ---- the bind that follows: the record filter built, then nothing --------------------------------------------


class _FailingBinder:
    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        raise RuntimeError("the apiserver said no")

    async def get_pod(self, namespace: str, name: str) -> dict | None:
        return None


def test_bind_assumes_the_record_filter_built_and_then_forgets_it() -> None:
    """The pod kube-scheduler filtered is bound as that record (never encoded and decoded again), and once the
    Binding exists the cache alone holds it: the store drops it, and a second bind is refused as bound."""
    s = scheduler()
    pod = versioned(make_pod("p", requests=[{"cpu": "1"}]))
    record = s.pod_record(pod)
    assert s.recent.get("u-1") is record
    assert s.recent.bytes == 0  # nothing was encoded
    asyncio.run(s.bind("default", "p", "u-1", "a"))
    assert s.recent.get("u-1") is None and len(s.recent) == 0
    assert s.cache.get_pod("u-1").node_name == "a"
    with pytest.raises(BindError, match="already bound to node 'a'"):
        asyncio.run(s.bind("default", "p", "u-1", "b"))


def test_a_failed_binding_keeps_the_pod_for_the_next_bind() -> None:
    s = scheduler()
    s.binder = _FailingBinder()
    record = s.pod_record(versioned(make_pod("p", requests=[{"cpu": "1"}])))
    with pytest.raises(BindError, match="the apiserver said no"):
        asyncio.run(s.bind("default", "p", "u-1", "a"))
    assert s.recent.get("u-1") is record and s.cache.get_pod("u-1") is None


def test_records_beyond_the_newest_are_kept_encoded_and_slimmed() -> None:
    """The records tier holds the newest pods (bounded in count and weight); older ones stay bindable as their
    slimmed JSON, and a pod weighing over a quarter of the records' budget is only encoded."""
    store = RecentPods(max_records=2, max_record_bytes=40_000)
    records = []
    for i in range(3):
        raw = make_pod(f"p{i}", uid=f"u{i}")
        raw["metadata"]["annotations"] = {"note": "x" * 100}  # dropped once encoded: no plugin reads it
        records.append(PodRecord(raw))
        store.remember(records[-1], 1_000)
    assert store.get("u1") is records[1] and store.get("u2") is records[2]
    oldest = store.get("u0")
    assert oldest is not None and oldest is not records[0] and oldest.uid == "u0"
    assert "annotations" not in oldest.raw["metadata"]
    assert store.record_bytes <= 40_000 and len(store) == 3
    heavy = PodRecord(make_pod("heavy", uid="u-heavy"))
    store.remember(heavy, 20_000)
    assert store.get("u-heavy") is not heavy and store.get("u-heavy") is not None
    assert store.get("u1") is records[1]  # the heavy pod took nobody's place among the records


def test_a_record_is_found_again_only_at_its_version() -> None:
    store = RecentPods()
    record = PodRecord(versioned(make_pod("p")))
    store.remember(record, 1_000)
    assert store.record("u-1", "7") is record
    assert store.record("u-1", "8") is None


def test_a_bind_naming_a_uid_nobody_holds_is_refused_without_walking_the_cache(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A pod recreated under the same name is another pod: a bind naming the old UID is refused by name, the new
    one pending or placed; never by a walk over every pod of the cache."""
    s = scheduler()
    s.cache.upsert_pod(make_pod("p", uid="u-new"))
    s.cache.upsert_pod(make_pod("q", uid="u-q", node="b"))
    monkeypatch.setattr(s.cache, "find_pod", lambda *args: pytest.fail("walked the cache for a bind with a UID"))
    with pytest.raises(BindError, match=r"with UID u-old, but the extender knows that pod as default/p with UID "
                                        r"u-new: not bound"):
        asyncio.run(s.bind("default", "p", "u-old", "a"))
    with pytest.raises(BindError, match=r"with UID u-old-q, but the extender knows that pod as default/q with UID "
                                        r"u-q: not bound"):
        asyncio.run(s.bind("default", "q", "u-old-q", "a"))
    with pytest.raises(BindError, match=r"pod default/r \(UID u-r\) is not known to the extender"):
        asyncio.run(s.bind("default", "r", "u-r", "a"))
    assert s.cache.get_pod("u-new").node_name == ""
    asyncio.run(s.bind("default", "p", "u-new", "a"))
    assert s.cache.get_pod("u-new").node_name == "a"


class _NoWalk(dict):  # type: ignore[type-arg]
    """The cache's pods, failing any walk over them."""

    def values(self):  # type: ignore[no-untyped-def]
        pytest.fail("walked every pod of the cache")

    def items(self):  # type: ignore[no-untyped-def]
        pytest.fail("walked every pod of the cache")

    def __iter__(self):  # type: ignore[no-untyped-def]
        pytest.fail("walked every pod of the cache")


def test_a_bind_without_a_uid_finds_its_pod_by_name_without_walking_the_cache() -> None:
    """A hand-written bind (no UID) names a pod by namespace and name: found, or refused precisely, by one lookup."""
    s = scheduler()
    s.cache.upsert_pod(make_pod("placed", uid="u-placed", node="b"))
    s.cache.upsert_pod(make_pod("waiting", uid="u-waiting"))
    s.cache._pods = _NoWalk(s.cache._pods)
    with pytest.raises(BindError, match="knows that pod as default/placed with UID u-placed: not bound"):
        asyncio.run(s.bind("default", "placed", "", "a"))
    with pytest.raises(BindError, match="knows that pod as default/waiting with UID u-waiting: not bound"):
        asyncio.run(s.bind("default", "waiting", "", "a"))
    assert s.cache.find_pod("default", "placed").uid == "u-placed"
    assert s.cache.find_pod("default", "waiting").uid == "u-waiting"
    assert s.cache.find_pod("default", "nobody") is None
