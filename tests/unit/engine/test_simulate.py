"""Simulate: pods placed one by one, each assumed before the next; ties, messages, reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from builders import make_node, make_pod

from extender.cluster.cache import ClusterCache
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.simulate import (
    ROUND_ROBIN,
    Simulator,
    fit_error_message,
    node_tree_order,
    num_feasible_nodes_to_find,
)
from extender.kube.release import release

ROOT = Path(__file__).resolve().parents[3]


def cache_of(*nodes: dict[str, object]) -> ClusterCache:
    cache = ClusterCache(assumed_ttl_seconds=0)
    for node in nodes:
        cache.upsert_node(node)  # type: ignore[arg-type]
    return cache


def test_fit_error_message_is_upstreams() -> None:
    failed = [("Insufficient cpu", "Insufficient memory"), ("Insufficient cpu",), ("node(s) had untolerated taint(s)",)]
    # Go's sort.Strings: byte order, so "10 ..." sorts before "2 ...".
    assert fit_error_message(3, failed) == (
        "0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint(s), 2 Insufficient cpu.")
    assert fit_error_message(3, failed, "pod affinity terms conflict") \
        == "0/3 nodes are available: pod affinity terms conflict."


def test_each_placement_is_assumed_before_the_next() -> None:
    cache = cache_of(make_node("a", cpu="2"), make_node("b", cpu="2"))
    sim = Simulator(Framework(build_profile(None, release=release(36))), cache, seed=7)
    pods = [make_pod(f"p{i}", requests=[{"cpu": "1500m"}]) for i in range(3)]
    result = sim.run(pods)
    assert sorted(p.node for p in result.scheduled) == ["a", "b"]
    [stuck] = result.unschedulable
    # Each node could take it without the other pod, but that pod's priority is not lower: no victims.
    assert stuck.message == ("0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
                             "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.")
    assert result.after["a"]["cpu"] == 75.0 and result.before["a"]["cpu"] == 0.0


def test_random_ties_are_seeded() -> None:
    def placements(seed: int) -> list[str]:
        cache = cache_of(*(make_node(f"n{i}") for i in range(6)))
        sim = Simulator(Framework(build_profile(None)), cache, seed=seed)
        return [p.node for p in sim.run([make_pod(f"p{i}") for i in range(6)]).placements]
    assert placements(1) == placements(1)
    assert any(placements(1) != placements(s) for s in range(2, 8))


def test_round_robin_walks_the_ties_as_v112() -> None:
    cache = cache_of(*(make_node(f"n{i}") for i in range(3)))
    profile = build_profile({"plugins": {"multiPoint": {"disabled": [{"name": "*"}]},
                                         "score": {"enabled": [{"name": "TaintToleration"}]}}})
    sim = Simulator(Framework(profile), cache, host_selection=ROUND_ROBIN)
    # All three nodes tie at every step (TaintToleration scores them all 100).
    names = [p.node for p in sim.run([make_pod(f"p{i}") for i in range(4)]).placements]
    assert names == ["n0", "n1", "n2", "n0"]


def test_pods_without_names_get_identities() -> None:
    cache = cache_of(make_node("a"))
    anonymous = make_pod("x")
    anonymous["metadata"] = {"generateName": "web-", "namespace": "default"}
    result = Simulator(Framework(build_profile(None)), cache).run([anonymous, anonymous])
    assert [p.pod for p in result.scheduled] == ["default/web-0", "default/web-1"]


def test_cli_json_report() -> None:
    done = subprocess.run([sys.executable, "-m", "extender", "simulate", "--pods",
                           str(ROOT / "examples" / "simulate" / "pods.yaml"), "--seed", "1", "-o", "json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 1  # some pods do not fit
    report = json.loads(done.stdout)
    assert {p["pod"] for p in report["unschedulable"]} >= {"default/huge"}
    huge = next(p for p in report["unschedulable"] if p["pod"] == "default/huge")
    assert huge["message"].startswith("0/33 nodes are available:") and "Insufficient cpu" in huge["message"]
    trainers = [p for p in report["scheduled"] if p["pod"].startswith("ml/trainer")]
    assert len({p["node"] for p in trainers}) == 3  # two GPUs free per GPU node: one trainer each


def test_a_pod_pinned_by_name_gets_upstreams_message_for_the_nodes_left_out() -> None:
    cache = cache_of(make_node("a", cpu="1"), make_node("b", cpu="4"), make_node("c", cpu="4"))
    pinned = make_pod("ds-a", requests=[{"cpu": "2"}], spec={"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}}}})
    [placement] = Simulator(Framework(build_profile(None, release=release(36))), cache, seed=1).run([pinned]).placements
    assert placement.message == ("0/3 nodes are available: 1 Insufficient cpu, "
                                 "2 node(s) didn't satisfy plugin(s) [NodeAffinity]. no new claims to deallocate, "
                                 "preemption: "
                                 "0/3 nodes are available: 3 Preemption is not helpful for scheduling.")


def test_num_feasible_nodes_to_find_is_upstreams() -> None:
    # (percentage, nodes) -> nodes searched for, as schedule_one.go's numFeasibleNodesToFind.
    table = {(0, 99): 99, (0, 100): 100, (0, 500): 230, (0, 5000): 500, (0, 10000): 500, (30, 1000): 300,
             (10, 500): 100, (100, 150): 150, (1, 20000): 200}
    assert {key: num_feasible_nodes_to_find(*key) for key in table} == table


def test_node_tree_order_takes_one_node_of_each_zone_in_turn() -> None:
    zone = {"topology.kubernetes.io/region": "r", "topology.kubernetes.io/zone": ""}
    nodes = [make_node("a0", labels={**zone, "topology.kubernetes.io/zone": "a"}),
             make_node("a1", labels={**zone, "topology.kubernetes.io/zone": "a"}),
             make_node("a2", labels={**zone, "topology.kubernetes.io/zone": "a"}),
             make_node("b0", labels={**zone, "topology.kubernetes.io/zone": "b",
                                     "failure-domain.beta.kubernetes.io/zone": "a"}),  # the beta label wins
             make_node("c0", labels={**zone, "topology.kubernetes.io/zone": "c"}),
             make_node("n0")]
    cache = cache_of(*nodes)
    assert [n.name for n in node_tree_order(cache.snapshot().node_list)] == ["a0", "c0", "n0", "a1", "a2", "b0"]


def _two_zones(count: int, **kwargs: object) -> list[dict[str, object]]:
    return [make_node(f"{zone}{i:03d}", labels={"topology.kubernetes.io/zone": zone}, **kwargs)  # type: ignore[arg-type]
            for zone in "ab" for i in range(count)]


def test_percentage_of_nodes_to_score_searches_from_where_the_last_pod_stopped() -> None:
    # Nothing to score: upstream searches for one feasible node, so each pod takes the next node in
    # node-tree order (a000, b000, a001, ...) and the start index moves one node per pod.
    cache = cache_of(*_two_zones(60))
    profile = build_profile({"plugins": {"multiPoint": {"disabled": [{"name": "*"}]},
                                         "filter": {"enabled": [{"name": "NodeUnschedulable"}]}}})
    sim = Simulator(Framework(profile), cache, seed=1, percentage_of_nodes_to_score=50)
    names = [p.node for p in sim.run([make_pod(f"p{i}") for i in range(4)]).placements]
    assert names == ["a000", "b000", "a001", "b001"]
    assert sim.next_start_node_index == 4


def test_percentage_of_nodes_to_score_counts_the_failed_nodes_it_examined() -> None:
    nodes = _two_zones(60)
    for node in nodes[1:3] + nodes[61:63]:  # a001, a002, b001, b002 cordoned
        node["spec"] = {"unschedulable": True}
    cache = cache_of(*nodes)
    profile = build_profile({"plugins": {"multiPoint": {"disabled": [{"name": "*"}]},
                                         "filter": {"enabled": [{"name": "NodeUnschedulable"}]}}})
    sim = Simulator(Framework(profile), cache, seed=1, percentage_of_nodes_to_score=50)
    # Tree order a000 b000 a001 b001 a002 b002 a003 ...: the second pod starts at b000 and stops at the next
    # feasible node after it (a003): the four cordoned nodes in between were examined and are skipped.
    names = [p.node for p in sim.run([make_pod(f"p{i}") for i in range(3)]).placements]
    assert names == ["a000", "b000", "a003"]
    assert sim.next_start_node_index == 7


def test_percentage_of_nodes_to_score_scores_only_the_nodes_found() -> None:
    # 240 nodes at 50%: the first 120 feasible nodes from the start index are scored; the emptiest node
    # of the cluster (b119, last in tree order) is never among them for the first pod.
    nodes = _two_zones(120)
    cache = cache_of(*nodes)
    for node in nodes[:-1]:
        name = str(node["metadata"]["name"])  # type: ignore[index]
        cache.upsert_pod(make_pod(f"on-{name}", node=name, requests=[{"cpu": "1"}]))
    pod = make_pod("p", requests=[{"cpu": "1"}])
    every = Simulator(Framework(build_profile(None)), cache.copy(), seed=1).run([pod])
    half = Simulator(Framework(build_profile(None)), cache.copy(), seed=1, percentage_of_nodes_to_score=50).run([pod])
    assert every.placements[0].node == "b119"
    assert half.placements[0].node != "b119" and half.placements[0].feasible == 120


def test_percentage_of_nodes_to_score_a_preemptor_takes_its_nominated_node_without_a_search() -> None:
    # 120 full nodes: the first cycle finds none (every node examined, the start index back where it was);
    # the preemption frees one and the retry takes that nominated node at once, leaving the index alone.
    nodes = _two_zones(60, cpu="1")
    cache = cache_of(*nodes)
    for node in nodes:
        name = str(node["metadata"]["name"])  # type: ignore[index]
        cache.upsert_pod(make_pod(f"on-{name}", node=name, requests=[{"cpu": "1"}], spec={"priority": 1}))
    sim = Simulator(Framework(build_profile(None)), cache, seed=1, percentage_of_nodes_to_score=50)
    [placed] = sim.run([make_pod("urgent", requests=[{"cpu": "1"}], spec={"priority": 10})]).placements
    victim = placed.attempts[0]["postFilter"][0]
    assert placed.nominated and placed.node == victim["node"] and len(victim["victims"]) == 1
    assert sim.next_start_node_index == 0
