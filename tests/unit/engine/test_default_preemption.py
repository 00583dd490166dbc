"""DefaultPreemption as a dry run (kube-scheduler v1.36.3 and v1.37.2): victims, PodDisruptionBudgets, the node
nominated, and the words the pod's PodScheduled condition ends with."""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_node, make_pod
from plugin_harness import cache_of, default

from extender.cluster.records import PodRecord
from extender.engine.cycle import schedule
from extender.engine.explain import explain, render_table
from extender.engine.framework import Status
from extender.engine.preemption import (
    budgets,
    prefiltered,
    rank_candidates,
    select_victims_on_node,
    split_by_pdb_violation,
)
from extender.engine.profile import ProfileError, build_profile
from extender.engine.runtime import Framework
from extender.engine.simulate import Simulator
from extender.kube.release import Release, release

# No claims: v1.36.3's DynamicResources PostFilter always says so first (v1.37.2's says nothing).
NO_CLAIMS = "no new claims to deallocate"
V136, V137 = release(36), release(37)
BOTH = pytest.mark.parametrize("rel", [V136, V137], ids=["1.36", "1.37"])


def after_fit_error(rel: Release, preemption: str) -> str:
    """What the PodScheduled message says after FitError for a pod without claims."""
    return preemption if rel.at_least(37) else f"{NO_CLAIMS}, {preemption}"


def running(name: str, node: str, cpu: str, priority: int, *, started: str = "", labels: dict[str, str] | None = None,
            **extra: Any) -> dict[str, Any]:
    """A pod bound to a node with a priority (as admission sets it) and a start time."""
    pod = make_pod(name, node=node, requests=[{"cpu": cpu}], spec={"priority": priority, **extra},
                   labels=labels or {"app": name}, uid=f"uid-{name}")
    if started:
        pod.setdefault("status", {})["startTime"] = started
    return pod


def victims_on(snapshot: Any, pod: PodRecord, node: str, pdbs: list[Any]) -> Any:
    """SelectVictimsOnNode with the cycle's PreFilter run first, as DefaultPreemption has it."""
    framework = default()
    state = prefiltered(framework, snapshot, pod)
    assert not isinstance(state, Status)
    return select_victims_on_node(framework, state, pod, snapshot.node_infos[node], pdbs)


def incoming(cpu: str, priority: int, **spec: Any) -> dict[str, Any]:
    return make_pod("incoming", requests=[{"cpu": cpu}], spec={"priority": priority, **spec}, uid="uid-incoming")


def pdb(name: str, app: str, allowed: int, namespace: str = "default", disrupted: list[str] | None = None,
        selector: dict[str, Any] | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = dict.fromkeys(disrupted, "2026-01-01T00:00:00Z")
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": selector if selector is not None else {"matchLabels": {"app": app}}},
            "status": status}


def test_victims_are_the_fewest_the_pod_needs_reprieved_most_important_first() -> None:
    # 4 cpu: three pods of 1 cpu (priorities 5, 1, 1) and the incoming pod needs 2: two must go. The most
    # important (priority 5) is given back first and fits; then of the two at priority 1 the one that started
    # earlier is more important and comes back before the other: no room left, so both stay victims.
    cache = cache_of(make_node("a", cpu="4"),
                     running("keep", "a", "1", 5, started="2026-01-01T00:00:00Z"),
                     running("old", "a", "1", 1, started="2026-01-01T00:00:00Z"),
                     running("new", "a", "1", 1, started="2026-01-02T00:00:00Z"),
                     running("high", "a", "1", 50))
    snapshot = cache.snapshot()
    pod = PodRecord(incoming("2", 10))
    victims, status = victims_on(snapshot, pod, "a", [])
    assert status is None
    assert [v.name for v in victims.pods] == ["old", "new"]  # most important first
    # The higher-priority pod is never a victim.
    assert "high" not in [v.name for v in victims.pods]


