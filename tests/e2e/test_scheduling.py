"""End-to-end: the real kube-scheduler (pinned release) calls our extender.

Here our service reads nodes and pods from a ``--cluster`` dump (test_live_cache.py
and test_bind_live.py run it on the apiserver's watch instead). A difference between
the dump and the apiserver is how these tests make our filter reject a node that
kube-scheduler's own plugins accept: the dump
gives a node a NoSchedule taint the apiserver's copy does not have. With
nodeCacheCapable=true our service resolves NodeNames from its dump and sees the
taint; with nodeCacheCapable=false it uses the Nodes kube-scheduler sends.

No kubelet runs, so bound pods stay Pending: placement is read from
spec.nodeName only.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from controlplane import ExtenderConfig, Obj, StartExtender, StartScheduler, TestCluster, free_port

pytestmark = pytest.mark.e2e

TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
TAINT_REASON = "node(s) had untolerated taint(s)"

# Our service's profile: bin-pack (MostAllocated), the opposite of kube-scheduler's default.
BIN_PACKING: dict[str, Any] = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {
                    "enabled": [{"name": "NodeResourcesFit", "weight": 1}],
                    "disabled": [{"name": "*"}],
                }
            },
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                        }
                    },
                }
            ],
        }
    ]
}

# A kube-scheduler profile whose own filters ignore taints: only our extender checks them.
NO_TAINT_FILTER = {"plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]}}}


def edited(node: Obj) -> Obj:
    """A copy of an apiserver object, edited for our dump only.

    Its resourceVersion goes: an object with the apiserver's resourceVersion is
    the apiserver's object, and our service may take it from its cache as such.
    """
    out = copy.deepcopy(node)
    out["metadata"].pop("resourceVersion", None)
    return out


def tainted(node: Obj, taint: Obj = TAINT) -> Obj:
    """A copy of ``node`` with one more taint: what our service's dump says about it."""
    out = edited(node)
    out.setdefault("spec", {}).setdefault("taints", []).append(dict(taint))
    return out


def test_filter_only(cluster: TestCluster, start_extender: StartExtender, start_scheduler: StartScheduler) -> None:
    """Filter verb only: pods avoid the node our dump taints, though kube-scheduler would spread them."""
    a = cluster.node("node-a")
    b = cluster.node("node-b")
    svc = start_extender([a, tainted(b)])
    start_scheduler([ExtenderConfig(svc.url, filter_verb="filter", node_cache_capable=True)])
    names = [f"p{i}" for i in range(4)]
    for n in names:
        cluster.pod(n, cpu="500m", memory="256Mi")
    assert [cluster.wait_scheduled(n) for n in names] == ["node-a"] * 4


@pytest.mark.parametrize("node_cache_capable", [True, False], ids=["nodeCacheCapable", "fullNodes"])
def test_node_cache_capable(
    cluster: TestCluster,
    start_extender: StartExtender,
    start_scheduler: StartScheduler,
    node_cache_capable: bool,
) -> None:
    """NodeNames are resolved from our cache (the dump); full Nodes are used as sent.

    The apiserver's node-b is untainted, the dump's is tainted. With names only
    our service sees the taint and the pod cannot be placed; with full Nodes it
    sees kube-scheduler's untainted copy and the pod lands.
    """
    b = cluster.node("node-b")
    svc = start_extender([tainted(b)])
    start_scheduler([ExtenderConfig(svc.url, filter_verb="filter", node_cache_capable=node_cache_capable)])
    cluster.pod("web", cpu="100m")
    if node_cache_capable:
        message = cluster.wait_unschedulable("web")
        assert TAINT_REASON in message
    else:
        assert cluster.wait_scheduled("web") == "node-b"


def test_full_nodes_filter_sees_the_sent_taints(
    cluster: TestCluster, start_extender: StartExtender, start_scheduler: StartScheduler
) -> None:
    """nodeCacheCapable=false: our filter judges the Node objects kube-scheduler sends.

    kube-scheduler's profile has its own TaintToleration filter off; node-b is
    really tainted in the apiserver and our dump does not say so. Our filter
    still rejects node-b, because it reads the taint off the sent Node.
    """
    a = cluster.node("node-a")
    b = cluster.node("node-b", taints=[TAINT])
    untainted_b = edited(b)
    untainted_b["spec"].pop("taints", None)
    svc = start_extender([a, untainted_b])
    start_scheduler([ExtenderConfig(svc.url, filter_verb="filter", node_cache_capable=False)], profile=NO_TAINT_FILTER)
    names = [f"p{i}" for i in range(3)]
    for n in names:
        cluster.pod(n, cpu="500m")
    assert [cluster.wait_scheduled(n) for n in names] == ["node-a"] * 3


