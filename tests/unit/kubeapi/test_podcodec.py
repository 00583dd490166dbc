"""Decoding pods straight into the kept fields gives exactly what decoding everything and trimming gives."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.cluster import make_pod
from extender.cluster.records import slim_pod
from extender.kubeapi.podcodec import decode_pod_event, decode_pod_list

WIRE = Path(__file__).resolve().parents[2] / "fixtures" / "wire" / "v1.37.2"


def real_pods() -> list[dict[str, Any]]:
    """Pods as kube-scheduler and the apiserver serialised them, plus generated ones with extras."""
    pods: list[dict[str, Any]] = []
    for victims in orjson.loads((WIRE / "preempt-victims.json").read_bytes())["NodeNameToVictims"].values():
        pods.extend(victims["Pods"])
    pods.append(orjson.loads((WIRE / "filter-nodes.json").read_bytes())["Pod"])
    rng = random.Random(3)
    for i in range(20):
        pod = make_pod(f"p{i}", "ns", "web", rng, "node-1", affinity="anti" if i % 2 else "", spread=i % 3 == 0)
        pod["metadata"]["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]
        pod["spec"]["volumes"] = [{"name": "token", "projected": {"sources": []}},
                                  {"name": "data", "persistentVolumeClaim": {"claimName": f"c{i}"}}]
        pod["status"]["conditions"] = [{"type": "Ready", "status": "True"},
                                       {"type": "PodResizePending", "reason": "Infeasible"}]
        pod["status"]["containerStatuses"] = [{"name": "web", "ready": True, "resources": {"requests": {"cpu": "1"}}}]
        pods.append(pod)
    return pods


def test_list_pages_decode_to_the_trimmed_pods() -> None:
    pods = real_pods()
    body = orjson.dumps({"kind": "PodList", "metadata": {"resourceVersion": "42", "continue": "tok"}, "items": pods})
    page = decode_pod_list(body)
    assert page["metadata"] == {"resourceVersion": "42", "continue": "tok"}
    assert page["items"] == [slim_pod(p) for p in pods]
    assert [slim_pod(p) for p in page["items"]] == page["items"]  # already trimmed: trimming again is a no-op


def test_watch_events_decode_to_the_trimmed_pod() -> None:
    for pod in real_pods():
        event = decode_pod_event(orjson.dumps({"type": "MODIFIED", "object": pod}))
        assert event == {"type": "MODIFIED", "object": slim_pod(pod)}


def test_unexpected_shapes_fall_back_to_the_general_path() -> None:
    error = {"type": "ERROR", "object": {"kind": "Status", "status": "Failure", "code": 410, "reason": "Expired"}}
    assert decode_pod_event(orjson.dumps(error)) == error
    odd = {"metadata": {}, "items": [{"metadata": {"name": "x"}, "spec": {"containers": ["not-an-object"]}}]}
    assert decode_pod_list(orjson.dumps(odd)) == odd  # the cache then reports the bad container itself


json_values = st.recursive(st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                       max_size=3), max_leaves=6)
containers = st.lists(st.fixed_dictionaries({}, optional={
    "name": st.text(max_size=3), "image": st.text(max_size=3), "resources": json_values, "ports": json_values,
    "restartPolicy": st.sampled_from(["Always", "Never"]), "env": json_values, "command": json_values}), max_size=2)
pods = st.fixed_dictionaries({}, optional={
    "apiVersion": st.just("v1"),
    "metadata": st.fixed_dictionaries({}, optional={
        "name": st.text(max_size=3), "namespace": st.text(max_size=3), "uid": st.text(max_size=3),
        "labels": st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
        "deletionTimestamp": st.none() | st.just("2026-01-01T00:00:00Z"), "annotations": json_values,
        "managedFields": json_values}),
    "spec": st.fixed_dictionaries({}, optional={
        "nodeName": st.text(max_size=3), "affinity": json_values, "tolerations": json_values,
        "containers": containers, "initContainers": containers, "volumes": st.lists(st.fixed_dictionaries(
            {"name": st.text(max_size=2)}, optional={"projected": json_values, "persistentVolumeClaim": json_values,
                                                    "emptyDir": json_values}), max_size=3),
        "dnsPolicy": st.just("ClusterFirst"), "priority": st.integers(0, 9)}),
    "status": st.fixed_dictionaries({}, optional={
        "phase": st.sampled_from(["Running", "Pending"]), "hostIP": st.text(max_size=3),
        "conditions": st.lists(st.fixed_dictionaries({"type": st.sampled_from(["Ready", "PodResizePending"])},
                                                     optional={"reason": st.text(max_size=3)}), max_size=2),
        "containerStatuses": st.lists(st.fixed_dictionaries({}, optional={
            "name": st.text(max_size=2), "resources": json_values, "ready": st.booleans()}), max_size=2)}),
})


@settings(max_examples=300, deadline=None)
@given(st.lists(pods, max_size=4))
def test_any_well_formed_pod_decodes_like_trimming(items: list[dict[str, Any]]) -> None:
    page = decode_pod_list(orjson.dumps({"metadata": {"resourceVersion": "1"}, "items": items}))
    assert page["items"] == [slim_pod(p) for p in items]


def test_conditions_none_of_which_is_kept_are_left_out_by_both_trims() -> None:
    # The Binding's version of a pod adds PodScheduled, which no plugin reads: with nothing kept the field is
    # left out, in the codec's pod and in slim_pod's alike, so that version equals the assumed one.
    pod = {"kind": "Pod", "metadata": {"name": "a", "namespace": "ns"}, "spec": {"containers": []},
           "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]}}
    event = decode_pod_event(orjson.dumps({"type": "MODIFIED", "object": pod}))
    assert event["object"] == slim_pod(pod) and "conditions" not in slim_pod(pod)["status"]
    kept = {**pod, "status": {"conditions": [{"type": "PodResizePending", "reason": "Infeasible"}]}}
    assert slim_pod(kept)["status"]["conditions"] == [{"type": "PodResizePending", "reason": "Infeasible"}]


def test_replicas_share_their_spec_parts_and_odd_parts_decode_as_trimming_does() -> None:
    # Pods of one template send their containers, tolerations, affinity, spreading and volumes as the same
    # text: the codec keeps one decoded copy of each (a cache of 150k pods holds a few, not 150k), and what it
    # gives still equals trimming the pod.
    first, second = (make_pod(name, "ns", "web", random.Random(7), "node-1", affinity="anti", spread=True)
                     for name in ("a", "b"))
    first["spec"]["volumes"] = second["spec"]["volumes"] = [{"name": "t", "projected": {}},
                                                            {"name": "d", "persistentVolumeClaim": {"claimName": "c"}}]
    one, two = (decode_pod_event(orjson.dumps({"type": "ADDED", "object": pod}))["object"] for pod in (first, second))
    assert (one, two) == (slim_pod(first), slim_pod(second))
    for field in ("containers", "tolerations", "affinity", "topologySpreadConstraints", "volumes"):
        assert field in one["spec"] and one["spec"][field] is two["spec"][field], field
    assert one["metadata"] is not two["metadata"]  # the pod's own fields are its own
    # Null parts: left out where trimming leaves them out (containers, volumes), kept as null elsewhere.
    nulls = {"metadata": {"name": "n"}, "spec": {"containers": None, "volumes": None, "affinity": None,
                                                  "tolerations": None, "nodeName": "node-1"}}
    assert decode_pod_event(orjson.dumps({"type": "ADDED", "object": nulls}))["object"] == slim_pod(nulls)
    # A part that is not what it must be: the general path, which keeps it for the record to report.
    odd = {"metadata": {"name": "o"}, "spec": {"containers": {"name": "not-a-list"}, "tolerations": [{"key": "k"}]}}
    event = {"type": "MODIFIED", "object": odd}
    assert decode_pod_event(orjson.dumps(event)) == event


def test_pods_with_labels_of_their_own_do_not_push_other_templates_parts_out() -> None:
    # A StatefulSet's pods each carry their own index label: thousands of label texts seen once. The replicas
    # of a Deployment decoded before and after them still share their containers.
    def event(pod: dict[str, Any]) -> dict[str, Any]:
        return decode_pod_event(orjson.dumps({"type": "ADDED", "object": pod}))["object"]

    web = {"metadata": {"name": "web-1", "labels": {"app": "web"}},
           "spec": {"containers": [{"name": "web", "image": "web:1", "resources": {"requests": {"cpu": "1"}}}]}}
    first = event(web)
    for i in range(5000):
        event({"metadata": {"name": f"db-{i}", "labels": {"app": "db", "apps.kubernetes.io/pod-index": str(i)}},
               "spec": {"containers": [{"name": "db", "image": "db:1"}]}})
    again = event({**web, "metadata": {"name": "web-2", "labels": {"app": "web"}}})
    assert again["spec"]["containers"] is first["spec"]["containers"]
