"""NodeDeclaredFeatures: pods that need a node feature go only where the node declares it (v1.36.3)."""

from __future__ import annotations

from typing import Any

from builders import make_node, make_pod
from plugin_harness import filter_verdicts

from extender.engine.explain import explain_objects
from extender.kube.node_declared_features import node_features, required_features

NAME = "NodeDeclaredFeatures"
RESTART_ALL = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}


def declaring(name: str, *features: str) -> dict[str, Any]:
    node = make_node(name)
    if features:
        node["status"]["declaredFeatures"] = list(features)
    return node


def restart_all_pod(init: bool = False) -> dict[str, Any]:
    pod = make_pod("p")
    container = {"name": "c", "image": "pause", "restartPolicy": "Never", "restartPolicyRules": [RESTART_ALL]}
    if init:
        pod["spec"]["initContainers"] = [container]
        pod["spec"]["containers"] = [{"name": "main", "image": "pause"}]
    else:
        pod["spec"]["containers"] = [container]
    return pod


def test_pod_needing_nothing_is_skipped() -> None:
    out = explain_objects([declaring("n1")], make_pod("p"), None)
    assert out["prefilter"][NAME]["code"] == "Skip"


def test_restart_all_containers_needs_a_declaring_node() -> None:
    nodes = [declaring("old"), declaring("new", "RestartAllContainersOnContainerExits"),
             declaring("other", "ExtendWebSocketsToKubelet")]
    for pod in (restart_all_pod(), restart_all_pod(init=True)):
        verdicts = filter_verdicts(NAME, pod, nodes)
        reason = ("UnschedulableAndUnresolvable", ["node(s) didn't match Pod's required features"])
        assert verdicts == {"old": reason, "new": ("Success", []), "other": reason}


def test_required_features_follow_the_registry() -> None:
    assert required_features({"hostNetwork": True, "hostUsers": False}) == {"UserNamespacesHostNetworkSupport"}
    assert required_features({"hostNetwork": True}) == frozenset()
    assert required_features({"containers": [{"restartPolicyRules": [{"action": "Other"}]}]}) == frozenset()


def test_node_features_are_read_as_a_sorted_merge_of_registered_names() -> None:
    assert node_features(["A", "RestartAllContainersOnContainerExits", "Zz"]) == {
        "RestartAllContainersOnContainerExits"}
    # The kubelet publishes the list sorted; out of order, upstream's merge walk skips what it has passed.
    assert node_features(["UserNamespacesHostNetworkSupport", "RestartAllContainersOnContainerExits"]) == {
        "UserNamespacesHostNetworkSupport"}
    assert node_features(None) == frozenset()
