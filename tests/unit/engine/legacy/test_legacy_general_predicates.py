"""v1.12 GeneralPredicates and its parts, CheckNodeLabelPresence and CheckServiceAffinity, against
upstream's tables (k8s.io/kubernetes v1.12.10 pkg/scheduler/algorithm/predicates/predicates_test.go:
TestPodFitsResources, TestPodFitsHost, TestPodFitsHostPorts, TestPodFitsSelector, TestNodeLabelPresence,
TestServiceAffinity, TestRunGeneralPredicates)."""

from __future__ import annotations

from typing import Any

import pytest
from test_legacy_harness import Obj, container, fits, node, obj, pod, resource_pod, resources, verdicts

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"


def allocatable(milli_cpu: int, memory: int, pods: int, ext_a: int, storage: int, huge_a: int) -> dict[str, Any]:
    """makeAllocatableResources."""
    return {"cpu": f"{milli_cpu}m", "memory": memory, "pods": pods, EXT_A: ext_a, "ephemeral-storage": storage,
            HUGE_A: huge_a}


def r(cpu: int = 0, mem: int = 0, **kw: Any) -> Obj:
    return resources(cpu, mem, **kw)


def insufficient(*names: str) -> list[str]:
    return [f"Insufficient {n}" for n in names]


# (name, pod, existing pod usage (one pod), reasons; [] = fits, ignored extended resources)
ENOUGH_PODS = [
    ("no resources requested always fits", pod(), r(10, 20), [], None),
    ("too many resources fails", resource_pod(r(1, 1)), r(10, 20), insufficient("cpu", "memory"), None),
    ("too many resources fails due to init container cpu", resource_pod(r(1, 1), init=[r(3, 1)]), r(8, 19),
     insufficient("cpu"), None),
    ("too many resources fails due to highest init container cpu",
     resource_pod(r(1, 1), init=[r(3, 1), r(2, 1)]), r(8, 19), insufficient("cpu"), None),
    ("too many resources fails due to init container memory", resource_pod(r(1, 1), init=[r(1, 3)]), r(9, 19),
     insufficient("memory"), None),
    ("too many resources fails due to highest init container memory",
     resource_pod(r(1, 1), init=[r(1, 3), r(1, 2)]), r(9, 19), insufficient("memory"), None),
    ("init container fits because it's the max, not sum, of containers and init containers",
     resource_pod(r(1, 1), init=[r(1, 1)]), r(9, 19), [], None),
    ("multiple init containers fit because it's the max, not sum, of containers and init containers",
     resource_pod(r(1, 1), init=[r(1, 1), r(1, 1)]), r(9, 19), [], None),
    ("both resources fit", resource_pod(r(1, 1)), r(5, 5), [], None),
    ("one resource memory fits", resource_pod(r(2, 1)), r(9, 5), insufficient("cpu"), None),
    ("one resource cpu fits", resource_pod(r(1, 2)), r(5, 19), insufficient("memory"), None),
    ("equal edge case", resource_pod(r(5, 1)), r(5, 19), [], None),
    ("equal edge case for init container", resource_pod(r(4, 1), init=[r(5, 1)]), r(5, 19), [], None),
    ("extended resource fits", resource_pod(r(scalars={EXT_A: 1})), r(), [], None),
    ("extended resource fits for init container", resource_pod(r(), init=[r(scalars={EXT_A: 1})]), r(), [], None),
    ("extended resource capacity enforced", resource_pod(r(1, 1, scalars={EXT_A: 10})), r(scalars={EXT_A: 0}),
     insufficient(EXT_A), None),
    ("extended resource capacity enforced for init container",
     resource_pod(r(), init=[r(1, 1, scalars={EXT_A: 10})]), r(scalars={EXT_A: 0}), insufficient(EXT_A), None),
    ("extended resource allocatable enforced", resource_pod(r(1, 1, scalars={EXT_A: 1})), r(scalars={EXT_A: 5}),
     insufficient(EXT_A), None),
    ("extended resource allocatable enforced for init container",
     resource_pod(r(), init=[r(1, 1, scalars={EXT_A: 1})]), r(scalars={EXT_A: 5}), insufficient(EXT_A), None),
    ("extended resource allocatable enforced for multiple containers",
     resource_pod(r(1, 1, scalars={EXT_A: 3}), r(1, 1, scalars={EXT_A: 3})), r(scalars={EXT_A: 2}),
     insufficient(EXT_A), None),
    ("extended resource allocatable admits multiple init containers",
     resource_pod(r(), init=[r(1, 1, scalars={EXT_A: 3}), r(1, 1, scalars={EXT_A: 3})]), r(scalars={EXT_A: 2}),
     [], None),
    ("extended resource allocatable enforced for multiple init containers",
     resource_pod(r(), init=[r(1, 1, scalars={EXT_A: 6}), r(1, 1, scalars={EXT_A: 3})]), r(scalars={EXT_A: 2}),
     insufficient(EXT_A), None),
    ("extended resource allocatable enforced for unknown resource", resource_pod(r(1, 1, scalars={EXT_B: 1})), r(),
     insufficient(EXT_B), None),
    ("extended resource allocatable enforced for unknown resource for init container",
     resource_pod(r(), init=[r(1, 1, scalars={EXT_B: 1})]), r(), insufficient(EXT_B), None),
    ("kubernetes.io resource capacity enforced", resource_pod(r(1, 1, scalars={K8S_IO_A: 10})), r(),
     insufficient(K8S_IO_A), None),
    ("kubernetes.io resource capacity enforced for init container",
     resource_pod(r(), init=[r(1, 1, scalars={K8S_IO_B: 10})]), r(), insufficient(K8S_IO_B), None),
    ("hugepages resource capacity enforced", resource_pod(r(1, 1, scalars={HUGE_A: 10})), r(scalars={HUGE_A: 0}),
     insufficient(HUGE_A), None),
    ("hugepages resource capacity enforced for init container",
     resource_pod(r(), init=[r(1, 1, scalars={HUGE_A: 10})]), r(scalars={HUGE_A: 0}), insufficient(HUGE_A), None),
    ("hugepages resource allocatable enforced for multiple containers",
     resource_pod(r(1, 1, scalars={HUGE_A: 3}), r(1, 1, scalars={HUGE_A: 3})), r(scalars={HUGE_A: 2}),
     insufficient(HUGE_A), None),
    ("skip checking ignored extended resource", resource_pod(r(1, 1, scalars={EXT_B: 1})), r(), [], [EXT_B]),
]


