"""PodTopologySpread (upstream plugins/podtopologyspread, v1.36.3).

The upstream tables of filtering_test.go (TestPreFilterState, TestSingleConstraint, TestMultipleConstraints) and
scoring_test.go (TestPreScoreSkip, TestPreScoreStateEmptyNodes, TestPodTopologySpreadScore) are ported as data,
case by case, with upstream's per-case feature gate settings (many of upstream's cases run with the
NodeInclusionPolicy and MatchLabelKeys gates off, which the plugin's class attributes reproduce). Then: both
reason strings and codes, system defaulting from Services and controllers, args validation, Go's float
arithmetic, and the extender-specific points (counting over the snapshot rather than the candidates, the
count memo).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from plugin_harness import filter_verdicts, scores

from extender.cluster.cache import ClusterCache
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import NodeRecord, PodRecord
from extender.cluster.snapshot import Snapshot
from extender.engine.framework import SKIP, Code, CycleState
from extender.engine.plugins.pod_topology_spread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PodTopologySpread,
)
from extender.engine.plugins.topology_spread_common import DefaultSelectors, SpreadSelector, go_log, go_round
from extender.engine.profile import ProfileError

NAME = "PodTopologySpread"
HARD = "DoNotSchedule"
SOFT = "ScheduleAnyway"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
UNSCHEDULABLE_TAINTS = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
LIST_NO_DEFAULTS = {"defaultingType": "List"}
EVERYTHING: dict[str, Any] = {}

OK: tuple[str, list[str]] = ("Success", [])
NOT_MATCH = ("Unschedulable", ["node(s) didn't match pod topology spread constraints"])
MISSING_LABEL = ("UnschedulableAndUnresolvable",
                 ["node(s) didn't match pod topology spread constraints (missing required label)"])


# ---- builders, in the shape of upstream's st.MakePod() / st.MakeNode() / st.MakeLabelSelector() --------------


def exists(key: str) -> dict[str, Any]:
    """st.MakeLabelSelector().Exists(key)."""
    return {"matchExpressions": [{"key": key, "operator": "Exists"}]}


def match_labels(labels: dict[str, str]) -> dict[str, Any]:
    """st.MakeLabelSelector().Label(k, v)..."""
    return {"matchLabels": labels}


FOO = exists("foo")
BAR = exists("bar")


def sc(max_skew: int, key: str, action: str, selector: dict[str, Any] | None, *, min_domains: int | None = None,
       affinity_policy: str | None = None, taints_policy: str | None = None,
       match_label_keys: list[str] | None = None) -> dict[str, Any]:
    """A TopologySpreadConstraint, argument for argument like upstream's PodWrapper.SpreadConstraint."""
    out: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": action}
    if selector is not None:
        out["labelSelector"] = selector
    if min_domains is not None:
        out["minDomains"] = min_domains
    if affinity_policy is not None:
        out["nodeAffinityPolicy"] = affinity_policy
    if taints_policy is not None:
        out["nodeTaintsPolicy"] = taints_policy
    if match_label_keys is not None:
        out["matchLabelKeys"] = match_label_keys
    return out


def node_affinity(key: str, operator: str, values: list[str]) -> dict[str, Any]:
    """st.MakePod().NodeAffinityIn/NotIn(key, values): one required term with one expression."""
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": key, "operator": operator, "values": values}]}]}}}


def pod(name: str, labels: dict[str, str] | None = None, *, node: str = "", namespace: str = "",
        spread: list[dict[str, Any]] | None = None, node_selector: dict[str, str] | None = None,
        affinity: dict[str, Any] | None = None, tolerations: list[dict[str, Any]] | None = None,
        terminating: bool = False, owner: tuple[str, str] | None = None,
        owner_api_version: str = "apps/v1") -> dict[str, Any]:
    """A Pod with exactly what the spreading plugin reads (no namespace means the default one)."""
    meta: dict[str, Any] = {"name": name, "uid": f"{namespace or 'default'}/{name}"}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": owner_api_version, "kind": owner[0], "name": owner[1],
                                    "uid": "", "controller": True}]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause"}]}
    if node:
        spec["nodeName"] = node
    if spread:
        spec["topologySpreadConstraints"] = spread
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if affinity is not None:
        spec["affinity"] = affinity
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def node(name: str, labels: dict[str, str], *, taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """A Node with exactly these labels (no implicit hostname label, unlike builders.make_node)."""
    spec: dict[str, Any] = {"taints": taints} if taints else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec,
            "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}}}


def service(name: str, selector: dict[str, str] | None, *, namespace: str = "") -> dict[str, Any]:
    """A Service; a None selector is a Service without one."""
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    spec: dict[str, Any] = {} if selector is None else {"selector": selector}
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}


def replica_set(name: str, selector: dict[str, Any] | None, *, namespace: str = "",
                kind: str = "ReplicaSet", api_version: str = "apps/v1") -> dict[str, Any]:
    """A ReplicaSet (or StatefulSet, or with a map selector a ReplicationController)."""
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    spec: dict[str, Any] = {} if selector is None else {"selector": selector}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec}


@dataclass
class Want:
    """The PreFilter state: (maxSkew, topologyKey, minDomains, nodeAffinityPolicy, nodeTaintsPolicy) per
    constraint, matching pods per domain, and criticalPaths[i][0].MatchNum (MaxInt32 without domains)."""

    constraints: list[tuple[int, str, int, str, str]]
    counts: list[dict[str, int]]
    critical_min: list[int]


@dataclass
class ScoreWant:
    """The PreScore state."""

    constraints: list[tuple[int, str, int, str, str]]
    counts: list[dict[str, int]]
    ignored: list[str]
    weights: list[float]


@dataclass
class Case:
    """One upstream table row."""

    name: str
    pod: dict[str, Any]
    nodes: list[dict[str, Any]]
    failed_nodes: list[dict[str, Any]] = field(default_factory=list)
    existing: list[dict[str, Any]] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)
    args: dict[str, Any] | None = None
    node_inclusion_policy: bool = False
    match_label_keys: bool = False
    want: Any = None


# ---- upstream's tables -----------------------------------------------------------------------------------

