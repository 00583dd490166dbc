"""InterPodAffinity against upstream's test tables (interpodaffinity/filtering_test.go, scoring_test.go, v1.36.3),
ported as data, plus direct checks of its internals and property tests of namespaceSelector handling.

Translation notes: upstream's tests use the namespace "" (``defaultNamespace``); a PodRecord reads a missing
namespace as "default", so "" becomes "default" throughout, including in a term's ``namespaces`` list.
Upstream's unnamed pods get unique generated names here (our cache keys pods by UID or namespace/name).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from builders import make_node, make_pod
from hypothesis import given, settings
from hypothesis import strategies as st
from plugin_harness import filter_verdicts, scores

import extender.engine.plugins.pod_affinity_terms as terms_module
from extender.cluster.cache import ClusterCache
from extender.cluster.records import PodRecord
from extender.engine.framework import Code, CycleState
from extender.engine.plugins.inter_pod_affinity import (
    ERR_REASON_AFFINITY,
    ERR_REASON_ANTI_AFFINITY,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
    PRESCORE_KEY,
    ClusterIndex,
    InterPodAffinity,
    _PreScoreState,
)
from extender.engine.plugins.pod_affinity_terms import (
    EMPTY_TERMS,
    AffinityTerm,
    WeightedAffinityTerm,
    namespace_labels,
    pod_affinity_terms,
)
from extender.engine.profile import ProfileError

PLUGIN = "InterPodAffinity"
REQUIRED, PREFERRED = "required", "preferred"

# The reasons, pinned to upstream's strings (filtering.go:37-41).
AFFINITY_REASON = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_REASON = "node(s) didn't match pod anti-affinity rules"
EXISTING_REASON = "node(s) didn't satisfy existing pods anti-affinity rules"

Verdict = tuple[str, list[str]]
OK: Verdict = ("Success", [])
SKIPPED: Verdict = ("Skip", [])
AFF = ("UnschedulableAndUnresolvable", [AFFINITY_REASON])
ANTI = ("Unschedulable", [ANTI_AFFINITY_REASON])
EXIST = ("Unschedulable", [EXISTING_REASON])


def test_reason_strings_are_upstreams() -> None:
    assert ERR_REASON_AFFINITY == AFFINITY_REASON
    assert ERR_REASON_ANTI_AFFINITY == ANTI_AFFINITY_REASON
    assert ERR_REASON_EXISTING_ANTI_AFFINITY == EXISTING_REASON


# ---- builders (in the spirit of upstream's st.MakePod wrappers) ---------------------------------------------


def sel_in(key: str, values: Sequence[str]) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}


def sel_not_in(key: str, values: Sequence[str]) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": "NotIn", "values": list(values)}]}


def sel_exists(key: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": "Exists"}]}


def expr(key: str, op: str, values: Sequence[str] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


_UNSET: Any = object()


def term(selector: dict[str, Any] | None, topology_key: str = "", namespaces: list[str] | None = None,
         ns_selector: Any = _UNSET) -> dict[str, Any]:
    """A v1.PodAffinityTerm."""
    out: dict[str, Any] = {"labelSelector": selector, "topologyKey": topology_key}
    if namespaces is not None:
        out["namespaces"] = namespaces
    if ns_selector is not _UNSET:
        out["namespaceSelector"] = ns_selector
    return out


def weighted(weight: int, t: dict[str, Any]) -> dict[str, Any]:
    return {"weight": weight, "podAffinityTerm": t}


class Pod:
    """A small st.MakePod(): chainable, then .obj()."""

    def __init__(self, name: str = "") -> None:
        self._name = name
        self._namespace = "default"
        self._node = ""
        self._labels: dict[str, str] = {}
        self._affinity: dict[str, Any] = {}
        self._meta: dict[str, Any] = {}

    def name(self, name: str) -> Pod:
        self._name = name
        return self

    def namespace(self, namespace: str) -> Pod:
        self._namespace = namespace or "default"
        return self

    def node(self, node: str) -> Pod:
        self._node = node
        return self

    def labels(self, labels: Mapping[str, str]) -> Pod:
        self._labels = dict(labels)
        return self

    def label(self, key: str, value: str) -> Pod:
        self._labels[key] = value
        return self

    def affinity(self, affinity: Mapping[str, Any]) -> Pod:
        self._affinity = copy.deepcopy(dict(affinity))
        return self

    def terminating(self) -> Pod:
        self._meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        return self

    def _add(self, kind: str, t: dict[str, Any], how: str) -> Pod:
        part = self._affinity.setdefault(kind, {})
        if how == REQUIRED:
            part.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(t)
        else:
            part.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(weighted(1, t))
        return self

    def aff_in(self, key: str, tk: str, values: Sequence[str], how: str = REQUIRED) -> Pod:
        return self._add("podAffinity", term(sel_in(key, values), tk), how)

    def aff_not_in(self, key: str, tk: str, values: Sequence[str], how: str = REQUIRED) -> Pod:
        return self._add("podAffinity", term(sel_not_in(key, values), tk), how)

    def aff_exists(self, key: str, tk: str, how: str = REQUIRED) -> Pod:
        return self._add("podAffinity", term(sel_exists(key), tk), how)

    def anti_in(self, key: str, tk: str, values: Sequence[str], how: str = REQUIRED) -> Pod:
        return self._add("podAntiAffinity", term(sel_in(key, values), tk), how)

    def anti_not_in(self, key: str, tk: str, values: Sequence[str], how: str = REQUIRED) -> Pod:
        return self._add("podAntiAffinity", term(sel_not_in(key, values), tk), how)

    def anti_exists(self, key: str, tk: str, how: str = REQUIRED) -> Pod:
        return self._add("podAntiAffinity", term(sel_exists(key), tk), how)

    def obj(self) -> dict[str, Any]:
        spec = {"affinity": self._affinity} if self._affinity else None
        pod = make_pod(self._name, self._namespace, node=self._node, labels=self._labels or None, spec=spec)
        pod["metadata"].update(self._meta)
        return pod


def with_terms(namespace: str, labels: Mapping[str, str], affinity: list[dict[str, Any]] | None,
               anti: list[dict[str, Any]] | None, node: str = "") -> dict[str, Any]:
    """upstream's createPodWithAffinityTerms: both podAffinity and podAntiAffinity set (possibly without terms)."""
    return Pod().namespace(namespace).node(node).labels(labels).affinity({
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": affinity},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": anti},
    }).obj()


