"""The web view's routes on the demo cluster: its files (with a strict Content-Security-Policy), the JSON it
reads, what-ifs that never write, Karmada placement, and clear errors. The browser tests (tests/browser) click
through the same page in a real Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from extender.api.app import create_app, create_health_app
from extender.cli import build_scheduler
from extender.engine.scheduler import Scheduler
from extender.multicluster.dump import load_clusters

ROOT = Path(__file__).resolve().parents[3]
MULTICLUSTER = ROOT / "config" / "multicluster"
ASSETS = ROOT / "extender" / "ui" / "assets"
GPU_TAINT = {"key": "example.com/gpu", "value": "present", "effect": "NoSchedule"}


@pytest.fixture(scope="module")
def scheduler() -> Scheduler:
    return build_scheduler(None, None)[0]


@pytest.fixture(scope="module")
def client(scheduler: Scheduler) -> TestClient:
    app = create_app(scheduler, member_clusters=load_clusters(MULTICLUSTER / "clusters.yaml"))
    return TestClient(app)


def pod_yaml(client: TestClient, namespace: str, name: str) -> str:
    resp = client.get(f"/ui/api/pods/{namespace}/{name}")
    assert resp.status_code == 200
    text: str = resp.json()["yaml"]
    return text


def what_if(client: TestClient, body: dict[str, Any]) -> Any:
    return client.post("/ui/api/whatif", json=body)


def test_the_page_and_its_files_are_served_with_a_strict_policy(client: TestClient) -> None:
    root = client.get("/ui", follow_redirects=False)
    assert root.status_code == 307 and root.headers["location"] == "ui/"
    page = client.get("/ui/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    for file in sorted(ASSETS.iterdir()):
        served = client.get(f"/ui/assets/{file.name}")
        assert served.status_code == 200 and served.content == file.read_bytes(), file.name
        again = client.get(f"/ui/assets/{file.name}", headers={"if-none-match": served.headers["etag"]})
        assert again.status_code == 304
    assert client.get("/ui/assets/main.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/ui/assets/nope.js").status_code == 404
    assert client.get("/ui/assets/..%2Fassets.py").status_code == 404


def test_the_page_loads_nothing_from_elsewhere() -> None:
    """No CDN: every file the page names is one of its own, by a relative path."""
    for file in ASSETS.iterdir():
        text = file.read_text()
        assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text, file.name
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text and "eval(" not in text, file.name


def test_the_health_port_serves_no_page(client: TestClient) -> None:
    health = TestClient(create_health_app(client.app))  # type: ignore[arg-type]
    for path in ("/ui/", "/ui/api/pods", "/ui/assets/main.js"):
        assert health.get(path).status_code == 404


def test_pending_pods_are_listed_and_searched(client: TestClient) -> None:
    listed = client.get("/ui/api/pods").json()
    names = [f"{p['namespace']}/{p['name']}" for p in listed["pods"]]
    assert names == ["data/etl-large", "ml/llm-finetune", "shop/search-indexer", "shop/web-pending"]
    assert listed["total"] == 4
    assert [p["name"] for p in client.get("/ui/api/pods?q=SHOP web").json()["pods"]] == ["web-pending"]
    assert client.get("/ui/api/pods?q=nothing-like-this").json() == {"total": 0, "pods": []}
    llm = listed["pods"][1]
    assert llm["claims"] == 1 and llm["cpu"] == 2000 and llm["memory"] == 8 * 1024**3


def test_overview_nodes_and_a_pod_to_edit(client: TestClient) -> None:
    overview = client.get("/ui/api/overview").json()
    assert overview["profiles"] == ["default-scheduler", "legacy"] and overview["ready"] is True
    assert overview["cache"]["nodes"] == 33 and overview["memberClusters"] == 6
    nodes = {n["name"]: n for n in client.get("/ui/api/nodes").json()["nodes"]}
    assert len(nodes) == 33
    assert nodes["zone-a-10"]["zone"] == "zone-a" and nodes["zone-a-10"]["pool"] == "g.xlarge"
    assert nodes["zone-a-10"]["taints"] == [GPU_TAINT]
    assert nodes["zone-c-05"]["unschedulable"] is True
    text = pod_yaml(client, "shop", "search-indexer")
    assert "node.kubernetes.io/instance-type: g.xlarge" in text and "status" not in text
    bound = pod_yaml(client, "data", "db-001")  # a bound pod is edited without its nodeName
    assert "nodeName" not in bound
    missing = client.get("/ui/api/pods/shop/nope")
    assert missing.status_code == 404 and "not in the extender's cache" in missing.json()["Error"]


def test_devices_of_a_dra_pod(client: TestClient) -> None:
    answer = client.get("/ui/api/devices/ml/llm-finetune").json()
    assert answer["claims"] == ["gpus"] and answer["nodes"] == {}
    assert answer["rejected"] == {"cannot allocate all claims": 33}
    assert len(answer["inventory"]["zone-a-06"]) == 4
    assert [d["device"] for d in answer["inventory"]["zone-b-06"] if d["inUse"]] == ["gpu-0"]
    one = client.post("/ui/api/whatif", json={"pod": pod_yaml(client, "ml", "llm-finetune").replace(
        "resourceClaimName: eight-gpus", "resourceClaimName: single-gpu")}).json()
    assert one["explain"]["outcome"]["status"] == "Schedulable"
    chosen = one["devices"]["nodes"]
    assert set(chosen) == set(one["explain"]["outcome"]["feasibleNodes"]) | set(chosen)
    assert all(len(v["claims"]["single-gpu"]) == 1 for v in chosen.values())
    assert client.get("/ui/api/devices/ml/llm-finetune?profile=nope").status_code == 404


def test_a_what_if_answers_on_a_copy_and_writes_nothing(client: TestClient, scheduler: Scheduler) -> None:
    counts = scheduler.cache.counts()
    snapshot = scheduler.cache.snapshot()
    nodes = {name: (info, info.node) for name, info in snapshot.node_infos.items()}
    live = client.get("/explain/shop/search-indexer").json()
    assert live["outcome"]["status"] == "Unschedulable"
    text = pod_yaml(client, "shop", "search-indexer")
    answer = what_if(client, {"pod": text, "changes": [
        {"op": "untaint", "node": "zone-a-10", "taint": GPU_TAINT},
        {"op": "copy", "node": "zone-a-10", "count": 2}, {"op": "cordon", "node": "zone-a-01"}]}).json()
    assert answer["applied"] == ["remove taint example.com/gpu=present:NoSchedule from zone-a-10",
                                 "add 2 empty copies of zone-a-10", "cordon zone-a-01"]
    outcome = answer["explain"]["outcome"]
    assert outcome["status"] == "Schedulable"
    assert sorted(outcome["feasibleNodes"]) == ["zone-a-10", "zone-a-10-copy-1", "zone-a-10-copy-2"]
    assert {n["name"] for n in answer["nodes"]} == {"zone-a-10", "zone-a-10-copy-1", "zone-a-10-copy-2", "zone-a-01"}
    simulated = what_if(client, {"pod": text, "mode": "simulate", "replicas": 4, "seed": 3, "changes": [
        {"op": "untaint", "node": "zone-a-10", "taint": GPU_TAINT}]}).json()["simulation"]
    assert {p["node"] for p in simulated["scheduled"]} == {"zone-a-10"}
    # Nothing reached the cache: same counts, same node objects, and the same answer from /explain.
    assert scheduler.cache.counts() == counts
    after = scheduler.cache.snapshot()
    assert {name: (info, info.node) for name, info in after.node_infos.items()} == nodes
    assert client.get("/explain/shop/search-indexer").json() == live


def test_editing_the_pod_yaml_changes_the_answer(client: TestClient) -> None:
    text = pod_yaml(client, "data", "etl-large")
    assert what_if(client, {"pod": text}).json()["explain"]["outcome"]["status"] == "Unschedulable"
    smaller = what_if(client, {"pod": text.replace("cpu: '20'", "cpu: '2'")}).json()["explain"]
    assert smaller["outcome"]["status"] == "Schedulable" and smaller["pod"] == "data/etl-large"
    legacy = what_if(client, {"pod": text, "profile": "legacy"}).json()["explain"]
    assert legacy["profile"] == "legacy"


@pytest.mark.parametrize(("body", "status", "message"), [
    ({"pod": "kind: Pod\nmetadata: {name: x\nspec: ["}, 400, "pod: invalid YAML at line 3, column 5"),
    ({"pod": {"kind": "Pod"}}, 400, "pod: expected the pod's YAML as a string"),
    ({"pod": "metadata: {name: x}\nspec: {containers: []}", "mode": "apply"}, 400, "mode: expected one of"),
    ({"pod": "metadata: {name: x}\nspec: {containers: []}", "profile": "nope"}, 400, "no profile named 'nope'"),
    ({"pod": "metadata: {name: x}\nspec: {containers: []}", "changes": [{"op": "cordon", "node": "nope"}]}, 400,
     "node 'nope' is not in the cluster"),
    ({"pod": "metadata: {name: x}\nspec: {containers: []}", "mode": "simulate", "replicas": "3"}, 400,
     "replicas: expected an integer"),
    ([], 400, "expected a JSON object"),
])
def test_bad_what_ifs_are_400_with_the_reason(client: TestClient, body: Any, status: int, message: str) -> None:
    resp = what_if(client, body)
    assert resp.status_code == status and message in resp.json()["Error"], resp.json()
    if "line 3" in message:
        assert resp.json()["line"] == 3 and resp.json()["column"] == 5


def test_posts_take_json_only(client: TestClient) -> None:
    """A cross-site form can only send text/plain or form bodies: refused, not computed."""
    for path in ("/ui/api/whatif", "/ui/api/multicluster/place"):
        resp = client.post(path, content=b'{"pod": "x"}', headers={"content-type": "text/plain"})
        assert resp.status_code == 415 and "application/json" in resp.json()["Error"]
    assert client.get("/ui/api/whatif").status_code == 405


def test_placement_shows_every_cluster_and_matches_the_schedule_route(client: TestClient) -> None:
    text = (MULTICLUSTER / "binding.yaml").read_text() + "\n---\n" + (MULTICLUSTER / "policy.yaml").read_text()
    answer = client.post("/ui/api/multicluster/place", json={"yaml": text}).json()
    assert [(c["name"], c["replicas"]) for c in answer["clusters"]] == [("member1", 3), ("member2", 2), ("member5", 7)]
    import yaml

    reference = client.post("/multicluster/schedule", json={
        "binding": yaml.safe_load((MULTICLUSTER / "binding.yaml").read_text()),
        "policy": yaml.safe_load((MULTICLUSTER / "policy.yaml").read_text())}).json()
    assert answer["clusters"] == reference["clusters"] and answer["filtered"] == reference["filtered"]
    rows = {r["name"]: r for r in answer["rows"]}
    assert rows["member4"]["filtered"] == ["cluster(s) had untolerated taint {dedicated=gpu:NoSchedule}"]
    assert rows["member3"]["feasible"] and not rows["member3"]["selected"] and rows["member3"]["available"] == 48
    assert answer["binding"] == "default/nginx-deployment" and answer["policy"] is True
    clusters = client.get("/ui/api/multicluster").json()["clusters"]
    assert [c["name"] for c in clusters] == [f"member{i}" for i in range(1, 7)]


@pytest.mark.parametrize(("text", "message"), [
    ("kind: ResourceBinding\nmetadata: {name: x", "binding: invalid YAML at line 3, column 1"),
    ("kind: Cluster\nmetadata: {name: c}", "expected one ResourceBinding, found 0"),
    ("apiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding\nmetadata: {name: b}\nspec: {replicas: -1}",
     "binding.spec.replicas"),
])
def test_bad_bindings_are_400_with_the_reason(client: TestClient, text: str, message: str) -> None:
    resp = client.post("/ui/api/multicluster/place", json={"yaml": text})
    assert resp.status_code == 400 and message in resp.json()["Error"], resp.json()


def test_placement_without_member_clusters_says_how_to_give_them(scheduler: Scheduler) -> None:
    client = TestClient(create_app(scheduler))
    text = (MULTICLUSTER / "binding.yaml").read_text()
    resp = client.post("/ui/api/multicluster/place", json={"yaml": text})
    assert resp.status_code == 400 and "--member-clusters FILE" in resp.json()["Error"]
    with_clusters = text + "\n---\n" + (MULTICLUSTER / "clusters.yaml").read_text()
    placed = client.post("/ui/api/multicluster/place", json={"yaml": with_clusters})
    assert placed.status_code == 200 and len(placed.json()["rows"]) == 6


def test_a_saturated_engine_is_503_with_retry_after(scheduler: Scheduler) -> None:
    """The web view reads the cache on the engine thread: when it refuses work, every read answers 503."""
    from extender.api.explain_routes import ExplainWorker
    from extender.ui import build_ui_router

    class Saturated(RuntimeError):
        retry_after = 2

    class Refusing:
        async def request(self, fn: Any, *args: Any) -> Any:
            raise Saturated("engine saturated: 128 requests pending")

    from fastapi import FastAPI

    app = FastAPI()
    app.include_router(build_ui_router(ExplainWorker(scheduler, Refusing()), list, max_body_bytes=1 << 20))
    client = TestClient(app)
    for resp in (client.get("/ui/api/overview"), client.get("/ui/api/pods"), client.get("/ui/api/nodes"),
                 client.get("/ui/api/pods/shop/web-pending"), client.get("/ui/api/devices/ml/llm-finetune"),
                 client.post("/ui/api/whatif", json={"pod": "metadata: {name: x}\nspec: {containers: []}"}),
                 client.post("/ui/api/multicluster/place", json={"yaml": "kind: ResourceBinding"})):
        assert resp.status_code == 503 and resp.headers["retry-after"] == "2", resp.request.url
        assert resp.json() == {"Error": "engine saturated: 128 requests pending"}
