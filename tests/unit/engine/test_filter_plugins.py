"""The first filter plugins, with upstream's reasons and codes (ported from their *_test.go tables)."""

from __future__ import annotations

import pytest
from builders import make_node, make_pod
from plugin_harness import filter_verdicts

OK = ("Success", [])
SKIP = ("Skip", [])


def test_node_unschedulable() -> None:
    nodes = [make_node("free"), make_node("cordoned", unschedulable=True)]
    got = filter_verdicts("NodeUnschedulable", make_pod(), nodes)
    assert got == {"free": OK, "cordoned": ("UnschedulableAndUnresolvable", ["node(s) were unschedulable"])}
    tolerant = make_pod(tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                      "effect": "NoSchedule"}])
    assert filter_verdicts("NodeUnschedulable", tolerant, nodes)["cordoned"] == OK
    wrong_effect = make_pod(tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                          "effect": "NoExecute"}])
    assert filter_verdicts("NodeUnschedulable", wrong_effect, nodes)["cordoned"][0] == "UnschedulableAndUnresolvable"


def test_node_name() -> None:
    nodes = [make_node("a"), make_node("b")]
    assert filter_verdicts("NodeName", make_pod(), nodes) == {"a": OK, "b": OK}
    pinned = make_pod(spec={"nodeName": "a"})
    assert filter_verdicts("NodeName", pinned, nodes) == {
        "a": OK, "b": ("UnschedulableAndUnresolvable", ["node(s) didn't match the requested node name"])}


@pytest.mark.parametrize(("taints", "tolerations", "fits"), [
    ([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}], [], False),
    ([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}],
     [{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}], True),
    ([{"key": "dedicated", "value": "user1", "effect": "NoSchedule"}],
     [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"}], False),
    ([{"key": "foo", "value": "bar", "effect": "NoSchedule"}],
     [{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}], True),
    ([{"key": "dedicated", "value": "user2", "effect": "NoSchedule"}, {"key": "dedicated", "value": "user1",
                                                                       "effect": "NoSchedule"}],
     [{"key": "dedicated", "operator": "Equal", "value": "user2", "effect": "NoSchedule"},
      {"key": "dedicated", "operator": "Equal", "value": "user1", "effect": "NoSchedule"}], True),
    ([{"key": "foo", "value": "bar", "effect": "NoSchedule"}],
     [{"key": "foo", "operator": "Equal", "value": "bar", "effect": "PreferNoSchedule"}], False),
    ([{"key": "foo", "value": "bar", "effect": "NoSchedule"}],
     [{"key": "foo", "operator": "Equal", "value": "bar"}], True),  # an empty effect matches every effect
    ([{"key": "foo", "value": "bar", "effect": "PreferNoSchedule"}], [], True),  # soft taints do not filter
    ([{"key": "foo", "value": "bar", "effect": "NoExecute"}], [], False),
    ([{"key": "foo", "value": "bar", "effect": "NoExecute"}], [{"operator": "Exists"}], True),
])
def test_taint_toleration_filter(taints: list[dict[str, str]], tolerations: list[dict[str, str]],
                                 fits: bool) -> None:
    got = filter_verdicts("TaintToleration", make_pod(tolerations=tolerations), [make_node("n", taints=taints)])
    expected = OK if fits else ("UnschedulableAndUnresolvable", ["node(s) had untolerated taint(s)"])
    assert got["n"] == expected


def test_node_affinity_selector_and_terms() -> None:
    nodes = [make_node("ssd", labels={"disk": "ssd", "zone": "a"}), make_node("hdd", labels={"disk": "hdd"})]
    assert filter_verdicts("NodeAffinity", make_pod(), nodes) == {"ssd": SKIP, "hdd": SKIP}
    bad = ("UnschedulableAndUnresolvable", ["node(s) didn't match Pod's node affinity/selector"])
    by_selector = make_pod(spec={"nodeSelector": {"disk": "ssd"}})
    assert filter_verdicts("NodeAffinity", by_selector, nodes) == {"ssd": OK, "hdd": bad}
    by_terms = make_pod(spec={"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Exists"}]},
                              {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["hdd"]}]}]}}}})
    assert filter_verdicts("NodeAffinity", by_terms, nodes) == {"ssd": OK, "hdd": OK}
    both = make_pod(spec={**by_terms["spec"], "nodeSelector": {"disk": "hdd"}})
    assert filter_verdicts("NodeAffinity", both, nodes) == {"ssd": bad, "hdd": OK}


def test_node_affinity_conflicting_name_terms_reject_in_prefilter() -> None:
    pod = make_pod(spec={"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["a"]},
            {"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}})
    got = filter_verdicts("NodeAffinity", pod, [make_node("a"), make_node("b")])
    assert got == {n: ("UnschedulableAndUnresolvable", ["pod affinity terms conflict"]) for n in ("a", "b")}


def test_node_affinity_added_affinity() -> None:
    args = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}]}}}
    nodes = [make_node("batch", labels={"pool": "batch"}), make_node("web", labels={"pool": "web"})]
    got = filter_verdicts("NodeAffinity", make_pod(), nodes, args)
    assert got == {"batch": OK, "web": ("UnschedulableAndUnresolvable",
                                        ["node(s) didn't match scheduler-enforced node affinity"])}


