"""Contract test: the exact requests kube-scheduler v1.36.3 and v1.37.2 sent (tests/fixtures/wire/<tag>/) decode
with our models, and the service (following the release that sent them) answers each of them in the shape
kube-scheduler reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient

from extender.api.app import create_app
from extender.api.candidates import decode_candidate_args, remember_names
from extender.api.http import SPLIT_OBJECT
from extender.api.wire import ExtenderArgs, ExtenderBindingArgs, decode, decode_preemption
from extender.cluster.cache import ClusterCache
from extender.cluster.columns import NodeNames
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.scheduler import Scheduler
from extender.kube.release import release

WIRE_ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "wire"
RELEASES = {"v1.36.3": 36, "v1.37.2": 37}
_recording: list[str] = ["v1.36.3"]  # the release whose recording load() reads (set by the tag fixture)


@pytest.fixture(params=sorted(RELEASES), autouse=True)
def tag(request: pytest.FixtureRequest) -> str:
    """Every test runs on each release's recording."""
    _recording[0] = str(request.param)
    return str(request.param)


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads((WIRE_ROOT / _recording[0] / name).read_bytes())
    return data


def framework(tag: str) -> Framework:
    return Framework(build_profile(None, release=release(RELEASES[tag])))


def recorded_cluster(victim_uids_from: str = "preempt-victims.json") -> ClusterCache:
    """The cluster the recording ran on, rebuilt from what the requests carry.

    The two preempt fixtures come from separate runs; the victims' UIDs can be taken from either file.
    """
    cache = ClusterCache(assumed_ttl_seconds=0)
    for node in load("filter-nodes.json")["Nodes"]["items"]:
        cache.upsert_node({**node, "kind": "Node"})
    meta = load("preempt-metavictims.json")["NodeNameToMetaVictims"]
    for node, victims in load("preempt-victims.json")["NodeNameToVictims"].items():
        for i, pod in enumerate(victims["Pods"]):
            if victim_uids_from == "preempt-metavictims.json":
                pod = {**pod, "metadata": {**pod["metadata"], "uid": meta[node]["Pods"][i]["UID"]}}
            cache.upsert_pod({**pod, "kind": "Pod"})
    return cache


@pytest.fixture
def client(tag: str) -> TestClient:
    return TestClient(create_app(Scheduler(recorded_cluster(), [framework(tag)])))


def test_every_fixture_decodes() -> None:
    names = sorted(p.name for p in (WIRE_ROOT / _recording[0]).glob("*.json"))
    assert {"filter-nodenames.json", "filter-nodes.json", "prioritize-nodenames.json", "prioritize-nodes.json",
            "bind.json", "preempt-metavictims.json", "preempt-victims.json"} <= set(names)
    args = decode(load("filter-nodenames.json"), ExtenderArgs)
    assert args.Pod is not None and args.Nodes is None and args.NodeNames
    args = decode(load("filter-nodes.json"), ExtenderArgs)
    assert args.NodeNames is None and args.Nodes is not None and args.Nodes.items
    binding = decode(load("bind.json"), ExtenderBindingArgs)
    assert binding.PodName and binding.PodNamespace and binding.PodUID and binding.Node
    meta = decode_preemption(load("preempt-metavictims.json"))
    assert meta.NodeNameToVictims is None and meta.NodeNameToMetaVictims
    assert all(v is not None and v.Pods and v.Pods[0].UID for v in meta.NodeNameToMetaVictims.values())
    full = decode_preemption(load("preempt-victims.json"))
    assert full.NodeNameToMetaVictims is None and full.NodeNameToVictims


def test_lowercase_copies_decode_the_same() -> None:
    """Go matches field names case-insensitively; so do we (types_test.go TestCompatibility)."""
    def lower(obj: Any, depth: int) -> Any:
        if isinstance(obj, dict) and depth > 0:
            return {k.lower(): lower(v, depth - 1) for k, v in obj.items()}
        return obj
    original = decode_preemption(load("preempt-metavictims.json"))
    lowered = decode_preemption({k.lower(): ({n: lower(v, 3) for n, v in v.items()} if isinstance(v, dict) and
                                             k != "Pod" else v) for k, v in load("preempt-metavictims.json").items()})
    assert lowered == original


def test_answers_to_recorded_requests(client: TestClient) -> None:
    for name in ("filter-nodenames.json", "filter-nodes.json"):
        body = client.post("/filter", json=load(name)).json()
        assert set(body) == {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes", "Error"}
        assert body["Error"] == ""
    for name in ("prioritize-nodenames.json", "prioritize-nodes.json"):
        body = client.post("/prioritize", json=load(name)).json()
        assert isinstance(body, list) and all(set(e) == {"Host", "Score"} and 0 <= e["Score"] <= 10 for e in body)


def test_preempt_with_recorded_victims(tag: str) -> None:
    """Both nodes are full with a 1500m victim each; the 'critical' pod fits on either once it is gone."""
    for name in ("preempt-metavictims.json", "preempt-victims.json"):
        client = TestClient(create_app(Scheduler(recorded_cluster(name), [framework(tag)])))
        request = load(name)
        body = client.post("/preempt", json=request).json()
        assert set(body) == {"NodeNameToMetaVictims"}
        kept = body["NodeNameToMetaVictims"]
        assert set(kept) == {"node-a", "node-b"}
        proposed = request["NodeNameToMetaVictims"] or {
            node: {"Pods": [{"UID": p["metadata"]["uid"]} for p in v["Pods"]]}
            for node, v in request["NodeNameToVictims"].items()}
        for node, victims in kept.items():
            assert victims == {"Pods": proposed[node]["Pods"], "NumPDBViolations": 0}


def test_prioritize_names_are_sent_as_we_encode_them(tag: str) -> None:
    # The service keeps a filter's passed names by the JSON text it answers them with (NodeNames.encoded) and
    # finds them when prioritize sends that text back: each release's kube-scheduler must write the list byte
    # for byte as we do, and in the order it was given (its filter got both nodes, in this order, and the
    # recording extender passed them all).
    sent = (WIRE_ROOT / tag / "prioritize-nodenames.json").read_bytes()
    filtered = load("filter-nodenames.json")["NodeNames"]
    answered = NodeNames.encoded(filtered, unique=True)
    assert bytes(SPLIT_OBJECT.decode(sent)["NodeNames"]) == answered.text
    remember_names(answered)
    assert decode_candidate_args(sent, 100).names is answered
