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