def node(name: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """A Node carrying exactly these labels (make_node adds a hostname label we do not want here)."""
    out = make_node(name)
    out["metadata"]["labels"] = dict(labels)
    return out


def namespace(name: str, labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


# scoring_test.go's namespaces, used by the single-node filter table and the score tables.
NS_T1 = {"team": "team1"}
NS_T2 = {"team": "team2"}
NAMESPACES = [namespace("subteam1.team1", NS_T1), namespace("subteam2.team1", NS_T1),
              namespace("subteam1.team2", NS_T2), namespace("subteam2.team2", NS_T2)]


# ---- filtering_test.go: TestRequiredAffinitySingleNode ----------------------------------------------------------

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = node("node1", {"region": "r1", "zone": "z11"})


def _existing() -> dict[str, Any]:
    return Pod().labels(POD_LABEL).node("node1").obj()


def _team1() -> dict[str, Any]:
    return {"matchExpressions": [expr("team", "In", ["team1"])]}


SINGLE_NODE_CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]], tuple[str, list[str]]]] = [
    ("A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
     make_pod(requests=[]), [], SKIPPED),
    ("satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches "
     "the existing pod",
     Pod().labels(POD_LABEL2).aff_in("service", "region", ["securityscan", "value2"]).obj(), [_existing()], OK),
    ("satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in "
     "labelSelector that matches the existing pod",
     Pod().labels(POD_LABEL2).aff_not_in("service", "region", ["securityscan3", "value3"]).obj(), [_existing()], OK),
    ("Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
     with_terms("", POD_LABEL2, [term(sel_in("service", ["securityscan", "value2"]), namespaces=["DiffNameSpace"])],
                None),
     [Pod().namespace("ns").label("service", "securityscan").node("node1").obj()], AFF),
    ("Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
     Pod().labels(POD_LABEL).aff_in("service", "", ["antivirusscan", "value2"]).obj(), [_existing()], AFF),
    ("satisfies the PodAffinity with different label Operators in multiple "
     "RequiredDuringSchedulingIgnoredDuringExecution ",
     with_terms("", POD_LABEL2, [
         term({"matchExpressions": [expr("service", "Exists"), expr("wrongkey", "DoesNotExist")]}, "region"),
         term({"matchExpressions": [expr("service", "In", ["securityscan"]),
                                    expr("service", "NotIn", ["WrongValue"])]}, "region"),
     ], None), [_existing()], OK),
    ("The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node "
     "because one of the matchExpression item don't match.",
     with_terms("", POD_LABEL2, [
         term({"matchExpressions": [expr("service", "Exists"), expr("wrongkey", "DoesNotExist")]}, "region"),
         term({"matchExpressions": [expr("service", "In", ["securityscan2"]),
                                    expr("service", "NotIn", ["WrongValue"])]}, "region"),
     ], None), [_existing()], AFF),
    ("satisfies the PodAffinity and PodAntiAffinity with the existing pod",
     Pod().labels(POD_LABEL2).aff_in("service", "region", ["securityscan", "value2"])
     .anti_in("service", "node", ["antivirusscan", "value2"]).obj(), [_existing()], OK),
    ("satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
     Pod().labels(POD_LABEL2).aff_in("service", "region", ["securityscan", "value2"])
     .anti_in("service", "node", ["antivirusscan", "value2"]).obj(),
     [Pod().node("node1").labels(POD_LABEL).anti_in("service", "node", ["antivirusscan", "value2"]).obj()], OK),
    ("satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
     Pod().labels(POD_LABEL2).aff_in("service", "region", ["securityscan", "value2"])
     .anti_in("service", "zone", ["securityscan", "value2"]).obj(), [_existing()], ANTI),
    ("satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
     Pod().labels(POD_LABEL).aff_in("service", "region", ["securityscan", "value2"])
     .anti_in("service", "node", ["antivirusscan", "value2"]).obj(),
     [Pod().labels(POD_LABEL).node("node1").anti_in("service", "zone", ["securityscan", "value2"]).obj()], EXIST),
    ("pod matches its own Label in PodAffinity and that matches the existing pod Labels",
     Pod().labels(POD_LABEL).aff_not_in("service", "region", ["securityscan", "value2"]).obj(),
     [Pod().label("service", "securityscan").node("node2").obj()], AFF),
    ("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't "
     "satisfy PodAntiAffinity symmetry with the existing pod",
     Pod().labels(POD_LABEL).obj(),
     [Pod().node("node1").labels(POD_LABEL).anti_in("service", "zone", ["securityscan", "value2"]).obj()], EXIST),
    ("verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy "
     "PodAntiAffinity symmetry with the existing pod",
     Pod().labels(POD_LABEL).obj(),
     [Pod().node("node1").labels(POD_LABEL).anti_not_in("service", "zone", ["securityscan", "value2"]).obj()],
     SKIPPED),
    ("satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
     Pod().labels(POD_LABEL).anti_exists("service", "region").anti_exists("security", "region").obj(),
     [Pod().node("node1").labels(POD_LABEL2).anti_exists("security", "zone").obj()], ANTI),
    ("PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
     Pod().labels(POD_LABEL).anti_exists("service", "zone").anti_exists("security", "zone").obj(),
     [Pod().node("node1").labels(POD_LABEL2).anti_exists("security", "zone").obj()], ANTI),
    ("PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
     Pod().labels(POD_LABEL2).anti_exists("security", "zone").obj(),
     [Pod().node("node1").labels(POD_LABEL).anti_exists("service", "zone").anti_exists("security", "zone").obj()],
     EXIST),
    ("PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
     Pod().labels({"abc": "", "xyz": ""}).anti_exists("abc", "zone").anti_exists("def", "zone").obj(),
     [Pod().node("node1").labels({"def": "", "xyz": ""}).anti_exists("abc", "zone").anti_exists("def", "zone").obj()],
     ANTI),
    ("PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
     Pod().labels({"def": "", "xyz": ""}).anti_exists("abc", "zone").anti_exists("def", "zone").obj(),
     [Pod().node("node1").labels({"abc": "", "xyz": ""}).anti_exists("abc", "zone").anti_exists("def", "zone").obj()],
     ANTI),
    ("affinity with NamespaceSelector",
     with_terms("", POD_LABEL2, [term(sel_in("service", ["securityscan", "value2"]), "region",
                                      ns_selector=_team1())], None),
     [Pod().node("node1").namespace("subteam1.team1").labels(POD_LABEL).obj()], OK),
    ("affinity with non-matching NamespaceSelector",
     with_terms("", POD_LABEL2, [term(sel_in("service", ["securityscan", "value2"]), "region",
                                      ns_selector=_team1())], None),
     [Pod().node("node1").namespace("subteam1.team2").labels(POD_LABEL).obj()], AFF),
    ("anti-affinity with matching NamespaceSelector",
     with_terms("subteam1.team1", POD_LABEL2, None, [term(sel_in("service", ["securityscan", "value2"]), "zone",
                                                          ns_selector=_team1())]),
     [Pod().node("node1").namespace("subteam2.team1").labels(POD_LABEL).obj()], ANTI),
    ("anti-affinity with matching all NamespaceSelector",
     with_terms("subteam1.team1", POD_LABEL2, None, [term(sel_in("service", ["securityscan", "value2"]), "zone",
                                                          ns_selector={})]),
     [Pod().node("node1").namespace("subteam2.team1").labels(POD_LABEL).obj()], ANTI),
    ("anti-affinity with non-matching NamespaceSelector",
     with_terms("subteam1.team1", POD_LABEL2, None, [term(sel_in("service", ["securityscan", "value2"]), "zone",
                                                          ns_selector=_team1())]),
     [Pod().node("node1").namespace("subteam1.team2").labels(POD_LABEL).obj()], OK),
]


@pytest.mark.parametrize(("pod", "pods", "want"), [c[1:] for c in SINGLE_NODE_CASES],
                         ids=[c[0] for c in SINGLE_NODE_CASES])
def test_required_affinity_single_node(pod: dict[str, Any], pods: list[dict[str, Any]],
                                       want: tuple[str, list[str]]) -> None:
    got = filter_verdicts(PLUGIN, pod, [NODE1, *pods, *NAMESPACES])
    assert got == {"node1": want}


@pytest.mark.parametrize("values", [(["{{.bad-value.}}"], ["antivirusscan", "value2"]),
                                    (["foo"], ["{{.bad-value.}}"])])
def test_invalid_affinity_selector_fails_prefilter(values: tuple[list[str], list[str]]) -> None:
    """"PodAffinity fails PreFilter with an invalid affinity label syntax" and its anti-affinity twin.

    Upstream's message is "parsing pod: requiredAffinityTerms: values[0][service]: Invalid value: ..."; ours keeps
    the code and the prefix and names the full field path of the bad value.
    """
    pod = Pod().labels(POD_LABEL).aff_in("service", "region", values[0]).aff_in("service", "node", values[1]).obj()
    code, reasons = filter_verdicts(PLUGIN, pod, [NODE1, *NAMESPACES])["node1"]
    assert code == "UnschedulableAndUnresolvable"
    assert len(reasons) == 1
    assert reasons[0].startswith("parsing pod: requiredAffinityTerms: spec.affinity.podAffinity."
                                 "requiredDuringSchedulingIgnoredDuringExecution[")
    assert "{{.bad-value.}}" in reasons[0]
    assert "a valid label must be an empty string or consist of alphanumeric characters" in reasons[0]


# ---- filtering_test.go: TestRequiredAffinityMultipleNodes --------------------------------------------------------

RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


def _rzh(name: str, zone: str = "z1") -> dict[str, Any]:
    return node(name, {"region": "r1", "zone": zone, "hostname": name})


