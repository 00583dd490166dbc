"""The explain routes: a pod from the cache by name, /filter's body as is, plugin failures as answers, and the
default configuration's legacy profile."""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_node, make_pod
from fastapi.testclient import TestClient

from extender.api.app import create_app
from extender.cluster.cache import ClusterCache
from extender.config import load_config
from extender.engine.runtime import Framework
from extender.engine.scheduler import Scheduler

TAINT = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]


def cluster() -> ClusterCache:
    cache = ClusterCache(assumed_ttl_seconds=0)
    cache.upsert_node(make_node("small", cpu="1", memory="2Gi", resource_version="7", labels={"zone": "x"}))
    cache.upsert_node(make_node("big", cpu="8", memory="32Gi", resource_version="7", labels={"zone": "y"}))
    cache.upsert_node(make_node("tainted", cpu="8", memory="32Gi", taints=TAINT))
    cache.upsert_pod(make_pod("busy", "shop", node="big", requests=[{"cpu": "6", "memory": "8Gi"}], uid="uid-busy"))
    cache.upsert_pod(make_pod("waiting", "shop", requests=[{"cpu": "4"}], uid="uid-waiting"))
    return cache


@pytest.fixture
def client() -> TestClient:
    config = load_config(None)  # the default configuration: default-scheduler and legacy
    return TestClient(create_app(Scheduler(cluster(), [Framework(p) for p in config.profiles])))


def incoming(**kwargs: Any) -> dict[str, Any]:
    return make_pod("incoming", "shop", requests=[{"cpu": "3", "memory": "1Gi"}], **kwargs)


def test_get_explains_a_pending_pod_from_the_cache(client: TestClient) -> None:
    resp = client.get("/explain/shop/waiting")
    assert resp.status_code == 200
    body = resp.json()
    assert body["pod"] == "shop/waiting" and body["profile"] == "default-scheduler"
    assert "bound" not in body
    fit_error = "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
    outcome = body["outcome"]
    assert {k: v for k, v in outcome.items() if k != "postFilter"} == {
        "status": "Unschedulable", "feasibleNodes": [],
        "reasons": {"Insufficient cpu": 2, "node(s) had untolerated taint(s)": 1}, "fitError": fit_error,
        # The whole PodScheduled message: FitError, then the PostFilter plugins' words.
        # big could take it without busy, but busy's priority is not lower; the others cannot help at all.
        # (offline, kubernetesVersion auto follows v1.37.2, whose DynamicResources says nothing without claims)
        "message": f"{fit_error} preemption: 0/3 nodes are available: "
                   "1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."}
    assert [p["plugin"] for p in outcome["postFilter"]["plugins"]] == ["DynamicResources", "DefaultPreemption"]
    table = client.get("/explain/shop/waiting?format=table")
    assert table.status_code == 200
    assert table.text.rstrip().endswith(body["outcome"]["message"])


def test_get_explains_a_bound_pod_as_when_it_was_scheduled(client: TestClient) -> None:
    body = client.get("/explain/shop/busy").json()
    assert body["bound"]["node"] == "big"
    # Without its own 6 CPUs, big fits it again (with them it would not: 6 + 6 > 8).
    assert body["nodes"]["big"]["feasible"]
    assert body["outcome"]["status"] == "Schedulable" and body["outcome"]["feasibleNodes"] == ["big"]


def test_get_per_profile_and_by_scheduler_name(client: TestClient) -> None:
    legacy = client.get("/profiles/legacy/explain/shop/waiting").json()
    assert legacy["profile"] == "legacy"
    assert "1 node(s) had taints that the pod didn't tolerate" in legacy["outcome"]["message"]


def test_get_unknown_pod_or_profile_is_a_clear_404(client: TestClient) -> None:
    resp = client.get("/explain/shop/nope")
    assert resp.status_code == 404
    assert "pod shop/nope is not in the extender's cache" in resp.json()["Error"]
    resp = client.get("/profiles/nope/explain/shop/waiting")
    assert resp.status_code == 404 and "no profile named 'nope'" in resp.json()["Error"]


def test_post_takes_the_filter_body_as_is(client: TestClient) -> None:
    filter_body = {"Pod": incoming(), "NodeNames": ["small", "big", "nope"], "Nodes": None}
    assert client.post("/filter", json=filter_body).json()["NodeNames"] == []
    for pod_key, names_key in (("Pod", "NodeNames"), ("pod", "nodenames"), ("POD", "NODENAMES")):
        resp = client.post("/explain", json={pod_key: filter_body["Pod"], names_key: filter_body["NodeNames"]})
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert list(body["nodes"]) == ["small", "big"] and body["unknown_nodes"] == ["nope"]
        # Only the sent nodes: kube-scheduler's PostFilter, which sees every node, is not run for them.
        assert body["outcome"]["message"] == "0/2 nodes are available: 2 Insufficient cpu."


def test_post_takes_full_nodes_as_filter_does(client: TestClient) -> None:
    # The sent node is bigger than the cached one (as a Node newer than the cache would be); the cache's pods stay.
    sent = make_node("big", cpu="16", memory="32Gi", resource_version="8", labels={"zone": "y"})
    body = client.post("/explain", json={"pod": incoming(), "Nodes": {"items": [sent]}}).json()
    assert list(body["nodes"]) == ["big"] and body["nodes"]["big"]["feasible"]
    bad = client.post("/explain", json={"Pod": incoming(), "Nodes": {"items": [{"metadata": "x"}]}})
    assert bad.status_code == 400 and "Nodes.items[0]" in bad.json()["Error"]


