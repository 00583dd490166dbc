"""Hostile and ambiguous requests: each gets a clear answer, and nothing a caller sends grows the process or
the metrics without bound (issue 13)."""

from __future__ import annotations

import asyncio
import threading

import orjson
import pytest
from builders import make_node, make_pod
from fastapi.testclient import TestClient

from extender.api.app import create_app
from extender.api.http import DECODE_CHUNK_BYTES, decode_json
from extender.api.metrics import MAX_REASON_LABELS
from extender.cluster.cache import ClusterCache
from extender.cluster.engine_thread import EngineThread, Overloaded
from extender.cluster.records import PodRecord
from extender.engine.profile import build_profile
from extender.engine.recent import RecentPods
from extender.engine.runtime import Framework
from extender.engine.scheduler import Scheduler

JSON = {"content-type": "application/json"}


def cluster() -> ClusterCache:
    cache = ClusterCache(assumed_ttl_seconds=0)
    for name in ("a", "b", "c"):
        cache.upsert_node(make_node(name, cpu="4", memory="16Gi", resource_version="1"))
    return cache


def frameworks() -> list[Framework]:
    return [Framework(build_profile(None)),
            Framework(build_profile({"schedulerName": "binpack", "plugins": {"multiPoint": {
                "enabled": [{"name": "NodeResourcesFit"}], "disabled": [{"name": "*"}]}}}))]


@pytest.fixture
def client() -> TestClient:
    return TestClient(create_app(Scheduler(cluster(), frameworks())))


def series(metrics: str, name: str) -> list[str]:
    return [line for line in metrics.splitlines() if line.startswith(name + "{")]


# ---- item 9: failures counted under the profile of the path -------------------------------------------------


def test_a_failed_prioritize_is_counted_under_the_profile_of_its_path(client: TestClient) -> None:
    bad = make_pod("bad", requests=[{"cpu": "-1"}])
    resp = client.post("/profiles/binpack/prioritize", json={"Pod": bad, "NodeNames": ["a"]})
    assert resp.status_code == 400
    metrics = client.get("/metrics").text
    assert 'extender_prioritize_failures_total{profile="binpack"} 1.0' in metrics
    assert 'extender_prioritize_failures_total{profile="default-scheduler"}' not in metrics


# ---- item 6: bind must name the pod it binds ---------------------------------------------------------------


def test_bind_whose_name_disagrees_with_the_uid_is_refused(client: TestClient) -> None:
    pod = make_pod("u1", "shop", uid="uid-u1", requests=[{"cpu": "1"}])
    client.post("/filter", json={"Pod": pod, "NodeNames": ["a"]})
    for name, namespace in (("totally-different", "kube-system"), ("u1", "kube-system"), ("other", "shop")):
        answer = client.post("/bind", json={"PodName": name, "PodNamespace": namespace, "PodUID": "uid-u1",
                                            "Node": "a"}).json()
        assert "shop/u1" in answer["Error"] and "not bound" in answer["Error"], answer
    assert client.get("/readyz").json()["cache"]["assumed_pods"] == 0
    bound = client.post("/bind", json={"PodName": "u1", "PodNamespace": "shop", "PodUID": "uid-u1", "Node": "a"})
    assert bound.json() == {"Error": ""}
    assert client.get("/readyz").json()["cache"]["assumed_pods"] == 1


def test_bind_with_the_right_name_but_another_uid_is_refused(client: TestClient) -> None:
    pod = make_pod("u2", "shop", uid="uid-u2")
    client.post("/filter", json={"Pod": pod, "NodeNames": ["a"]})
    answer = client.post("/bind", json={"PodName": "u2", "PodNamespace": "shop", "PodUID": "uid-forged",
                                        "Node": "a"}).json()
    assert answer["Error"], answer
    assert client.get("/readyz").json()["cache"]["assumed_pods"] == 0


def test_bind_without_uid_for_a_pod_known_only_from_the_cache_is_refused() -> None:
    """A pod the cache holds (from a dump: never filtered, so not among the recent pods) binds only when the
    bind names its UID."""
    cache = cluster()
    cache.upsert_pod(make_pod("waiting", "shop", uid="uid-waiting"))
    app = create_app(Scheduler(cache, frameworks()))
    with TestClient(app) as client:
        bind = {"PodName": "waiting", "PodNamespace": "shop", "Node": "a"}
        refused = client.post("/bind", json={**bind, "PodUID": ""}).json()
        assert "with UID (none)" in refused["Error"] and "uid-waiting" in refused["Error"], refused
        assert client.post("/bind", json=bind).json()["Error"], "a bind with no PodUID at all was accepted"
        assert client.get("/readyz").json()["cache"]["assumed_pods"] == 0
        assert client.post("/bind", json={**bind, "PodUID": "uid-waiting"}).json() == {"Error": ""}