MULTI_NODE_CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]], list[dict[str, Any]],
                             list[tuple[str, list[str]]]]] = [
    ("A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has "
     "an existing pod that matches the affinity rules",
     Pod().aff_in("foo", "region", ["bar"]).obj(),
     [Pod("p1").node("node1").labels({"foo": "bar"}).obj()],
     [node("node1", RG_CHINA), node("node2", RG_CHINA_AZ1), node("node3", RG_INDIA)], [OK, OK, AFF]),
    ("The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the "
     "collection should not be blocked from being scheduled onto any node, even there's no existing pod that matches "
     "the rule anywhere.",
     Pod().labels({"foo": "bar", "service": "securityscan"}).aff_in("foo", "zone", ["bar"])
     .aff_in("service", "zone", ["securityscan"]).obj(),
     [Pod("p1").node("nodeA").labels({"foo": "bar"}).obj()],
     [node("nodeA", {"zone": "az1", "hostname": "h1"}), node("nodeB", {"zone": "az2", "hostname": "h2"})], [OK, OK]),
    ("The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
     Pod().labels({"foo": "bar", "service": "securityscan"}).aff_in("foo", "zone", ["bar"])
     .aff_in("service", "zone", ["securityscan"]).obj(),
     [Pod("p1").node("nodeA").labels({"foo": "bar"}).obj()],
     [node("nodeA", {"zoneLabel": "az1", "hostname": "h1"}), node("nodeB", {"zoneLabel": "az2", "hostname": "h2"})],
     [AFF, AFF]),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
     "affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
     Pod().anti_in("foo", "region", ["abc"]).obj(),
     [Pod().node("nodeA").labels({"foo": "abc"}).obj()],
     [node("nodeA", {"region": "r1", "hostname": "nodeA"}), node("nodeB", {"region": "r1", "hostname": "nodeB"})],
     [ANTI, ANTI]),
    ("This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
     Pod().anti_in("foo", "region", ["abc"]).anti_in("service", "zone", ["securityscan"]).obj(),
     [Pod().node("nodeA").labels({"foo": "abc", "service": "securityscan"}).obj()],
     [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")], [ANTI, ANTI]),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
     "affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
     Pod().anti_in("foo", "region", ["abc"]).obj(),
     [Pod().node("nodeA").labels({"foo": "abc"}).obj()],
     [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)], [ANTI, ANTI, OK]),
    ("NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
     "affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an "
     "existing pod that match the inter pod affinity rule but in different namespace)",
     Pod().namespace("NS1").labels({"foo": "123"}).anti_in("foo", "region", ["bar"]).obj(),
     [Pod().node("nodeA").namespace("NS1").labels({"foo": "bar"}).obj(),
      Pod().node("nodeC").namespace("NS2").anti_in("foo", "region", ["123"]).obj()],
     [node("nodeA", RG_CHINA), node("nodeB", RG_CHINA_AZ1), node("nodeC", RG_INDIA)], [ANTI, ANTI, OK]),
    ("Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of "
     "the term is firstly checked, and then topologyKey of the term is also checked",
     Pod().label("foo", "").obj(),
     [Pod().node("nodeA").anti_exists("foo", "invalid-node-label").obj()],
     [_rzh("nodeA"), _rzh("nodeB")], [SKIPPED, SKIPPED]),
    ("Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
     Pod().node("nodeA").anti_exists("foo", "invalid-node-label").obj(),
     [Pod().node("nodeA").labels({"foo": ""}).obj()],
     [_rzh("nodeA"), _rzh("nodeB")], [OK, OK]),
    ("Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's "
     "terms on all nodes",
     Pod().label("foo", "").label("bar", "").obj(),
     [Pod().node("nodeA").anti_exists("foo", "zone").obj(), Pod().node("nodeA").anti_exists("bar", "region").obj()],
     [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")], [EXIST, EXIST]),
    ("Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one "
     "anti-affinity rule of existingPod",
     Pod().anti_exists("foo", "zone").anti_exists("bar", "region").obj(),
     [Pod().node("nodeA").labels({"foo": ""}).obj(), Pod().node("nodeB").labels({"bar": ""}).obj()],
     [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")], [ANTI, ANTI]),
    ("Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
     "term match - case when one term has invalid topologyKey",
     Pod().label("foo", "").label("bar", "").obj(),
     [Pod().node("nodeA").anti_exists("foo", "invalid-node-label").anti_exists("bar", "zone").obj()],
     [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")], [EXIST, OK]),
    ("Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
     "term match - case when one term has invalid topologyKey",
     Pod().anti_exists("foo", "invalid-node-label").anti_exists("bar", "zone").obj(),
     [Pod("podA").node("nodeA").labels({"foo": "", "bar": ""}).obj()],
     [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")], [ANTI, OK]),
    ("Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
     "term match - case when all terms have valid topologyKey",
     Pod().label("foo", "").label("bar", "").obj(),
     [Pod().node("nodeA").anti_exists("foo", "region").anti_exists("bar", "zone").obj()],
     [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")], [EXIST, EXIST]),
    ("Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single "
     "term match - case when all terms have valid topologyKey",
     Pod().anti_exists("foo", "region").anti_exists("bar", "zone").obj(),
     [Pod().node("nodeA").labels({"foo": "", "bar": ""}).obj()],
     [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")], [ANTI, ANTI]),
    ("Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches "
     "incoming pod, so incoming pod can only be scheduled to nodeC",
     Pod().label("foo", "").label("bar", "").obj(),
     [Pod().node("nodeA").anti_exists("foo", "zone").anti_exists("labelA", "zone").obj(),
      Pod().node("nodeB").anti_exists("bar", "zone").anti_exists("labelB", "zone").obj()],
     [_rzh("nodeA", "z1"), _rzh("nodeB", "z2"), _rzh("nodeC", "z3")], [EXIST, EXIST, OK]),
    ("Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
     Pod().aff_exists("foo", "region").aff_exists("bar", "zone").obj(),
     [Pod("pod1").labels({"foo": "", "bar": ""}).node("nodeA").obj()],
     [_rzh("nodeA", "z1"), _rzh("nodeB", "z1")], [OK, OK]),
    ("Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
     "match, and the match logic should be satisfied on the same pod",
     Pod().aff_exists("foo", "region").aff_exists("bar", "zone").obj(),
     [Pod("pod1").node("nodeA").labels({"foo": ""}).obj(), Pod("pod2").node("nodeB").labels({"bar": ""}).obj()],
     [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")], [AFF, AFF]),
]


@pytest.mark.parametrize(("pod", "pods", "nodes", "want"), [c[1:] for c in MULTI_NODE_CASES],
                         ids=[c[0] for c in MULTI_NODE_CASES])
def test_required_affinity_multiple_nodes(pod: dict[str, Any], pods: list[dict[str, Any]],
                                          nodes: list[dict[str, Any]], want: list[tuple[str, list[str]]]) -> None:
    got = filter_verdicts(PLUGIN, pod, [*nodes, *pods, namespace("NS1")])
    assert got == {n["metadata"]["name"]: w for n, w in zip(nodes, want, strict=True)}


# ---- filtering_test.go: TestGetTPMapMatchingIncomingAffinityAntiAffinity -----------------------------------------


def _normal(*labels: str) -> dict[str, Any]:
    p = Pod().name("normal").node("nodeA")
    for label in labels:
        p.label(label, "")
    return p.obj()


NODE_A_HOST = node("nodeA", {"hostname": "nodeA"})
TP_MAP_CASES: list[tuple[str, list[dict[str, Any]], dict[str, Any], dict[str, dict[str, int]],
                         dict[str, dict[str, int]]]] = [
    ("nil test", [], Pod("aaa-normal").obj(), {}, {}),
    ("incoming pod without affinity/anti-affinity causes a no-op", [_normal("aaa")], Pod("aaa-normal").obj(), {}, {}),
    ("no pod has label that violates incoming pod's affinity and anti-affinity", [_normal("bbb")],
     Pod("aaa-anti").aff_exists("aaa", "hostname").anti_exists("aaa", "hostname").obj(), {}, {}),
    ("existing pod matches incoming pod's affinity and anti-affinity - single term case", [_normal("aaa")],
     Pod("affi-antiaffi").aff_exists("aaa", "hostname").anti_exists("aaa", "hostname").obj(),
     {"hostname": {"nodeA": 1}}, {"hostname": {"nodeA": 1}}),
    ("existing pod matches incoming pod's affinity and anti-affinity - multiple terms case", [_normal("aaa", "bbb")],
     Pod("affi-antiaffi").aff_exists("aaa", "hostname").aff_exists("bbb", "hostname")
     .anti_exists("aaa", "hostname").obj(),
     {"hostname": {"nodeA": 2}}, {"hostname": {"nodeA": 1}}),  # 2: one for each term
    ("existing pod not match incoming pod's affinity but matches anti-affinity", [_normal("aaa")],
     Pod("affi-antiaffi").aff_exists("aaa", "hostname").aff_exists("bbb", "hostname")
     .anti_exists("aaa", "hostname").anti_exists("bbb", "hostname").obj(),
     {}, {"hostname": {"nodeA": 1}}),
    ("incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
     [_normal("aaa", "bbb")],
     Pod("anaffi-antiaffiti").aff_exists("aaa", "hostname").aff_exists("ccc", "hostname")
     .anti_exists("aaa", "hostname").anti_exists("ccc", "hostname").obj(),
     {}, {"hostname": {"nodeA": 1}}),
    ("incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
     [_normal("bbb")],
     Pod("affi-antiaffi").aff_exists("aaa", "hostname").aff_exists("bbb", "hostname")
     .anti_exists("aaa", "hostname").anti_exists("bbb", "hostname").obj(),
     {}, {"hostname": {"nodeA": 1}}),
]


def _snapshot(objects: list[dict[str, Any]]) -> Any:
    cache = ClusterCache()
    cache.load(objects)
    return cache.snapshot()


@pytest.mark.parametrize(("existing", "pod", "want_affinity", "want_anti"), [c[1:] for c in TP_MAP_CASES],
                         ids=[c[0] for c in TP_MAP_CASES])
def test_incoming_affinity_counts(existing: list[dict[str, Any]], pod: dict[str, Any],
                                  want_affinity: dict[str, dict[str, int]],
                                  want_anti: dict[str, dict[str, int]]) -> None:
    snapshot = _snapshot([NODE_A_HOST, *existing])
    parsed = pod_affinity_terms(PodRecord(pod))
    index = ClusterIndex()
    index.sync(snapshot.all_nodes())
    assert index.incoming_affinity_counts(parsed.required_affinity, parsed.required_anti_affinity) == (
        want_affinity, want_anti)
    assert naive_incoming_counts(parsed.required_affinity, parsed.required_anti_affinity, snapshot.node_list) == (
        want_affinity, want_anti)


def test_existing_anti_affinity_counts() -> None:
    nodes = [_rzh("nodeA", "z1"), _rzh("nodeB", "z2")]
    existing = [Pod().node("nodeA").anti_exists("foo", "zone").anti_exists("foo", "region").obj(),
                Pod().node("nodeB").anti_exists("foo", "zone").anti_exists("bar", "zone").obj(),
                Pod().node("nodeB").anti_exists("foo", "missing-key").obj()]
    snapshot = _snapshot([*nodes, *existing])
    incoming = PodRecord(Pod().label("foo", "").obj())
    index = ClusterIndex()
    index.sync(snapshot.all_nodes())
    want = {"zone": {"z1": 1, "z2": 1}, "region": {"r1": 1}}
    assert index.existing_anti_affinity_counts(incoming, None) == want
    assert naive_existing_counts(incoming, None, snapshot.pods_with_required_anti_affinity_nodes) == want


def test_pods_without_terms_leave_the_label_groups_for_the_first_pod_that_reads_them() -> None:
    # The existing pods' terms are the index's own; the pods by label set are only read for the incoming pod's
    # terms, so a pod without any does not bring them up to date, and the next pod with terms counts exactly.
    cache = ClusterCache()
    cache.load([_rzh("nodeA", "z1"), _rzh("nodeB", "z2"), Pod().node("nodeA").label("foo", "").obj()])
    index = ClusterIndex()
    index.sync(cache.snapshot().all_nodes())
    groups = index.groups  # read once: brought to that snapshot
    cache.apply(Pod("late").node("nodeB").label("foo", "").obj())
    plain = PodRecord(Pod().obj())
    index.sync(cache.snapshot().all_nodes())
    assert index.existing_anti_affinity_counts(plain, None) == {}
    assert sum(every for _, every in groups.by_node()[("default", (("foo", ""),))].values()) == 1  # not read yet
    wanting = pod_affinity_terms(PodRecord(Pod().aff_exists("foo", "zone").obj()))
    affinity, _ = index.incoming_affinity_counts(wanting.required_affinity, ())
    assert dict(affinity["zone"]) == {"z1": 1, "z2": 1}


# ---- scoring_test.go: TestPreferredAffinity ----------------------------------------------------------------------

AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
S1 = {"security": "S1"}
S2 = {"security": "S2"}


def _pref(kind: str, *items: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [weighted(w, t) for w, t in items]}}


STAY_WITH_S1_IN_REGION = _pref("podAffinity", (5, term(sel_in("security", ["S1"]), "region")))
STAY_WITH_S2_IN_REGION = _pref("podAffinity", (6, term(sel_in("security", ["S2"]), "region")))
AFFINITY3 = _pref("podAffinity",
                  (8, term({"matchExpressions": [expr("security", "NotIn", ["S1"]), expr("security", "In", ["S2"])]},
                           "region")),
                  (2, term({"matchExpressions": [expr("security", "Exists"), expr("wrongkey", "DoesNotExist")]},
                           "region")))
HARD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    term(sel_in("security", ["S1", "value2"]), "region"),
    term({"matchExpressions": [expr("security", "Exists"), expr("wrongkey", "DoesNotExist")]}, "region"),
]}}
AWAY_FROM_S1_IN_AZ = _pref("podAntiAffinity", (5, term(sel_in("security", ["S1"]), "az")))
AWAY_FROM_S2_IN_AZ = _pref("podAntiAffinity", (5, term(sel_in("security", ["S2"]), "az")))
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = {
    **_pref("podAffinity", (8, term(sel_in("security", ["S1"]), "region"))),
    **_pref("podAntiAffinity", (5, term(sel_in("security", ["S2"]), "az"))),
}
_NS_TERM = term(sel_in("security", ["S1"]), "region", namespaces=["subteam2.team2"], ns_selector=_team1())
AFFINITY_NAMESPACE_SELECTOR = _pref("podAffinity", (5, _NS_TERM))
ANTI_AFFINITY_NAMESPACE_SELECTOR = _pref("podAntiAffinity", (5, _NS_TERM))
INVALID_AFFINITY_LABELS = _pref("podAffinity", (8, term(sel_in("security", ["{{.bad-value.}}"]), "region")))
INVALID_ANTI_AFFINITY_LABELS = _pref("podAntiAffinity", (5, term(sel_in("security", ["{{.bad-value.}}"]), "az")))


def _p(node_name: str = "", labels: Mapping[str, str] | None = None, affinity: Mapping[str, Any] | None = None,
       ns: str = "") -> dict[str, Any]:
    """upstream's &v1.Pod{Spec: {NodeName, Affinity}, ObjectMeta: {Namespace, Labels}}."""
    p = Pod().node(node_name).namespace(ns)
    if labels:
        p.labels(labels)
    if affinity:
        p.affinity(affinity)
    return p.obj()


def _nodes(*items: tuple[str, Mapping[str, str]]) -> list[dict[str, Any]]:
    return [node(n, labels) for n, labels in items]


_CHINA_INDIA_AZ1 = _nodes(("node1", RG_CHINA), ("node2", RG_INDIA), ("node3", AZ1))
_NS_PODS = [_p("node1", S1, ns="subteam1.team1"), _p("node1", S1, ns="subteam1.team1"),
            _p("node1", S1, ns="subteam1.team2"), _p("node2", S1, ns="subteam2.team1")]
_NS_PODS_BOTH = [_p("node1", S1, ns="subteam1.team1"), _p("node1", S1, ns="subteam1.team1"),
                 _p("node1", S1, ns="subteam2.team2"), _p("node2", S1, ns="subteam2.team1")]

# (name, pod, existing pods, nodes, ignorePreferredTermsOfExistingPods, want: node -> score, or None for Skip)
PREFERRED_CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], bool,
                            dict[str, int] | None]] = [
    ("all nodes are same priority as Affinity is nil", _p(labels=S1), [], _CHINA_INDIA_AZ1, False, None),
    ("Affinity: pod that matches topology key & pods in nodes will get high score comparing to otherswhich doesn't "
     "match either pods in nodes or in topology key",
     _p(labels=S1, affinity=STAY_WITH_S1_IN_REGION), [_p("node1", S1), _p("node2", S2), _p("node3", S1)],
     _CHINA_INDIA_AZ1, False, {"node1": 100, "node2": 0, "node3": 0}),
    ("All the nodes that have the same topology key & label value with one of them has an existing pod that match "
     "the affinity rules, have the same score",
     _p(affinity=STAY_WITH_S1_IN_REGION), [_p("node1", S1)],
     _nodes(("node1", RG_CHINA), ("node2", RG_CHINA_AZ1), ("node3", RG_INDIA)), False,
     {"node1": 100, "node2": 100, "node3": 0}),
    ("Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more "
     "matches will get high score",
     _p(labels=S1, affinity=STAY_WITH_S2_IN_REGION),
     [_p("node1", S2), _p("node1", S2), _p("node2", S2), _p("node3", S2), _p("node4", S2), _p("node5", S2)],
     _nodes(("node1", RG_CHINA), ("node2", RG_INDIA), ("node3", RG_CHINA), ("node4", RG_CHINA), ("node5", RG_INDIA)),
     False, {"node1": 100, "node2": 0, "node3": 100, "node4": 100, "node5": 0}),
    ("Affinity: different Label operators and values for pod affinity scheduling preference, including some match "
     "failures ",
     _p(labels=S1, affinity=AFFINITY3), [_p("node1", S1), _p("node2", S2), _p("node3", S1)],
     _CHINA_INDIA_AZ1, False, {"node1": 20, "node2": 100, "node3": 0}),
    ("Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
     _p(labels=S2), [_p("node1", S1, STAY_WITH_S1_IN_REGION), _p("node2", S2, STAY_WITH_S2_IN_REGION)],
     _CHINA_INDIA_AZ1, False, {"node1": 0, "node2": 100, "node3": 0}),
    ("Affinity symmetry with namespace selector",
     _p(labels=S1, ns="subteam1.team1"),
     [_p("node1", S1, AFFINITY_NAMESPACE_SELECTOR), _p("node2", S2, STAY_WITH_S2_IN_REGION)],
     _CHINA_INDIA_AZ1, False, {"node1": 100, "node2": 0, "node3": 0}),
    ("AntiAffinity symmetry with namespace selector",
     _p(labels=S1, ns="subteam1.team1"),
     [_p("node1", S1, ANTI_AFFINITY_NAMESPACE_SELECTOR), _p("node2", S2, STAY_WITH_S2_IN_REGION)],
     _CHINA_INDIA_AZ1, False, {"node1": 0, "node2": 100, "node3": 100}),
    ("Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
     _p(labels=S1), [_p("node1", S1, HARD_AFFINITY), _p("node2", S2, HARD_AFFINITY)],
     _CHINA_INDIA_AZ1, False, {"node1": 100, "node2": 100, "node3": 0}),
    ("Anti Affinity: pod that does not match existing pods in node will get high score ",
     _p(labels=S1, affinity=AWAY_FROM_S1_IN_AZ), [_p("node1", S1), _p("node2", S2)],
     _nodes(("node1", AZ1), ("node2", RG_CHINA)), False, {"node1": 0, "node2": 100}),
    ("Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score comparing "
     "to others ",
     _p(labels=S1, affinity=AWAY_FROM_S1_IN_AZ), [_p("node1", S1), _p("node2", S1)],
     _nodes(("node1", AZ1), ("node2", RG_CHINA)), False, {"node1": 0, "node2": 100}),
    ("Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches "
     "will get high score",
     _p(labels=S1, affinity=AWAY_FROM_S1_IN_AZ), [_p("node1", S1), _p("node1", S1), _p("node2", S2)],
     _nodes(("node1", AZ1), ("node2", RG_INDIA)), False, {"node1": 0, "node2": 100}),
    ("Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
     _p(labels=S2), [_p("node1", S1, AWAY_FROM_S2_IN_AZ), _p("node2", S2, AWAY_FROM_S1_IN_AZ)],
     _nodes(("node1", AZ1), ("node2", AZ2)), False, {"node1": 0, "node2": 100}),
    ("Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod "
     "affinity & anti affinity",
     _p(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), [_p("node1", S1), _p("node2", S1)],
     _nodes(("node1", RG_CHINA), ("node2", AZ1)), False, {"node1": 100, "node2": 0}),
    ("Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing pods "
     "have the same labels",
     _p(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
     [_p("node1", S1), _p("node1", S1), _p("node2", S1), _p("node3", S1), _p("node3", S1), _p("node4", S1),
      _p("node5", S1)],
     _nodes(("node1", RG_CHINA_AZ1), ("node2", RG_INDIA), ("node3", RG_CHINA), ("node4", RG_CHINA),
            ("node5", RG_INDIA)), False, {"node1": 100, "node2": 0, "node3": 100, "node4": 100, "node5": 0}),
    ("Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in "
     "both pod affinity & anti affinity & symmetry",
     _p(labels=S1, affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
     [_p("node1", S1), _p("node2", S2), _p("node3", affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
      _p("node4", affinity=AWAY_FROM_S1_IN_AZ)],
     _nodes(("node1", RG_CHINA), ("node2", AZ1), ("node3", RG_INDIA), ("node4", AZ2)), False,
     {"node1": 100, "node2": 0, "node3": 100, "node4": 0}),
    ("Avoid panic when partial nodes in a topology don't have pods with affinity",
     _p(labels=S1), [_p("node1", S1), _p("node2", affinity=STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ)],
     _nodes(("node1", RG_CHINA), ("node2", RG_CHINA)), False, {"node1": 0, "node2": 0}),
    ("Affinity with pods matching NamespaceSelector",
     _p(labels=S1, affinity=AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"), _NS_PODS,
     _nodes(("node1", RG_CHINA), ("node2", RG_INDIA)), False, {"node1": 100, "node2": 0}),
    ("Affinity with pods matching both NamespaceSelector and Namespaces fields",
     _p(labels=S1, affinity=AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"), _NS_PODS_BOTH,
     _nodes(("node1", RG_CHINA), ("node2", RG_INDIA)), False, {"node1": 100, "node2": 0}),
    ("Affinity with pods matching NamespaceSelector (anti-affinity)",
     _p(labels=S1, affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"), _NS_PODS,
     _nodes(("node1", RG_CHINA), ("node2", RG_INDIA)), False, {"node1": 0, "node2": 100}),
    ("Affinity with pods matching both NamespaceSelector and Namespaces fields (anti-affinity)",
     _p(labels=S1, affinity=ANTI_AFFINITY_NAMESPACE_SELECTOR, ns="subteam1.team1"), _NS_PODS_BOTH,
     _nodes(("node1", RG_CHINA), ("node2", RG_INDIA)), False, {"node1": 0, "node2": 100}),
    ("Ignore preferred terms of existing pods",
     _p(labels=S2),
     [_p("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), _p("node2", S2, STAY_WITH_S2_IN_REGION)],
     _nodes(("node1", RG_CHINA), ("node2", RG_INDIA)), True, None),
    ("Do not ignore preferred terms of existing pods",
     _p(labels=S2),
     [_p("node1", S1, STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ), _p("node2", S2, STAY_WITH_S2_IN_REGION)],
     _nodes(("node1", RG_CHINA), ("node2", RG_INDIA)), False, {"node1": 0, "node2": 100}),
]


@pytest.mark.parametrize(("pod", "pods", "nodes", "ignore", "want"), [c[1:] for c in PREFERRED_CASES],
                         ids=[c[0] for c in PREFERRED_CASES])
def test_preferred_affinity(pod: dict[str, Any], pods: list[dict[str, Any]], nodes: list[dict[str, Any]],
                            ignore: bool, want: dict[str, int] | None) -> None:
    args = {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": ignore}
    assert scores(PLUGIN, pod, [*nodes, *pods, *NAMESPACES], args) == want


def _pre_score(pod: dict[str, Any], objects: list[dict[str, Any]],
               args: dict[str, Any] | None = None) -> tuple[InterPodAffinity, CycleState, PodRecord, Any]:
    plugin = InterPodAffinity(args)
    snapshot = _snapshot(objects)
    state = CycleState(snapshot)
    record = PodRecord(pod)
    return plugin, state, record, plugin.pre_score(state, record, snapshot.node_list)


@pytest.mark.parametrize("affinity", [INVALID_AFFINITY_LABELS, INVALID_ANTI_AFFINITY_LABELS])
def test_invalid_preferred_terms_fail_prescore(affinity: dict[str, Any]) -> None:
    """"invalid (Anti)Affinity fails PreScore": an Error naming the bad value."""
    _, _, _, status = _pre_score(_p(affinity=affinity), _nodes(("node1", RG_CHINA), ("node2", RG_CHINA)))
    assert status is not None and status.code == Code.ERROR
    assert status.message.startswith("failed to parse pod: preferred")
    assert "Invalid value: '{{.bad-value.}}'" in status.message


def test_no_nodes_to_score_skips() -> None:
    _, _, _, status = _pre_score(_p(labels=S2), [])
    assert status is not None and status.code == Code.SKIP


# ---- scoring_test.go: TestPreferredAffinityWithHardPodAffinitySymmetricWeight --------------------------------------

HARD_POD_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    # upstream lists the namespaces "" and "subteam2.team2"; "" is our "default".
    term(sel_in("service", ["S1"]), "region", namespaces=["default", "subteam2.team2"], ns_selector=_team1()),
]}}
SERVICE_S1 = {"service": "S1"}
HARD_WEIGHT_CASES: list[tuple[str, str, int, dict[str, int] | None]] = [
    ("with default weight", "", 1, {"node1": 100, "node2": 100, "node3": 0}),
    ("with zero weight", "", 0, None),
    ("with no matching namespace", "subteam1.team2", 1, None),
    ("with matching NamespaceSelector", "subteam1.team1", 1, {"node1": 100, "node2": 100, "node3": 0}),
    ("with matching Namespaces", "subteam2.team2", 1, {"node1": 100, "node2": 100, "node3": 0}),
]


@pytest.mark.parametrize(("ns", "weight", "want"), [c[1:] for c in HARD_WEIGHT_CASES],
                         ids=[c[0] for c in HARD_WEIGHT_CASES])
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(ns: str, weight: int,
                                                                    want: dict[str, int] | None) -> None:
    pods = [_p("node1", affinity=HARD_POD_AFFINITY), _p("node2", affinity=HARD_POD_AFFINITY)]
    got = scores(PLUGIN, _p(labels=SERVICE_S1, ns=ns), [*_CHINA_INDIA_AZ1, *pods, *NAMESPACES],
                 {"hardPodAffinityWeight": weight})
    assert got == want


def test_hard_pod_affinity_weight_scales_raw_scores() -> None:
    pods = [_p("node1", affinity=HARD_POD_AFFINITY), _p("node1", affinity=HARD_POD_AFFINITY)]
    objects = [*_CHINA_INDIA_AZ1, *pods, *NAMESPACES]
    raw = scores(PLUGIN, _p(labels=SERVICE_S1), objects, {"hardPodAffinityWeight": 7}, normalized=False)
    assert raw == {"node1": 14, "node2": 0, "node3": 0}
    assert scores(PLUGIN, _p(labels=SERVICE_S1), objects) == {"node1": 100, "node2": 0, "node3": 0}  # default 1


# ---- NormalizeScore's arithmetic -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "want"), [
    ([0, 29, 100], [0, 28, 100]),  # float64: 100 * (29/100) = 28.999999999999996, truncated
    ([-5, 0, 7, 3], [0, 41, 100, 66]),  # negative scores: min-max, not divide-by-max
    ([4, 4, 4], [0, 0, 0]),  # no spread: every node 0
    ([-3], [0]),
    ([], []),
])
def test_normalize_is_float_min_max(raw: list[int], want: list[int]) -> None:
    plugin = InterPodAffinity()
    state = CycleState(_snapshot([]))
    state.data[PRESCORE_KEY] = _PreScoreState({"zone": {"a": 1}})
    got = list(raw)
    plugin.normalize(state, PodRecord(_p()), got)
    assert got == want


def test_normalize_leaves_scores_without_topology_scores() -> None:
    state = CycleState(_snapshot([]))
    state.data[PRESCORE_KEY] = _PreScoreState({})
    got = [3, 9]
    InterPodAffinity().normalize(state, PodRecord(_p()), got)
    assert got == [3, 9]


def test_negative_raw_scores_normalize_through_the_runtime() -> None:
    nodes = _nodes(("n1", {"az": "a"}), ("n2", {"az": "b"}), ("n3", {"region": "r"}))
    pods = [_p("n1", S1), _p("n1", S1), _p("n2", S1)]
    pod = _p(affinity=AWAY_FROM_S1_IN_AZ)
    assert scores(PLUGIN, pod, [*nodes, *pods], normalized=False) == {"n1": -10, "n2": -5, "n3": 0}
    assert scores(PLUGIN, pod, [*nodes, *pods]) == {"n1": 0, "n2": 50, "n3": 100}


# ---- args ----------------------------------------------------------------------------------------------------------


def test_args_defaults() -> None:
    plugin = InterPodAffinity()
    assert plugin.hard_pod_affinity_weight == 1
    assert plugin.ignore_preferred_terms_of_existing_pods is False
    assert InterPodAffinity({"hardPodAffinityWeight": None}).hard_pod_affinity_weight == 1
    assert InterPodAffinity({"hardPodAffinityWeight": 0}).hard_pod_affinity_weight == 0
    assert InterPodAffinity({"hardPodAffinityWeight": 100}).hard_pod_affinity_weight == 100
    assert InterPodAffinity({"ignorePreferredTermsOfExistingPods": True}).ignore_preferred_terms_of_existing_pods
    assert InterPodAffinity({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "InterPodAffinityArgs"})


@pytest.mark.parametrize(("args", "message"), [
    ({"hardPodAffinityWeight": -1}, "hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"),
    ({"hardPodAffinityWeight": 101}, "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"),
    ({"hardPodAffinityWeight": "1"}, "hardPodAffinityWeight: expected an integer"),
    ({"hardPodAffinityWeight": True}, "hardPodAffinityWeight: expected an integer"),
    ({"ignorePreferredTermsOfExistingPods": "yes"}, "ignorePreferredTermsOfExistingPods: expected a boolean"),
    ({"hardPodAffinityWieght": 1}, "unknown field(s) hardPodAffinityWieght"),
])
def test_args_validation(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ProfileError) as err:
        InterPodAffinity(args)
    assert message in str(err.value)


# ---- more upstream behaviour ---------------------------------------------------------------------------------------


def test_filter_without_prefilter_state_is_an_error() -> None:
    """TestPreFilterDisabled: Filter without PreFilter's state answers Error."""
    snapshot = _snapshot([node("n", {})])
    status = InterPodAffinity().filter(CycleState(snapshot), PodRecord(_p()), snapshot.node_list[0])
    assert status is not None and status.code == Code.ERROR
    assert "PreFilterInterPodAffinity" in status.message


def test_terminating_pods_count() -> None:
    """Upstream's InterPodAffinity does not look at deletionTimestamp: a terminating pod still repels and attracts."""
    nodes = _nodes(("a", {"zone": "z1"}), ("b", {"zone": "z2"}))
    repelling = Pod().node("a").terminating().anti_exists("app", "zone").obj()
    assert filter_verdicts(PLUGIN, Pod().label("app", "x").obj(), [*nodes, repelling]) == {"a": EXIST, "b": OK}
    attracting = Pod().node("b").terminating().label("app", "x").obj()
    pod = Pod().label("other", "").aff_exists("app", "zone").obj()
    assert filter_verdicts(PLUGIN, pod, [*nodes, attracting]) == {"a": AFF, "b": OK}


def test_prefilter_skip_and_not_skip() -> None:
    nodes = _nodes(("a", {"zone": "z1"}))
    # No terms and no matching existing anti-affinity: Skip.
    assert filter_verdicts(PLUGIN, _p(labels=S1), [*nodes, _p("a", S2)]) == {"a": SKIPPED}
    # Preferred terms only do not make the filter run.
    assert filter_verdicts(PLUGIN, _p(affinity=STAY_WITH_S1_IN_REGION), nodes) == {"a": SKIPPED}
    # A required anti-affinity term, even matching nothing, makes it run.
    assert filter_verdicts(PLUGIN, Pod().anti_exists("x", "zone").obj(), nodes) == {"a": OK}


def test_first_pod_of_a_group_needs_no_matching_pod_anywhere() -> None:
    """A self-matching pod may start its group only while counts are empty: a match anywhere (even in a topology the
    node does not share) takes that licence away."""
    nodes = _nodes(("a", {"zone": "z1"}), ("b", {"zone": "z2"}), ("c", {}))
    pod = Pod().label("app", "db").aff_in("app", "zone", ["db"]).obj()
    assert filter_verdicts(PLUGIN, pod, nodes) == {"a": OK, "b": OK, "c": AFF}
    existing = _p("a", {"app": "db"})
    assert filter_verdicts(PLUGIN, pod, [*nodes, existing]) == {"a": OK, "b": AFF, "c": AFF}
    # A matching pod on a node without the topology key adds no count: the licence stays.
    nodes_nokey = _nodes(("a", {"zone": "z1"}), ("b", {"zone": "z2"}), ("c", {}))
    assert filter_verdicts(PLUGIN, pod, [*nodes_nokey, _p("c", {"app": "db"})]) == {"a": OK, "b": OK, "c": AFF}
    # A pod not matching its own terms never gets the licence.
    stranger = Pod().label("app", "web").aff_in("app", "zone", ["db"]).obj()
    assert filter_verdicts(PLUGIN, stranger, nodes) == {"a": AFF, "b": AFF, "c": AFF}


def test_filter_order_affinity_before_anti_affinity_before_existing() -> None:
    nodes = _nodes(("a", {"zone": "z1"}))
    existing = Pod().node("a").label("app", "x").anti_exists("role", "zone").obj()
    pod = Pod().label("role", "r").aff_in("app", "zone", ["nope"]).anti_exists("app", "zone").obj()
    assert filter_verdicts(PLUGIN, pod, [*nodes, existing]) == {"a": AFF}
    pod = Pod().label("role", "r").anti_exists("app", "zone").obj()
    assert filter_verdicts(PLUGIN, pod, [*nodes, existing]) == {"a": ANTI}
    pod = Pod().label("role", "r").obj()
    assert filter_verdicts(PLUGIN, pod, [*nodes, existing]) == {"a": EXIST}


def test_match_label_keys_are_left_to_the_apiserver() -> None:
    """kube-scheduler v1.36 ignores matchLabelKeys/mismatchLabelKeys (the apiserver merged them into the selector
    at creation): an unmerged key changes nothing."""
    nodes = _nodes(("a", {"zone": "z1"}), ("b", {"zone": "z2"}))
    existing = _p("a", {"app": "db", "version": "v1"})
    t = term(sel_in("app", ["db"]), "zone")
    t["matchLabelKeys"] = ["version"]
    pod = Pod().labels({"app": "db", "version": "v2"}).affinity(
        {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [t]}}).obj()
    assert filter_verdicts(PLUGIN, pod, [*nodes, existing]) == {"a": ANTI, "b": OK}


def test_existing_pod_with_unparseable_terms_loses_only_that_list() -> None:
    """As the scheduler cache ignores NewPodInfo's error: the broken list is empty, the others still apply."""
    nodes = _nodes(("a", {"zone": "z1"}), ("b", {"zone": "z2"}))
    broken = Pod().node("a").label("app", "x").affinity({"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            term(sel_exists("role"), "zone"), term(sel_in("role", ["{{bad}}"]), "zone")],
        "preferredDuringSchedulingIgnoredDuringExecution": [weighted(3, term(sel_exists("role"), "zone"))],
    }}).obj()
    pod = Pod().label("role", "r").obj()
    assert filter_verdicts(PLUGIN, pod, [*nodes, broken]) == {"a": SKIPPED, "b": SKIPPED}
    assert scores(PLUGIN, pod, [*nodes, broken], normalized=False) == {"a": -3, "b": 0}


def test_unknown_namespace_has_empty_labels_for_existing_pods_selectors() -> None:
    """GetNamespaceLabelsSnapshot: an unknown namespace has no labels, which a DoesNotExist selector matches."""
    nodes = _nodes(("a", {"zone": "z1"}), ("b", {"zone": "z2"}))
    existing = Pod().node("a").affinity({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        term(sel_exists("app"), "zone", ns_selector={"matchExpressions": [expr("team", "DoesNotExist")]})]}}).obj()
    pod = Pod().namespace("ghost").label("app", "x").obj()
    assert filter_verdicts(PLUGIN, pod, [*nodes, existing]) == {"a": EXIST, "b": OK}
    assert filter_verdicts(PLUGIN, pod, [*nodes, existing, namespace("ghost", {"team": "t"})]) == {
        "a": SKIPPED, "b": SKIPPED}


def test_terms_are_parsed_once_per_record(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = terms_module.parse_pod_affinity_terms

    def counting(raw: Mapping[str, Any], ns: str) -> Any:
        calls.append(raw["metadata"]["name"])
        return real(raw, ns)

    monkeypatch.setattr(terms_module, "parse_pod_affinity_terms", counting)
    objects = [*_nodes(("a", {"zone": "z1"})), Pod("e1").node("a").anti_exists("app", "zone").obj(),
               Pod("e2").node("a").label("app", "x").obj()]
    snapshot = _snapshot(objects)
    plugin = InterPodAffinity()
    for _ in range(3):
        record = PodRecord(Pod("in").label("app", "x").aff_exists("app", "zone").obj())
        state = CycleState(snapshot)
        assert plugin.pre_filter(state, record, snapshot.node_list) is None
        plugin.pre_score(state, record, snapshot.node_list)
    assert calls.count("e1") == 1  # existing pods: once, ever
    assert "e2" not in calls  # no affinity: nothing to parse
    assert calls.count("in") == 3  # a fresh incoming record each request, parsed once for filter and score
    record = PodRecord(_p())
    assert pod_affinity_terms(record) is EMPTY_TERMS


def test_incoming_namespace_selector_resolution_does_not_leak_into_the_memo() -> None:
    """The incoming record may become an existing pod (bind assumes it): its memoized terms keep the selector."""
    nodes = _nodes(("a", {"zone": "z1"}))
    pod = with_terms("subteam1.team1", POD_LABEL2, None, [term(sel_exists("service"), "zone", ns_selector=_team1())])
    snapshot = _snapshot([*nodes, *NAMESPACES])
    record = PodRecord(pod)
    InterPodAffinity().pre_filter(CycleState(snapshot), record, snapshot.node_list)
    (parsed,) = pod_affinity_terms(record).required_anti_affinity
    assert not parsed.namespace_selector.matches_nothing and not parsed.namespace_selector.empty
    assert parsed.namespaces == frozenset()


# ---- properties: namespaceSelector ----------------------------------------------------------------------------------

NS_NAMES = ["ns-a", "ns-b", "ns-c", "ns-d"]  # ns-d has no Namespace object
NS_LABEL_SETS = [{}, {"team": "a"}, {"team": "b"}, {"team": "a", "env": "prod"}, {"env": "dev"}]
NS_SELECTORS: list[Any] = [
    _UNSET, None, {}, {"matchLabels": {"team": "a"}}, {"matchExpressions": [expr("env", "Exists")]},
    {"matchExpressions": [expr("team", "DoesNotExist")]}, {"matchExpressions": [expr("team", "In", ["a", "b"])]},
]
ZONES = ["z1", "z2", None]


@st.composite
def ns_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    ns_labels = {n: draw(st.sampled_from(NS_LABEL_SETS)) for n in NS_NAMES[:3]}
    node_zones = [draw(st.sampled_from(ZONES)) for _ in range(3)]
    pods = [(draw(st.integers(0, 2)), draw(st.sampled_from(NS_NAMES)), draw(st.booleans()))
            for _ in range(draw(st.integers(0, 6)))]
    return {
        "ns_labels": ns_labels,
        "node_zones": node_zones,
        "pods": pods,  # (node index, namespace, has label app=x)
        "incoming_ns": draw(st.sampled_from(NS_NAMES)),
        "listed": draw(st.lists(st.sampled_from(NS_NAMES), max_size=2)),
        "ns_selector": draw(st.sampled_from(NS_SELECTORS)),
        "weight": draw(st.integers(1, 100)),
    }


def _ns_objects(sc: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    nodes = [node(f"n{i}", {"zone": z} if z else {}) for i, z in enumerate(sc["node_zones"])]
    namespaces = [namespace(n, labels) for n, labels in sc["ns_labels"].items()]
    return nodes, namespaces


def _ns_term(sc: dict[str, Any]) -> dict[str, Any]:
    return term(sel_exists("app"), "zone", namespaces=sc["listed"] or None, ns_selector=sc["ns_selector"])


def _selects(selector: Any, labels: Mapping[str, str]) -> bool:
    """A naive reading of a LabelSelector over the few shapes the strategy draws."""
    if selector is None or selector is _UNSET:
        return False
    ok = all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())
    for e in selector.get("matchExpressions", []):
        value = labels.get(e["key"])
        op = e["operator"]
        ok = ok and ((op == "Exists" and value is not None) or (op == "DoesNotExist" and value is None)
                     or (op == "In" and value in e["values"]))
    return ok


def _incoming_term_namespaces(sc: dict[str, Any]) -> set[str] | None:
    """The namespaces an incoming pod's term covers (None: all), as upstream resolves them."""
    sel = sc["ns_selector"]
    if sel is _UNSET or sel is None:
        return set(sc["listed"]) if sc["listed"] else {sc["incoming_ns"]}
    if not sel:  # {}: every namespace, with or without a Namespace object
        return None
    return set(sc["listed"]) | {n for n, labels in sc["ns_labels"].items() if _selects(sel, labels)}


def _existing_term_matches_incoming(sc: dict[str, Any], existing_ns: str) -> bool:
    sel = sc["ns_selector"]
    if sel is _UNSET or sel is None:
        covered = set(sc["listed"]) if sc["listed"] else {existing_ns}
        return sc["incoming_ns"] in covered
    if not sel:
        return True
    return sc["incoming_ns"] in sc["listed"] or _selects(sel, sc["ns_labels"].get(sc["incoming_ns"], {}))


@settings(max_examples=150, deadline=None)
@given(ns_scenarios())
def test_property_incoming_anti_affinity_namespace_selector(sc: dict[str, Any]) -> None:
    nodes, namespaces = _ns_objects(sc)
    pods = [Pod().node(f"n{i}").namespace(ns).labels({"app": "x"} if labelled else {}).obj()
            for i, ns, labelled in sc["pods"]]
    incoming = Pod().namespace(sc["incoming_ns"]).affinity(
        {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_ns_term(sc)]}}).obj()
    covered = _incoming_term_namespaces(sc)
    hated_zones = {sc["node_zones"][i] for i, ns, labelled in sc["pods"]
                   if labelled and (covered is None or ns in covered) and sc["node_zones"][i]}
    want = {f"n{i}": ANTI if z in hated_zones else OK for i, z in enumerate(sc["node_zones"])}
    assert filter_verdicts(PLUGIN, incoming, [*nodes, *namespaces, *pods]) == want


@settings(max_examples=150, deadline=None)
@given(ns_scenarios())
def test_property_existing_anti_affinity_namespace_selector(sc: dict[str, Any]) -> None:
    nodes, namespaces = _ns_objects(sc)
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_ns_term(sc)]}}
    pods = [Pod().node(f"n{i}").namespace(ns).affinity(anti).obj() for i, ns, _ in sc["pods"]]
    incoming = Pod().namespace(sc["incoming_ns"]).label("app", "x").obj()
    hated_zones = {sc["node_zones"][i] for i, ns, _ in sc["pods"]
                   if _existing_term_matches_incoming(sc, ns) and sc["node_zones"][i]}
    if hated_zones:
        want = {f"n{i}": EXIST if z in hated_zones else OK for i, z in enumerate(sc["node_zones"])}
    else:
        want = {f"n{i}": SKIPPED for i in range(3)}
    assert filter_verdicts(PLUGIN, incoming, [*nodes, *namespaces, *pods]) == want


@settings(max_examples=150, deadline=None)
@given(ns_scenarios())
def test_property_incoming_affinity_namespace_selector(sc: dict[str, Any]) -> None:
    nodes, namespaces = _ns_objects(sc)
    pods = [Pod().node(f"n{i}").namespace(ns).labels({"app": "x"} if labelled else {}).obj()
            for i, ns, labelled in sc["pods"]]
    incoming = Pod().namespace(sc["incoming_ns"]).affinity(
        {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_ns_term(sc)]}}).obj()
    covered = _incoming_term_namespaces(sc)
    liked = {sc["node_zones"][i] for i, ns, labelled in sc["pods"]
             if labelled and (covered is None or ns in covered) and sc["node_zones"][i]}
    # The incoming pod has no app label: it never matches its own term, so it needs a liked zone.
    want = {f"n{i}": OK if z is not None and z in liked else AFF for i, z in enumerate(sc["node_zones"])}
    assert filter_verdicts(PLUGIN, incoming, [*nodes, *namespaces, *pods]) == want