@pytest.mark.parametrize(("body", "message"), [
    ({"pod": {"metadata": {"name": "x"}}, "extra": 1}, "unknown field(s) ['extra']"),
    ({"NodeNames": ["big"]}, "pod: a Pod is required"),
    ({"Pod": {"metadata": {}}, "NodeNames": "big"}, "NodeNames"),
    ([1, 2], "expected a JSON object"),
])
def test_post_bad_bodies_are_400_with_the_field(client: TestClient, body: Any, message: str) -> None:
    resp = client.post("/explain", json=body)
    assert resp.status_code == 400
    assert message in resp.json()["Error"]


@pytest.mark.parametrize("weight", [-5, "5"])
def test_a_score_plugin_failing_on_the_pod_is_answered_not_a_500(weight: Any) -> None:
    # As the fuzzed requests of issue 13: a preferred node-affinity term with weight -5 or "5".
    pod = incoming(spec={"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": weight, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]}}})
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "100m"
    config = load_config(None)
    with TestClient(create_app(Scheduler(cluster(), [Framework(p) for p in config.profiles])),
                    raise_server_exceptions=True) as client:
        for _ in range(2):  # the connection stays usable
            resp = client.post("/explain", json={"pod": pod})
            assert resp.status_code == 200
            outcome = resp.json()["outcome"]
            assert outcome["status"] == "SchedulerError"
            assert 'plugin "NodeAffinity"' in outcome["message"]
        table = client.post("/explain?format=table", json={"pod": pod})
        assert table.status_code == 200 and "the scheduling cycle fails (SchedulerError)" in table.text


def test_not_ready_cache_answers_503() -> None:
    app = create_app(Scheduler(cluster(), [Framework(p) for p in load_config(None).profiles]),
                     readiness=lambda: (False, {"unsynced": ["Pod"]}))
    client = TestClient(app)
    for resp in (client.get("/explain/shop/waiting"), client.post("/explain", json={"pod": incoming()})):
        assert resp.status_code == 503 and resp.headers["retry-after"] == "1"
        assert "['Pod']" in resp.json()["Error"]


def test_default_configuration_serves_the_legacy_profile(client: TestClient) -> None:
    body = {"Pod": incoming(), "NodeNames": ["small", "big", "tainted"]}
    legacy = client.post("/profiles/legacy/filter", json=body).json()
    assert legacy["FailedNodes"]["tainted"] == "node(s) had taints that the pod didn't tolerate"
    current = client.post("/filter", json=body).json()
    assert current["FailedAndUnresolvableNodes"]["tainted"] == "node(s) had untolerated taint(s)"
    scores = client.post("/profiles/legacy/prioritize", json={"Pod": incoming(), "NodeNames": ["big"]})
    assert scores.status_code == 200 and 0 <= scores.json()[0]["Score"] <= 10
    assert client.get("/readyz").json()["profiles"] == ["default-scheduler", "legacy"]


class RecordingRunner:
    """An engine runner that records what runs through it, or refuses everything as a saturated one does."""

    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.ran: list[str] = []

    async def request(self, fn: Any, *args: Any) -> Any:
        if self.refuse:
            raise Saturated("engine saturated: 64 requests pending")
        self.ran.append(getattr(fn, "__name__", ""))
        return fn(*args)


class Saturated(RuntimeError):
    retry_after = 2


def test_engine_work_runs_on_the_given_runner_and_saturation_is_503() -> None:
    from fastapi import FastAPI

    from extender.api.explain_routes import build_explain_router

    scheduler = Scheduler(cluster(), [Framework(p) for p in load_config(None).profiles])
    runner = RecordingRunner()
    app = FastAPI()
    app.include_router(build_explain_router(scheduler, max_body_bytes=1 << 20, engine=runner))
    client = TestClient(app)
    assert client.get("/explain/shop/waiting").status_code == 200
    assert client.post("/explain", json={"pod": incoming()}).status_code == 200
    assert client.get("/explain/shop/nope").status_code == 404
    # Only the cache reads go through the runner (the plugins then run on a worker thread).
    assert runner.ran == ["found_now", "snapshot_now", "found_now"]
    runner.refuse = True
    for resp in (client.get("/explain/shop/waiting"), client.post("/explain", json={"pod": incoming()})):
        assert resp.status_code == 503 and resp.headers["retry-after"] == "2"
        assert resp.json() == {"Error": "engine saturated: 64 requests pending"}


def test_one_explanation_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio
    import threading

    import httpx

    from extender.api import explain_routes

    started, release = threading.Event(), threading.Event()
    real = explain_routes.explain_found

    def slow(*args: Any, **kwargs: Any) -> dict[str, Any]:
        started.set()
        release.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(explain_routes, "explain_found", slow)
    app = create_app(Scheduler(cluster(), [Framework(p) for p in load_config(None).profiles]))

    async def scenario() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            first = asyncio.create_task(client.get("/explain/shop/waiting"))
            await asyncio.to_thread(started.wait, 10)
            second = await client.get("/explain/shop/busy")
            health = await client.get("/healthz")  # the event loop is free meanwhile
            release.set()
            return await first, second, health

    first, second, health = asyncio.run(scenario())
    assert first.status_code == 200 and health.status_code == 200
    assert second.status_code == 503 and second.headers["retry-after"] == "1"
    assert "another explanation is being computed" in second.json()["Error"]
