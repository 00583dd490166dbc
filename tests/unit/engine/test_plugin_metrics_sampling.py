"""Plugin times are recorded for a sample of requests, as kube-scheduler samples its scheduling cycles
(pluginMetricsSamplePercent): every plugin of a sampled request, none of an unsampled one."""

from __future__ import annotations

import random

import pytest
from builders import make_node, make_pod

from extender.cluster.cache import ClusterCache
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.scheduler import Scheduler


def scheduler_recording(times: list[tuple[str, str]]) -> tuple[Scheduler, Framework]:
    cache = ClusterCache()
    for name in ("a", "b"):
        cache.upsert_node(make_node(name, cpu="4", memory="8Gi"))
    framework = Framework(build_profile(None), timer=lambda plugin, point, _seconds: times.append((plugin, point)))
    return Scheduler(cache, [framework]), framework


@pytest.mark.parametrize("percent", [0, 100])
def test_a_request_is_timed_whole_or_not_at_all(percent: int) -> None:
    times: list[tuple[str, str]] = []
    scheduler, framework = scheduler_recording(times)
    framework.plugin_metrics_percent = percent
    scheduler.filter(None, make_pod("p", requests=[{"cpu": "1"}]), ["a", "b"], None)
    scheduler.prioritize(None, make_pod("p", requests=[{"cpu": "1"}]), ["a", "b"], None)
    points = {point for _, point in times}
    if percent == 0:
        assert times == []
    else:
        assert points == {"PreFilter", "Filter", "PreScore", "Score"}
        timed_filters = {plugin for plugin, point in times if point == "PreFilter"}
        assert timed_filters == {plugin.name for plugin in framework.filter_plugins}


def test_about_one_request_in_ten_is_timed_as_upstream_samples_its_cycles() -> None:
    random.seed(7)
    times: list[tuple[str, str]] = []
    scheduler, _ = scheduler_recording(times)
    requests = 2000
    sampled = 0
    for i in range(requests):
        before = len(times)
        scheduler.prioritize(None, make_pod(f"p{i}", requests=[{"cpu": "1"}]), ["a", "b"], None)
        sampled += len(times) > before
    assert 0.07 * requests < sampled < 0.13 * requests