@settings(max_examples=150, deadline=None)
@given(ns_scenarios(), st.booleans())
def test_property_score_namespace_selector_both_directions(sc: dict[str, Any], symmetric: bool) -> None:
    """Preferred affinity of the incoming pod (or, symmetric, of the existing pods) with a namespace selector."""
    nodes, namespaces = _ns_objects(sc)
    preferred = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        weighted(sc["weight"], _ns_term(sc))]}}
    raw = dict.fromkeys((f"n{i}" for i in range(3)), 0)
    touched = False
    if symmetric:
        pods = [Pod().node(f"n{i}").namespace(ns).affinity(preferred).obj() for i, ns, _ in sc["pods"]]
        incoming = Pod().namespace(sc["incoming_ns"]).label("app", "x").obj()
        matching = [(i, ns) for i, ns, _ in sc["pods"] if _existing_term_matches_incoming(sc, ns)]
    else:
        pods = [Pod().node(f"n{i}").namespace(ns).labels({"app": "x"} if labelled else {}).obj()
                for i, ns, labelled in sc["pods"]]
        incoming = Pod().namespace(sc["incoming_ns"]).affinity(preferred).obj()
        covered = _incoming_term_namespaces(sc)
        matching = [(i, ns) for i, ns, labelled in sc["pods"] if labelled and (covered is None or ns in covered)]
    for i, _ in matching:
        zone = sc["node_zones"][i]
        if zone is None:
            continue
        touched = True
        for j, z in enumerate(sc["node_zones"]):
            if z == zone:
                raw[f"n{j}"] += sc["weight"]
    got = scores(PLUGIN, incoming, [*nodes, *namespaces, *pods], normalized=False)
    assert got == (raw if touched else None)