def test_a_node_without_lower_priority_pods_or_that_cannot_fit_the_pod_is_not_a_candidate() -> None:
    cache = cache_of(make_node("a", cpu="2"), make_node("b", cpu="2"), running("peer", "a", "2", 10),
                     running("small", "b", "1", 1), running("big", "b", "1", 20))
    snapshot = cache.snapshot()
    pod = PodRecord(incoming("2", 10))
    _, status = victims_on(snapshot, pod, "a", [])
    assert status is not None and status.message == "No preemption victims found for incoming pod"
    _, status = victims_on(snapshot, pod, "b", [])
    assert status is not None and status.reasons == ("Insufficient cpu",)  # even without "small"


def test_pdb_violations_are_counted_and_such_victims_reprieved_first() -> None:
    budget = budgets({"PodDisruptionBudget": {"default/web": pdb("web", "web", 1)}})
    pods = [PodRecord(running(f"w{i}", "a", "1", 1, labels={"app": "web"})) for i in range(3)]
    violating, fine = split_by_pdb_violation(pods, budget)
    # One disruption allowed: the first web pod uses it, the others would break the budget.
    assert [p.name for p in fine] == ["w0"] and [p.name for p in violating] == ["w1", "w2"]
    # A pod the apiserver already counted as disrupted does not use the budget; other namespaces, empty and
    # null selectors match nothing.
    spent = budgets({"PodDisruptionBudget": {
        "default/web": pdb("web", "web", 0, disrupted=["w0"]),
        "other/web": pdb("web", "web", 0, namespace="other"),
        "default/all": pdb("all", "", 0, selector={}),
    }})
    violating, fine = split_by_pdb_violation(pods, spent)
    assert [p.name for p in fine] == ["w0"] and [p.name for p in violating] == ["w1", "w2"]

    cache = cache_of(make_node("a", cpu="3"), *(running(f"w{i}", "a", "1", 1, labels={"app": "web"},
                                                        started=f"2026-01-0{i + 1}T00:00:00Z") for i in range(3)),
                     pdb("web", "web", 1))
    snapshot = cache.snapshot()
    victims, status = victims_on(snapshot, PodRecord(incoming("2", 10)), "a", budgets(snapshot.objects))
    # The violating ones (w1, w2) are given back first: w1 fits back, w2 cannot; then w0 cannot either.
    assert status is None
    assert sorted(v.name for v in victims.pods) == ["w0", "w2"] and victims.num_pdb_violations == 1


def test_v137_stops_charging_budgets_at_a_pods_first_violation() -> None:
    # p1 is guarded by "none" (no disruption left) and "one" (one left); p2 by "one" only. v1.36.3 charges
    # p1 to both budgets, so p2 finds "one" spent too; v1.37.2 stops at p1's first violated budget ("none",
    # listed first), so "one" still has p2's disruption.
    budget = budgets({"PodDisruptionBudget": {
        "default/none": pdb("none", "", 0, selector={"matchLabels": {"tier": "db"}}),
        "default/one": pdb("one", "", 1, selector={"matchLabels": {"app": "db"}})}})
    pods = [PodRecord(running("p1", "a", "1", 1, labels={"app": "db", "tier": "db"})),
            PodRecord(running("p2", "a", "1", 1, labels={"app": "db"}))]
    violating, fine = split_by_pdb_violation(pods, budget)
    assert [p.name for p in violating] == ["p1", "p2"] and fine == []
    violating, fine = split_by_pdb_violation(pods, budget, first_violation_ends=True)
    assert [p.name for p in violating] == ["p1"] and [p.name for p in fine] == ["p2"]


