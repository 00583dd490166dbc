"""``extender place``, ``POST /multicluster/schedule``, dump loading and the config/multicluster examples."""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from fastapi import FastAPI
from fastapi.testclient import TestClient
from mc_helpers import binding_obj, cluster_obj
from prometheus_client import CollectorRegistry, Counter, Histogram

from extender.cluster.dump import DumpError
from extender.multicluster.cli import add_place_command
from extender.multicluster.dump import load_binding, load_clusters, load_placement
from extender.multicluster.routes import build_multicluster_router

EXAMPLES = Path(__file__).resolve().parents[3] / "config" / "multicluster"


def _place(*argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="extender")
    add_place_command(parser.add_subparsers())
    args = parser.parse_args(["place", *argv])
    out, err = io.StringIO(), io.StringIO()
    code = args.func(args, out, err)
    return code, out.getvalue(), err.getvalue()


def test_place_example_dynamic_weight_json() -> None:
    code, out, _err = _place("--clusters", str(EXAMPLES / "clusters.yaml"), "--binding",
                             str(EXAMPLES / "binding.yaml"), "--policy", str(EXAMPLES / "policy.yaml"), "-o", "json")
    assert code == 0
    body = orjson.loads(out)
    assert body["clusters"] == [{"name": "member1", "replicas": 3}, {"name": "member2", "replicas": 2},
                                {"name": "member5", "replicas": 7}]
    assert body["error"] == ""
    assert body["filtered"]["member4"] == ["cluster(s) had untolerated taint {dedicated=gpu:NoSchedule}"]


def test_place_example_static_weight_table() -> None:
    code, out, _err = _place("--clusters", str(EXAMPLES / "clusters.yaml"), "--binding",
                             str(EXAMPLES / "binding.yaml"), "--policy", str(EXAMPLES / "policy-static.yaml"))
    assert code == 0
    assert out.splitlines()[:4] == ["scheduled 12 replica(s) to 3 cluster(s)", "  member1                       6",
                                    "  member3                       3", "  member5                       3"]


def test_place_example_scale_up() -> None:
    code, out, _err = _place("--clusters", str(EXAMPLES / "clusters.yaml"), "--binding",
                             str(EXAMPLES / "binding-scaled.yaml"), "--policy", str(EXAMPLES / "policy.yaml"),
                             "-o", "json")
    assert code == 0
    # 8 kept on member3 and member5, 12 more divided 48:14 from nothing (9/3) and added (Karmada v1.18.2).
    assert orjson.loads(out)["clusters"] == [{"name": "member3", "replicas": 13}, {"name": "member5", "replicas": 7}]


def test_place_unschedulable_exits_1(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cluster_obj("member1", pods=2)))
    (tmp_path / "rb.yaml").write_text(yaml.safe_dump(binding_obj(5, placement={
        "replicaScheduling": {"replicaDivisionPreference": "Aggregated"}})))
    code, out, _err = _place("--clusters", str(tmp_path / "c.yaml"), "--binding", str(tmp_path / "rb.yaml"))
    assert code == 1
    assert out.startswith("not scheduled: failed to assign replicas: failed to scale up: Clusters available "
                          "replicas 2 are not enough to schedule.")
    assert "member1                  score   0  available      2  selected yes" in out


def test_place_bad_input_exits_2(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cluster_obj("member1")))
    bad = binding_obj(5)
    bad["spec"]["replicas"] = "five"
    (tmp_path / "rb.yaml").write_text(yaml.safe_dump(bad))
    code, _out, err = _place("--clusters", str(tmp_path / "c.yaml"), "--binding", str(tmp_path / "rb.yaml"))
    assert code == 2
    assert "rb.yaml: ResourceBinding 'app-deployment': spec.replicas: expected an integer, got str" in err


def test_dump_errors(tmp_path: Path) -> None:
    with pytest.raises(DumpError, match="no such file or directory"):
        load_clusters(tmp_path / "missing.yaml")
    (tmp_path / "dup.yaml").write_text(yaml.safe_dump_all([cluster_obj("a"), cluster_obj("a")]))
    with pytest.raises(DumpError, match="Cluster 'a' appears twice"):
        load_clusters(tmp_path / "dup.yaml")
    (tmp_path / "two.yaml").write_text(yaml.safe_dump_all([binding_obj(1), binding_obj(2)]))
    with pytest.raises(DumpError, match="expected exactly one ResourceBinding, found 2"):
        load_binding(tmp_path / "two.yaml")
    with pytest.raises(DumpError, match="expected exactly one PropagationPolicy, found 0"):
        load_placement(tmp_path / "two.yaml")
    (tmp_path / "nocluster.yaml").write_text(yaml.safe_dump(binding_obj(1)))
    with pytest.raises(DumpError, match=r"no Cluster objects found \(1 other object\(s\)\)"):
        load_clusters(tmp_path / "nocluster.yaml")


def test_an_empty_cluster_list_is_an_empty_fleet(tmp_path: Path) -> None:
    # karmadactl prints an empty List for a Karmada without members; Karmada then answers with its
    # FitError for no cluster at all.
    (tmp_path / "none.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": []}))
    (tmp_path / "rb.yaml").write_text(yaml.safe_dump(binding_obj(2, placement={})))
    assert load_clusters(tmp_path / "none.yaml") == []
    code, out, _err = _place("--clusters", str(tmp_path / "none.yaml"), "--binding", str(tmp_path / "rb.yaml"))
    assert code == 1
    assert out.startswith("not scheduled: 0/0 clusters are available: no cluster exists.")


