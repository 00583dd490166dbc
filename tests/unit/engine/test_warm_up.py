"""Scheduler.warm_up builds the cluster-wide indexes before the first request, and changes no answer."""

from __future__ import annotations

import asyncio

import pytest
from builders import make_node, make_pod

from extender.cluster.cache import ClusterCache
from extender.engine.plugins.inter_pod_affinity import InterPodAffinity
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.scheduler import BindError, Scheduler


def cluster() -> ClusterCache:
    cache = ClusterCache()
    for i, zone in enumerate(("a", "a", "b")):
        cache.upsert_node(make_node(f"n{i}", cpu="4", memory="8Gi", labels={"topology.kubernetes.io/zone": zone}))
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "topology.kubernetes.io/zone"}]}}
    cache.upsert_pod(make_pod("db-0", node="n0", labels={"app": "db"}, requests=[{"cpu": "1"}],
                              spec={"affinity": anti}))
    cache.upsert_pod(make_pod("web-0", node="n2", labels={"app": "web"}, requests=[{"cpu": "2"}]))
    return cache


def scheduler(cache: ClusterCache) -> Scheduler:
    return Scheduler(cache, [Framework(build_profile(None))])


def affinity_index(s: Scheduler) -> InterPodAffinity:
    framework = s.frameworks[s.default_profile]
    return next(p for p in framework.filter_plugins if isinstance(p, InterPodAffinity))


def test_warm_up_builds_the_cluster_index_before_any_request() -> None:
    s = scheduler(cluster())
    plugin = affinity_index(s)
    assert plugin.index.nodes == {}
    s.warm_up()
    # InterPodAffinity's index counts every node's pods (what the first request would have built).
    assert set(plugin.index.nodes) == {"n0", "n1", "n2"}
    assert plugin.index.anti_terms  # db-0's required anti-affinity term is indexed


@pytest.mark.parametrize("incoming", [
    make_pod("db-1", labels={"app": "db"}, requests=[{"cpu": "1"}]),
    make_pod("web-1", labels={"app": "web"}, requests=[{"cpu": "3"}]),
])
def test_answers_after_a_warm_up_are_those_without(incoming: dict) -> None:
    cold, warm = scheduler(cluster()), scheduler(cluster())
    warm.warm_up()
    names = ["n0", "n1", "n2"]
    answers = []
    for s in (cold, warm):
        answers.append((s.filter(None, incoming, names, None), list(s.prioritize(None, incoming, names, None))))
    (cold_filter, cold_scores), (warm_filter, warm_scores) = answers
    assert (warm_filter.passed, warm_filter.failed, warm_filter.failed_unresolvable) == \
        (cold_filter.passed, cold_filter.failed, cold_filter.failed_unresolvable)
    assert warm_scores == cold_scores


def test_warm_up_leaves_the_cache_and_the_bindable_pods_alone() -> None:
    cache = cluster()
    s = scheduler(cache)
    counts = cache.counts()
    s.warm_up()
    assert cache.counts() == counts
    with pytest.raises(BindError, match="not known to the extender"):
        asyncio.run(s.bind("default", "extender-warm-up", "extender-warm-up", "n1"))