@pytest.mark.parametrize(("name", "incoming", "usage", "reasons", "ignored"), ENOUGH_PODS,
                         ids=[c[0] for c in ENOUGH_PODS])
def test_pod_fits_resources(name: str, incoming: Obj, usage: Obj, reasons: list[str], ignored: list[str] | None
                            ) -> None:
    objects = [node(allocatable=allocatable(10, 20, 32, 5, 20, 5)), resource_pod(usage, node_name="node")]
    args = {"ignoredExtendedResources": ignored} if ignored else None
    assert fits("PodFitsResources", incoming, objects, args) == (not reasons, reasons)


NOT_ENOUGH_PODS = [
    ("even without specified resources predicate fails when there's no space for additional pod", pod(), r(10, 20)),
    ("even if both resources fit predicate fails when there's no space for additional pod",
     resource_pod(r(1, 1)), r(5, 5)),
    ("even for equal edge case predicate fails when there's no space for additional pod",
     resource_pod(r(5, 1)), r(5, 19)),
    ("even for equal edge case predicate fails when there's no space for additional pod due to init container",
     resource_pod(r(5, 1), init=[r(5, 1)]), r(5, 19)),
]


@pytest.mark.parametrize(("name", "incoming", "usage"), NOT_ENOUGH_PODS, ids=[c[0] for c in NOT_ENOUGH_PODS])
def test_pod_fits_resources_pod_count(name: str, incoming: Obj, usage: Obj) -> None:
    objects = [node(allocatable=allocatable(10, 20, 1, 0, 0, 0)), resource_pod(usage, node_name="node")]
    assert fits("PodFitsResources", incoming, objects) == (False, ["Insufficient pods"])


STORAGE_PODS = [
    ("due to container scratch disk", resource_pod(r(1, 1)), r(10, 10), insufficient("cpu")),
    ("pod fit", resource_pod(r(1, 1)), r(2, 10), []),
    ("storage ephemeral local storage request exceeds allocatable", resource_pod(r(ephemeral=25)), r(2, 2),
     insufficient("ephemeral-storage")),
    ("pod fits", resource_pod(r(ephemeral=10)), r(2, 2), []),
]