# filtering_test.go TestPreFilterState: the PreFilter state (constraints, matching pods per domain, global
# minimum per constraint); args are {defaultingType: List} plus the case's default constraints.
PREFILTER_CASES = [
    Case(
        name="clean cluster with one spreadConstraint",
        pod=pod("p", {"foo": ""}, spread=[sc(5, "zone", HARD, match_labels({"foo": "bar"}))]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(5, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 0, "zone2": 0}],
            critical_min=[0],
        ),
    ),
    Case(
        name="normal case with one spreadConstraint",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 3, "zone2": 2}],
            critical_min=[2],
        ),
    ),
    Case(
        name="normal case with null label selector",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, None)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 0, "zone2": 0}],
            critical_min=[0],
        ),
    ),
    Case(
        name="normal case with one spreadConstraint, on a 3-zone cluster",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
            node("node-o", {"node": "node-o", "zone": "zone3"}),
            node("node-p", {"node": "node-p", "zone": "zone3"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 3, "zone2": 2, "zone3": 0}],
            critical_min=[0],
        ),
    ),
    Case(
        name="namespace mismatch doesn't count",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a", namespace="ns1"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y", namespace="ns2"),
            pod("p-y2", {"foo": ""}, node="node-y"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 2, "zone2": 1}],
            critical_min=[1],
        ),
    ),
    Case(
        name="normal case with two spreadConstraints",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
            pod("p-y4", {"foo": ""}, node="node-y"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore"), (1, "node", 1, "Honor", "Ignore")],
            counts=[{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
            critical_min=[3, 0],
        ),
    ),
    Case(
        name="soft spreadConstraints should be bypassed",
        pod=pod(
            "p",
            {"foo": ""},
            spread=[
                sc(1, "zone", SOFT, FOO),
                sc(1, "zone", HARD, FOO),
                sc(1, "node", SOFT, FOO),
                sc(1, "node", HARD, FOO),
            ],
        ),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
            pod("p-y4", {"foo": ""}, node="node-y"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore"), (1, "node", 1, "Honor", "Ignore")],
            counts=[{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
            critical_min=[3, 1],
        ),
    ),
    Case(
        name="different labelSelectors - simple version",
        pod=pod("p", {"bar": "", "foo": ""}, spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, BAR)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a", {"foo": ""}, node="node-a"),
            pod("p-b", {"bar": ""}, node="node-b"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore"), (1, "node", 1, "Honor", "Ignore")],
            counts=[{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}],
            critical_min=[0, 0],
        ),
    ),
    Case(
        name="different labelSelectors - complex pods",
        pod=pod("p", {"bar": "", "foo": ""}, spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, BAR)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"bar": "", "foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"bar": "", "foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
            pod("p-y4", {"bar": "", "foo": ""}, node="node-y"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore"), (1, "node", 1, "Honor", "Ignore")],
            counts=[{"zone1": 3, "zone2": 4}, {"node-a": 1, "node-b": 0, "node-y": 2}],
            critical_min=[3, 0],
        ),
    ),
    Case(
        name="two spreadConstraints, and with podAffinity",
        pod=pod(
            "p",
            {"foo": ""},
            affinity=node_affinity("node", "NotIn", ["node-x"]),
            spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, FOO)],
        ),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
            pod("p-y4", {"foo": ""}, node="node-y"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore"), (1, "node", 1, "Honor", "Ignore")],
            counts=[{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}],
            critical_min=[3, 1],
        ),
    ),
    Case(
        name="default constraints and a service",
        pod=pod("p", {"baz": "kar", "foo": "bar"}),
        nodes=[],
        objects=[service("service-0", {"foo": "bar"})],
        args={"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway"},
            {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
        ]},
        want=Want(
            constraints=[(3, "node", 1, "Honor", "Ignore"), (5, "rack", 1, "Honor", "Ignore")],
            counts=[{}, {}],
            critical_min=[2147483647, 2147483647],
        ),
    ),
    Case(
        name="default constraints and a service that doesn't match",
        pod=pod("p", {"foo": "bar"}),
        nodes=[],
        objects=[service("service-0", {"baz": "kep"})],
        args={"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
        ]},
        want=None,
    ),
    Case(
        name="default constraints and a service, but pod has constraints",
        pod=pod(
            "p",
            {"baz": "tar", "foo": "bar"},
            spread=[
                sc(1, "zone", HARD, match_labels({"baz": "tar"})),
                sc(2, "planet", SOFT, match_labels({"fot": "rok"})),
            ],
        ),
        nodes=[],
        objects=[service("service-0", {"foo": "bar"})],
        args={"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
        ]},
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{}],
            critical_min=[2147483647],
        ),
    ),
    Case(
        name="default soft constraints and a service",
        pod=pod("p", {"foo": "bar"}),
        nodes=[],
        objects=[service("service-0", {"foo": "bar"})],
        args={"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway"},
        ]},
        want=None,
    ),
    Case(
        name="TpKeyToDomainsNum is calculated when MinDomains is enabled",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
            pod("p-y4", {"foo": ""}, node="node-y"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore"), (1, "node", 1, "Honor", "Ignore")],
            counts=[{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}],
            critical_min=[3, 0],
        ),
    ),
    Case(
        name="feature gate disabled with NodeAffinityPolicy",
        pod=pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[sc(1, "node", HARD, BAR)]),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-c", {"bar": "", "node": "node-c"}),
        ],
        existing=[
            pod("p-a", {"bar": ""}, node="node-a"),
            pod("p-b", {"bar": ""}, node="node-b"),
            pod("p-c", {"bar": ""}, node="node-b"),
            pod("p-d", node="node-c"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "node", 1, "Honor", "Ignore")],
            counts=[{"node-a": 1, "node-b": 2}],
            critical_min=[1],
        ),
    ),
    Case(
        name="NodeAffinityPolicy honored with labelSelectors",
        pod=pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[sc(1, "node", HARD, BAR)]),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-c", {"bar": "", "node": "node-c"}),
        ],
        existing=[
            pod("p-a", {"bar": ""}, node="node-a"),
            pod("p-b", {"bar": ""}, node="node-b"),
            pod("p-c", {"bar": ""}, node="node-b"),
            pod("p-d", node="node-c"),
        ],
        node_inclusion_policy=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "node", 1, "Honor", "Ignore")],
            counts=[{"node-a": 1, "node-b": 2}],
            critical_min=[1],
        ),
    ),
    Case(
        name="NodeAffinityPolicy ignored with labelSelectors",
        pod=pod(
            "p",
            {"foo": ""},
            node_selector={"foo": ""},
            spread=[sc(1, "node", HARD, BAR, affinity_policy="Ignore")],
        ),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-c", {"bar": "", "node": "node-c"}),
        ],
        existing=[
            pod("p-a", {"bar": ""}, node="node-a"),
            pod("p-b", {"bar": ""}, node="node-b"),
            pod("p-c", {"bar": ""}, node="node-b"),
            pod("p-d", node="node-c"),
        ],
        node_inclusion_policy=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "node", 1, "Ignore", "Ignore")],
            counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
            critical_min=[0],
        ),
    ),
    Case(
        name="NodeAffinityPolicy honored with nodeAffinity",
        pod=pod("p", {"foo": ""}, affinity=node_affinity("foo", "In", [""]), spread=[sc(1, "node", HARD, BAR)]),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-c", {"bar": "", "node": "node-c"}),
        ],
        existing=[
            pod("p-a", {"bar": ""}, node="node-a"),
            pod("p-c", {"bar": ""}, node="node-b"),
            pod("p-d", {"bar": ""}, node="node-b"),
            pod("p-e", node="node-c"),
        ],
        node_inclusion_policy=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "node", 1, "Honor", "Ignore")],
            counts=[{"node-a": 1, "node-b": 2}],
            critical_min=[1],
        ),
    ),
    Case(
        name="NodeAffinityPolicy ignored with nodeAffinity",
        pod=pod(
            "p",
            {"foo": ""},
            affinity=node_affinity("foo", "In", [""]),
            spread=[sc(1, "node", HARD, BAR, affinity_policy="Ignore")],
        ),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-c", {"bar": "", "node": "node-c"}),
        ],
        existing=[
            pod("p-a", {"bar": ""}, node="node-a"),
            pod("p-b", {"bar": ""}, node="node-b"),
            pod("p-c", {"bar": ""}, node="node-b"),
            pod("p-d", node="node-c"),
        ],
        node_inclusion_policy=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "node", 1, "Ignore", "Ignore")],
            counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
            critical_min=[0],
        ),
    ),
    Case(
        name="feature gate disabled with NodeTaintsPolicy",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "node", HARD, BAR)]),
        nodes=[
            node("node-a", {"node": "node-a"}),
            node("node-b", {"node": "node-b"}),
            node("node-c", {"bar": "", "node": "node-c"}, taints=UNSCHEDULABLE_TAINTS),
        ],
        existing=[
            pod("p-a", {"bar": ""}, node="node-a"),
            pod("p-b", {"bar": ""}, node="node-b"),
            pod("p-c", {"bar": ""}, node="node-b"),
            pod("p-d", node="node-c"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "node", 1, "Honor", "Ignore")],
            counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
            critical_min=[0],
        ),
    ),
    Case(
        name="NodeTaintsPolicy ignored",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "node", HARD, BAR)]),
        nodes=[
            node("node-a", {"node": "node-a"}),
            node("node-b", {"node": "node-b"}),
            node("node-c", {"bar": "", "node": "node-c"}, taints=UNSCHEDULABLE_TAINTS),
        ],
        existing=[
            pod("p-a", {"bar": ""}, node="node-a"),
            pod("p-b", {"bar": ""}, node="node-b"),
            pod("p-c", {"bar": ""}, node="node-b"),
            pod("p-d", node="node-c"),
        ],
        node_inclusion_policy=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "node", 1, "Honor", "Ignore")],
            counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
            critical_min=[0],
        ),
    ),
    Case(
        name="NodeTaintsPolicy honored",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "node", HARD, BAR, taints_policy="Honor")]),
        nodes=[
            node("node-a", {"node": "node-a"}),
            node("node-b", {"node": "node-b"}),
            node("node-c", {"bar": "", "node": "node-c"}, taints=UNSCHEDULABLE_TAINTS),
        ],
        existing=[
            pod("p-a", {"bar": ""}, node="node-a"),
            pod("p-b", {"bar": ""}, node="node-b"),
            pod("p-c", {"bar": ""}, node="node-b"),
            pod("p-d", node="node-c"),
        ],
        node_inclusion_policy=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "node", 1, "Honor", "Honor")],
            counts=[{"node-a": 1, "node-b": 2}],
            critical_min=[1],
        ),
    ),
    Case(
        name="NodeTaintsPolicy honored with tolerated taints",
        pod=pod(
            "p",
            {"foo": ""},
            tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}],
            spread=[sc(1, "node", HARD, BAR, taints_policy="Honor")],
        ),
        nodes=[
            node("node-a", {"node": "node-a"}),
            node("node-b", {"node": "node-b"}),
            node("node-c", {"bar": "", "node": "node-c"}, taints=UNSCHEDULABLE_TAINTS),
        ],
        existing=[
            pod("p-a", {"bar": ""}, node="node-a"),
            pod("p-b", {"bar": ""}, node="node-b"),
            pod("p-c", {"bar": ""}, node="node-b"),
            pod("p-d", node="node-c"),
        ],
        node_inclusion_policy=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "node", 1, "Honor", "Honor")],
            counts=[{"node-a": 1, "node-b": 2, "node-c": 0}],
            critical_min=[0],
        ),
    ),
    Case(
        name="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        pod=pod(
            "p",
            {"foo": ""},
            node_selector={"foo": ""},
            spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, FOO, affinity_policy="Ignore")],
        ),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"foo": "", "node": "node-x", "zone": "zone2"}),
        ],
        existing=[
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-x1", {"foo": ""}, node="node-x"),
        ],
        node_inclusion_policy=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore"), (1, "node", 1, "Ignore", "Ignore")],
            counts=[{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
            critical_min=[0, 0],
        ),
    ),
    Case(
        name="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO, taints_policy="Honor"), sc(1, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}, taints=UNSCHEDULABLE_TAINTS),
            node("node-x", {"foo": "", "node": "node-x", "zone": "zone2"}),
        ],
        existing=[
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-x1", {"foo": ""}, node="node-x"),
        ],
        node_inclusion_policy=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Honor"), (1, "node", 1, "Honor", "Ignore")],
            counts=[{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}],
            critical_min=[0, 0],
        ),
    ),
    Case(
        name="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        pod=pod(
            "p",
            {"foo": ""},
            node_selector={"foo": ""},
            spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, FOO)],
        ),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"foo": "", "node": "node-b", "zone": "zone1"}, taints=UNSCHEDULABLE_TAINTS),
            node("node-x", {"foo": "", "node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-x1", {"foo": ""}, node="node-x"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        node_inclusion_policy=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore"), (1, "node", 1, "Honor", "Ignore")],
            counts=[{"zone1": 0, "zone2": 1}, {"node-b": 0, "node-x": 1}],
            critical_min=[0, 0],
        ),
    ),
    Case(
        name="two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
        pod=pod(
            "p",
            {"foo": ""},
            node_selector={"foo": ""},
            spread=[
                sc(1, "zone", HARD, FOO, affinity_policy="Ignore"),
                sc(1, "node", HARD, FOO, taints_policy="Honor"),
            ],
        ),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"foo": "", "node": "node-b", "zone": "zone1"}, taints=UNSCHEDULABLE_TAINTS),
            node("node-x", {"foo": "", "node": "node-x", "zone": "zone2"}),
            node("node-y", {"foo": "", "node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-x1", {"foo": ""}, node="node-x"),
            pod("p-x2", {"foo": ""}, node="node-x"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        node_inclusion_policy=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Ignore", "Ignore"), (1, "node", 1, "Honor", "Honor")],
            counts=[{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}],
            critical_min=[2, 1],
        ),
    ),
    Case(
        name="matchLabelKeys ignored when feature gate disabled",
        pod=pod("p", {"bar": "", "foo": ""}, spread=[sc(1, "zone", HARD, FOO, match_label_keys=["bar"])]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 3, "zone2": 2}],
            critical_min=[2],
        ),
    ),
    Case(
        name="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        pod=pod("p", {"bar": "a", "foo": ""}, spread=[sc(1, "zone", HARD, FOO, match_label_keys=["bar"])]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"bar": "a", "foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"bar": "a", "foo": ""}, node="node-y"),
            pod("p-y2", {"bar": ""}, node="node-y"),
        ],
        match_label_keys=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 1, "zone2": 1}],
            critical_min=[1],
        ),
    ),
    Case(
        name="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        pod=pod("p", {"foo": "a"}, spread=[sc(1, "zone", HARD, EVERYTHING, match_label_keys=["foo"])]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": "a"}, node="node-a"),
            pod("p-a2", {"foo": "a"}, node="node-a"),
            pod("p-b1", {"foo": "a"}, node="node-b"),
            pod("p-y1", {"foo": "a"}, node="node-y"),
            pod("p-y2", {"foo": "a"}, node="node-y"),
        ],
        match_label_keys=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 3, "zone2": 2}],
            critical_min=[2],
        ),
    ),
    Case(
        name="key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, None, match_label_keys=["bar"])]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": "a"}, node="node-a"),
            pod("p-a2", {"foo": "a"}, node="node-a"),
            pod("p-b1", {"foo": "a"}, node="node-b"),
            pod("p-y1", {"foo": "a"}, node="node-y"),
            pod("p-y2", {"foo": "a"}, node="node-y"),
        ],
        match_label_keys=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 0, "zone2": 0}],
            critical_min=[0],
        ),
    ),
    Case(
        name="no pod is matched when LabelSelector is nil when feature gate disabled",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, None, match_label_keys=["bar"])]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": "a"}, node="node-a"),
            pod("p-a2", {"foo": "a"}, node="node-a"),
            pod("p-b1", {"foo": "a"}, node="node-b"),
            pod("p-y1", {"foo": "a"}, node="node-y"),
            pod("p-y2", {"foo": "a"}, node="node-y"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 0, "zone2": 0}],
            critical_min=[0],
        ),
    ),
    Case(
        name="key in matchLabelKeys is ignored when it isn't exist in pod.labels",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO, match_label_keys=["bar"])]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": "a"}, node="node-a"),
            pod("p-a2", {"foo": "a"}, node="node-a"),
            pod("p-b1", {"foo": "a"}, node="node-b"),
            pod("p-y1", {"foo": "a"}, node="node-y"),
            pod("p-y2", {"foo": "a"}, node="node-y"),
        ],
        match_label_keys=True,
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 3, "zone2": 2}],
            critical_min=[2],
        ),
    ),
    Case(
        name="two spreadConstraints with the same topologyKey",
        pod=pod("p", {"bar": "", "foo": ""}, spread=[sc(1, "zone", HARD, FOO), sc(1, "zone", HARD, BAR)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"bar": "", "foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-x1", {"bar": ""}, node="node-x"),
            pod("p-y1", {"bar": "", "foo": ""}, node="node-y"),
            pod("p-y2", {"bar": ""}, node="node-y"),
        ],
        args=LIST_NO_DEFAULTS,
        want=Want(
            constraints=[(1, "zone", 1, "Honor", "Ignore"), (1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}],
            critical_min=[1, 1],
        ),
    ),
    Case(
        name="skip if not specified",
        pod=pod("p", {"foo": ""}),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
        ],
        args=LIST_NO_DEFAULTS,
        want=None,
    ),
]


