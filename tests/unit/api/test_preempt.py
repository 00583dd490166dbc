"""The preempt verb: nodes kept only if the pod fits after eviction, victims cut to what our filters need."""

from __future__ import annotations

from typing import Any

from builders import make_node, make_pod
from fastapi.testclient import TestClient

from extender.api.app import create_app
from extender.cluster.cache import ClusterCache
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.scheduler import Scheduler


def client_for(cache: ClusterCache) -> TestClient:
    return TestClient(create_app(Scheduler(cache, [Framework(build_profile(None))])))


def cluster() -> ClusterCache:
    cache = ClusterCache()
    cache.upsert_node(make_node("a", cpu="4", memory="8Gi"))
    cache.upsert_node(make_node("b", cpu="4", memory="8Gi", taints=[{"key": "x", "value": "y",
                                                                      "effect": "NoSchedule"}]))
    for name, node, cpu, prio in (("a-low", "a", "1", 1), ("a-mid", "a", "1", 5), ("a-big", "a", "2", 3),
                                  ("b-low", "b", "3", 1)):
        cache.upsert_pod(make_pod(name, node=node, requests=[{"cpu": cpu}], spec={"priority": prio}))
    return cache


def meta(**nodes: list[str]) -> dict[str, Any]:
    return {node: {"Pods": [{"UID": f"uid-{p}"} for p in pods], "NumPDBViolations": 1} for node, pods in nodes.items()}


def test_keeps_fitting_nodes_and_minimal_victims() -> None:
    client = client_for(cluster())
    incoming = make_pod("hi", requests=[{"cpu": "2"}], spec={"priority": 100})
    body = client.post("/preempt", json={"Pod": incoming, "NodeNameToVictims": None,
                                         "NodeNameToMetaVictims": meta(a=["a-low", "a-mid", "a-big"],
                                                                       b=["b-low"])}).json()
    # b is tainted: no eviction helps there. On a, evicting a-big alone frees 2 cpu: a-mid (5) and a-low (1)
    # are reprieved (highest priority first); a-big (3) is reprieved too only if the pod still fits: it does not.
    assert body == {"NodeNameToMetaVictims": {"a": {"Pods": [{"UID": "uid-a-big"}], "NumPDBViolations": 1}}}


def test_never_answers_a_node_without_victims() -> None:
    client = client_for(cluster())
    small = make_pod("small", requests=[{"cpu": "100m"}])  # fits on "a" without evicting anything
    body = client.post("/preempt", json={"Pod": small, "NodeNameToMetaVictims": meta(a=["a-low"])}).json()
    assert body["NodeNameToMetaVictims"]["a"]["Pods"] == [{"UID": "uid-a-low"}]


def test_full_victims_lowercase_and_unknown_nodes() -> None:
    cache = cluster()
    client = client_for(cache)
    incoming = make_pod("hi", requests=[{"cpu": "2"}])
    victims = [make_pod("a-big", node="a", requests=[{"cpu": "2"}])]
    body = client.post("/preempt", json={"pod": incoming, "nodenametovictims": {
        "a": {"pods": victims, "numpdbviolations": 0}, "ghost": {"Pods": victims, "NumPDBViolations": 0}}}).json()
    assert body == {"NodeNameToMetaVictims": {"a": {"Pods": [{"UID": "uid-a-big"}], "NumPDBViolations": 0}}}


def test_bad_preempt_bodies() -> None:
    client = client_for(cluster())
    assert client.post("/preempt", json={"NodeNameToMetaVictims": {}}).status_code == 400
    resp = client.post("/preempt", json={"Pod": make_pod(), "NodeNameToMetaVictims": {"a": {"Pods": "x"}}})
    assert resp.status_code == 400 and "Pods" in resp.json()["Error"]