@pytest.mark.parametrize(("name", "incoming", "usage", "reasons"), STORAGE_PODS, ids=[c[0] for c in STORAGE_PODS])
def test_pod_fits_resources_storage(name: str, incoming: Obj, usage: Obj, reasons: list[str]) -> None:
    objects = [node(allocatable=allocatable(10, 20, 32, 5, 20, 5)), resource_pod(usage, node_name="node")]
    assert fits("PodFitsResources", incoming, objects) == (not reasons, reasons)


def test_pod_fits_resources_counts_existing_init_containers_not() -> None:
    # v1.12's NodeInfo counted a pod's regular containers only (calculateResource); the incoming pod's own
    # init containers do count (GetResourceRequest).
    existing = resource_pod(r(2, 2), init=[r(9, 19)], node_name="node")
    objects = [node(allocatable=allocatable(10, 20, 32, 5, 20, 5)), existing]
    assert fits("PodFitsResources", resource_pod(r(8, 18)), objects) == (True, [])
    assert fits("PodFitsResources", resource_pod(r(1, 1), init=[r(9, 1)]), objects) == (False, insufficient("cpu"))


def test_pod_fits_resources_limits_default_requests_and_round_per_container() -> None:
    # SetDefaults_Pod: a limit stands in for a missing request. Resource.Add converts each container's
    # quantity before summing: two containers of 0.5m CPU need 1m each.
    objects = [node(allocatable={"cpu": "2m", "memory": 100, "pods": 10})]
    limited = pod(containers=[container(limits={"cpu": "3m"})])
    assert fits("PodFitsResources", limited, objects) == (False, insufficient("cpu"))
    halves = pod(containers=[container({"cpu": "0.0005"}), container({"cpu": "0.0005"})])
    assert fits("PodFitsResources", halves, objects) == (True, [])
    thirds = pod(containers=[container({"cpu": "0.0005"}), container({"cpu": "0.0005"}),
                             container({"cpu": "0.0005"})])
    assert fits("PodFitsResources", thirds, objects) == (False, insufficient("cpu"))


HOST_CASES = [
    ("no host specified", pod(), "foo", True),
    ("host matches", pod(spec={"nodeName": "foo"}), "foo", True),
    ("host doesn't match", pod(spec={"nodeName": "bar"}), "foo", False),
]


@pytest.mark.parametrize(("name", "incoming", "node_name", "ok"), HOST_CASES, ids=[c[0] for c in HOST_CASES])
def test_pod_fits_host(name: str, incoming: Obj, node_name: str, ok: bool) -> None:
    expected = (True, []) if ok else (False, ["node(s) didn't match the requested hostname"])
    assert fits("HostName", incoming, [node(node_name)], node_name=node_name) == expected


def port_pod(*infos: str, node_name: str = "") -> Obj:
    """newPod(host, "PROTO/IP/PORT"...)."""
    ports = []
    for info in infos:
        protocol, ip, port = info.split("/")
        ports.append({"hostIP": ip, "hostPort": int(port), "protocol": protocol, "containerPort": int(port)})
    return pod(node_name=node_name, containers=[container(ports=ports)])


