"""Variants: what each change does to the base cluster, applied to a cache copy or written as a dump."""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_node, make_pod

from extender.plan.base import BaseCluster
from extender.plan.planfile import NodeSelector, Plan, PlanError, Pool, Variant
from extender.plan.variants import BaseIndex, apply_changes, changes_of, profile_spec, variant_objects

ZONE = "topology.kubernetes.io/zone"


def _owned(pod: dict[str, Any], kind: str) -> dict[str, Any]:
    pod["metadata"]["ownerReferences"] = [{"kind": kind, "name": "x", "uid": "u", "controller": True}]
    return pod


def _base() -> list[dict[str, Any]]:
    return [
        make_node("a1", labels={ZONE: "a"}), make_node("a2", labels={ZONE: "a"}),
        make_node("b1", labels={ZONE: "b"}, taints=[{"key": "spot", "value": "y", "effect": "PreferNoSchedule"}]),
        _owned(make_pod("web-1", node="b1", requests=[{"cpu": "1"}]), "ReplicaSet"),
        _owned(make_pod("agent", node="b1"), "DaemonSet"),
        make_pod("bare", node="b1"),
        _owned(make_pod("web-2", node="a1", requests=[{"cpu": "1"}]), "ReplicaSet"),
    ]


def _plan(**pools: Pool) -> Plan:
    return Plan(pools=dict(pools))


def test_a_lost_zone_takes_its_nodes_and_re_creates_controlled_pods() -> None:
    index = BaseIndex.of(_base())
    changes = changes_of(_plan(), index, Variant("v", zones_lost=("b",)))
    assert changes.removed == ["b1"]
    assert [p["metadata"]["name"] for p in changes.displaced] == ["web-1"]
    assert "nodeName" not in changes.displaced[0]["spec"] and changes.displaced[0]["status"] == {"phase": "Pending"}
    assert sorted(changes.lost) == ["default/agent", "default/bare"]


def test_a_cordon_sets_unschedulable_and_the_controllers_taint() -> None:
    changes = changes_of(_plan(), BaseIndex.of(_base()), Variant("v", cordon=NodeSelector(names=("a2",))))
    node = changes.cordoned["a2"]
    assert node["spec"]["unschedulable"] is True
    assert node["spec"]["taints"] == [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]


def test_pool_nodes_are_fresh_copies_of_their_template() -> None:
    pool = Pool("spot", like="b1", labels=(("pool", "spot"),), name_prefix="spot-")
    changes = changes_of(_plan(spot=pool), BaseIndex.of(_base()), Variant("v", add_nodes=(("spot", 2),)))
    names = [n["metadata"]["name"] for n in changes.added]
    assert names == ["spot-0", "spot-1"] and changes.pool_of == {"spot-0": "spot", "spot-1": "spot"}
    node = changes.added[1]
    assert node["metadata"]["labels"] == {"kubernetes.io/hostname": "spot-1", ZONE: "b", "pool": "spot"}
    assert node["metadata"]["uid"] != changes.added[0]["metadata"]["uid"]
    assert node["spec"]["taints"] == [{"key": "spot", "value": "y", "effect": "PreferNoSchedule"}]
    assert node["status"]["allocatable"]["cpu"] == "4"


@pytest.mark.parametrize(("variant", "pools", "message"), [
    (Variant("v", zones_lost=("z",)), {}, "variant 'v': zonesLost: no node has topology.kubernetes.io/zone=z; "
                                          "zones: ['a', 'b']"),
    (Variant("v", cordon=NodeSelector(names=("nope",))), {}, "variant 'v': cordon: no node named 'nope'"),
    (Variant("v", remove_nodes=NodeSelector(match_labels=(("x", "y"),))), {},
     "variant 'v': removeNodes: no node of the base cluster matches {'matchLabels': {'x': 'y'}}"),
    (Variant("v", add_nodes=(("p", 1),)), {"p": Pool("p", like="zz", name_prefix="p-")},
     "pools.p.like: no node named 'zz'"),
    (Variant("v", add_nodes=(("p", 2),)), {"p": Pool("p", like="a1", name_prefix="a")},
     "variant 'v': pool 'p' would add node 'a1', which already exists"),
])
def test_a_variant_naming_what_is_not_there_is_an_error(variant: Variant, pools: dict[str, Pool], message: str) -> None:
    with pytest.raises(PlanError) as caught:
        changes_of(_plan(**pools), BaseIndex.of(_base()), variant)
    assert str(caught.value).startswith(message)


def test_a_cache_and_a_dump_of_the_same_changes_agree() -> None:
    objects = _base()
    pool = Pool("big", like="a1", name_prefix="big-")
    variant = Variant("v", zones_lost=("b",), cordon=NodeSelector(names=("a2",)), add_nodes=(("big", 1),))
    changes = changes_of(_plan(big=pool), BaseIndex.of(objects), variant)
    service = {"kind": "Service", "metadata": {"name": "s", "namespace": "default"}}
    base = BaseCluster(tuple(objects), "test")
    cache = base.cache()
    apply_changes(cache, changes, [service])
    written = BaseCluster(tuple(variant_objects(objects, changes, [service])), "dump").cache()
    for one in (cache, written):
        snapshot = one.snapshot()
        assert [n.name for n in snapshot.node_list] == ["a1", "a2", "big-0"]
        assert snapshot.get("a2").node.unschedulable  # type: ignore[union-attr]
        assert [p.name for p in snapshot.get("a1").pods] == ["web-2"]  # type: ignore[union-attr]
        assert set(snapshot.kind("Service")) == {"default/s"}
    assert cache.counts() == written.counts()
    assert base.cache().snapshot().get("b1") is not None  # the base itself is untouched


def test_weights_go_under_score_where_they_win() -> None:
    spec = profile_spec({"schedulerName": "s", "plugins": {"score": {"enabled": [{"name": "A", "weight": 1}]}}},
                        Variant("v", weights=(("A", 4), ("B", 2))), "v")
    assert spec["plugins"]["score"]["enabled"] == [{"name": "A", "weight": 4}, {"name": "B", "weight": 2}]
    replaced = profile_spec({"schedulerName": "s"}, Variant("v", profile={"scoreMapping": "minmax"}), "v")
    assert replaced == {"scoreMapping": "minmax", "schedulerName": "s"}