# filtering_test.go TestSingleConstraint and TestMultipleConstraints: PreFilter over every node, then Filter per
# node (upstream checks codes; each code has exactly one reason, pinned here too).
FILTER_CASES = [
    Case(
        name="no existing pods",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        want={"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    Case(
        name="no existing pods, incoming pod doesn't match itself",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, BAR)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        want={"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    Case(
        name="existing pods in a different namespace do not count",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a", namespace="ns1"),
            pod("p-b1", {"foo": ""}, node="node-a", namespace="ns2"),
            pod("p-x1", {"foo": ""}, node="node-x"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": OK, "node-b": OK, "node-x": NOT_MATCH, "node-y": NOT_MATCH},
    ),
    Case(
        name="existing pods do not match null selector",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, None)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-x1", {"foo": ""}, node="node-x"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    Case(
        name="pods spread across zones as 3/3, all nodes fit",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    Case(
        name="pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zon": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-x1", {"foo": ""}, node="node-x"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": OK, "node-b": MISSING_LABEL, "node-x": NOT_MATCH, "node-y": NOT_MATCH},
    ),
    Case(
        name="pod cannot be scheduled as all nodes don't have label 'rack'",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "rack", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
        ],
        want={"node-a": MISSING_LABEL, "node-x": MISSING_LABEL},
    ),
    Case(
        name="pods spread across nodes as 2/1/0/3, only node-x fits",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": NOT_MATCH},
    ),
    Case(
        name="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        pod=pod("p", {"foo": ""}, spread=[sc(2, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": NOT_MATCH, "node-b": OK, "node-x": OK, "node-y": NOT_MATCH},
    ),
    Case(
        name="pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        pod=pod("p", {"bar": ""}, spread=[sc(1, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": NOT_MATCH, "node-b": OK, "node-x": OK, "node-y": NOT_MATCH},
    ),
    Case(
        name="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        pod=pod(
            "p",
            {"foo": ""},
            affinity=node_affinity("node", "In", ["node-a", "node-y"]),
            spread=[sc(1, "node", HARD, FOO)],
        ),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": OK, "node-b": OK, "node-x": OK, "node-y": NOT_MATCH},
    ),
    Case(
        name="terminating Pods should be excluded",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a"}),
            node("node-b", {"node": "node-b"}),
        ],
        existing=[
            pod("p-a", {"foo": ""}, node="node-a", terminating=True),
            pod("p-b", {"foo": ""}, node="node-b"),
        ],
        want={"node-a": OK, "node-b": NOT_MATCH},
    ),
    Case(
        name="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
        pod=pod(
            "p",
            {"foo": ""},
            affinity=node_affinity("node", "NotIn", ["node-b"]),
            spread=[sc(1, "zone", HARD, FOO)],
        ),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": OK, "node-b": OK, "node-x": NOT_MATCH, "node-y": NOT_MATCH},
    ),
    Case(
        name=("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then the third "
              "node fits"),
        pod=pod("p", {"foo": ""}, spread=[sc(2, "node", HARD, FOO, min_domains=4)]),
        nodes=[
            node("node-a", {"node": "node-a"}),
            node("node-b", {"node": "node-b"}),
            node("node-c", {"node": "node-c"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-c1", {"foo": ""}, node="node-c"),
        ],
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-c": OK},
    ),
    Case(
        name=("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then the all "
              "nodes fit"),
        pod=pod("p", {"foo": ""}, spread=[sc(2, "node", HARD, FOO, min_domains=2)]),
        nodes=[
            node("node-a", {"node": "node-a"}),
            node("node-b", {"node": "node-b"}),
            node("node-c", {"node": "node-c"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-c1", {"foo": ""}, node="node-c"),
        ],
        want={"node-a": OK, "node-b": OK, "node-c": OK},
    ),
    Case(
        name=("pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the third and "
              "fourth nodes fit"),
        pod=pod("p", {"foo": ""}, spread=[sc(2, "zone", HARD, FOO, min_domains=3)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-b1", {"foo": ""}, node="node-a"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": OK},
    ),
    Case(
        name=("pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes "
              "fit"),
        pod=pod("p", {"foo": ""}, spread=[sc(2, "zone", HARD, FOO, min_domains=1)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-b1", {"foo": ""}, node="node-a"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": OK, "node-b": OK, "node-x": OK, "node-y": OK},
    ),
    Case(
        name="NodeAffinityPolicy honored with labelSelectors",
        pod=pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[sc(1, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-x", {"foo": "", "node": "node-x"}),
            node("node-y", {"node": "node-y"}),
        ],
        existing=[
            pod("p-b1", {"foo": ""}, node="node-a"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        node_inclusion_policy=True,
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": OK},
    ),
    Case(
        name="NodeAffinityPolicy ignored with labelSelectors",
        pod=pod(
            "p",
            {"foo": ""},
            node_selector={"foo": ""},
            spread=[sc(1, "node", HARD, FOO, affinity_policy="Ignore")],
        ),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-x", {"foo": "", "node": "node-x"}),
            node("node-y", {"node": "node-y"}),
        ],
        existing=[
            pod("p-b1", {"foo": ""}, node="node-a"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        node_inclusion_policy=True,
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": NOT_MATCH},
    ),
    Case(
        name="NodeAffinityPolicy honored with nodeAffinity",
        pod=pod("p", {"foo": ""}, affinity=node_affinity("foo", "In", [""]), spread=[sc(1, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-x", {"foo": "", "node": "node-x"}),
            node("node-y", {"node": "node-y"}),
        ],
        existing=[
            pod("p-b1", {"foo": ""}, node="node-a"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        node_inclusion_policy=True,
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": OK},
    ),
    Case(
        name="NodeAffinityPolicy ignored with labelSelectors",
        pod=pod(
            "p",
            {"foo": ""},
            affinity=node_affinity("foo", "In", [""]),
            spread=[sc(1, "node", HARD, FOO, affinity_policy="Ignore")],
        ),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-x", {"foo": "", "node": "node-x"}),
            node("node-y", {"node": "node-y"}),
        ],
        existing=[
            pod("p-b1", {"foo": ""}, node="node-a"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        node_inclusion_policy=True,
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": NOT_MATCH},
    ),
    Case(
        name="NodeTaintsPolicy honored",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "node", HARD, FOO, taints_policy="Honor")]),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-x", {"foo": "", "node": "node-x"}),
            node("node-y", {"node": "node-y"}, taints=UNSCHEDULABLE_TAINTS),
        ],
        existing=[
            pod("p-b1", {"foo": ""}, node="node-a"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        node_inclusion_policy=True,
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": OK},
    ),
    Case(
        name="NodeTaintsPolicy ignored",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-x", {"foo": "", "node": "node-x"}),
            node("node-y", {"node": "node-y"}, taints=UNSCHEDULABLE_TAINTS),
        ],
        existing=[
            pod("p-b1", {"foo": ""}, node="node-a"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        node_inclusion_policy=True,
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": NOT_MATCH},
    ),
    Case(
        name="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": NOT_MATCH},
    ),
    Case(
        name="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
            pod("p-y4", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": NOT_MATCH, "node-y": NOT_MATCH},
    ),
    Case(
        name="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        pod=pod("p", {"bar": "", "foo": ""}, spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, BAR)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-y1", {"bar": ""}, node="node-y"),
        ],
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": NOT_MATCH},
    ),
    Case(
        name="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        pod=pod("p", {"bar": "", "foo": ""}, spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, BAR)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-x1", {"bar": ""}, node="node-x"),
            pod("p-y1", {"bar": ""}, node="node-y"),
        ],
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": NOT_MATCH, "node-y": NOT_MATCH},
    ),
    Case(
        name="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        pod=pod("p", {"bar": "", "foo": ""}, spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, BAR)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"bar": "", "foo": ""}, node="node-a"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"bar": "", "foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": NOT_MATCH, "node-b": OK, "node-x": NOT_MATCH, "node-y": NOT_MATCH},
    ),
    Case(
        name="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
        pod=pod("p", {"bar": ""}, spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, BAR)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-x1", {"bar": ""}, node="node-x"),
            pod("p-y1", {"bar": ""}, node="node-y"),
        ],
        want={"node-a": OK, "node-b": OK, "node-x": NOT_MATCH, "node-y": NOT_MATCH},
    ),
    Case(
        name="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-y3", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": NOT_MATCH, "node-b": OK, "node-x": MISSING_LABEL, "node-y": NOT_MATCH},
    ),
    Case(
        name="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        pod=pod(
            "p",
            {"foo": ""},
            node_selector={"foo": ""},
            spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, FOO, affinity_policy="Ignore")],
        ),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a", "zone": "zone1"}),
            node("node-b", {"foo": "", "node": "node-b", "zone": "zone1"}),
            node("node-x", {"foo": "", "node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        node_inclusion_policy=True,
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": NOT_MATCH},
    ),
    Case(
        name="two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO, taints_policy="Honor"), sc(1, "node", HARD, FOO)]),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a", "zone": "zone1"}),
            node("node-b", {"foo": "", "node": "node-b", "zone": "zone1"}),
            node("node-x", {"foo": "", "node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}, taints=UNSCHEDULABLE_TAINTS),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        node_inclusion_policy=True,
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": NOT_MATCH},
    ),
    Case(
        name="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        pod=pod(
            "p",
            {"foo": ""},
            node_selector={"foo": ""},
            spread=[sc(1, "zone", HARD, FOO), sc(1, "node", HARD, FOO)],
        ),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"foo": "", "node": "node-x", "zone": "zone2"}),
            node("node-y", {"foo": "", "node": "node-y", "zone": "zone2"}, taints=UNSCHEDULABLE_TAINTS),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        node_inclusion_policy=True,
        want={"node-a": NOT_MATCH, "node-b": OK, "node-x": OK, "node-y": NOT_MATCH},
    ),
    Case(
        name="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
        pod=pod(
            "p",
            {"foo": ""},
            node_selector={"foo": ""},
            spread=[
                sc(1, "zone", HARD, FOO, taints_policy="Honor"),
                sc(1, "node", HARD, FOO, affinity_policy="Ignore"),
            ],
        ),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"foo": "", "node": "node-x", "zone": "zone2"}),
            node("node-y", {"foo": "", "node": "node-y", "zone": "zone2"}, taints=UNSCHEDULABLE_TAINTS),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
        ],
        node_inclusion_policy=True,
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": NOT_MATCH},
    ),
    Case(
        name="two Constraints on zone, spreads = [3/3, 2/1]",
        pod=pod("p", {"bar": "", "foo": ""}, spread=[sc(1, "zone", HARD, BAR), sc(1, "zone", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"bar": "", "foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"bar": "", "foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"bar": "", "foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": OK, "node-y": OK},
    ),
    Case(
        name="two Constraints on zone, spreads = [3/4, 2/1]",
        pod=pod("p", {"bar": "", "foo": ""}, spread=[sc(1, "zone", HARD, BAR), sc(1, "zone", HARD, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a", "zone": "zone1"}),
            node("node-b", {"node": "node-b", "zone": "zone1"}),
            node("node-x", {"node": "node-x", "zone": "zone2"}),
            node("node-y", {"node": "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"bar": "", "foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"bar": "", "foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"bar": "", "foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
            pod("p-y4", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": NOT_MATCH, "node-b": NOT_MATCH, "node-x": NOT_MATCH, "node-y": NOT_MATCH},
    ),
]


# scoring_test.go TestPreScoreSkip.
PRESCORE_SKIP_CASES = [
    Case(
        name="the pod doesn't have soft topology spread Constraints",
        pod=pod("p", namespace="default"),
        nodes=[
            node("node-a", {HOSTNAME: "node-a"}),
            node("node-b", {HOSTNAME: "node-b"}),
        ],
        args={"defaultingType": "List"},
    ),
    Case(
        name="default constraints and a replicaset that doesn't match",
        pod=pod("p", {"baz": "sup", "foo": "bar"}, namespace="default", owner=("ReplicaSet", "rs2")),
        nodes=[
            node("node-a", {"planet": "mars"}),
        ],
        objects=[replica_set("rs1", {"matchExpressions": [{"key": "tar", "operator": "Exists"}]}, namespace="default")],
        args={"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"},
        ]},
    ),
]


# scoring_test.go TestPreScoreStateEmptyNodes: PreScore state over nodes without pods (counts exclude hostname
# constraints, which are counted in Score; weights are Go's math.Log(size + 2), bit for bit).
PRESCORE_STATE_CASES = [
    Case(
        name="normal case",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", SOFT, FOO), sc(1, HOSTNAME, SOFT, FOO)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x", "zone": "zone2"}),
        ],
        args={"defaultingType": "List"},
        want=ScoreWant(
            constraints=[(1, "zone", 1, "Honor", "Ignore"), (1, HOSTNAME, 1, "Honor", "Ignore")],
            counts=[{"zone1": 0, "zone2": 0}, {}],
            ignored=[],
            weights=[1.3862943611198906, 1.6094379124341003],
        ),
    ),
    Case(
        name="null selector",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", SOFT, None)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x", "zone": "zone2"}),
        ],
        args={"defaultingType": "List"},
        want=ScoreWant(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 0, "zone2": 0}],
            ignored=[],
            weights=[1.3862943611198906],
        ),
    ),
    Case(
        name="node-x doesn't have label zone",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", SOFT, FOO), sc(1, HOSTNAME, SOFT, BAR)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x"}),
        ],
        args={"defaultingType": "List"},
        want=ScoreWant(
            constraints=[(1, "zone", 1, "Honor", "Ignore"), (1, HOSTNAME, 1, "Honor", "Ignore")],
            counts=[{"zone1": 0}, {}],
            ignored=["node-x"],
            weights=[1.0986122886681096, 1.3862943611198906],
        ),
    ),
    Case(
        name="system default constraints and a replicaset",
        pod=pod("p", {"baz": "sup", "foo": "tar"}, namespace="default", owner=("ReplicaSet", "rs1")),
        nodes=[
            node("node-a", {HOSTNAME: "node-a", "topology.kubernetes.io/zone": "mars"}),
            node("node-b", {HOSTNAME: "node-b", "topology.kubernetes.io/zone": "mars"}),
            node("node-c", {HOSTNAME: "node-c"}),
            node("node-d", {HOSTNAME: "node-d"}),
        ],
        objects=[replica_set("rs1", {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}, namespace="default")],
        args={"defaultingType": "System"},
        want=ScoreWant(
            constraints=[(3, HOSTNAME, 1, "Honor", "Ignore"), (5, "topology.kubernetes.io/zone", 1, "Honor", "Ignore")],
            counts=[{}, {"": 0, "mars": 0}],
            ignored=[],
            weights=[1.791759469228055, 1.3862943611198906],
        ),
    ),
    Case(
        name="default constraints and a replicaset",
        pod=pod("p", {"baz": "sup", "foo": "tar"}, namespace="default", owner=("ReplicaSet", "rs1")),
        nodes=[
            node("node-a", {HOSTNAME: "node-a", "planet": "mars", "rack": "rack1"}),
        ],
        objects=[replica_set("rs1", {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}, namespace="default")],
        args={"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway"},
            {"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "planet", "whenUnsatisfiable": "ScheduleAnyway"},
        ]},
        want=ScoreWant(
            constraints=[(1, HOSTNAME, 1, "Honor", "Ignore"), (2, "planet", 1, "Honor", "Ignore")],
            counts=[{}, {"mars": 0}],
            ignored=[],
            weights=[1.0986122886681096, 1.0986122886681096],
        ),
    ),
    Case(
        name="default constraints and a replicaset, but pod has constraints",
        pod=pod(
            "p",
            {"baz": "sup", "foo": "bar"},
            namespace="default",
            owner=("ReplicaSet", "rs1"),
            spread=[sc(1, "zone", HARD, BAR), sc(2, "planet", SOFT, match_labels({"baz": "sup"}))],
        ),
        nodes=[
            node("node-a", {"galaxy": "andromeda", "planet": "mars"}),
        ],
        objects=[replica_set("rs1", {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}, namespace="default")],
        args={"defaultingType": "List", "defaultConstraints": [
            {"maxSkew": 2, "topologyKey": "galaxy", "whenUnsatisfiable": "ScheduleAnyway"},
        ]},
        want=ScoreWant(
            constraints=[(2, "planet", 1, "Honor", "Ignore")],
            counts=[{"mars": 0}],
            ignored=[],
            weights=[1.0986122886681096],
        ),
    ),
    Case(
        name="NodeAffinityPolicy honored with labelSelectors",
        pod=pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[sc(1, "zone", SOFT, BAR)]),
        nodes=[
            node("node-a", {"foo": "", HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {"foo": "", HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x", "zone": "zone2"}),
        ],
        node_inclusion_policy=True,
        args={"defaultingType": "List"},
        want=ScoreWant(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 0, "zone2": 0}],
            ignored=[],
            weights=[1.3862943611198906],
        ),
    ),
    Case(
        name="NodeAffinityPolicy ignored with labelSelectors",
        pod=pod(
            "p",
            {"foo": ""},
            node_selector={"foo": ""},
            spread=[sc(1, "zone", SOFT, BAR, affinity_policy="Ignore")],
        ),
        nodes=[
            node("node-a", {"foo": "", HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {"foo": "", HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x", "zone": "zone2"}),
        ],
        node_inclusion_policy=True,
        args={"defaultingType": "List"},
        want=ScoreWant(
            constraints=[(1, "zone", 1, "Ignore", "Ignore")],
            counts=[{"zone1": 0, "zone2": 0}],
            ignored=[],
            weights=[1.3862943611198906],
        ),
    ),
    Case(
        name="NodeAffinityPolicy honored with nodeAffinity",
        pod=pod("p", {"foo": ""}, affinity=node_affinity("foo", "In", [""]), spread=[sc(1, "zone", SOFT, BAR)]),
        nodes=[
            node("node-a", {"foo": "", HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {"foo": "", HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x", "zone": "zone2"}),
        ],
        node_inclusion_policy=True,
        args={"defaultingType": "List"},
        want=ScoreWant(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 0, "zone2": 0}],
            ignored=[],
            weights=[1.3862943611198906],
        ),
    ),
    Case(
        name="NodeAffinityPolicy ignored with nodeAffinity",
        pod=pod(
            "p",
            {"foo": ""},
            affinity=node_affinity("foo", "In", [""]),
            spread=[sc(1, "zone", SOFT, BAR, affinity_policy="Ignore")],
        ),
        nodes=[
            node("node-a", {"foo": "", HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {"foo": "", HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x", "zone": "zone2"}),
        ],
        node_inclusion_policy=True,
        args={"defaultingType": "List"},
        want=ScoreWant(
            constraints=[(1, "zone", 1, "Ignore", "Ignore")],
            counts=[{"zone1": 0, "zone2": 0}],
            ignored=[],
            weights=[1.3862943611198906],
        ),
    ),
    Case(
        name="NodeTaintsPolicy honored",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", SOFT, BAR, taints_policy="Honor")]),
        nodes=[
            node("node-a", {"foo": "", HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {"foo": "", HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x", "zone": "zone2"}, taints=UNSCHEDULABLE_TAINTS),
        ],
        node_inclusion_policy=True,
        args={"defaultingType": "List"},
        want=ScoreWant(
            constraints=[(1, "zone", 1, "Honor", "Honor")],
            counts=[{"zone1": 0, "zone2": 0}],
            ignored=[],
            weights=[1.3862943611198906],
        ),
    ),
    Case(
        name="NodeTaintsPolicy ignored",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", SOFT, BAR)]),
        nodes=[
            node("node-a", {"foo": "", HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {"foo": "", HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x", "zone": "zone2"}, taints=UNSCHEDULABLE_TAINTS),
        ],
        node_inclusion_policy=True,
        args={"defaultingType": "List"},
        want=ScoreWant(
            constraints=[(1, "zone", 1, "Honor", "Ignore")],
            counts=[{"zone1": 0, "zone2": 0}],
            ignored=[],
            weights=[1.3862943611198906],
        ),
    ),
]


# scoring_test.go TestPodTopologySpreadScore: PreScore on `nodes` (the candidates) with `failed_nodes` also in
# the snapshot, Score per candidate, NormalizeScore; args {defaultingType: System}.
SCORE_CASES = [
    Case(
        name="one constraint on node, no existing pods",
        pod=pod("p", {"foo": ""}, spread=[sc(1, HOSTNAME, SOFT, FOO)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a"}),
            node("node-b", {HOSTNAME: "node-b"}),
        ],
        want={"node-a": 100, "node-b": 100},
    ),
    Case(
        name="one constraint on node, only one node is candidate",
        pod=pod("p", {"foo": ""}, spread=[sc(1, HOSTNAME, SOFT, FOO)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a"}),
        ],
        failed_nodes=[
            node("node-b", {HOSTNAME: "node-b"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
        ],
        want={"node-a": 100},
    ),
    Case(
        name="one constraint on node, all nodes have the same number of matching pods",
        pod=pod("p", {"foo": ""}, spread=[sc(1, HOSTNAME, SOFT, FOO)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a"}),
            node("node-b", {HOSTNAME: "node-b"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
        ],
        want={"node-a": 100, "node-b": 100},
    ),
    Case(
        name="one constraint on node, all 4 nodes are candidates",
        pod=pod("p", {"foo": ""}, spread=[sc(1, HOSTNAME, SOFT, FOO)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a"}),
            node("node-b", {HOSTNAME: "node-b"}),
            node("node-c", {HOSTNAME: "node-c"}),
            node("node-d", {HOSTNAME: "node-d"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-d1", {"foo": ""}, node="node-d"),
            pod("p-d2", {"foo": ""}, node="node-d"),
            pod("p-d3", {"foo": ""}, node="node-d"),
        ],
        want={"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
    ),
    Case(
        name="one constraint on node, null selector",
        pod=pod("p", {"foo": ""}, spread=[sc(1, HOSTNAME, SOFT, None)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a"}),
            node("node-b", {HOSTNAME: "node-b"}),
            node("node-c", {HOSTNAME: "node-c"}),
            node("node-d", {HOSTNAME: "node-d"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-d1", {"foo": ""}, node="node-d"),
            pod("p-d2", {"foo": ""}, node="node-d"),
            pod("p-d3", {"foo": ""}, node="node-d"),
        ],
        want={"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
    ),
    Case(
        name="one constraint on node, all 4 nodes are candidates, maxSkew=2",
        pod=pod("p", {"foo": ""}, spread=[sc(2, HOSTNAME, SOFT, FOO)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a"}),
            node("node-b", {HOSTNAME: "node-b"}),
            node("node-c", {HOSTNAME: "node-c"}),
            node("node-d", {HOSTNAME: "node-d"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-d1", {"foo": ""}, node="node-d"),
            pod("p-d2", {"foo": ""}, node="node-d"),
            pod("p-d3", {"foo": ""}, node="node-d"),
        ],
        want={"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
    ),
    Case(
        name="one constraint on node, all 4 nodes are candidates, maxSkew=3",
        pod=pod("p", {"foo": ""}, spread=[sc(3, HOSTNAME, SOFT, FOO)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a"}),
            node("node-b", {HOSTNAME: "node-b"}),
            node("node-c", {HOSTNAME: "node-c"}),
            node("node-d", {HOSTNAME: "node-d"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-a3", {"foo": ""}, node="node-a"),
            pod("p-a4", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-b3", {"foo": ""}, node="node-b"),
            pod("p-c1", {"foo": ""}, node="node-c"),
            pod("p-c2", {"foo": ""}, node="node-c"),
            pod("p-d1", {"foo": ""}, node="node-d"),
        ],
        want={"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    Case(
        name="system defaulting, nodes don't have zone, pods match service",
        pod=pod("p", {"foo": ""}),
        nodes=[
            node("node-a", {HOSTNAME: "node-a"}),
            node("node-b", {HOSTNAME: "node-b"}),
            node("node-c", {HOSTNAME: "node-c"}),
            node("node-d", {HOSTNAME: "node-d"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-a3", {"foo": ""}, node="node-a"),
            pod("p-a4", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-b3", {"foo": ""}, node="node-b"),
            pod("p-c1", {"foo": ""}, node="node-c"),
            pod("p-c2", {"foo": ""}, node="node-c"),
            pod("p-d1", {"foo": ""}, node="node-d"),
        ],
        objects=[service("service-0", {"foo": ""})],
        want={"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    Case(
        name="one constraint on node, 3 out of 4 nodes are candidates",
        pod=pod("p", {"foo": ""}, spread=[sc(1, HOSTNAME, SOFT, FOO)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a"}),
            node("node-b", {HOSTNAME: "node-b"}),
            node("node-x", {HOSTNAME: "node-x"}),
        ],
        failed_nodes=[
            node("node-y", {HOSTNAME: "node-y"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-a3", {"foo": ""}, node="node-a"),
            pod("p-a4", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-x1", {"foo": ""}, node="node-x"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": 33, "node-b": 83, "node-x": 100},
    ),
    Case(
        name="one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
        pod=pod("p", {"foo": ""}, spread=[sc(1, HOSTNAME, SOFT, FOO)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a"}),
            node("node-b", {"n": "node-b"}),
            node("node-x", {HOSTNAME: "node-x"}),
        ],
        failed_nodes=[
            node("node-y", {HOSTNAME: "node-y"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-a3", {"foo": ""}, node="node-a"),
            pod("p-a4", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-x1", {"foo": ""}, node="node-x"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": 16, "node-b": 0, "node-x": 100},
    ),
    Case(
        name="one constraint on zone, 3 out of 4 nodes are candidates",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", SOFT, FOO)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x", "zone": "zone2"}),
        ],
        failed_nodes=[
            node("node-y", {HOSTNAME: "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-a3", {"foo": ""}, node="node-a"),
            pod("p-a4", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-x1", {"foo": ""}, node="node-x"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": 75, "node-b": 75, "node-x": 100},
    ),
    Case(
        name="two Constraints on zone and node, 2 out of 4 nodes are candidates",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "zone", SOFT, FOO), sc(1, HOSTNAME, SOFT, FOO)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x", "zone": "zone2"}),
        ],
        failed_nodes=[
            node("node-b", {HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-y", {HOSTNAME: "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-x1", {"foo": ""}, node="node-x"),
            pod("p-x2", {"foo": ""}, node="node-x"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
            pod("p-y4", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": 100, "node-x": 63},
    ),
    Case(
        name="two Constraints on zone, 2 out of 4 nodes are candidates",
        pod=pod("p", {"bar": "", "foo": ""}, spread=[sc(1, "zone", SOFT, FOO), sc(1, "zone", SOFT, BAR)]),
        nodes=[
            node("node-a", {"zone": "zone1"}),
            node("node-x", {"zone": "zone2"}),
        ],
        failed_nodes=[
            node("node-b", {"zone": "zone1"}),
            node("node-y", {"zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"bar": "", "foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"bar": "", "foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"bar": "", "foo": ""}, node="node-y"),
            pod("p-y3", {"foo": ""}, node="node-y"),
        ],
        want={"node-a": 85, "node-x": 100},
    ),
    Case(
        name="two Constraints on zone and node, with different labelSelectors",
        pod=pod("p", {"bar": "", "foo": ""}, spread=[sc(1, "zone", SOFT, FOO), sc(1, HOSTNAME, SOFT, BAR)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x", "zone": "zone2"}),
            node("node-y", {HOSTNAME: "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-b1", {"bar": "", "foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"bar": ""}, node="node-y"),
        ],
        want={"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
    ),
    Case(
        name="two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        pod=pod("p", {"bar": "", "foo": ""}, spread=[sc(1, "zone", SOFT, FOO), sc(1, HOSTNAME, SOFT, BAR)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x", "zone": "zone2"}),
            node("node-y", {HOSTNAME: "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-b1", {"bar": ""}, node="node-b"),
            pod("p-x1", {"foo": ""}, node="node-x"),
            pod("p-y1", {"bar": "", "foo": ""}, node="node-y"),
        ],
        want={"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
    ),
    Case(
        name="two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
        pod=pod("p", {"bar": "", "foo": ""}, spread=[sc(1, "zone", SOFT, FOO), sc(1, HOSTNAME, SOFT, BAR)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-x", {HOSTNAME: "node-x", "zone": "zone2"}),
        ],
        failed_nodes=[
            node("node-y", {HOSTNAME: "node-y", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-b1", {"bar": "", "foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-y"),
            pod("p-y2", {"bar": ""}, node="node-y"),
        ],
        want={"node-a": 50, "node-b": 25, "node-x": 100},
    ),
    Case(
        name="existing pods in a different namespace do not count",
        pod=pod("p", {"foo": ""}, spread=[sc(1, HOSTNAME, SOFT, FOO)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a"}),
            node("node-b", {HOSTNAME: "node-b"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a", namespace="ns1"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-b2", {"foo": ""}, node="node-b"),
        ],
        want={"node-a": 100, "node-b": 33},
    ),
    Case(
        name="terminating Pods should be excluded",
        pod=pod("p", {"foo": ""}, spread=[sc(1, HOSTNAME, SOFT, FOO)]),
        nodes=[
            node("node-a", {HOSTNAME: "node-a"}),
            node("node-b", {HOSTNAME: "node-b"}),
        ],
        existing=[
            pod("p-a", {"foo": ""}, node="node-a", terminating=True),
            pod("p-b", {"foo": ""}, node="node-b"),
        ],
        want={"node-a": 100, "node-b": 0},
    ),
    Case(
        name="minDomains has no effect when ScheduleAnyway",
        pod=pod("p", {"foo": ""}, spread=[sc(2, "node", SOFT, FOO, min_domains=10)]),
        nodes=[
            node("node-a", {"node": "node-a"}),
            node("node-b", {"node": "node-b"}),
            node("node-c", {"node": "node-c"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-b2", {"foo": ""}, node="node-b"),
            pod("p-c1", {"foo": ""}, node="node-c"),
        ],
        want={"node-a": 75, "node-b": 75, "node-c": 100},
    ),
    Case(
        name="NodeAffinityPolicy honoed with labelSelectors",
        pod=pod("p", {"foo": ""}, node_selector={"foo": ""}, spread=[sc(1, "node", SOFT, FOO)]),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-c", {"node": "node-c"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-c1", {"foo": ""}, node="node-c"),
        ],
        node_inclusion_policy=True,
        want={"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    Case(
        name="NodeAffinityPolicy ignored with labelSelectors",
        pod=pod(
            "p",
            {"foo": ""},
            node_selector={"foo": ""},
            spread=[sc(1, "node", SOFT, FOO, affinity_policy="Ignore")],
        ),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-c", {"node": "node-c"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-c1", {"foo": ""}, node="node-c"),
        ],
        node_inclusion_policy=True,
        want={"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    Case(
        name="NodeAffinityPolicy honoed with nodeAffinity",
        pod=pod("p", {"foo": ""}, affinity=node_affinity("foo", "In", [""]), spread=[sc(1, "node", SOFT, FOO)]),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-c", {"node": "node-c"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-c1", {"foo": ""}, node="node-c"),
        ],
        node_inclusion_policy=True,
        want={"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    Case(
        name="NodeAffinityPolicy ignored with nodeAffinity",
        pod=pod(
            "p",
            {"foo": ""},
            affinity=node_affinity("foo", "In", [""]),
            spread=[sc(1, "node", SOFT, FOO, affinity_policy="Ignore")],
        ),
        nodes=[
            node("node-a", {"foo": "", "node": "node-a"}),
            node("node-b", {"foo": "", "node": "node-b"}),
            node("node-c", {"node": "node-c"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-c1", {"foo": ""}, node="node-c"),
        ],
        node_inclusion_policy=True,
        want={"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    Case(
        name="NodeTaintsPolicy honored",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "node", SOFT, FOO, taints_policy="Honor")]),
        nodes=[
            node("node-a", {"node": "node-a"}),
            node("node-b", {"node": "node-b"}),
            node("node-c", {"node": "node-c"}, taints=UNSCHEDULABLE_TAINTS),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-c1", {"foo": ""}, node="node-c"),
        ],
        node_inclusion_policy=True,
        want={"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    Case(
        name="NodeTaintsPolicy ignored",
        pod=pod("p", {"foo": ""}, spread=[sc(1, "node", SOFT, FOO)]),
        nodes=[
            node("node-a", {"node": "node-a"}),
            node("node-b", {"node": "node-b"}),
            node("node-c", {"node": "node-c"}, taints=UNSCHEDULABLE_TAINTS),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-a2", {"foo": ""}, node="node-a"),
            pod("p-b1", {"foo": ""}, node="node-b"),
            pod("p-c1", {"foo": ""}, node="node-c"),
        ],
        node_inclusion_policy=True,
        want={"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    Case(
        name="matchLabelKeys ignored when feature gate disabled",
        pod=pod(
            "p",
            {"bar": "", "baz": "", "foo": ""},
            spread=[
                sc(1, "zone", SOFT, FOO, match_label_keys=["baz"]),
                sc(1, HOSTNAME, SOFT, BAR, match_label_keys=["baz"]),
            ],
        ),
        nodes=[
            node("node-a", {HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-c", {HOSTNAME: "node-c", "zone": "zone2"}),
            node("node-d", {HOSTNAME: "node-d", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-b1", {"bar": "", "foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-c"),
            pod("p-y2", {"bar": ""}, node="node-c"),
        ],
        want={"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
    ),
    Case(
        name="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        pod=pod(
            "p",
            {"bar": "", "foo": ""},
            spread=[
                sc(1, "zone", SOFT, EVERYTHING, match_label_keys=["foo"]),
                sc(1, HOSTNAME, SOFT, EVERYTHING, match_label_keys=["bar"]),
            ],
        ),
        nodes=[
            node("node-a", {HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-c", {HOSTNAME: "node-c", "zone": "zone2"}),
            node("node-d", {HOSTNAME: "node-d", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-b1", {"bar": "", "foo": ""}, node="node-b"),
            pod("p-y1", {"foo": ""}, node="node-c"),
            pod("p-y2", {"bar": ""}, node="node-c"),
        ],
        match_label_keys=True,
        want={"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
    ),
    Case(
        name="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        pod=pod(
            "p",
            {"bar": "", "baz": "", "foo": ""},
            spread=[sc(1, "zone", SOFT, FOO), sc(1, HOSTNAME, SOFT, BAR, match_label_keys=["baz"])],
        ),
        nodes=[
            node("node-a", {HOSTNAME: "node-a", "zone": "zone1"}),
            node("node-b", {HOSTNAME: "node-b", "zone": "zone1"}),
            node("node-c", {HOSTNAME: "node-c", "zone": "zone2"}),
            node("node-d", {HOSTNAME: "node-d", "zone": "zone2"}),
        ],
        existing=[
            pod("p-a1", {"foo": ""}, node="node-a"),
            pod("p-b1", {"bar": "", "baz": "", "foo": ""}, node="node-b"),
            pod("p-c1", {"foo": ""}, node="node-c"),
            pod("p-c2", {"bar": ""}, node="node-c"),
            pod("p-d3", {"bar": "", "baz": ""}, node="node-c"),
        ],
        match_label_keys=True,
        want={"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
    ),
]


# ---- running the tables ------------------------------------------------------------------------------------


@pytest.fixture
def gates(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Set the plugin's feature gates for one case, as upstream's tests set the plugin's enable* fields."""

    def apply(case: Case) -> None:
        monkeypatch.setattr(PodTopologySpread, "enable_node_inclusion_policy", case.node_inclusion_policy)
        monkeypatch.setattr(PodTopologySpread, "enable_match_label_keys", case.match_label_keys)

    yield apply


def snapshot_of(*objects: dict[str, Any]) -> Snapshot:
    """A snapshot of the given objects, through the cache as the service builds it."""
    cache = ClusterCache()
    cache.load(objects)
    return cache.snapshot()


def policy(honor: bool) -> str:
    return "Honor" if honor else "Ignore"


def described(constraints: Any) -> list[tuple[int, str, int, str, str]]:
    return [(c.max_skew, c.topology_key, c.min_domains, policy(c.honor_affinity), policy(c.honor_taints))
            for c in constraints]


def ids(cases: list[Case]) -> list[str]:
    return [c.name for c in cases]


@pytest.mark.parametrize("case", PREFILTER_CASES, ids=ids(PREFILTER_CASES))
def test_prefilter_state(case: Case, gates: Any) -> None:
    gates(case)
    snap = snapshot_of(*case.nodes, *case.existing, *case.objects)
    plugin = PodTopologySpread(case.args)
    state = CycleState(snap)
    status = plugin.pre_filter(state, PodRecord(case.pod), snap.node_list)
    if case.want is None:
        assert status == SKIP
        return
    assert status is None
    got = state.data["PreFilterPodTopologySpread"]
    assert described(got.constraints) == case.want.constraints
    assert got.counts == case.want.counts
    assert got.critical_min == case.want.critical_min


@pytest.mark.parametrize("case", FILTER_CASES, ids=ids(FILTER_CASES))
def test_filter(case: Case, gates: Any) -> None:
    gates(case)
    got = filter_verdicts(NAME, case.pod, [*case.nodes, *case.existing], LIST_NO_DEFAULTS)
    assert got == case.want


@pytest.mark.parametrize("case", PRESCORE_SKIP_CASES, ids=ids(PRESCORE_SKIP_CASES))
def test_prescore_skip(case: Case) -> None:
    snap = snapshot_of(*case.nodes, *case.objects)
    plugin = PodTopologySpread(case.args)
    assert plugin.pre_score(CycleState(snap), PodRecord(case.pod), snap.node_list) == SKIP


@pytest.mark.parametrize("case", PRESCORE_STATE_CASES, ids=ids(PRESCORE_STATE_CASES))
def test_prescore_state(case: Case, gates: Any) -> None:
    gates(case)
    snap = snapshot_of(*case.nodes, *case.objects)
    plugin = PodTopologySpread(case.args)
    state = CycleState(snap)
    assert plugin.pre_score(state, PodRecord(case.pod), snap.node_list) is None
    got = state.data["PreScorePodTopologySpread"]
    assert described(got.constraints) == case.want.constraints
    assert got.counts == case.want.counts
    assert sorted(got.ignored) == case.want.ignored
    assert got.weights == case.want.weights  # exact float equality, as upstream's cmp.Diff


def run_scores(case: Case, args: dict[str, Any] | None) -> dict[str, int]:
    """PreScore on the candidates, Score each, NormalizeScore: upstream's TestPodTopologySpreadScore loop."""
    snap = snapshot_of(*case.nodes, *case.failed_nodes, *case.existing, *case.objects)
    plugin = PodTopologySpread(args)
    state = CycleState(snap)
    record = PodRecord(case.pod)
    candidates = [snap.node_infos[n["metadata"]["name"]] for n in case.nodes]
    assert plugin.pre_score(state, record, candidates) is None
    got = [plugin.score(state, record, info) for info in candidates]
    plugin.normalize(state, record, got)
    return {info.name: score for info, score in zip(candidates, got, strict=True)}


@pytest.mark.parametrize("case", SCORE_CASES, ids=ids(SCORE_CASES))
def test_score(case: Case, gates: Any) -> None:
    gates(case)
    assert run_scores(case, {"defaultingType": "System"}) == case.want


# ---- reasons, codes and errors -------------------------------------------------------------------------------


def test_reason_strings_and_codes() -> None:
    assert ERR_REASON_CONSTRAINTS_NOT_MATCH == "node(s) didn't match pod topology spread constraints"
    assert ERR_REASON_NODE_LABEL_NOT_MATCH == (
        "node(s) didn't match pod topology spread constraints (missing required label)")
    incoming = pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO)])
    objects = [node("a", {"zone": "z1"}), node("b", {"zone": "z2"}), node("bare", {}),
               pod("e1", {"foo": ""}, node="a")]
    assert filter_verdicts(NAME, incoming, objects) == {"a": NOT_MATCH, "b": OK, "bare": MISSING_LABEL}


def test_first_failing_constraint_decides_the_reason() -> None:
    # Only nodes holding every topology key are counted: z1 holds 2 (on "a"), z2 holds 0 (on "b").
    incoming = pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO), sc(1, "rack", HARD, FOO)])
    objects = [node("a", {"zone": "z1", "rack": "r1"}), node("b", {"zone": "z2", "rack": "r1"}),
               node("c", {"zone": "z2"}), node("d", {"zone": "z1"}),
               pod("e1", {"foo": ""}, node="a"), pod("e2", {"foo": ""}, node="a")]
    got = filter_verdicts(NAME, incoming, objects)
    # "d" lacks the rack label too, but its zone constraint fails first.
    assert got == {"a": NOT_MATCH, "b": OK, "c": MISSING_LABEL, "d": NOT_MATCH}


def test_invalid_selector_is_an_error_naming_the_field() -> None:
    bad = {"matchExpressions": [{"key": "foo", "operator": "In"}]}  # In without values
    incoming = pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, bad)])
    got = filter_verdicts(NAME, incoming, [node("a", {"zone": "z1"})])
    code, reasons = got["a"]
    assert code == "Error"
    # Through the framework, as upstream's RunPreFilterPlugins wraps a plugin's error.
    assert reasons[0].startswith('running PreFilter plugin "PodTopologySpread": '
                                 "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].values")
    # Only the constraints of the extension point's action are parsed: a bad soft selector does not stop
    # PreFilter (Skip), it fails PreScore.
    soft_only = PodRecord(pod("p", {"foo": ""}, spread=[sc(1, "zone", SOFT, bad)]))
    snap = snapshot_of(node("a", {"zone": "z1"}))
    plugin = PodTopologySpread(LIST_NO_DEFAULTS)
    assert plugin.pre_filter(CycleState(snap), soft_only, snap.node_list) == SKIP
    status = plugin.pre_score(CycleState(snap), soft_only, snap.node_list)
    assert status is not None and status.code == Code.ERROR
    assert status.message.startswith("spec.topologySpreadConstraints[0].labelSelector")


def test_wrong_types_are_errors() -> None:
    incoming = pod("p", spread=[{"maxSkew": "1", "topologyKey": "zone", "whenUnsatisfiable": HARD}])
    code, reasons = filter_verdicts(NAME, incoming, [node("a", {"zone": "z1"})])["a"]
    assert (code, reasons) == ("Error", ['running PreFilter plugin "PodTopologySpread": '
                                         "spec.topologySpreadConstraints[0].maxSkew: expected an integer, got str"])


def test_missing_prefilter_state_is_an_error() -> None:
    # filtering_test.go TestPreFilterDisabled: Filter without PreFilter.
    snap = snapshot_of(node("a", {}))
    status = PodTopologySpread(LIST_NO_DEFAULTS).filter(CycleState(snap), PodRecord(pod("p")), snap.node_list[0])
    assert status is not None and status.code == Code.ERROR


# ---- edge semantics ----------------------------------------------------------------------------------------


def test_empty_selector_counts_nothing_but_matches_the_pod() -> None:
    # countPodsMatchSelector returns 0 for an empty selector, yet the incoming pod self-matches.
    incoming = pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, EVERYTHING)])
    objects = [node("a", {"zone": "z1"}), node("b", {"zone": "z2"}),
               *[pod(f"e{i}", {"foo": ""}, node="a") for i in range(3)]]
    snap = snapshot_of(*objects)
    state = CycleState(snap)
    assert PodTopologySpread(LIST_NO_DEFAULTS).pre_filter(state, PodRecord(incoming), snap.node_list) is None
    prepared = state.data["PreFilterPodTopologySpread"]
    assert prepared.counts == [{"z1": 0, "z2": 0}]
    assert [limit for _, _, limit in prepared.checks] == [0]  # maxSkew 1 + min 0 - self-match 1
    assert filter_verdicts(NAME, incoming, objects) == {"a": OK, "b": OK}


def test_min_domains_makes_the_global_minimum_zero() -> None:
    objects = [node("a", {"zone": "z1"}), node("b", {"zone": "z2"}),
               pod("e1", {"foo": ""}, node="a"), pod("e2", {"foo": ""}, node="b")]
    plain = pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO)])
    assert filter_verdicts(NAME, plain, objects) == {"a": OK, "b": OK}
    three = pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO, min_domains=3)])
    assert filter_verdicts(NAME, three, objects) == {"a": NOT_MATCH, "b": NOT_MATCH}
    two = pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO, min_domains=2)])
    assert filter_verdicts(NAME, two, objects) == {"a": OK, "b": OK}


def test_empty_label_value_is_a_domain() -> None:
    objects = [node("a", {"zone": ""}), node("b", {"zone": "z2"}), node("c", {}),
               pod("e1", {"foo": ""}, node="b")]
    incoming = pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO)])
    assert filter_verdicts(NAME, incoming, objects) == {"a": OK, "b": NOT_MATCH, "c": MISSING_LABEL}


def test_policies_other_than_honor_behave_as_ignore() -> None:
    # Upstream only ever compares a policy with "Honor".
    objects = [node("a", {"zone": "z1"}, taints=UNSCHEDULABLE_TAINTS), node("b", {"zone": "z2"}),
               pod("e1", {"foo": ""}, node="a")]
    honor = pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO, taints_policy="Honor")])
    odd = pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO, taints_policy="")])
    snap = snapshot_of(*objects)
    for incoming, want in ((honor, [{"z2": 0}]), (odd, [{"z1": 1, "z2": 0}])):
        state = CycleState(snap)
        assert PodTopologySpread(LIST_NO_DEFAULTS).pre_filter(state, PodRecord(incoming), snap.node_list) is None
        assert state.data["PreFilterPodTopologySpread"].counts == want


def test_prefilter_counts_every_node_of_the_snapshot_not_only_candidates() -> None:
    # kube-scheduler hands PreFilter the snapshot's node list; the extender is sent the candidates only.
    objects = [node("a", {"zone": "z1"}), node("b", {"zone": "z2"}), node("c", {"zone": "z3"}),
               pod("e1", {"foo": ""}, node="c"), pod("e2", {"foo": ""}, node="a")]
    snap = snapshot_of(*objects)
    state = CycleState(snap)
    incoming = PodRecord(pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO)]))
    plugin = PodTopologySpread(LIST_NO_DEFAULTS)
    candidates = [snap.node_infos["a"], snap.node_infos["b"]]
    assert plugin.pre_filter(state, incoming, candidates) is None
    assert state.data["PreFilterPodTopologySpread"].counts == [{"z1": 1, "z2": 0, "z3": 1}]
    assert plugin.filter(state, incoming, snap.node_infos["a"]) is not None
    assert plugin.filter(state, incoming, snap.node_infos["b"]) is None


def test_match_counts_follow_cache_changes() -> None:
    # The count memo is keyed by NodeInfo generation: a pod added to a node is seen by the next request.
    cache = ClusterCache()
    cache.load([node("a", {"zone": "z1"}), node("b", {"zone": "z2"}), pod("e1", {"foo": ""}, node="a")])
    plugin = PodTopologySpread(LIST_NO_DEFAULTS)
    incoming = PodRecord(pod("p", {"foo": ""}, spread=[sc(1, "zone", HARD, FOO)]))

    def counts() -> list[dict[str, int]]:
        snap = cache.snapshot()
        state = CycleState(snap)
        assert plugin.pre_filter(state, incoming, snap.node_list) is None
        result: list[dict[str, int]] = state.data["PreFilterPodTopologySpread"].counts
        return result

    assert counts() == [{"z1": 1, "z2": 0}]
    assert counts() == [{"z1": 1, "z2": 0}]
    cache.apply(pod("e2", {"foo": ""}, node="b"))
    cache.apply(pod("e3", {"foo": ""}, node="b"))
    assert counts() == [{"z1": 1, "z2": 2}]
    cache.delete(pod("e1", {"foo": ""}, node="a"))
    assert counts() == [{"z1": 0, "z2": 2}]


def test_default_selectors_are_shared_by_a_templates_replicas_and_follow_object_changes() -> None:
    # A pod's default selector is made of its namespace, labels and controller: replicas share it, and a
    # change to the Services or controllers (a new snapshot mapping of objects) makes it afresh.
    cache = ClusterCache()
    cache.load([node("n1", {ZONE: "z1"}), service("web", {"app": "web"}),
                replica_set("rs1", {"matchLabels": {"app": "web", "tier": "a"}})])
    selectors = DefaultSelectors()
    snap = cache.snapshot()

    def selector(name: str, labels: dict[str, str], owner: tuple[str, str] | None = None) -> SpreadSelector:
        return selectors.selector_for(PodRecord(pod(name, labels, owner=owner)), snap)

    first = selector("r1", {"app": "web"})
    assert first == SpreadSelector({"app": "web"}) and selector("r2", {"app": "web"}) is first
    owned = selector("o1", {"app": "web", "tier": "a"}, ("ReplicaSet", "rs1"))
    assert owned != first and selector("o2", {"app": "web", "tier": "a"}, ("ReplicaSet", "rs1")) is owned
    assert selector("o3", {"app": "web", "tier": "a"}, ("ReplicaSet", "rs-gone")) == SpreadSelector({"app": "web"})
    assert selector("d1", {"app": "db"}).empty
    cache.apply(service("db", {"app": "db"}))
    snap = cache.snapshot()
    assert selector("d2", {"app": "db"}) == SpreadSelector({"app": "db"})
    # Objects of other kinds leave the selectors alone (the Services' and controllers' mappings are the same);
    # the controller's own change is read.
    kept = selector("o4", {"app": "web", "tier": "a"}, ("ReplicaSet", "rs1"))
    cache.apply({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "default"},
                 "spec": {}})
    snap = cache.snapshot()
    assert selector("o5", {"app": "web", "tier": "a"}, ("ReplicaSet", "rs1")) is kept
    cache.apply(replica_set("rs1", {"matchLabels": {"app": "web"}}))
    snap = cache.snapshot()
    assert not kept.matches({"app": "web"})  # the ReplicaSet's selector wanted tier a...
    assert selector("o6", {"app": "web", "tier": "a"}, ("ReplicaSet", "rs1")).matches({"app": "web"})  # ...no more


# ---- system defaulting -----------------------------------------------------------------------------------------

# Three nodes over two zones plus one node without a zone label; pods of app=web spread 2/1/0/1.
DEFAULTING_NODES = [
    node("n1", {HOSTNAME: "n1", ZONE: "z1"}),
    node("n2", {HOSTNAME: "n2", ZONE: "z1"}),
    node("n3", {HOSTNAME: "n3", ZONE: "z2"}),
    node("n4", {HOSTNAME: "n4"}),
]
DEFAULTING_PODS = [
    pod("w1", {"app": "web"}, node="n1"),
    pod("w2", {"app": "web"}, node="n1"),
    pod("w3", {"app": "web"}, node="n2"),
    pod("w4", {"app": "web"}, node="n4"),
    pod("other", {"app": "db"}, node="n3"),
    pod("w-elsewhere", {"app": "web"}, node="n3", namespace="team-a"),
]


def expected_system_default_raw(counts: dict[str, tuple[int, int | None]], candidates: int,
                                zones: int) -> dict[str, int]:
    """Score by hand: hostname maxSkew 3 weighted by log(candidates+2), zone maxSkew 5 by log(zones+2)."""
    out = {}
    for name, (on_node, in_zone) in counts.items():
        total = on_node * go_log(candidates + 2.0) + 2.0
        if in_zone is not None:
            total += in_zone * go_log(zones + 2.0) + 4.0
        out[name] = go_round(total)
    return out


def test_system_defaults_from_a_service() -> None:
    incoming = pod("p", {"app": "web"})
    objects = [*DEFAULTING_NODES, *DEFAULTING_PODS, service("web", {"app": "web"})]
    # Soft defaults only: Filter is skipped.
    assert filter_verdicts(NAME, incoming, objects) == {n: ("Skip", []) for n in ("n1", "n2", "n3", "n4")}
    # n4 has no zone label but is still scored (system defaulting does not require every topology key);
    # the zone domain "" of n4 counts its pods, yet n4 gets no zone term since it lacks the label.
    raw = scores(NAME, incoming, objects, normalized=False)
    assert raw == expected_system_default_raw(
        {"n1": (2, 3), "n2": (1, 3), "n3": (0, 0), "n4": (1, None)}, candidates=4, zones=3)
    # (These and the other defaulting numbers were also checked against upstream through tests/oracle.)
    assert raw == {"n1": 14, "n2": 13, "n3": 6, "n4": 4}
    # NormalizeScore: 100 * (max + min - s) / max.
    assert scores(NAME, incoming, objects) == {"n1": 28, "n2": 35, "n3": 85, "n4": 100}


def test_a_node_sent_in_full_with_an_empty_zone_shares_the_domain_of_nodes_without_one() -> None:
    # Upstream keys a node without the zone label and one labelled with "" alike, by the value "". A node sent in
    # full (a NodeList request: columns of its own) with zone "" reads the pods of the snapshot's zoneless n4.
    incoming = PodRecord(pod("p", {"app": "web"}))
    snap = snapshot_of(*DEFAULTING_NODES, *DEFAULTING_PODS, service("web", {"app": "web"}))
    sent = NodeInfo("n5", NodeRecord(node("n5", {HOSTNAME: "n5", ZONE: ""})))
    candidates = [sent, snap.node_infos["n3"]]
    plugin = PodTopologySpread()
    state = CycleState(snap)
    assert plugin.pre_score(state, incoming, candidates) is None
    assert state.data["PreScorePodTopologySpread"].counts == [{}, {"": 1, "z2": 0}]
    raw = {info.name: plugin.score(state, incoming, info) for info in candidates}
    assert raw == expected_system_default_raw({"n5": (0, 1), "n3": (0, 0)}, candidates=2, zones=2)


def test_hard_hostname_spreading_counts_every_node_as_a_domain() -> None:
    # One domain per node: the global minimum is the emptiest node's count, zero-count nodes included.
    objects = [node(f"n{i}", {HOSTNAME: f"n{i}"}) for i in range(4)] + [
        pod("e1", {"foo": ""}, node="n0"), pod("e2", {"foo": ""}, node="n0"), pod("e3", {"foo": ""}, node="n1")]
    incoming = pod("p", {"foo": ""}, spread=[sc(1, HOSTNAME, HARD, FOO)])
    snap = snapshot_of(*objects)
    state = CycleState(snap)
    assert PodTopologySpread(LIST_NO_DEFAULTS).pre_filter(state, PodRecord(incoming), snap.node_list) is None
    prepared = state.data["PreFilterPodTopologySpread"]
    assert prepared.counts == [{"n0": 2, "n1": 1, "n2": 0, "n3": 0}]
    assert prepared.critical_min == [0]
    assert filter_verdicts(NAME, incoming, objects) == {"n0": NOT_MATCH, "n1": NOT_MATCH, "n2": OK, "n3": OK}


def test_system_defaults_need_a_selector() -> None:
    incoming = pod("p", {"app": "web"})
    # No Service, no controller: no default selector, PreScore skips.
    assert scores(NAME, incoming, [*DEFAULTING_NODES, *DEFAULTING_PODS]) is None
    # A Service of another namespace, one selecting other pods, one without selector: still nothing.
    others = [service("web", {"app": "web"}, namespace="team-a"), service("db", {"app": "db"}),
              service("headless", None)]
    assert scores(NAME, incoming, [*DEFAULTING_NODES, *DEFAULTING_PODS, *others]) is None
    # A Service with an empty selector matches every pod but adds no requirement: still no selector.
    assert scores(NAME, incoming, [*DEFAULTING_NODES, *DEFAULTING_PODS, service("all", {})]) is None


def test_system_defaults_only_when_the_pod_has_no_constraints() -> None:
    # A pod with only hard constraints gets no soft defaults: PreScore skips.
    incoming = pod("p", {"app": "web"}, spread=[sc(1, ZONE, HARD, match_labels({"app": "web"}))])
    objects = [*DEFAULTING_NODES, *DEFAULTING_PODS, service("web", {"app": "web"})]
    assert scores(NAME, incoming, objects) is None


@pytest.mark.parametrize(("owner", "controller", "api_version"), [
    (("ReplicaSet", "rs"), replica_set("rs", match_labels({"app": "web"})), "apps/v1"),
    (("StatefulSet", "ss"), replica_set("ss", exists("app"), kind="StatefulSet"), "apps/v1"),
    (("ReplicationController", "rc"), replica_set("rc", {"app": "web"}, kind="ReplicationController",
                                                  api_version="v1"), "v1"),
])
def test_system_defaults_from_a_controller(owner: tuple[str, str], controller: dict[str, Any],
                                           api_version: str) -> None:
    incoming = pod("p", {"app": "web"}, owner=owner, owner_api_version=api_version)
    objects = [*DEFAULTING_NODES, *DEFAULTING_PODS, controller]
    got = scores(NAME, incoming, objects, normalized=False)
    if owner[0] == "StatefulSet":
        # "app exists" also matches the db pod on n3 (its zone z2 then counts 1).
        assert got == expected_system_default_raw(
            {"n1": (2, 3), "n2": (1, 3), "n3": (1, 1), "n4": (1, None)}, candidates=4, zones=3)
    else:
        assert got == {"n1": 14, "n2": 13, "n3": 6, "n4": 4}


def test_controller_must_be_a_known_kind_and_version() -> None:
    rs = replica_set("rs", match_labels({"app": "web"}))
    objects = [*DEFAULTING_NODES, *DEFAULTING_PODS, rs]
    for api_version in ("extensions/v1beta1", "apps/v1beta2", "a/b/c"):
        incoming = pod("p", {"app": "web"}, owner=("ReplicaSet", "rs"), owner_api_version=api_version)
        assert scores(NAME, incoming, objects) is None
    # Not a controller reference: ignored.
    incoming = pod("p", {"app": "web"}, owner=("ReplicaSet", "rs"))
    incoming["metadata"]["ownerReferences"][0]["controller"] = False
    assert scores(NAME, incoming, objects) is None
    # A controller with a nil selector adds nothing.
    incoming = pod("p", {"app": "web"}, owner=("ReplicaSet", "bare"))
    assert scores(NAME, incoming, [*objects, replica_set("bare", None)]) is None


def test_service_and_controller_selectors_are_anded() -> None:
    incoming = pod("p", {"app": "web", "tier": "fe"}, owner=("ReplicaSet", "rs"))
    objects = [*DEFAULTING_NODES, *DEFAULTING_PODS, pod("t1", {"app": "web", "tier": "fe"}, node="n3"),
               service("web", {"app": "web"}), replica_set("rs", match_labels({"tier": "fe"}))]
    # Only t1 (n3, zone z2) carries both labels.
    got = scores(NAME, incoming, objects, normalized=False)
    assert got == expected_system_default_raw(
        {"n1": (0, 0), "n2": (0, 0), "n3": (1, 1), "n4": (0, None)}, candidates=4, zones=3)


def test_list_defaulting_applies_hard_defaults() -> None:
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": HARD}]}
    objects = [*DEFAULTING_NODES, *DEFAULTING_PODS, service("web", {"app": "web"})]
    got = filter_verdicts(NAME, pod("p", {"app": "web"}), objects, args)
    # z1 holds 3, z2 holds 0: only n3 fits; n4 lacks the zone label.
    assert got == {"n1": NOT_MATCH, "n2": NOT_MATCH, "n3": OK, "n4": MISSING_LABEL}
    # Without a selector the defaults do not apply.
    assert filter_verdicts(NAME, pod("p", {"app": "api"}), objects, args)["n1"] == ("Skip", [])


def test_non_system_defaults_require_every_topology_key() -> None:
    args = {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": SOFT}]}
    objects = [*DEFAULTING_NODES, *DEFAULTING_PODS, service("web", {"app": "web"})]
    raw = scores(NAME, pod("p", {"app": "web"}), objects, args, normalized=False)
    weight = go_log(2 + 2.0)
    assert raw == {"n1": go_round(3 * weight), "n2": go_round(3 * weight), "n3": 0, "n4": 0}
    # n4 is ignored: normalised to 0 whatever its raw score; the others by min/max.
    assert scores(NAME, pod("p", {"app": "web"}), objects, args) == {"n1": 0, "n2": 0, "n3": 100, "n4": 0}


# ---- args ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "message"), [
    ({"defaultingType": "Other"}, "defaultingType: Unsupported value: 'Other'"),
    ({"defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": SOFT}]},
     'defaultingType: Invalid value: "System": when .defaultConstraints are not empty'),
    ({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 0, "topologyKey": "zone",
                                                        "whenUnsatisfiable": SOFT}]},
     "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"),
    ({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "whenUnsatisfiable": SOFT}]},
     "defaultConstraints[0].topologyKey: Required value: can not be empty"),
    ({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "a b",
                                                        "whenUnsatisfiable": SOFT}]},
     "defaultConstraints[0].topologyKey: Invalid value: 'a b'"),
    ({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone"}]},
     "defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"),
    ({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                                        "whenUnsatisfiable": "Maybe"}]},
     "defaultConstraints[0].whenUnsatisfiable: Unsupported value: 'Maybe'"),
    ({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                                        "whenUnsatisfiable": SOFT, "labelSelector": {}}]},
     "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector"),
    ({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": SOFT},
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": SOFT}]},
     'defaultConstraints[1]: Duplicate value: "{zone, ScheduleAnyway}"'),
    ({"defaultingType": "List", "unknown": 1}, "unknown field(s) 'unknown'"),
])
def test_args_validation(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ProfileError, match="PodTopologySpread args") as err:
        PodTopologySpread(args)
    assert message in str(err.value)


def test_args_defaults() -> None:
    plugin = PodTopologySpread(None)
    assert plugin.system_defaulted
    assert [(c["topologyKey"], c["maxSkew"], c["whenUnsatisfiable"]) for c in plugin.default_constraints] == [
        (HOSTNAME, 3, SOFT), (ZONE, 5, SOFT)]
    assert PodTopologySpread({"defaultingType": ""}).system_defaulted
    listed = PodTopologySpread({"defaultingType": "List"})
    assert not listed.system_defaulted and listed.default_constraints == ()


def test_plugin_is_in_the_default_profile() -> None:
    from extender.engine.explain import enabled_plugins

    summary = enabled_plugins()
    assert NAME in summary["filter"]
    assert summary["score"][NAME] == 2


# ---- Go float arithmetic ---------------------------------------------------------------------------------------


def test_go_log_matches_go_bit_for_bit() -> None:
    # Values printed by Go's math.Log on amd64; Python's libm disagrees in the last bit for these.
    assert go_log(3.0) == 1.0986122886681096 != math.log(3.0)
    assert go_log(14.0) == 2.639057329615259 != math.log(14.0)
    assert go_log(48.0) == 3.8712010109078907 != math.log(48.0)
    assert go_log(4.0) == math.log(4.0) == 1.3862943611198906


def test_go_round_is_half_away_from_zero() -> None:
    assert [go_round(x) for x in (0.5, 1.5, 2.5, -2.5, 2.4999999999999996, 0.49999999999999994)] == [
        1, 2, 3, -3, 2, 0]