def test_the_node_nominated_follows_upstreams_criteria_and_names_the_ties() -> None:
    def victims(node: str, *priorities: int, violations: int = 0, started: str = "") -> Any:
        from extender.engine.preemption import Victims
        pods = [PodRecord(running(f"{node}-{i}", node, "1", p, started=started)) for i, p in enumerate(priorities)]
        return Victims(node, pods, violations)

    # Fewest PDB violations first.
    assert [c.node for c in rank_candidates([victims("a", 1, violations=1), victims("b", 9)])] == ["b"]
    # Then the lowest most important victim, then the smallest sum, then the fewest victims.
    assert [c.node for c in rank_candidates([victims("a", 5), victims("b", 3, 3)])] == ["b"]
    assert [c.node for c in rank_candidates([victims("a", 3, 3), victims("b", 3, 1)])] == ["b"]
    assert [c.node for c in rank_candidates([victims("a", -5, -5), victims("b", -5)])] == ["b"]
    # Then the latest start among the most important victims; what is left ties.
    early, late = "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"
    assert [c.node for c in rank_candidates([victims("a", 3, started=early), victims("b", 3, started=late)])] == ["b"]
    assert [c.node for c in rank_candidates([victims("a", 3, started=early), victims("b", 3, started=early)])] \
        == ["a", "b"]


@BOTH
def test_preemption_success_nominates_and_the_message_is_fit_error_alone_in_v136(rel: Release) -> None:
    cache = cache_of(make_node("a", cpu="2"), make_node("b", cpu="2"),
                     running("a-low", "a", "2", 1), running("b-mid", "b", "2", 5))
    cycle = schedule(default(rel), cache.snapshot(), PodRecord(incoming("1", 10)))
    # v1.37.2's preemption.go Preempt words its success, and FitError ends with it.
    assert cycle.message == "0/2 nodes are available: 2 Insufficient cpu." + (
        " preemption: found a potential placement for pod on node a, preempting 1 victims" if rel.at_least(37)
        else "")
    assert cycle.post_filter is not None and cycle.post_filter.nominated_node == "a"
    [evict] = cycle.actions
    assert evict.describe() == {"action": "preempt", "node": "a", "numPDBViolations": 0,
                                "victims": [{"pod": "default/a-low", "priority": 1}]}
    result = explain(default(), cache.snapshot(), incoming("1", 10))
    assert result["outcome"]["retry"] == {"status": "Schedulable", "feasibleNodes": ["a"], "nominatedNode": "a",
                                          "message": "1/2 nodes are feasible", "tiedAtTop": ["a"]}
    table = render_table(result)
    assert "kube-scheduler would preempt default/a-low (priority 1) on node a and nominate it" in table


@BOTH
def test_preemption_not_helpful_and_no_victims_on_some_nodes(rel: Release) -> None:
    # a: its pod has the same priority (no victims); b: too small for the pod at all (unresolvable, not
    # examined); c: tainted (unresolvable).
    cache = cache_of(make_node("a", cpu="2"), make_node("b", cpu="1"),
                     make_node("c", cpu="8", taints=[{"key": "k", "effect": "NoSchedule"}]),
                     running("peer", "a", "2", 10))
    cycle = schedule(default(rel), cache.snapshot(), PodRecord(incoming("2", 10)))
    assert cycle.message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. " + after_fit_error(
            rel, "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
            "2 Preemption is not helpful for scheduling."))
    assert cycle.post_filter is not None and cycle.post_filter.nominated_node == ""  # the nomination is cleared


@BOTH
def test_preemption_policy_never_and_a_victim_still_terminating(rel: Release) -> None:
    cache = cache_of(make_node("a", cpu="2"), running("low", "a", "2", 1))
    never = schedule(default(rel), cache.snapshot(), PodRecord(incoming("1", 10, preemptionPolicy="Never")))
    assert never.message == ("0/1 nodes are available: 1 Insufficient cpu. "
                             + after_fit_error(rel, "preemption: not eligible due to preemptionPolicy=Never."))
    assert not never.actions
    # Its nominated node still holds a victim it preempted, being deleted: it waits for it.
    victim = running("going", "a", "2", 1)
    victim["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    victim.setdefault("status", {})["conditions"] = [{"type": "DisruptionTarget", "status": "True",
                                       "reason": "PreemptionByScheduler"}]
    cache = cache_of(make_node("a", cpu="2"), victim)
    pod = incoming("1", 10)
    pod.setdefault("status", {})["nominatedNodeName"] = "a"
    waiting = schedule(default(rel), cache.snapshot(), PodRecord(pod))
    assert waiting.message.endswith(
        after_fit_error(rel, "preemption: not eligible due to a terminating pod on the nominated node."))


