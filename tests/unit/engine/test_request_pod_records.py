"""The pod of filter is not parsed again for prioritize, and never reused for a pod that differs."""

from __future__ import annotations

import copy

from builders import make_node, make_pod

from extender.cluster.cache import ClusterCache
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.scheduler import Scheduler


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