def test_node_ports() -> None:
    nodes = [make_node("busy"), make_node("free")]
    existing = [make_pod("web", node="busy", host_ports=[8080, (53, "UDP", "127.0.0.1")])]
    conflict = ("Unschedulable", ["node(s) didn't have free ports for the requested pod ports"])
    got = filter_verdicts("NodePorts", make_pod(host_ports=[8080]), nodes + existing)
    assert got == {"busy": conflict, "free": OK}
    got = filter_verdicts("NodePorts", make_pod(host_ports=[(8080, "UDP", "")]), nodes + existing)
    assert got["busy"] == OK  # another protocol
    got = filter_verdicts("NodePorts", make_pod(host_ports=[(53, "UDP", "127.0.0.2")]), nodes + existing)
    assert got["busy"] == OK  # another address
    got = filter_verdicts("NodePorts", make_pod(host_ports=[(53, "UDP", "0.0.0.0")]), nodes + existing)
    assert got["busy"] == conflict  # 0.0.0.0 overlaps every address
    assert filter_verdicts("NodePorts", make_pod(), nodes + existing) == {"busy": SKIP, "free": SKIP}


def test_sidecar_init_container_ports_count() -> None:
    existing = make_pod("side", node="n", spec={"initContainers": [{"name": "proxy", "restartPolicy": "Always",
                                                                    "ports": [{"containerPort": 15001,
                                                                               "hostPort": 15001}]}]})
    got = filter_verdicts("NodePorts", make_pod(host_ports=[15001]), [make_node("n"), existing])
    assert got["n"][0] == "Unschedulable"


FIT_NODE = dict(cpu="10m", memory="20", pods="32", extra={"example.com/aaa": 5, "hugepages-2Mi": "4"})


@pytest.mark.parametrize(("pod_requests", "used", "code", "reasons"), [
    ([], [{"cpu": "10m", "memory": "20"}], "Success", []),
    ([{"cpu": "1m", "memory": "1"}], [{"cpu": "10m", "memory": "20"}], "Unschedulable",
     ["Insufficient cpu", "Insufficient memory"]),
    ([{"cpu": "1m", "memory": "1"}], [{"cpu": "5m", "memory": "5"}], "Success", []),
    ([{"cpu": "3m", "memory": "1"}, {"cpu": "8m", "memory": "1"}], [{"cpu": "5m", "memory": "5"}],
     "UnschedulableAndUnresolvable", ["Insufficient cpu"]),
    ([{"cpu": "1m", "memory": "2"}], [{"cpu": "9m", "memory": "19"}], "Unschedulable", ["Insufficient memory"]),
    ([{"example.com/aaa": "6"}], [], "UnschedulableAndUnresolvable", ["Insufficient example.com/aaa"]),
    ([{"example.com/aaa": "3"}], [{"example.com/aaa": "3"}], "Unschedulable", ["Insufficient example.com/aaa"]),
    ([{"example.com/unknown": "1"}], [], "UnschedulableAndUnresolvable", ["Insufficient example.com/unknown"]),
    ([{"hugepages-2Mi": "6"}], [], "UnschedulableAndUnresolvable", ["Insufficient hugepages-2Mi"]),
])
def test_node_resources_fit_filter(pod_requests: list[dict[str, str]], used: list[dict[str, str]], code: str,
                                   reasons: list[str]) -> None:
    objects = [make_node("n", **FIT_NODE)]  # type: ignore[arg-type]
    if used:
        objects.append(make_pod("existing", node="n", requests=used))
    got = filter_verdicts("NodeResourcesFit", make_pod(requests=pod_requests), objects)
    assert got["n"] == (code, reasons)


def test_node_resources_fit_too_many_pods_is_resolvable() -> None:
    objects = [make_node("n", pods="1"), make_pod("existing", node="n")]
    assert filter_verdicts("NodeResourcesFit", make_pod(), objects)["n"] == ("Unschedulable", ["Too many pods"])
    got = filter_verdicts("NodeResourcesFit", make_pod(requests=[{"cpu": "8"}]), objects)
    assert got["n"] == ("UnschedulableAndUnresolvable", ["Too many pods", "Insufficient cpu"])


def test_node_resources_fit_ignored_resources() -> None:
    objects = [make_node("n")]
    pod = make_pod(requests=[{"example.com/foo": "1", "other.io/bar": "1"}])
    got = filter_verdicts("NodeResourcesFit", pod, objects, {"ignoredResources": ["example.com/foo"]})
    assert got["n"] == ("UnschedulableAndUnresolvable", ["Insufficient other.io/bar"])
    got = filter_verdicts("NodeResourcesFit", pod, objects, {"ignoredResourceGroups": ["example.com", "other.io"]})
    assert got["n"] == OK


def test_node_resources_fit_counts_init_and_sidecar_peaks() -> None:
    objects = [make_node("n", cpu="2")]
    init_heavy = make_pod(requests=[{"cpu": "500m"}], spec={"initContainers": [
        {"name": "init", "resources": {"requests": {"cpu": "3"}}}]})
    assert filter_verdicts("NodeResourcesFit", init_heavy, objects)["n"][1] == ["Insufficient cpu"]
    sidecar = make_pod(requests=[{"cpu": "1500m"}], spec={"initContainers": [
        {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "600m"}}}]})
    assert filter_verdicts("NodeResourcesFit", sidecar, objects)["n"][1] == ["Insufficient cpu"]
    overhead = make_pod(requests=[{"cpu": "1900m"}], spec={"overhead": {"cpu": "200m"}})
    assert filter_verdicts("NodeResourcesFit", overhead, objects)["n"][1] == ["Insufficient cpu"]
