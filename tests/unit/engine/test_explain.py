"""Explain's outcome: kube-scheduler's own FitError wording, SchedulerError for a plugin failing on the pod,
the best nodes, bound pods explained as when they were scheduled, and the profile chosen by schedulerName."""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_node, make_pod
from plugin_harness import cache_of, default

from extender.config import load_config
from extender.engine.explain import (
    PodNotFound,
    choose_framework,
    cycle_errors,
    explain,
    explain_cached,
    explain_existing,
    first_error,
    render_table,
)
from extender.engine.runtime import Framework
from extender.kube.release import release

TAINT = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]


def preferred(weight: Any) -> dict[str, Any]:
    """A pod preferring nodes with a zone label, with the given term weight."""
    return make_pod("odd", requests=[{"cpu": "100m"}], spec={"affinity": {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": weight, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]}}})


def test_unschedulable_pod_gets_kube_schedulers_fit_error() -> None:
    cache = cache_of(make_node("a", cpu="1"), make_node("b", cpu="1"),
                     make_node("c", cpu="8", taints=TAINT), make_node("d", cpu="1", unschedulable=True))
    result = explain(default(release(36)), cache.snapshot(), make_pod("big", requests=[{"cpu": "2"}]))
    outcome = result["outcome"]
    # d is rejected by NodeUnschedulable first: its Insufficient cpu does not count, as upstream stops there.
    assert outcome["status"] == "Unschedulable"
    assert outcome["fitError"] == ("0/4 nodes are available: 1 node(s) had untolerated taint(s), "
                                   "1 node(s) were unschedulable, 2 Insufficient cpu.")
    # The PodScheduled message goes on with the PostFilter plugins' words: no claim to deallocate, and the
    # only nodes preemption could help (a, b: short of cpu) cannot hold 2 cpu at all.
    assert outcome["message"] == outcome["fitError"] + (" no new claims to deallocate, preemption: 0/4 nodes are "
                                                        "available: 4 Preemption is not helpful for scheduling.")
    assert outcome["reasons"] == {"Insufficient cpu": 2, "node(s) had untolerated taint(s)": 1,
                                  "node(s) were unschedulable": 1}
    assert outcome["feasibleNodes"] == []
    assert render_table(result).rstrip().endswith(outcome["message"])


def test_prefilter_rejection_is_worded_as_upstream() -> None:
    # Two metadata.name fields in one term can match no node: NodeAffinity's PreFilter rejects the pod.
    pod = make_pod("conflict", spec={"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]},
                                               {"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}})
    cache = cache_of(make_node("a"), make_node("b"))
    result = explain(default(), cache.snapshot(), pod)
    assert result["outcome"]["status"] == "Unschedulable"
    # DynamicResources' PreFilter never ran, so its PostFilter cannot read its state: kube-scheduler v1.36.3
    # appends that Error's words ("not found") and stops there.
    assert result["outcome"]["message"] == "0/2 nodes are available: pod affinity terms conflict. not found"


def test_schedulable_pod_names_the_best_nodes_and_the_ties() -> None:
    cache = cache_of(make_node("a", cpu="4"), make_node("b", cpu="4"), make_node("c", cpu="1"),
                     make_pod("load", node="a", requests=[{"cpu": "3"}]))
    result = explain(default(), cache.snapshot(), make_pod("p", requests=[{"cpu": "500m"}]))
    outcome = result["outcome"]
    assert outcome["status"] == "Schedulable"
    assert outcome["message"] == "3/3 nodes are feasible"
    assert outcome["best"][0]["node"] == "b"
    assert outcome["best"][0]["total"] == result["nodes"]["b"]["total"]
    assert set(outcome["best"][0]["scores"]) == set(result["nodes"]["b"]["scores"])
    assert outcome["tiedAtTop"] == ["b"]
    assert [b["total"] for b in outcome["best"]] == sorted((b["total"] for b in outcome["best"]), reverse=True)


@pytest.mark.parametrize(("weight", "message"), [
    (-5, 'running Normalize on Score plugins: plugin "NodeAffinity" returns an invalid score -5, it should in '
         "the range of [0, 100] after normalizing"),
    ("5", 'running PreScore plugin "NodeAffinity": '),
])
def test_a_score_plugin_failing_on_the_pod_is_the_cycles_error(weight: Any, message: str) -> None:
    cache = cache_of(make_node("a", labels={"zone": "x"}), make_node("b", labels={"zone": "y"}))
    result = explain(default(), cache.snapshot(), preferred(weight))
    outcome = result["outcome"]
    assert result["error"] is None  # the pod is explained: the filters stand
    assert outcome["status"] == "SchedulerError"
    assert outcome["message"].startswith(message)
    assert outcome["feasibleNodes"] == ["a", "b"]
    assert all(entry["filters"] and entry["scores"] == {} for entry in result["nodes"].values())
    table = render_table(result)
    assert f"the scheduling cycle fails (SchedulerError): {outcome['message']}" in table


def test_with_one_feasible_node_upstream_does_not_score() -> None:
    cache = cache_of(make_node("a", labels={"zone": "x"}), make_node("b", cpu="0"))
    result = explain(default(), cache.snapshot(), preferred(-5))
    assert result["outcome"]["status"] == "Schedulable"
    assert result["outcome"]["feasibleNodes"] == ["a"]
    assert "invalid score -5" in result["outcome"]["scoreError"]


def test_bound_pod_is_explained_without_its_own_usage() -> None:
    # "a" is full with the pod itself on it: only without its own usage does it fit again.
    bound = make_pod("web", "shop", node="a", requests=[{"cpu": "3"}], uid="uid-web")
    cache = cache_of(make_node("a", cpu="3"), make_node("b", cpu="1"), bound)
    shared = cache.snapshot()
    result = explain_existing(default(), shared, bound)
    assert result["bound"]["node"] == "a"
    assert "without its own usage of a" in result["bound"]["message"]
    assert result["nodes"]["a"]["feasible"]
    assert not result["nodes"]["b"]["feasible"]
    assert result["nodes"]["a"]["filters"]["NodeName"]["code"] == "Success"
    # The shared snapshot still counts the pod.
    assert [p.name for p in shared.get("a").pods] == ["web"]  # type: ignore[union-attr]
    # Explained as pending (the pod was never taken out), another pod of the same size does not fit on "a".
    other = explain(default(), shared, make_pod("twin", "shop", requests=[{"cpu": "3"}]))
    assert not other["nodes"]["a"]["feasible"]


def test_explain_cached_finds_pending_and_bound_pods_and_says_when_unknown() -> None:
    cache = cache_of(make_node("a"), make_pod("waiting", "shop", requests=[{"cpu": "1"}]),
                     make_pod("running", "shop", node="a", requests=[{"cpu": "1"}]))
    frameworks = {"default-scheduler": default()}
    pending = explain_cached(frameworks, "default-scheduler", cache, "shop", "waiting")
    assert "bound" not in pending and pending["outcome"]["status"] == "Schedulable"
    running = explain_cached(frameworks, "default-scheduler", cache, "shop", "running")
    assert running["bound"]["node"] == "a"
    with pytest.raises(PodNotFound, match="shop/nope"):
        explain_cached(frameworks, "default-scheduler", cache, "shop", "nope")


def test_the_profile_is_the_one_named_by_the_pods_scheduler_name() -> None:
    config = load_config(None)
    frameworks = {p.name: Framework(p) for p in config.profiles}
    assert list(frameworks) == ["default-scheduler", "legacy"]
    legacy_pod = make_pod("old", spec={"schedulerName": "legacy"})
    assert choose_framework(frameworks, "default-scheduler", legacy_pod)[0].name == "legacy"
    assert choose_framework(frameworks, "default-scheduler", make_pod("new"))[0].name == "default-scheduler"
    other, note = choose_framework(frameworks, "default-scheduler", make_pod("x", spec={"schedulerName": "gpu"}))
    assert other.name == "default-scheduler" and note is not None and "'gpu'" in note
    assert choose_framework(frameworks, "default-scheduler", legacy_pod, "default-scheduler")[0].name == \
        "default-scheduler"
    with pytest.raises(KeyError):
        choose_framework(frameworks, "default-scheduler", legacy_pod, "nope")
    cache = cache_of(make_node("a", taints=TAINT))
    result = explain(frameworks["legacy"], cache.snapshot(), legacy_pod)
    assert result["profile"] == "legacy" and result["schedulerName"] == "legacy"
    assert result["outcome"]["message"] == "0/1 nodes are available: 1 node(s) had taints that the pod didn't tolerate."


def test_nodes_a_prefilter_result_leaves_out_are_counted_as_upstream() -> None:
    # A DaemonSet's pod: pinned by metadata.name, so upstream filters only that node (PreFilterResult).
    pinned = make_pod("ds-a", requests=[{"cpu": "2"}], spec={"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]}]}}}})
    cache = cache_of(make_node("a", cpu="1"), make_node("b", cpu="1"), make_node("c", taints=TAINT))
    outcome = explain(default(release(36)), cache.snapshot(), pinned)["outcome"]
    assert outcome["message"] == ("0/3 nodes are available: 1 Insufficient cpu, "
                                  "2 node(s) didn't satisfy plugin(s) [NodeAffinity]. no new claims to deallocate, "
                                  "preemption: "
                                 "0/3 nodes are available: 3 Preemption is not helpful for scheduling.")


def test_each_error_that_can_end_the_cycle_is_named_the_first_in_node_order_reported() -> None:
    def verdict(code: str, *reasons: str) -> dict[str, Any]:
        return {"code": code, "reasons": list(reasons)}
    result: dict[str, Any] = {"prefilter": {"NodeAffinity": verdict("Success")}, "nodes": {
        "a": {"filters": {"NodeName": verdict("Success"), "DynamicResources": verdict("Error", "device a/1")}},
        "b": {"filters": {"NodeUnschedulable": verdict("UnschedulableAndUnresolvable", "cordoned"),
                          "DynamicResources": verdict("Error", "never reached")}},
        "c": {"filters": {"DynamicResources": verdict("Error", "device c/2")}}}}
    assert list(cycle_errors(result)) == ["device a/1", "device c/2"]
    assert first_error(result) == "device a/1"
    # A PreFilter Error comes before any node is filtered: it is the only one.
    result["prefilter"]["NodeAffinity"] = verdict("Error", "bad affinity")
    assert list(cycle_errors(result)) == ["bad affinity"]