def test_random_clusters_filter_matches_a_naive_reading() -> None:
    """A seeded sweep of small clusters against a direct, unoptimised reading of the filter rules."""
    rng = random.Random(20250101)
    keys = ["zone", "rack"]
    for _ in range(150):
        nodes = []
        for i in range(4):
            labels = {k: rng.choice(["1", "2"]) for k in keys if rng.random() < 0.8}
            nodes.append(node(f"n{i}", labels))
        existing = []
        for _ in range(rng.randint(0, 6)):
            p = Pod().node(f"n{rng.randint(0, 3)}").labels({k: "" for k in ("a", "b", "c") if rng.random() < 0.4})
            if rng.random() < 0.4:
                p.anti_exists(rng.choice("abc"), rng.choice(keys))
            existing.append(p.obj())
        pod = Pod().labels({k: "" for k in ("a", "b", "c") if rng.random() < 0.4})
        for _ in range(rng.randint(0, 2)):
            pod.aff_exists(rng.choice("abc"), rng.choice(keys))
        for _ in range(rng.randint(0, 2)):
            pod.anti_exists(rng.choice("abc"), rng.choice(keys))
        incoming = pod.obj()
        got = filter_verdicts(PLUGIN, incoming, [*nodes, *existing])
        assert got == _naive_filter(incoming, existing, nodes), (incoming, existing, nodes)


