"""The HTTP surface: kube-scheduler's wire format both ways, profiles, errors, health and metrics."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from builders import make_node, make_pod
from fastapi.testclient import TestClient

from extender.api.app import create_app
from extender.cluster.cache import ClusterCache
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.scheduler import UNKNOWN_NODE_REASON, Scheduler

TAINT = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]


def cluster() -> ClusterCache:
    cache = ClusterCache(assumed_ttl_seconds=0)
    cache.upsert_node(make_node("small", cpu="1", memory="2Gi", resource_version="7"))
    cache.upsert_node(make_node("big", cpu="8", memory="32Gi", resource_version="7"))
    cache.upsert_node(make_node("tainted", cpu="8", memory="32Gi", taints=TAINT))
    cache.upsert_pod(make_pod("busy", node="big", requests=[{"cpu": "4", "memory": "8Gi"}]))
    return cache


@pytest.fixture
def client() -> TestClient:
    frameworks = [
        Framework(build_profile(None)),
        Framework(build_profile({"schedulerName": "binpack", "scoreMapping": "minmax", "plugins": {
            "multiPoint": {"enabled": [{"name": "NodeResourcesFit"}], "disabled": [{"name": "*"}]}},
            "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]})),
    ]
    return TestClient(create_app(Scheduler(cluster(), frameworks)))


def pod(**kwargs: Any) -> dict[str, Any]:
    return make_pod("incoming", requests=[{"cpu": "2", "memory": "1Gi"}], **kwargs)


def test_filter_with_node_names_emits_go_field_names(client: TestClient) -> None:
    resp = client.post("/filter", json={"Pod": pod(), "Nodes": None, "NodeNames": ["small", "big", "tainted"]})
    assert resp.status_code == 200
    body = resp.json()
    assert list(body) == ["Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"]
    assert body["NodeNames"] == ["big"]
    assert body["Nodes"] is None
    assert body["FailedAndUnresolvableNodes"] == {"small": "Insufficient cpu",
                                                  "tainted": "node(s) had untolerated taint(s)"}
    assert body["FailedNodes"] == {}
    assert body["Error"] == ""


def test_filter_accepts_any_letter_case(client: TestClient) -> None:
    for key_pod, key_names in (("pod", "nodenames"), ("POD", "NODENAMES"), ("pOd", "nodeNames")):
        resp = client.post("/filter", json={key_pod: pod(), key_names: ["big", "small"]})
        assert resp.status_code == 200
        assert resp.json()["NodeNames"] == ["big"]


def test_unknown_node_names_fail_explicitly_and_are_never_invented(client: TestClient) -> None:
    resp = client.post("/filter", json={"Pod": pod(), "NodeNames": ["big", "nope"]})
    body = resp.json()
    assert body["NodeNames"] == ["big"]
    assert body["FailedNodes"] == {"nope": UNKNOWN_NODE_REASON}


def test_filter_with_full_nodes_uses_nodes_as_sent_with_cached_pods(client: TestClient) -> None:
    # "big" arrives with a newer version and a taint the cache does not know; its cached pods still count.
    sent_big = make_node("big", cpu="8", memory="32Gi", resource_version="8", taints=TAINT)
    sent_new = make_node("fresh", cpu="4", memory="8Gi")
    sent_big5 = make_node("big", cpu="5", memory="32Gi", resource_version="9")
    resp = client.post("/filter", json={"Pod": pod(), "Nodes": {"items": [sent_big, sent_new]}, "NodeNames": None})
    body = resp.json()
    assert body["NodeNames"] is None
    assert [n["metadata"]["name"] for n in body["Nodes"]["items"]] == ["fresh"]
    assert body["FailedAndUnresolvableNodes"] == {"big": "node(s) had untolerated taint(s)"}
    resp = client.post("/filter", json={"Pod": pod(), "Nodes": {"items": [sent_big5]}})
    assert resp.json()["FailedNodes"] == {"big": "Insufficient cpu"}  # 4 cpu used by the cached pod


def test_prioritize_answers_bare_array_of_host_scores(client: TestClient) -> None:
    resp = client.post("/prioritize", json={"Pod": pod(), "NodeNames": ["big", "small", "nope"]})
    assert resp.status_code == 200
    body = resp.json()
    assert [entry["Host"] for entry in body] == ["big", "small", "nope"]
    assert all(set(entry) == {"Host", "Score"} for entry in body)
    assert all(isinstance(e["Score"], int) and 0 <= e["Score"] <= 10 for e in body)
    assert body[2]["Score"] == 0


def test_profiles_are_routed(client: TestClient) -> None:
    nodes = {"Pod": make_pod(requests=[{"cpu": "100m", "memory": "100Mi"}]), "NodeNames": ["big", "small"]}
    spread = {e["Host"]: e["Score"] for e in client.post("/prioritize", json=nodes).json()}
    packed = {e["Host"]: e["Score"] for e in client.post("/profiles/binpack/prioritize", json=nodes).json()}
    assert packed == {"big": 10, "small": 0}  # bin packing prefers the fuller node, stretched over 0..10
    assert spread["small"] >= spread["big"]  # the default profile spreads
    explicit = client.post("/profiles/default-scheduler/prioritize", json=nodes).json()
    assert {e["Host"]: e["Score"] for e in explicit} == spread
    missing = client.post("/profiles/nope/filter", json=nodes)
    assert missing.status_code == 404 and "nope" in missing.json()["Error"]


@pytest.mark.parametrize(("body", "status", "fragment"), [
    (b"{not json", 400, "invalid JSON"),
    (b"", 400, "empty request body"),
    (b"[1, 2]", 400, "expected a JSON object"),
    (b'{"NodeNames": ["a"]}', 400, "Pod"),
    (b'{"Pod": 3, "NodeNames": ["a"]}', 400, "Pod"),
    (b'{"Pod": {}, "NodeNames": "a"}', 400, "NodeNames"),
    (b"[" * 100_000 + b"]" * 100_000, 400, "invalid JSON"),
])
def test_malformed_requests_get_clear_400(client: TestClient, body: bytes, status: int, fragment: str) -> None:
    resp = client.post("/filter", content=body, headers={"content-type": "application/json"})
    assert resp.status_code == status
    assert fragment in resp.json()["Error"]
    assert client.get("/healthz").status_code == 200  # still serving


def test_bad_pod_content_is_a_filter_error_naming_the_field(client: TestClient) -> None:
    bad = make_pod(requests=[{"cpu": "-1"}])
    resp = client.post("/filter", json={"Pod": bad, "NodeNames": ["big"]})
    assert resp.status_code == 200
    body = resp.json()
    assert "cpu" in body["Error"] and body["NodeNames"] is None
    bad_selector = make_pod(spec={"nodeSelector": {"a": "b"}, "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "a", "operator": "Near", "values": ["x"]}]}]}}}})
    body = client.post("/filter", json={"Pod": bad_selector, "NodeNames": ["big"]}).json()
    assert "Near" in body["Error"] or "operator" in body["Error"]
    resp = client.post("/prioritize", json={"Pod": bad, "NodeNames": ["big"]})
    assert resp.status_code == 400 and "cpu" in resp.json()["Error"]


def test_body_limit() -> None:
    app = create_app(Scheduler(cluster(), [Framework(build_profile(None))]), max_body_bytes=1000)
    small = TestClient(app)
    resp = small.post("/filter", content=orjson.dumps({"Pod": pod(), "NodeNames": ["x" * 2000]}),
                      headers={"content-type": "application/json"})
    assert resp.status_code == 413


def test_bind_assumes_and_refuses_a_second_bind(client: TestClient) -> None:
    incoming = pod()
    client.post("/filter", json={"Pod": incoming, "NodeNames": ["big"]})  # kube-scheduler filters first
    args = {"PodName": "incoming", "PodNamespace": "default", "PodUID": "uid-incoming", "Node": "big"}
    resp = client.post("/bind", json=args)
    assert resp.status_code == 200 and resp.json() == {"Error": ""}
    # The assumed pod now counts: 4 + 2 cpu used on "big", so a 3-cpu pod no longer fits there.
    bigger = make_pod("next", requests=[{"cpu": "3"}])
    assert client.post("/filter", json={"Pod": bigger, "NodeNames": ["big"]}).json()["FailedNodes"] == {
        "big": "Insufficient cpu"}
    again = client.post("/bind", json=args).json()
    assert "already bound" in again["Error"]
    unknown = client.post("/bind", json={**args, "PodName": "ghost", "PodUID": "uid-ghost"}).json()
    assert "not known" in unknown["Error"]
    bad_node = client.post("/bind", json={"podname": "other", "podnamespace": "default", "node": "nowhere"}).json()
    assert bad_node["Error"]


def test_operations_endpoints(client: TestClient) -> None:
    for framework in client.app.state.scheduler.frameworks.values():  # type: ignore[attr-defined]
        framework.plugin_metrics_percent = 100  # every request timed (the default samples one in ten)
    client.post("/filter", json={"Pod": pod(), "NodeNames": ["small", "big"]})
    client.post("/prioritize", json={"Pod": pod(), "NodeNames": ["small", "big"]})
    assert client.get("/healthz").text == "ok"
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    metrics = client.get("/metrics").text
    assert 'extender_requests_total{code="200",profile="default-scheduler",verb="filter"}' in metrics
    assert 'extender_filter_rejections_total{profile="default-scheduler",reason="Insufficient cpu"}' in metrics
    assert 'extender_cache_objects{kind="nodes"} 3.0' in metrics
    assert "extender_plugin_duration_seconds_bucket" in metrics
    openapi = client.get("/openapi.json").json()
    assert {"/filter", "/prioritize", "/bind", "/profiles/{profile}/filter"} <= set(openapi["paths"])
    assert client.get("/docs").status_code == 200
    assert client.get("/filter").status_code == 405


def test_explain_endpoint_json_and_table(client: TestClient) -> None:
    body = client.post("/explain", json={"pod": pod(), "nodes": ["small", "big", "nope"]}).json()
    assert body["unknown_nodes"] == ["nope"]
    assert body["nodes"]["small"]["filters"]["NodeResourcesFit"] == {
        "code": "UnschedulableAndUnresolvable", "reasons": ["Insufficient cpu"]}
    assert body["nodes"]["big"]["feasible"] and 0 <= body["nodes"]["big"]["extender_score"] <= 10
    table = client.post("/explain?format=table", json={"pod": pod()}).text
    assert table.splitlines()[0].startswith("NODE") and "tainted" in table
    packed = client.post("/profiles/binpack/explain", json={"pod": pod()}).json()
    assert packed["profile"] == "binpack" and set(packed["nodes"]["big"]["scores"]) == {"NodeResourcesFit"}
    assert client.post("/explain", json={"pod": pod(), "extra": 1}).status_code == 400
    assert client.post("/explain", json={"nodes": ["big"]}).status_code == 400
    assert client.post("/profiles/nope/explain", json={"pod": pod()}).status_code == 404
