"""filter and prioritize with a full NodeList: nodes the cache holds at the same resourceVersion are the
cached nodes and are echoed byte for byte; anything else is decoded and used as sent; bad bodies get a 400
naming the field, whichever decoder read them."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from builders import make_node, make_pod
from fastapi.testclient import TestClient

from extender.api.app import create_app
from extender.api.candidates import _KEPT_POD_BYTES, _RECENT_NAME_LISTS, decode_candidate_args
from extender.api.wire import WireError
from extender.cluster.cache import ClusterCache
from extender.cluster.columns import NodeNames
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.scheduler import Scheduler

TAINT = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]


def cluster() -> ClusterCache:
    cache = ClusterCache(assumed_ttl_seconds=0)
    cache.upsert_node(make_node("small", cpu="1", memory="2Gi", resource_version="7"))
    cache.upsert_node(make_node("big", cpu="8", memory="32Gi", resource_version="7"))
    cache.upsert_pod(make_pod("busy", node="big", requests=[{"cpu": "4", "memory": "8Gi"}]))
    return cache


@pytest.fixture
def client() -> TestClient:
    return TestClient(create_app(Scheduler(cluster(), [Framework(build_profile(None))])))


def pod() -> dict[str, Any]:
    return make_pod("incoming", requests=[{"cpu": "2", "memory": "1Gi"}])


def test_passing_nodes_are_echoed_byte_for_byte(client: TestClient) -> None:
    # Odd spacing, key order and a field the engine never reads: the answer carries the items' own text.
    big = (b'{ "metadata" : {"resourceVersion":"7", "name":"big", "annotations": {"z": "1", "a": "2"}},'
           b'"status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}, "x-extra": [1, 2.50]}')
    body = b'{"Pod": ' + orjson.dumps(pod()) + b', "Nodes": {"items": [' + big + b']}}'
    resp = client.post("/filter", content=body, headers={"content-type": "application/json"})
    assert resp.status_code == 200
    assert big in resp.content
    assert resp.json()["Nodes"]["items"][0]["x-extra"] == [1, 2.50]


def test_same_version_is_the_cached_node_and_a_new_version_is_used_as_sent(client: TestClient) -> None:
    # The cached "big" has 8 cpu with 4 in use; the same version sent with 1 cpu is still the cached node
    # (the apiserver never gives two contents one resourceVersion) ...
    stale_text = make_node("big", cpu="1", memory="32Gi", resource_version="7")
    resp = client.post("/filter", json={"Pod": pod(), "Nodes": {"items": [stale_text]}})
    assert [n["metadata"]["name"] for n in resp.json()["Nodes"]["items"]] == ["big"]
    # ... while a new version is read as sent, with the cached pods still counted on it.
    newer = make_node("big", cpu="5", memory="32Gi", resource_version="8")
    resp = client.post("/filter", json={"Pod": pod(), "Nodes": {"items": [newer]}})
    assert resp.json()["FailedNodes"] == {"big": "Insufficient cpu"}
    # A node without a resourceVersion is always read as sent.
    unversioned = make_node("big", cpu="5", memory="32Gi")
    unversioned["metadata"].pop("resourceVersion", None)
    resp = client.post("/filter", json={"Pod": pod(), "Nodes": {"items": [unversioned]}})
    assert resp.json()["FailedNodes"] == {"big": "Insufficient cpu"}


def test_prioritize_with_nodes_scores_each_in_order(client: TestClient) -> None:
    items = [make_node("small", cpu="1", memory="2Gi", resource_version="7"),
             make_node("big", cpu="8", memory="32Gi", resource_version="7")]
    by_nodes = client.post("/prioritize", json={"Pod": pod(), "Nodes": {"items": items}}).json()
    by_names = client.post("/prioritize", json={"Pod": pod(), "NodeNames": ["small", "big"]}).json()
    assert by_nodes == by_names and [e["Host"] for e in by_nodes] == ["small", "big"]


def test_ambiguous_keys_decode_as_go_does(client: TestClient) -> None:
    # "pod" and "Pod" both name the Pod: the later one wins, as in Go, on the general decoder's path.
    other = make_pod("other", requests=[{"cpu": "100"}])
    body = (b'{"Pod": ' + orjson.dumps(other) + b', "pod": ' + orjson.dumps(pod()) + b', "Nodes": {"items": '
            + orjson.dumps([make_node("big", cpu="8", memory="32Gi", resource_version="7")]) + b'}}')
    resp = client.post("/filter", content=body, headers={"content-type": "application/json"})
    assert [n["metadata"]["name"] for n in resp.json()["Nodes"]["items"]] == ["big"]
    args = decode_candidate_args(body, 100)
    assert args.pod is not None and args.pod["metadata"]["name"] == "incoming"
    assert args.nodes is not None and [n.name for n in args.nodes] == ["big"]


@pytest.mark.parametrize(("body", "fragment"), [
    ({"Pod": {}, "Nodes": 5}, "Nodes"),
    ({"Pod": {}, "Nodes": {"items": "a"}}, "Nodes"),
    ({"Pod": {}, "Nodes": {"items": [{"metadata": {"name": "big"}}, 1]}}, "Nodes.items[1]"),
    ({"Pod": {}, "NodeNames": ["a", 1]}, "NodeNames[1]"),
    ({"Pod": {}, "NodeNames": {"a": 1}}, "NodeNames"),
    ({"Pod": [1], "NodeNames": ["a"]}, "Pod"),
])
def test_malformed_candidates_get_400_naming_the_field(client: TestClient, body: Any, fragment: str) -> None:
    for verb in ("filter", "prioritize"):
        resp = client.post(f"/{verb}", json=body)
        assert resp.status_code == 400 and fragment in resp.json()["Error"], resp.text
    with pytest.raises(WireError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        decode_candidate_args(orjson.dumps(body), 100)


@pytest.mark.parametrize("body", [
    b'{"Pod":{},"NodeNames":["a"],"\xc5":1}',  # a key
    b'{"Pod":{},"NodeNames":["a\xc5"]}',  # a node name
    b'{"Pod":{},"Nodes":{"items":[{"metadata":{"name":"n\xfe"}}]}}',  # a sent node's name
    b'{"Pod":{"metadata":{"name":"p"}},"NodeNames":["a"],"x":"' + b"y" * 300_000 + b'","\x85":1}',  # large
])
def test_a_body_that_is_not_utf8_gets_400_not_500(client: TestClient, body: bytes) -> None:
    """msgspec raises UnicodeDecodeError, not its DecodeError, for such a string: a fuzz found 500s."""
    for verb in ("filter", "prioritize"):
        resp = client.post(f"/{verb}", content=body)
        assert resp.status_code == 400 and resp.json()["Error"].startswith("invalid JSON"), resp.text


def test_a_node_that_cannot_be_read_is_a_filter_error_naming_it(client: TestClient) -> None:
    resp = client.post("/filter", json={"Pod": pod(), "Nodes": {"items": [{"metadata": 5}]}})
    assert resp.status_code == 200 and "Nodes.items[0]" in resp.json()["Error"]


def test_a_name_list_sent_again_is_decoded_once_and_a_repeated_name_is_refused_every_time() -> None:
    pod = make_pod("p")
    body = orjson.dumps({"Pod": pod, "NodeNames": ["small", "big"]})
    first = decode_candidate_args(body, 100).names
    again = decode_candidate_args(orjson.dumps({"NodeNames": ["small", "big"], "Pod": pod}), 100).names
    assert again is first and again == ["small", "big"]
    assert decode_candidate_args(orjson.dumps({"Pod": pod, "NodeNames": ["big"]}), 100).names == ["big"]
    client = TestClient(create_app(Scheduler(cluster(), [Framework(build_profile(None))])))
    twice = orjson.dumps({"Pod": pod, "NodeNames": ["small", "big", "small"]})
    for verb in ("filter", "prioritize", "filter"):
        resp = client.post(f"/{verb}", content=twice, headers={"content-type": "application/json"})
        assert resp.status_code == 400 and "'small' appears more than once" in resp.json()["Error"], verb


def test_prioritize_answers_every_name_as_sent_in_order_whatever_its_characters() -> None:
    client = TestClient(create_app(Scheduler(cluster(), [Framework(build_profile(None))])))
    odd = ['quo"te', "back\\slash", "ünïcode", "line\u2028sep", "tab\tname", "</script>"]
    names = ["big", *odd, "small"]
    resp = client.post("/prioritize", content=orjson.dumps({"Pod": make_pod("p"), "NodeNames": names}),
                       headers={"content-type": "application/json"})
    assert resp.status_code == 200
    answer = orjson.loads(resp.content)
    assert [entry["Host"] for entry in answer] == names
    assert all(list(entry) == ["Host", "Score"] and 0 <= entry["Score"] <= 10 for entry in answer)
    assert [entry["Score"] for entry in answer[1:-1]] == [0] * len(odd)  # unknown nodes score 0


def test_prioritize_after_filter_reads_the_passed_names_as_answered(client: TestClient) -> None:
    # kube-scheduler sends filter's NodeNames back to prioritize as the text it got (Go's json.Marshal of the
    # list, as ours): that text is found decoded, with its rows, and scores exactly as a list decoded afresh.
    cache = cluster()
    cache.upsert_node(make_node("spare", cpu="4", memory="8Gi", resource_version="3"))
    scheduler = Scheduler(cache, [Framework(build_profile(None))])
    fresh = TestClient(create_app(scheduler))
    filtered = fresh.post("/filter", json={"Pod": pod(), "NodeNames": ["small", "big", "spare", "gone"]})
    passed_text = orjson.dumps(filtered.json()["NodeNames"])
    assert passed_text == b'["big","spare"]' and passed_text in filtered.content
    # Held before any prioritize: the answered list, decoded and known to name each node once, and its rows.
    held_names = _RECENT_NAME_LISTS.get(passed_text)
    assert held_names == ["big", "spare"] and isinstance(held_names, NodeNames) and held_names.unique()
    columns = scheduler.cache.snapshot().columns
    assert columns._named.get(passed_text).tolist() == columns.rows_named(["big", "spare"]).tolist()
    body = b'{"Pod":' + orjson.dumps(pod()) + b',"NodeNames":' + passed_text + b"}"
    assert decode_candidate_args(body, 100).names is held_names
    held = fresh.post("/prioritize", content=body, headers={"content-type": "application/json"}).json()
    spaced = b'{"Pod":' + orjson.dumps(pod()) + b',"NodeNames": [ "big", "spare" ]}'  # other text: decoded anew
    assert held == fresh.post("/prioritize", content=spaced, headers={"content-type": "application/json"}).json()
    assert [entry["Host"] for entry in held] == ["big", "spare"]
    # A node leaving between the calls: the rows found for the answer are not used for the names any more.
    cache.remove_node("big")
    after = fresh.post("/prioritize", content=body, headers={"content-type": "application/json"}).json()
    assert after[0] == {"Host": "big", "Score": 0} and after[1] == held[1]


def test_a_filter_passing_every_name_answers_the_requests_own_list() -> None:
    """What kube-scheduler usually sends is the nodes its own filters passed, and the same plugins pass them all
    again: the answer is then the request's own list and text (which found its rows already), and prioritize
    finds it decoded. One name failing gives a list of its own, as before."""
    cache = cluster()
    scheduler = Scheduler(cache, [Framework(build_profile(None))])
    fresh = TestClient(create_app(scheduler))
    text = b'["big", "small"]'  # spaced as a hand-written request may be: answered as it came
    small_pod = make_pod("incoming", requests=[{"cpu": "100m", "memory": "64Mi"}])
    body = b'{"Pod":' + orjson.dumps(small_pod) + b',"NodeNames":' + text + b"}"
    filtered = fresh.post("/filter", content=body, headers={"content-type": "application/json"})
    assert filtered.status_code == 200 and filtered.json()["NodeNames"] == ["big", "small"]
    assert b'"NodeNames":' + text in filtered.content
    held = _RECENT_NAME_LISTS.get(text)
    assert held is not None and decode_candidate_args(body, 100).names is held
    assert scheduler.filter(None, small_pod, held, None).passed is held
    prioritized = fresh.post("/prioritize", content=body, headers={"content-type": "application/json"})
    assert [entry["Host"] for entry in prioritized.json()] == ["big", "small"]
    narrowed = scheduler.filter(None, pod(), held, None)  # two CPUs: small has one
    assert narrowed.passed == ["big"] and narrowed.passed is not held and narrowed.passed.text == b'["big"]'


def test_the_pod_sent_again_is_decoded_once_and_a_changed_pod_afresh() -> None:
    # kube-scheduler encodes one pod object for filter and again for prioritize: the second finds it decoded,
    # and the record filter made of it is recognised at once. A pod that differs in anything is decoded anew.
    pod = make_pod("sent-twice", requests=[{"cpu": "1"}])
    pod["metadata"]["resourceVersion"] = "12"  # (kube-scheduler's pods always carry one)
    first = decode_candidate_args(orjson.dumps({"Pod": pod, "NodeNames": ["small", "big"]}), 100).pod
    again = decode_candidate_args(orjson.dumps({"Pod": pod, "NodeNames": ["big"]}), 100).pod
    assert again is first and first == pod
    relabelled = {**pod, "metadata": {**pod["metadata"], "labels": {"tier": "db"}}}
    other = decode_candidate_args(orjson.dumps({"NodeNames": ["big"], "Pod": relabelled}), 100).pod
    assert other == relabelled and other is not first
    scheduler = Scheduler(cluster(), [Framework(build_profile(None))])
    assert scheduler.pod_record(again) is scheduler.pod_record(first)
    assert scheduler.pod_record(other).labels == {"tier": "db"}


def test_a_pod_too_large_to_keep_is_decoded_where_it_lies_each_time() -> None:
    # Past _KEPT_POD_BYTES of text the pod is not kept (nor copied for the memo): each request decodes its own,
    # and the record filter made is still found by the pod's identity and content.
    pod = make_pod("large", requests=[{"cpu": "1"}])
    pod["metadata"].update(resourceVersion="5", annotations={"note": "x" * (_KEPT_POD_BYTES + 1)})
    first = decode_candidate_args(orjson.dumps({"Pod": pod, "NodeNames": ["big"]}), 100).pod
    again = decode_candidate_args(orjson.dumps({"Pod": pod, "NodeNames": ["big"]}), 100).pod
    assert first == again == pod and again is not first
    scheduler = Scheduler(cluster(), [Framework(build_profile(None))])
    assert scheduler.pod_record(again) is scheduler.pod_record(first)
    with pytest.raises(WireError, match="Pod: expected a Pod object, got string"):
        decode_candidate_args(orjson.dumps({"Pod": "x" * (_KEPT_POD_BYTES + 1), "NodeNames": ["big"]}), 100)