def test_an_internal_error_answers_500_with_connection_close(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug behind a FastAPI route (here a placement that fails) answers 500 saying ``Connection: close``,
    since the server closes that connection: a keep-alive client then opens a new one instead of losing its
    next request to a reset. A deliberate 503 keeps the connection."""
    from extender.multicluster import routes as mc_routes

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in placement")

    monkeypatch.setattr(mc_routes, "schedule", broken)
    app = create_app(Scheduler(cluster(), frameworks()))
    with TestClient(app, raise_server_exceptions=False) as client:
        answer = client.post("/multicluster/schedule", json={"binding": {
            "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "replicas": 1}},
            "policy": {}, "clusters": []})
    assert answer.status_code == 500
    assert answer.headers.get("connection") == "close"
    assert "a bug" not in answer.text and "Traceback" not in answer.text


# ---- item 10: ambiguous and duplicated input ----------------------------------------------------------------


def test_keys_differing_in_case_resolve_as_go_does_the_last_wins(client: TestClient) -> None:
    pod = orjson.dumps(make_pod("dup", requests=[{"cpu": "1"}])).decode()
    body = f'{{"Pod": {pod}, "NodeNames": ["a"], "nodenames": ["b"], "NodeNames": ["c"]}}'
    answer = client.post("/filter", content=body, headers=JSON).json()
    assert answer["NodeNames"] == ["c"], answer
    body = f'{{"Pod": {pod}, "NodeNames": ["a"], "NODENAMES": ["b"]}}'
    assert client.post("/filter", content=body, headers=JSON).json()["NodeNames"] == ["b"]
    body = '{"PodName": "x", "podname": "dup", "PodNamespace": "default", "PodUID": "uid-dup", "Node": "a"}'
    client.post("/filter", content=f'{{"Pod": {pod}, "NodeNames": ["a"]}}', headers=JSON)
    assert client.post("/bind", content=body, headers=JSON).json() == {"Error": ""}


def test_two_full_nodes_with_one_name_are_refused(client: TestClient) -> None:
    node = make_node("a", cpu="4", memory="16Gi")
    resp = client.post("/filter", json={"Pod": make_pod("p"), "Nodes": {"items": [node, node]}})
    assert resp.status_code == 400 and "'a' appears more than once" in resp.json()["Error"]
    resp = client.post("/prioritize", json={"Pod": make_pod("p"), "NodeNames": ["a", "b", "a"]})
    assert resp.status_code == 400 and "'a' appears more than once" in resp.json()["Error"]


def test_more_nodes_than_the_limit_are_refused_with_413() -> None:
    from extender.api.routes import RequestLimits

    app = create_app(Scheduler(cluster(), frameworks()), limits=RequestLimits(max_nodes=2))
    client = TestClient(app)
    resp = client.post("/filter", json={"Pod": make_pod("p"), "NodeNames": ["a", "b", "c"]})
    assert resp.status_code == 413 and "3 nodes exceed the limit of 2" in resp.json()["Error"]
    assert client.post("/filter", json={"Pod": make_pod("p"), "NodeNames": ["a", "b"]}).status_code == 200


def test_preempt_answers_a_duplicated_victim_once() -> None:
    cache = cluster()
    cache.upsert_pod(make_pod("low", node="a", uid="uid-low", requests=[{"cpu": "4"}]))
    client = TestClient(create_app(Scheduler(cache, frameworks())))
    preemptor = make_pod("high", requests=[{"cpu": "2"}], spec={"priority": 100})
    answer = client.post("/preempt", json={"Pod": preemptor, "NodeNameToMetaVictims": {
        "a": {"Pods": [{"UID": "uid-low"}, {"UID": "uid-low"}], "NumPDBViolations": 0}}})
    assert answer.status_code == 200, answer.text
    assert answer.json()["NodeNameToMetaVictims"] == {"a": {"Pods": [{"UID": "uid-low"}], "NumPDBViolations": 0}}


# ---- item 4: label values from a bounded set ----------------------------------------------------------------


def test_hostile_reasons_do_not_become_label_values(client: TestClient) -> None:
    """Unique and huge claim names, bad operators, unique extended resources: the series stay bounded."""
    before = len(series(client.get("/metrics").text, "extender_filter_rejections_total"))
    for i in range(150):
        claim = f"claim-{i}-" + ("x" * (200_000 if i < 3 else 10))
        with_claim = make_pod(f"v{i}", spec={"volumes": [{"name": "data", "persistentVolumeClaim": {
            "claimName": claim}}]})
        client.post("/filter", json={"Pod": with_claim, "NodeNames": ["a", "b"]})
        operator = make_pod(f"o{i}", spec={"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "k", "operator": f"Op{i}", "values": ["v"]}]}]}}}})
        client.post("/filter", json={"Pod": operator, "NodeNames": ["a", "b"]})
        resource = make_pod(f"r{i}", requests=[{f"example.com/thing-{i}": "1"}])
        client.post("/filter", json={"Pod": resource, "NodeNames": ["a", "b"]})
    metrics = client.get("/metrics").text
    rejections = series(metrics, "extender_filter_rejections_total")
    assert len(rejections) - before <= MAX_REASON_LABELS + 1, len(rejections)
    assert len(metrics) < 200_000, len(metrics)
    assert "claim-1" not in metrics and "Op7" not in metrics
    assert any('persistentvolumeclaim \\"*\\" not found' in line for line in rejections), rejections[:5]
    assert all(len(line) < 400 for line in metrics.splitlines())


def test_apostrophes_in_a_reason_are_not_taken_for_quotes(client: TestClient) -> None:
    """NodeAffinity's reason keeps its words (it was labelled ``node(s) didn"*"s node affinity/selector``), and
    a quoted name is still replaced."""
    from extender.api.metrics import ReasonLabels

    labels = ReasonLabels()
    assert labels("node(s) didn't match Pod's node affinity/selector") == \
        "node(s) didn't match Pod's node affinity/selector"
    assert labels("node(s) didn't match PersistentVolume's node affinity") == \
        "node(s) didn't match PersistentVolume's node affinity"
    assert labels('persistentvolumeclaim "data-0" not found') == 'persistentvolumeclaim "*" not found'
    assert labels("node 'x' and 'y'") == 'node "*" and "*"'
    pod = make_pod("picky", spec={"nodeSelector": {"disktype": "none-of-these"}})
    client.post("/filter", json={"Pod": pod, "NodeNames": ["a", "b"]})
    rejections = series(client.get("/metrics").text, "extender_filter_rejections_total")
    assert any("node(s) didn't match Pod's node affinity/selector" in line for line in rejections), rejections


# ---- item 3: memory held for request data is bounded in bytes ------------------------------------------------


def test_recent_pods_are_bounded_in_bytes_and_entries() -> None:
    store = RecentPods(max_entries=1000, max_bytes=1_000_000)
    for i in range(200):
        raw = make_pod(f"big-{i}", uid=f"uid-big-{i}", labels={f"k{j}": "v" * 60 for j in range(100)})
        raw["metadata"]["annotations"] = {"blob": "x" * 1_000_000}  # never kept: bind does not read it
        store.remember(PodRecord(raw))
    assert store.bytes <= 1_000_000
    assert 50 < len(store) < 200
    assert store.get("uid-big-199") is not None and store.get("uid-big-0") is None
    assert "annotations" not in (store.get("uid-big-199").raw.get("metadata") or {})  # type: ignore[union-attr]
    small = RecentPods(max_entries=10)
    for i in range(50):
        small.remember(PodRecord(make_pod(f"p{i}", uid=f"uid-{i}")))
    assert len(small) == 10


# ---- item 1: bounded admission and chunked decoding -----------------------------------------------------------


def test_past_the_pending_limit_requests_get_503_with_retry_after() -> None:
    engine = EngineThread(max_pending=1, timeout=5)
    app = create_app(Scheduler(cluster(), frameworks()), engine=engine)
    release = threading.Event()

    async def occupy() -> None:
        await engine.request(release.wait)

    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_until_complete, args=(occupy(),), daemon=True)
    runner.start()
    try:
        for _ in range(100):
            if engine.pending:
                break
            threading.Event().wait(0.01)
        resp = TestClient(app).post("/filter", json={"Pod": make_pod("p"), "NodeNames": ["a"]})
        assert resp.status_code == 503 and resp.headers["retry-after"] == "1"
        assert "saturated" in resp.json()["Error"]
    finally:
        release.set()
        runner.join(5)
    assert TestClient(app).post("/filter", json={"Pod": make_pod("p"), "NodeNames": ["a"]}).status_code == 200
    assert 'extender_rejected_requests_total{reason="overloaded"} 1.0' in TestClient(app).get("/metrics").text


def test_a_request_past_the_time_bound_is_abandoned_with_503() -> None:
    engine = EngineThread(max_pending=4, timeout=0.2)
    release = threading.Event()

    async def scenario() -> None:
        with pytest.raises(Overloaded, match=r"within 0\.2 seconds"):
            await engine.request(release.wait, 5)
        ran: list[int] = []
        queued = asyncio.ensure_future(engine.request(ran.append, 1))
        await asyncio.sleep(0.3)
        assert queued.done() and isinstance(queued.exception(), Overloaded)
        release.set()
        assert await engine.request(lambda: "next") == "next"
        assert ran == []  # abandoned before it started: never run

    asyncio.run(scenario())
    engine.stop()


def test_large_bodies_decode_piece_by_piece_to_the_same_value() -> None:
    body = orjson.dumps({"Pod": {"metadata": {"name": "p"}},
                         "Nodes": {"items": [make_node(f"n{i}", labels={"x": "y" * 500}) for i in range(2000)]},
                         "list": [[i, {"k": "v" * 300}] for i in range(2000)], "n": 1})
    assert len(body) > 4 * DECODE_CHUNK_BYTES
    assert decode_json(body) == orjson.loads(body)
    assert decode_json(b"  " + body + b"\n") == orjson.loads(body)
    with pytest.raises(Exception, match="invalid JSON"):
        decode_json(body[:-1])




# ---- item 10: weights validated as KubeSchedulerConfiguration decodes them -----------------------------------


@pytest.mark.parametrize("weight", [2**31, 10**30])
def test_plugin_weights_past_int32_are_refused(weight: int) -> None:
    from extender.config import ConfigError, parse_config

    document = {"profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": weight}]}}}]}
    with pytest.raises(ConfigError, match=r"weight: expected an integer in 0\.\.2147483647"):
        parse_config(document)
    largest = {"profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 2**31 - 1}]}}}]}
    assert parse_config(largest).profiles[0].scores


def test_large_and_deeply_nested_bodies_are_a_clear_400() -> None:
    from extender.api.http import HTTPProblem

    for depth in (2_000, 200_000):
        with pytest.raises(HTTPProblem, match="invalid JSON"):
            decode_json(("[" * depth + "]" * depth).encode())


def test_repeated_names_are_refused_before_they_are_decoded() -> None:
    from extender.api.routes import RequestLimits

    client = TestClient(create_app(Scheduler(cluster(), frameworks()), limits=RequestLimits(max_nodes=100)))
    body = orjson.dumps({"Pod": make_pod("p"), "NodeNames": ["a", "b", "c"] * 200_000})
    resp = client.post("/prioritize", content=body, headers=JSON)
    assert resp.status_code == 413, resp.text[:300]
    assert "about 600000 nodes exceed the limit of 100" in resp.json()["Error"]


def test_verbs_answer_json_with_the_request_id_sent_or_a_new_one(client: TestClient) -> None:
    body = orjson.dumps({"Pod": make_pod("p"), "NodeNames": ["a"]})
    tagged = client.post("/filter", content=body, headers={**JSON, "X-Request-Id": "trace-42"})
    assert tagged.status_code == 200 and tagged.headers["x-request-id"] == "trace-42"
    assert tagged.headers["content-type"] == "application/json"
    assert int(tagged.headers["content-length"]) == len(tagged.content)
    fresh = [client.post(f"/{verb}", content=body, headers=JSON).headers["x-request-id"]
             for verb in ("filter", "prioritize")]
    assert all(len(rid) == 16 for rid in fresh) and fresh[0] != fresh[1]
    unknown = client.post("/profiles/nope/filter", content=body, headers={**JSON, "X-Request-Id": "t"})
    assert unknown.status_code == 404 and "no profile named 'nope'" in unknown.json()["Error"]
    assert unknown.headers["x-request-id"] == "t"