def test_prioritize_weight_changes_the_choice(
    cluster: TestCluster, start_extender: StartExtender, start_scheduler: StartScheduler
) -> None:
    """Our MostAllocated score with weight 20 bin-packs where kube-scheduler alone would spread."""
    a = cluster.node("node-a", cpu="4", memory="8Gi")
    b = cluster.node("node-b", cpu="4", memory="8Gi")
    filler = cluster.pod("filler", cpu="2", memory="4Gi", node_name="node-a")
    svc = start_extender([a, b, filler], config=BIN_PACKING)

    # Control: kube-scheduler's own LeastAllocated scoring prefers the emptier node-b.
    start_scheduler([ExtenderConfig(svc.url, filter_verb="filter", node_cache_capable=True)])
    cluster.pod("probe", cpu="1", memory="1Gi")
    assert cluster.wait_scheduled("probe") == "node-b"
    cluster.kube.delete_pod(cluster.ns, "probe")

    start_scheduler(
        [
            ExtenderConfig(
                svc.url,
                filter_verb="filter",
                prioritize_verb="prioritize",
                weight=20,
                node_cache_capable=True,
            )
        ]
    )
    cluster.pod("packed", cpu="1", memory="1Gi")
    assert cluster.wait_scheduled("packed") == "node-a"


def test_managed_resources(
    cluster: TestCluster, start_extender: StartExtender, start_scheduler: StartScheduler
) -> None:
    """With managedResources, only pods asking for example.com/gpu are sent to us."""
    b = cluster.node("node-b", extended={"example.com/gpu": "4"})
    svc = start_extender([tainted(b)])
    start_scheduler(
        [
            ExtenderConfig(
                svc.url,
                filter_verb="filter",
                node_cache_capable=True,
                managed_resources=["example.com/gpu"],
            )
        ]
    )
    # Not asking for a GPU: kube-scheduler does not call us, so our tainted view does not matter.
    cluster.pod("plain", cpu="100m")
    assert cluster.wait_scheduled("plain") == "node-b"
    # Asking for one (limits imply requests): we are called and reject the node.
    cluster.pod("trainer", cpu="100m", extended={"example.com/gpu": "1"})
    assert TAINT_REASON in cluster.wait_unschedulable("trainer")


@pytest.mark.parametrize("ignorable", [True, False], ids=["ignorable", "required"])
def test_extender_down(cluster: TestCluster, start_scheduler: StartScheduler, ignorable: bool) -> None:
    """Our service is down: ignorable extenders are skipped, others keep pods Pending."""
    cluster.node("node-a")
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens here
    start_scheduler([ExtenderConfig(url, filter_verb="filter", prioritize_verb="prioritize", ignorable=ignorable)])
    cluster.pod("web", cpu="100m")
    if ignorable:
        assert cluster.wait_scheduled("web") == "node-a"
    else:
        message = cluster.wait_unschedulable("web")
        assert f"{url}/filter" in message and "connection refused" in message, message
        cluster.wait_event("web", "FailedScheduling", f"{url}/filter")


def test_unschedulable_pod_carries_our_reasons(
    cluster: TestCluster, start_extender: StartExtender, start_scheduler: StartScheduler
) -> None:
    """FailedNodes reasons from our filter reach the PodScheduled condition and the FailedScheduling event."""
    a = cluster.node("node-a", cpu="4")
    b = cluster.node("node-b", cpu="4")
    # Only in our dump: a pod that fills node-a's CPU, and a taint on node-b.
    hog: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "hog", "namespace": cluster.ns, "uid": "00000000-0000-0000-0000-00000000d00d"},
        "spec": {
            "nodeName": "node-a",
            "containers": [{"name": "main", "image": "pause", "resources": {"requests": {"cpu": "4"}}}],
        },
        "status": {"phase": "Running"},
    }
    svc = start_extender([a, tainted(b), hog])
    start_scheduler([ExtenderConfig(svc.url, filter_verb="filter", node_cache_capable=True)])
    cluster.pod("web", cpu="1")
    message = cluster.wait_unschedulable("web")
    assert message.startswith("0/2 nodes are available"), message
    assert "1 Insufficient cpu" in message, message
    assert f"1 {TAINT_REASON}" in message, message
    event = cluster.wait_event("web", "FailedScheduling", TAINT_REASON)
    assert "Insufficient cpu" in event