def _req(pod: Mapping[str, Any], kind: str) -> list[tuple[str, str]]:
    """(label key that must exist, topology key) of each required term built by aff_exists/anti_exists."""
    part = (pod["spec"].get("affinity") or {}).get(kind) or {}
    return [(t["labelSelector"]["matchExpressions"][0]["key"], t["topologyKey"])
            for t in part.get("requiredDuringSchedulingIgnoredDuringExecution") or []]


def _naive_filter(pod: Mapping[str, Any], existing: list[dict[str, Any]],
                  nodes: list[dict[str, Any]]) -> dict[str, tuple[str, list[str]]]:
    labels_of = {n["metadata"]["name"]: n["metadata"]["labels"] for n in nodes}
    pod_labels = pod["metadata"].get("labels") or {}
    aff, anti = _req(pod, "podAffinity"), _req(pod, "podAntiAffinity")

    def same_topology(n1: str, n2: str, tk: str) -> bool:
        return tk in labels_of[n1] and labels_of[n1].get(tk) == labels_of[n2].get(tk)

    def plabels(p: Mapping[str, Any]) -> Mapping[str, str]:
        return p["metadata"].get("labels") or {}

    existing_hits = [(p["spec"]["nodeName"], tk) for p in existing for key, tk in _req(p, "podAntiAffinity")
                     if key in pod_labels and tk in labels_of[p["spec"]["nodeName"]]]
    if not aff and not anti and not existing_hits:
        return {n: SKIPPED for n in labels_of}
    all_match = [p for p in existing if aff and all(key in plabels(p) for key, _ in aff)]
    counted = any(tk in labels_of[p["spec"]["nodeName"]] for p in all_match for _, tk in aff)
    self_match = bool(aff) and all(key in pod_labels for key, _ in aff)
    out: dict[str, tuple[str, list[str]]] = {}
    for n in labels_of:
        if aff:
            if any(tk not in labels_of[n] for _, tk in aff):
                out[n] = AFF
                continue
            every = all(any(same_topology(p["spec"]["nodeName"], n, tk) for p in all_match) for _, tk in aff)
            if not every and not (not counted and self_match):
                out[n] = AFF
                continue
        if any(key in plabels(p) and same_topology(p["spec"]["nodeName"], n, tk) for key, tk in anti for p in existing):
            out[n] = ANTI
            continue
        if any(same_topology(m, n, tk) for m, tk in existing_hits):
            out[n] = EXIST
            continue
        out[n] = OK
    return out