def test_dump_reads_directories_and_lists(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(orjson.dumps({"kind": "ClusterList", "items": [cluster_obj("a")]}))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(cluster_obj("b")))
    assert [c.name for c in load_clusters(tmp_path)] == ["a", "b"]


def _client(**kwargs: Any) -> TestClient:
    clusters = load_clusters(EXAMPLES / "clusters.yaml")
    app = FastAPI()
    app.include_router(build_multicluster_router(lambda: clusters, **kwargs))
    return TestClient(app)


def _example(name: str) -> Any:
    return yaml.safe_load((EXAMPLES / name).read_text())


def test_route_schedules_with_the_provider_clusters() -> None:
    registry = CollectorRegistry()
    requests = Counter("mc_requests", "requests", ["outcome"], registry=registry)
    latency = Histogram("mc_latency", "latency", registry=registry)
    client = _client(requests=requests, latency=latency)
    response = client.post("/multicluster/schedule", json={"binding": _example("binding.yaml"),
                                                           "policy": _example("policy.yaml")})
    assert response.status_code == 200
    assert response.json()["clusters"] == [{"name": "member1", "replicas": 3}, {"name": "member2", "replicas": 2},
                                           {"name": "member5", "replicas": 7}]
    assert registry.get_sample_value("mc_requests_total", {"outcome": "scheduled"}) == 1
    assert registry.get_sample_value("mc_latency_count") == 1


def test_route_with_clusters_and_bare_placement() -> None:
    body = {"binding": binding_obj(4), "policy": {"replicaScheduling": {"replicaDivisionPreference": "Aggregated"}},
            "clusters": [cluster_obj("x", pods=3), cluster_obj("y", pods=10)]}
    response = _client().post("/multicluster/schedule", json=body)
    assert response.json() == {"clusters": [{"name": "y", "replicas": 4}], "filtered": {}, "error": ""}


def test_route_unschedulable_is_200_with_error() -> None:
    # (A bare replicaScheduling {} would be Divided/Weighted by static weights, which ignore capacity.)
    body = {"binding": binding_obj(40), "policy": {"replicaScheduling": {"replicaDivisionPreference": "Aggregated"}},
            "clusters": [cluster_obj("x", pods=3)]}
    response = _client().post("/multicluster/schedule", json=body)
    assert response.status_code == 200
    assert response.json()["error"] == ("failed to assign replicas: failed to scale up: Clusters available replicas "
                                        "3 are not enough to schedule.")


@pytest.mark.parametrize(("body", "message"), [
    ({"policy": {}}, "binding: Field required"),
    ({"binding": {"spec": {"replicas": "x"}}}, "binding.spec.replicas: expected an integer, got str"),
    ({"binding": {}, "clusters": [{"metadata": {}}]}, "clusters[0].metadata.name: required value"),
    ({"binding": {}, "policy": {"kind": "Deployment"}}, "policy.kind: expected PropagationPolicy"),
])
def test_route_bad_requests(body: dict[str, Any], message: str) -> None:
    response = _client().post("/multicluster/schedule", json=body)
    assert response.status_code == 400
    assert message in response.json()["error"]


def test_route_body_limits_and_json() -> None:
    client = _client(max_body_bytes=64)
    response = client.post("/multicluster/schedule", content=b"{" + b" " * 100 + b"}",
                           headers={"content-type": "application/json"})
    assert response.status_code == 413
    response = _client().post("/multicluster/schedule", content=b"{nope", headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"].startswith("invalid JSON")


def test_route_is_documented_in_openapi() -> None:
    app = FastAPI()
    app.include_router(build_multicluster_router(list))
    schema = app.openapi()
    operation = schema["paths"]["/multicluster/schedule"]["post"]
    assert "binding" in operation["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert "ScheduleResponse" in schema["components"]["schemas"]


def test_route_places_on_the_runner_and_answers_503_when_it_is_saturated() -> None:
    """Placement runs on the service's engine thread (never on the event loop); a saturated engine is a 503
    with Retry-After, counted as overloaded, and the body is never placed."""
    import threading

    from extender.cluster.engine_thread import EngineThread, Overloaded

    ran_on: list[str] = []

    class Recording:
        async def request(self, fn: Any, *args: Any) -> Any:
            ran_on.append(threading.current_thread().name)
            return fn(*args)

    body = {"binding": _example("binding.yaml"), "policy": _example("policy.yaml")}
    assert _client(runner=Recording()).post("/multicluster/schedule", json=body).status_code == 200
    assert len(ran_on) == 1

    class Saturated:
        async def request(self, fn: Any, *args: Any) -> Any:
            raise Overloaded("the extender is saturated", retry_after=2)

    registry = CollectorRegistry()
    requests = Counter("mc_requests", "requests", ["outcome"], registry=registry)
    response = _client(runner=Saturated(), requests=requests).post("/multicluster/schedule", json=body)
    assert response.status_code == 503 and response.headers["Retry-After"] == "2"
    assert response.json()["error"] == "the extender is saturated"
    assert registry.get_sample_value("mc_requests_total", {"outcome": "overloaded"}) == 1

    engine = EngineThread()
    engine.start()
    try:
        response = _client(runner=engine).post("/multicluster/schedule", json=body)
        assert response.status_code == 200 and response.json()["clusters"]
        # A body that is not JSON is still a 400 naming the problem when decoded on the engine.
        bad = _client(runner=engine).post("/multicluster/schedule", content=b"{nope")
        assert bad.status_code == 400 and "invalid JSON" in bad.json()["error"]
    finally:
        engine.stop()