def test_simulate_preempts_and_places_the_pod_on_its_nominated_node() -> None:
    cache = cache_of(make_node("a", cpu="2"), make_node("b", cpu="2"),
                     running("a-low", "a", "2", 1), running("b-mid", "b", "2", 5))
    result = Simulator(default(), cache, seed=1).run([incoming("1", 10)])
    [placed] = result.scheduled
    assert placed.node == "a" and placed.nominated
    assert placed.attempts[0]["postFilter"][0]["victims"] == [{"pod": "default/a-low", "priority": 1}]
    assert [p.name for p in cache.snapshot().node_infos["a"].pods] == ["incoming"]  # the victim is gone


def test_a_pod_this_simulation_placed_and_then_preempted_is_placed_no_more() -> None:
    cache = cache_of(make_node("a", cpu="2"))
    low = make_pod("low", requests=[{"cpu": "2"}], spec={"priority": 1})
    result = Simulator(default(), cache, seed=1).run([low, incoming("1", 10)])
    assert [(p.pod, p.node) for p in result.scheduled] == [("default/incoming", "a")]
    [evicted] = result.unschedulable
    assert (evicted.pod, evicted.preempted_by) == ("default/low", "default/incoming")
    assert evicted.message == "preempted by default/incoming on a"
    assert result.as_dict()["unschedulable"] == [{"pod": "default/low", "message": evicted.message,
                                                  "preemptedBy": "default/incoming"}]
    assert result.after["a"]["pods"] == 1


def test_without_postfilter_plugins_the_message_is_fit_error_alone() -> None:
    profile = build_profile({"plugins": {"postFilter": {"disabled": [{"name": "*"}]}}})
    cache = cache_of(make_node("a", cpu="1"))
    cycle = schedule(Framework(profile), cache.snapshot(), PodRecord(incoming("2", 10)))
    assert cycle.message == "0/1 nodes are available: 1 Insufficient cpu." and cycle.post_filter is None
    only_preemption = build_profile({"plugins": {"postFilter": {"disabled": [{"name": "DynamicResources"}]}}})
    cycle = schedule(Framework(only_preemption), cache.snapshot(), PodRecord(incoming("2", 10)))
    assert cycle.message == ("0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                             "1 Preemption is not helpful for scheduling.")


@pytest.mark.parametrize(("args", "error"), [
    ({"minCandidateNodesPercentage": 101}, "not in valid range [0, 100]"),
    ({"minCandidateNodesAbsolute": -1}, "minCandidateNodesAbsolute: Invalid value: -1"),
    ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}, "cannot be zero at the same time"),
    ({"other": 1}, "unknown field(s) other"),
])
def test_args_are_validated_as_upstream(args: dict[str, Any], error: str) -> None:
    with pytest.raises(ProfileError, match=error.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")
                       .replace(")", r"\)")):
        Framework(build_profile({"pluginConfig": [{"name": "DefaultPreemption", "args": args}]}))


def test_a_hand_written_pod_gets_its_class_priority_before_it_preempts() -> None:
    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"},
                "value": 1000}]
    cache = cache_of(make_node("a", cpu="2"), running("low", "a", "2", 1), *classes)
    pod = make_pod("urgent-job", requests=[{"cpu": "1"}], spec={"priorityClassName": "urgent"})
    [placed] = Simulator(default(), cache, seed=1).run([pod]).placements
    assert placed.node == "a" and placed.attempts[0]["postFilter"][0]["victims"][0]["pod"] == "default/low"
    unknown = make_pod("lost", spec={"priorityClassName": "nope"})
    [refused] = Simulator(default(), cache, seed=1).run([unknown]).placements
    assert refused.message == "refused by the Priority admission plugin: no PriorityClass with name nope was found"
    assert explain(default(), cache.snapshot(), unknown)["error"] == "Pod: no PriorityClass with name nope was found"
