"""A variant's result: pending reasons from simulate's messages, utilization per resource and zone, cost."""

from __future__ import annotations

from builders import make_node, make_pod

from extender.cluster.cache import ClusterCache
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.simulate import Simulator
from extender.plan.planfile import NodeSelector, Price
from extender.plan.results import PREEMPTED, pending_reasons, principal_reason, summarize

ZONE = "topology.kubernetes.io/zone"


def test_reasons_come_from_the_fit_error_histogram() -> None:
    message = "0/6 nodes are available: 1 node(s) were unschedulable, 2 Insufficient memory, 3 Insufficient cpu."
    assert pending_reasons(message) == [(1, "node(s) were unschedulable"), (2, "Insufficient memory"),
                                        (3, "Insufficient cpu")]
    assert principal_reason(message) == "Insufficient cpu"
    assert principal_reason("0/3 nodes are available: pod affinity terms conflict.") == "pod affinity terms conflict"
    assert principal_reason("error: plugin X failed") == "error: plugin X failed"
    tie = "0/4 nodes are available: 2 Insufficient cpu, 2 Insufficient memory."
    assert principal_reason(tie) == "Insufficient cpu"


def test_a_summary_counts_usage_per_zone_and_prices_nodes() -> None:
    cache = ClusterCache(assumed_ttl_seconds=0)
    cache.upsert_node(make_node("a", cpu="4", memory="8Gi", labels={ZONE: "z1", "size": "s"}))
    cache.upsert_node(make_node("b", cpu="4", memory="8Gi", labels={ZONE: "z2"}, extra={"example.com/gpu": 2}))
    cache.upsert_node(make_node("web-0", cpu="4", memory="8Gi"))
    pods = [make_pod(f"p{i}", requests=[{"cpu": "3", "memory": "1Gi"}]) for i in range(4)]
    simulation = Simulator(Framework(build_profile(None)), cache, seed=1).run(pods)
    result = summarize("v", simulation, cache, zone_label=ZONE,
                       prices=[Price(NodeSelector(match_labels=(("size", "s"),)), 0.5)],
                       pool_prices={"web-0": 0.25}, keep_placements=True, seed=1)
    assert (result.pods, result.placed, result.pending, result.nodes) == (4, 3, 1, 3)
    assert result.pending_reasons == {"Insufficient cpu": 1}
    assert result.utilization["cpu"].requested == 9000 and result.utilization["cpu"].allocatable == 12000
    assert result.utilization["cpu"].percent == 75.0 and result.utilization["pods"].requested == 3
    assert result.utilization["example.com/gpu"].allocatable == 2
    assert set(result.zones) == {"z1", "z2", "(no zone)"} and result.zones["z1"]["cpu"].requested == 3000
    assert result.cost_per_hour == 0.75 and result.unpriced_nodes == 1
    assert result.placements is not None and len(result.placements) == 3
    body = result.as_dict()
    assert body["utilization"]["cpu"]["percent"] == 75.0 and body["pending_pods"][0]["message"].startswith("0/3")


def test_a_pod_preempted_by_a_later_one_is_pending_for_that_reason() -> None:
    cache = ClusterCache(assumed_ttl_seconds=0)
    cache.upsert_node(make_node("a", cpu="2", memory="8Gi"))
    low = make_pod("low", requests=[{"cpu": "2"}], spec={"priority": 1})
    high = make_pod("high", requests=[{"cpu": "2"}], spec={"priority": 10})
    simulation = Simulator(Framework(build_profile(None)), cache, seed=1).run([low, high])
    result = summarize("v", simulation, cache, zone_label=ZONE, prices=[], pool_prices={}, keep_placements=True,
                       seed=1)
    assert (result.placed, result.pending, result.pending_reasons) == (1, 1, {PREEMPTED: 1})
    assert result.placements == [("default/high", "a")]