# ---- the cluster index against a literal port of upstream's per-pod walks ------------------------------------------

Counts = dict[str, dict[str, int]]


def _add(counts: Counts, key: str, value: str, delta: int) -> None:
    by_value = counts.setdefault(key, {})
    by_value[value] = by_value.get(value, 0) + delta


def naive_existing_counts(pod: PodRecord, ns_labels: Mapping[str, str] | None, nodes: Sequence[Any]) -> Counts:
    """getExistingAntiAffinityCounts, pod by pod."""
    counts: Counts = {}
    for info in nodes:
        for existing in info.pods_with_required_anti_affinity:
            for t in pod_affinity_terms(existing).required_anti_affinity:
                if t.matches(pod.namespace, pod.labels, ns_labels) and t.topology_key in info.node.labels:
                    _add(counts, t.topology_key, info.node.labels[t.topology_key], 1)
    return counts


def naive_incoming_counts(affinity: Sequence[AffinityTerm], anti: Sequence[AffinityTerm],
                          nodes: Sequence[Any]) -> tuple[Counts, Counts]:
    """getIncomingAffinityAntiAffinityCounts, pod by pod."""
    aff_counts: Counts = {}
    anti_counts: Counts = {}
    for info in nodes:
        labels = info.node.labels
        for p in info.pods:
            if affinity and all(t.matches(p.namespace, p.labels, None) for t in affinity):
                for t in affinity:
                    if t.topology_key in labels:
                        _add(aff_counts, t.topology_key, labels[t.topology_key], 1)
            for t in anti:
                if t.matches(p.namespace, p.labels, None) and t.topology_key in labels:
                    _add(anti_counts, t.topology_key, labels[t.topology_key], 1)
    return aff_counts, anti_counts