PORT_CASES = [
    ("nothing running", pod(), [], True),
    ("other port", port_pod("UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/9090"], True),
    ("same udp port", port_pod("UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/8080"], False),
    ("same tcp port", port_pod("TCP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], False),
    ("different host ip", port_pod("TCP/127.0.0.1/8080"), ["TCP/127.0.0.2/8080"], True),
    ("different protocol", port_pod("UDP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], True),
    ("second udp port conflict", port_pod("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/8080"],
     False),
    ("first tcp port conflict", port_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
     ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"], False),
    ("first tcp port conflict due to 0.0.0.0 hostIP", port_pod("TCP/0.0.0.0/8001"), ["TCP/127.0.0.1/8001"], False),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP", port_pod("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
     ["TCP/127.0.0.1/8001"], False),
    ("second tcp port conflict to 0.0.0.0 hostIP", port_pod("TCP/127.0.0.1/8001"), ["TCP/0.0.0.0/8001"], False),
    ("second different protocol", port_pod("UDP/127.0.0.1/8001"), ["TCP/0.0.0.0/8001"], True),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", port_pod("UDP/127.0.0.1/8001"),
     ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"], False),
]


@pytest.mark.parametrize(("name", "incoming", "existing", "ok"), PORT_CASES, ids=[c[0] for c in PORT_CASES])
@pytest.mark.parametrize("plugin", ["PodFitsHostPorts", "PodFitsPorts"])
def test_pod_fits_host_ports(plugin: str, name: str, incoming: Obj, existing: list[str], ok: bool) -> None:
    objects: list[Obj] = [node()]
    if existing:
        objects.append(port_pod(*existing, node_name="node"))
    expected = (True, []) if ok else (False, ["node(s) didn't have free ports for the requested pod ports"])
    assert fits(plugin, incoming, objects) == expected


def test_host_ports_of_init_containers_do_not_count() -> None:
    # v1.12 read host ports from regular containers only (GetContainerPorts, updateUsedPorts).
    sidecar = {"name": "s", "image": "x", "restartPolicy": "Always",
               "ports": [{"hostPort": 8080, "containerPort": 8080, "protocol": "TCP"}]}
    existing = pod(node_name="node", containers=[container()], init_containers=[sidecar])
    assert fits("PodFitsHostPorts", port_pod("TCP/0.0.0.0/8080"), [node(), existing]) == (True, [])


def req(key: str, operator: str, *values: str) -> Obj:
    out: Obj = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def required(*terms: Obj | None, nil_terms: bool = False) -> Obj:
    """spec with affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."""
    selector: Obj = {} if nil_terms else {"nodeSelectorTerms": [t for t in terms if t is not None]}
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": selector}}}


NAME_FIELD = "metadata.name"
SELECTOR_CASES: list[tuple[str, Obj, dict[str, str] | None, str, bool]] = [
    ("no selector", {}, None, "", True),
    ("missing labels", {"nodeSelector": {"foo": "bar"}}, None, "", False),
    ("same labels", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, "", True),
    ("node labels are superset", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar", "baz": "blah"}, "", True),
    ("node labels are subset", {"nodeSelector": {"foo": "bar", "baz": "blah"}}, {"foo": "bar"}, "", False),
    ("Pod with matchExpressions using In operator that matches the existing node",
     required({"matchExpressions": [req("foo", "In", "bar", "value2")]}), {"foo": "bar"}, "", True),
    ("Pod with matchExpressions using Gt operator that matches the existing node",
     required({"matchExpressions": [req("kernel-version", "Gt", "0204")]}), {"kernel-version": "0206"}, "", True),
    ("Pod with matchExpressions using NotIn operator that matches the existing node",
     required({"matchExpressions": [req("mem-type", "NotIn", "DDR", "DDR2")]}), {"mem-type": "DDR3"}, "", True),
    ("Pod with matchExpressions using Exists operator that matches the existing node",
     required({"matchExpressions": [req("GPU", "Exists")]}), {"GPU": "NVIDIA-GRID-K1"}, "", True),
    ("Pod with affinity that don't match node's labels won't schedule onto the node",
     required({"matchExpressions": [req("foo", "In", "value1", "value2")]}), {"foo": "bar"}, "", False),
    ("Pod with a nil []NodeSelectorTerm in affinity, can't match the node's labels and won't schedule onto the node",
     required(nil_terms=True), {"foo": "bar"}, "", False),
    ("Pod with an empty []NodeSelectorTerm in affinity, can't match the node's labels and won't schedule onto "
     "the node", required(), {"foo": "bar"}, "", False),
    ("Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
     required({"matchExpressions": []}), {"foo": "bar"}, "", False),
    ("Pod with no Affinity will schedule onto a node", {}, {"foo": "bar"}, "", True),
    ("Pod with Affinity but nil NodeSelector will schedule onto a node",
     {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}}, {"foo": "bar"}, "",
     True),
    ("Pod with multiple matchExpressions ANDed that matches the existing node",
     required({"matchExpressions": [req("GPU", "Exists"), req("GPU", "NotIn", "AMD", "INTER")]}),
     {"GPU": "NVIDIA-GRID-K1"}, "", True),
    ("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
     required({"matchExpressions": [req("GPU", "Exists"), req("GPU", "In", "AMD", "INTER")]}),
     {"GPU": "NVIDIA-GRID-K1"}, "", False),
    ("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto "
     "the node", required({"matchExpressions": [req("foo", "In", "bar", "value2")]},
                          {"matchExpressions": [req("diffkey", "In", "wrong", "value2")]}), {"foo": "bar"}, "", True),
    ("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, "
     "will schedule onto the node",
     {"nodeSelector": {"foo": "bar"}, **required({"matchExpressions": [req("foo", "Exists")]})}, {"foo": "bar"}, "",
     True),
    ("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are "
     "deprecating) is not satisfied, won't schedule onto the node",
     {"nodeSelector": {"foo": "bar"}, **required({"matchExpressions": [req("foo", "Exists")]})},
     {"foo": "barrrrrr"}, "", False),
    ("Pod with an invalid value in Affinity term won't be scheduled onto the node",
     required({"matchExpressions": [req("foo", "NotIn", "invalid value: ___@#$%^")]}), {"foo": "bar"}, "", False),
    ("Pod with matchFields using In operator that matches the existing node",
     required({"matchFields": [req(NAME_FIELD, "In", "node_1")]}), None, "node_1", True),
    ("Pod with matchFields using In operator that does not match the existing node",
     required({"matchFields": [req(NAME_FIELD, "In", "node_1")]}), None, "node_2", False),
    ("Pod with two terms: matchFields does not match, but matchExpressions matches",
     required({"matchFields": [req(NAME_FIELD, "In", "node_1")]}, {"matchExpressions": [req("foo", "In", "bar")]}),
     {"foo": "bar"}, "node_2", True),
    ("Pod with one term: matchFields does not match, but matchExpressions matches",
     required({"matchFields": [req(NAME_FIELD, "In", "node_1")], "matchExpressions": [req("foo", "In", "bar")]}),
     {"foo": "bar"}, "node_2", False),
    ("Pod with one term: both matchFields and matchExpressions match",
     required({"matchFields": [req(NAME_FIELD, "In", "node_1")], "matchExpressions": [req("foo", "In", "bar")]}),
     {"foo": "bar"}, "node_1", True),
    ("Pod with two terms: both matchFields and matchExpressions do not match",
     required({"matchFields": [req(NAME_FIELD, "In", "node_1")]},
              {"matchExpressions": [req("foo", "In", "not-match-to-bar")]}), {"foo": "bar"}, "node_2", False),
]


@pytest.mark.parametrize(("name", "spec", "labels", "node_name", "ok"), SELECTOR_CASES,
                         ids=[c[0] for c in SELECTOR_CASES])
def test_pod_fits_selector(name: str, spec: Obj, labels: dict[str, str] | None, node_name: str, ok: bool) -> None:
    node_name = node_name or "node"
    expected = (True, []) if ok else (False, ["node(s) didn't match node selector"])
    assert fits("MatchNodeSelector", pod(spec=spec), [node(node_name, labels=labels)], node_name=node_name) == expected


LABEL_PRESENCE = [
    ("label does not match, presence true", ["baz"], True, False),
    ("label does not match, presence false", ["baz"], False, True),
    ("one label matches, presence true", ["foo", "baz"], True, False),
    ("one label matches, presence false", ["foo", "baz"], False, False),
    ("all labels match, presence true", ["foo", "bar"], True, True),
    ("all labels match, presence false", ["foo", "bar"], False, False),
]


@pytest.mark.parametrize(("name", "labels", "presence", "ok"), LABEL_PRESENCE, ids=[c[0] for c in LABEL_PRESENCE])
def test_node_label_presence(name: str, labels: list[str], presence: bool, ok: bool) -> None:
    objects = [node(labels={"foo": "bar", "bar": "foo"})]
    expected = (True, []) if ok else (False, ["node(s) didn't have the requested labels"])
    assert fits("CheckNodeLabelPresence", pod(), objects, {"labels": labels, "presence": presence}) == expected


SELECTOR = {"foo": "bar"}
MACHINES = [("machine1", {"region": "r1", "zone": "z11"}), ("machine2", {"region": "r1", "zone": "z12"}),
            ("machine3", {"region": "r2", "zone": "z21"}), ("machine4", {"region": "r2", "zone": "z22"}),
            ("machine5", {"region": "r2", "zone": "z22"})]


def service(namespace: str = "default") -> Obj:
    return obj("Service", f"svc-{namespace}", namespace, spec={"selector": SELECTOR})


# (name, incoming pod, existing pods as (node, namespace), services, node to check, labels, fits)
SERVICE_AFFINITY = [
    ("nothing scheduled", pod(), [], [], "machine1", ["region"], True),
    ("pod with region label match", pod(spec={"nodeSelector": {"region": "r1"}}), [], [], "machine1", ["region"],
     True),
    ("pod with region label mismatch", pod(spec={"nodeSelector": {"region": "r2"}}), [], [], "machine1", ["region"],
     False),
    ("service pod on same node", pod(labels=SELECTOR), [("machine1", "default")], [service()], "machine1",
     ["region"], True),
    ("service pod on different node, region match", pod(labels=SELECTOR), [("machine2", "default")], [service()],
     "machine1", ["region"], True),
    ("service pod on different node, region mismatch", pod(labels=SELECTOR), [("machine3", "default")],
     [service()], "machine1", ["region"], False),
    ("service in different namespace, region mismatch", pod(namespace="ns1", labels=SELECTOR),
     [("machine3", "ns1")], [service("ns2")], "machine1", ["region"], True),
    ("pod in different namespace, region mismatch", pod(namespace="ns1", labels=SELECTOR), [("machine3", "ns2")],
     [service("ns1")], "machine1", ["region"], True),
    ("service and pod in same namespace, region mismatch", pod(namespace="ns1", labels=SELECTOR),
     [("machine3", "ns1")], [service("ns1")], "machine1", ["region"], False),
    ("service pod on different node, multiple labels, not all match", pod(labels=SELECTOR),
     [("machine2", "default")], [service()], "machine1", ["region", "zone"], False),
    ("service pod on different node, multiple labels, all match", pod(labels=SELECTOR), [("machine5", "default")],
     [service()], "machine4", ["region", "zone"], True),
]


@pytest.mark.parametrize(("name", "incoming", "existing", "services", "node_name", "labels", "ok"),
                         SERVICE_AFFINITY, ids=[c[0] for c in SERVICE_AFFINITY])
def test_service_affinity(name: str, incoming: Obj, existing: list[tuple[str, str]], services: list[Obj],
                          node_name: str, labels: list[str], ok: bool) -> None:
    objects = [node(n, labels=lbl) for n, lbl in MACHINES] + services
    objects += [pod(namespace=ns, node_name=host, labels=SELECTOR) for host, ns in existing]
    expected = (True, []) if ok else (False, ["node(s) didn't match service affinity"])
    assert fits("CheckServiceAffinity", incoming, objects, {"labels": labels}, node_name=node_name) == expected


def machine1(*pods: Obj) -> list[Obj]:
    return [node("machine1", allocatable=allocatable(10, 20, 32, 0, 0, 0)), *pods]


def host_port_pod(port: int, node_name: str = "") -> Obj:
    """newPodWithPort: a hostPort without protocol or IP."""
    return pod(node_name=node_name, containers=[container(ports=[{"hostPort": port, "containerPort": port}])])


GENERAL = [
    ("no resources/port/host requested always fits", pod(), machine1(resource_pod(r(9, 19), node_name="machine1")),
     []),
    ("not enough cpu and memory resource", resource_pod(r(8, 10)),
     machine1(resource_pod(r(5, 19), node_name="machine1")), insufficient("cpu", "memory")),
    ("host not match", pod(spec={"nodeName": "machine2"}), machine1(),
     ["node(s) didn't match the requested hostname"]),
    ("hostport conflict", host_port_pod(123), machine1(host_port_pod(123, "machine1")),
     ["node(s) didn't have free ports for the requested pod ports"]),
]


@pytest.mark.parametrize(("name", "incoming", "objects", "reasons"), GENERAL, ids=[c[0] for c in GENERAL])
def test_run_general_predicates(name: str, incoming: Obj, objects: list[Obj], reasons: list[str]) -> None:
    assert fits("GeneralPredicates", incoming, objects, node_name="machine1") == (not reasons, reasons)


def test_general_predicates_reports_every_failure_in_order() -> None:
    incoming = pod(containers=[container(resources(20, 1), ports=[{"hostPort": 80, "containerPort": 80}])],
                   spec={"nodeName": "other", "nodeSelector": {"a": "b"}})
    objects = machine1(host_port_pod(80, "machine1"))
    assert verdicts("GeneralPredicates", incoming, objects)["machine1"] == ("Unschedulable", [
        "Insufficient cpu", "node(s) didn't match the requested hostname",
        "node(s) didn't have free ports for the requested pod ports", "node(s) didn't match node selector"])