def naive_topology_scores(pod: PodRecord, ns_labels: Mapping[str, str] | None,
                          preferred: Sequence[WeightedAffinityTerm], preferred_anti: Sequence[WeightedAffinityTerm],
                          hard: int, nodes: Sequence[Any]) -> tuple[Counts, bool]:
    """PreScore's processExistingPod over every pod of every node."""
    out: Counts = {}
    touched = False

    def process(t: AffinityTerm, weight: int, labels: Mapping[str, str]) -> None:
        nonlocal touched
        if t.topology_key in labels:
            _add(out, t.topology_key, labels[t.topology_key], weight)
            touched = True

    for info in nodes:
        labels = info.node.labels
        for p in info.pods:
            for t in preferred:
                if t.matches(p.namespace, p.labels, None):
                    process(t, t.weight, labels)
            for t in preferred_anti:
                if t.matches(p.namespace, p.labels, None):
                    process(t, -t.weight, labels)
            terms = pod_affinity_terms(p)
            if hard > 0:
                for rt in terms.required_affinity:
                    if rt.matches(pod.namespace, pod.labels, ns_labels):
                        process(rt, hard, labels)
            for t in terms.preferred_affinity:
                if t.matches(pod.namespace, pod.labels, ns_labels):
                    process(t, t.weight, labels)
            for t in terms.preferred_anti_affinity:
                if t.matches(pod.namespace, pod.labels, ns_labels):
                    process(t, -t.weight, labels)
    return out, touched


def _random_pod(rng: random.Random, name: str, node_name: str) -> dict[str, Any]:
    p = Pod(name).node(node_name).namespace(rng.choice(NS_NAMES))
    p.labels({k: rng.choice(["1", "2"]) for k in ("app", "tier") if rng.random() < 0.6})
    for _ in range(rng.randint(0, 2)):
        kind = rng.choice(["podAffinity", "podAntiAffinity"])
        t = term(sel_exists(rng.choice(["app", "tier"])), rng.choice(["zone", "rack"]),
                 namespaces=rng.choice([None, ["ns-a"]]), ns_selector=rng.choice(NS_SELECTORS))
        part = p._affinity.setdefault(kind, {})
        if rng.random() < 0.5:
            part.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(t)
        else:
            part.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                weighted(rng.randint(1, 100), t))
    return p.obj()


def test_incremental_index_matches_per_pod_walks() -> None:
    """One index, kept across a random sequence of cache changes, always agrees with upstream's per-pod walks."""
    rng = random.Random(7)
    cache = ClusterCache()
    cache.load([namespace(n, labels) for n, labels in zip(NS_NAMES[:3], NS_LABEL_SETS[1:4], strict=True)])
    index = ClusterIndex()
    pods: list[str] = []
    node_names = [f"n{i}" for i in range(5)]
    for name in node_names:
        cache.upsert_node(node(name, {"zone": rng.choice("ab"), "rack": rng.choice("xy")}))
    for step in range(300):
        action = rng.random()
        if action < 0.5 or not pods:
            pod_name = f"p{step}"
            cache.upsert_pod(_random_pod(rng, pod_name, rng.choice(node_names)))
            pods.append(pod_name)
        elif action < 0.75:
            cache.remove_pod(f"uid-{pods.pop(rng.randrange(len(pods)))}")
        elif action < 0.9:
            name = rng.choice(node_names)
            labels = {k: rng.choice("ab") for k in ("zone", "rack") if rng.random() < 0.8}
            cache.upsert_node(node(name, labels))
        else:
            name = rng.choice(node_names)
            cache.remove_node(name)
            if rng.random() < 0.5:
                cache.upsert_node(node(name, {"zone": "a"}))
        snapshot = cache.snapshot()
        index.sync(snapshot.all_nodes())
        fresh = ClusterIndex()
        fresh.sync(snapshot.all_nodes())
        assert (fresh.groups.by_node(), fresh.anti_terms, fresh.score_terms) == (
            index.groups.by_node(), index.anti_terms, index.score_terms)
        incoming = PodRecord(_random_pod(rng, "incoming", ""))
        parsed = pod_affinity_terms(incoming)
        objects = list(snapshot.kind("Namespace").values())
        ns_labels = namespace_labels(snapshot.kind("Namespace"), incoming.namespace)
        aff = [t.with_namespaces_resolved(objects) for t in parsed.required_affinity]
        anti = [t.with_namespaces_resolved(objects) for t in parsed.required_anti_affinity]
        pref = [t.with_namespaces_resolved(objects) for t in parsed.preferred_affinity]
        pref_anti = [t.with_namespaces_resolved(objects) for t in parsed.preferred_anti_affinity]
        assert index.existing_anti_affinity_counts(incoming, ns_labels) == naive_existing_counts(
            incoming, ns_labels, snapshot.pods_with_required_anti_affinity_nodes)
        assert index.incoming_affinity_counts(aff, anti) == naive_incoming_counts(aff, anti, snapshot.node_list)
        hard = rng.choice([0, 1, 5])
        assert index.topology_scores(incoming, ns_labels, pref, pref_anti, hard) == naive_topology_scores(
            incoming, ns_labels, pref, pref_anti, hard, snapshot.node_list)


def test_one_plugin_instance_follows_the_cache_across_requests() -> None:
    """The plugin's index is kept between requests: every cache change shows in the next verdict and score."""
    cache = ClusterCache()
    cache.load(_nodes(("a", {"zone": "z1"}), ("b", {"zone": "z2"})))
    plugin = InterPodAffinity()
    incoming = PodRecord(Pod("in").label("app", "web").aff_in("app", "zone", ["db"], PREFERRED)
                         .anti_in("app", "zone", ["web"]).obj())

    def verdicts() -> dict[str, Any]:
        snapshot = cache.snapshot()
        state = CycleState(snapshot)
        pre = plugin.pre_filter(state, incoming, snapshot.node_list)
        filtered = {n.name: plugin.filter(state, incoming, n) for n in snapshot.node_list}
        pre_score = plugin.pre_score(state, incoming, snapshot.node_list)
        raw = None if pre_score is not None else {n.name: plugin.score(state, incoming, n) for n in snapshot.node_list}
        return {"pre": pre, "rejected": sorted(n for n, s in filtered.items() if s is not None), "raw": raw}

    assert verdicts() == {"pre": None, "rejected": [], "raw": None}
    cache.upsert_pod(Pod("w1").node("a").label("app", "web").obj())
    cache.upsert_pod(Pod("d1").node("b").label("app", "db").obj())
    assert verdicts() == {"pre": None, "rejected": ["a"], "raw": {"a": 0, "b": 1}}
    cache.upsert_node(node("a", {"zone": "z2"}))  # a joins b's zone: the web pod now repels both
    assert verdicts() == {"pre": None, "rejected": ["a", "b"], "raw": {"a": 1, "b": 1}}
    cache.remove_pod("uid-w1")
    cache.upsert_pod(Pod("d2").node("a").label("app", "db").obj())
    assert verdicts() == {"pre": None, "rejected": [], "raw": {"a": 2, "b": 2}}
    cache.remove_node("b")  # its pod d1 stays on a placeholder, which snapshots leave out
    assert verdicts() == {"pre": None, "rejected": [], "raw": {"a": 1}}


def test_the_cluster_index_kept_through_changes_equals_one_built_afresh() -> None:
    """The index moves each changed node's terms from its old contribution to its new one (only the counts that
    differ): through random binds, removals and node relabels it holds what an index synced once holds, and
    reads the same existing anti-affinity counts for incoming pods."""
    rng = random.Random(11)
    cache = ClusterCache()
    names = [f"n{i}" for i in range(12)]
    for name in names:
        cache.load([_rzh(name, zone=rng.choice(["z1", "z2", "z3"]))])
    index = ClusterIndex()
    incoming = [PodRecord(Pod().labels(labels).obj())
                for labels in ({"foo": "1"}, {"bar": "2"}, {"foo": "2", "bar": "1"})]
    serial = 0
    for step in range(80):
        for _ in range(rng.choice([1, 2, 6])):
            action = rng.random()
            if action < 0.6:
                serial += 1
                pod = Pod(f"p{serial}").node(rng.choice(names)).labels({rng.choice(["foo", "bar"]): rng.choice("12")})
                for _ in range(rng.randint(0, 2)):
                    maker = rng.choice([pod.anti_exists, pod.aff_exists])
                    maker(rng.choice(["foo", "bar"]), rng.choice(["zone", "region", "hostname"]),
                          rng.choice([REQUIRED, PREFERRED]))
                cache.upsert_pod(pod.obj())
            elif action < 0.9:
                placed = [info for info in cache.snapshot().node_list if info.pods]
                if placed:
                    cache.remove_pod(rng.choice(rng.choice(placed).pods).cache_key)
            else:
                cache.load([_rzh(rng.choice(names), zone=rng.choice(["z1", "z2", "z4"]))])
        every = cache.snapshot().all_nodes()
        index.sync(every)
        fresh = ClusterIndex()
        fresh.sync(every)
        assert index.anti_terms == fresh.anti_terms, step
        assert index.score_terms == fresh.score_terms, step
        for pod in incoming:
            assert index.existing_anti_affinity_counts(pod, None) == fresh.existing_anti_affinity_counts(pod, None)
