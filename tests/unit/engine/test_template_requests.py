"""The resource scorers compute a pod template's request list once, NodeAffinity its compiled node affinity and
PodTopologySpread its compiled constraints, and only for pods that share every field the computation reads."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from builders import make_pod

from extender.cluster.cache import ClusterCache
from extender.cluster.records import PodRecord
from extender.engine.framework import CycleState
from extender.engine.plugins.legacy.general_predicates import required_affinity
from extender.engine.plugins.node_affinity import preferred_node_affinity, required_node_affinity
from extender.engine.plugins.node_resources_balanced_allocation import NodeResourcesBalancedAllocation
from extender.engine.plugins.node_resources_fit import NodeResourcesFit
from extender.engine.plugins.pod_topology_spread import PodTopologySpread
from extender.engine.plugins.topology_spread_common import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, ConstraintError
from extender.kube.selectors import SelectorError, compile_required_node_affinity


def replica(template: dict[str, Any], i: int) -> PodRecord:
    pod = copy.deepcopy(template)
    pod["metadata"] = {**pod["metadata"], "name": f"web-{i}", "uid": f"uid-{i}"}
    return PodRecord(pod)


def test_replicas_of_a_template_share_one_request_list_and_other_templates_get_their_own() -> None:
    template = make_pod("web", requests=[{"cpu": "250m", "memory": "64Mi"}])
    other = make_pod("db", requests=[{"cpu": "2", "memory": "1Gi"}])
    for plugin in (NodeResourcesFit(), NodeResourcesBalancedAllocation()):
        scorer = plugin.scorer
        first, second = scorer.requests_of(replica(template, 1)), scorer.requests_of(replica(template, 2))
        assert first is second  # computed once for the template
        assert first == scorer.pod_request_list(template)
        assert scorer.requests_of(replica(other, 3)) == scorer.pod_request_list(other) != first


def test_a_resized_status_counts_only_where_status_resources_do() -> None:
    """BalancedAllocation counts what a pod's status reports after an in-place resize; Fit's scorer reads the
    spec alone. The same spec with and without such a status must not share a list where the status counts."""
    template = make_pod("web", requests=[{"cpu": "250m", "memory": "64Mi"}])
    resized = copy.deepcopy(template)
    name = resized["spec"]["containers"][0]["name"]
    resized["status"] = {"containerStatuses": [{"name": name, "allocatedResources": {"cpu": "1", "memory": "64Mi"},
                                                "resources": {"requests": {"cpu": "1", "memory": "64Mi"}}}]}
    balanced = NodeResourcesBalancedAllocation().scorer
    plain, bigger = balanced.requests_of(replica(template, 1)), balanced.requests_of(replica(resized, 2))
    assert plain == balanced.pod_request_list(template) and bigger == balanced.pod_request_list(resized)
    assert bigger[0] == 1000 and plain[0] == 250
    fit = NodeResourcesFit().scorer
    assert fit.requests_of(replica(template, 3)) == fit.requests_of(replica(resized, 4)) == [250, 64 * 2**20]


def _with_node_affinity(required_zone: str, preferred_disk: str, node_selector: dict[str, str] | None = None,
                        ) -> dict[str, Any]:
    def terms(key: str, value: str) -> dict[str, Any]:
        return {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
    return make_pod("web", spec={"nodeSelector": node_selector or {}, "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [terms("zone", required_zone)]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "preference": terms("disk", preferred_disk)}],
    }}})


def test_replicas_of_a_template_share_their_compiled_node_affinity_and_others_get_their_own() -> None:
    """NodeAffinity and PodTopologySpread's node inclusion compile a pod's node affinity once per template: the
    replicas share the compiled selectors, and a pod differing in any of the fields read compiles its own."""
    template = _with_node_affinity("a", "ssd")
    first, second = replica(template, 1), replica(template, 2)
    assert required_node_affinity(first) is required_node_affinity(second) is required_node_affinity(first)
    assert preferred_node_affinity(first) is preferred_node_affinity(second)
    node = {"zone": "a", "disk": "ssd"}
    assert required_node_affinity(first).matches(node, "n1")
    for other in (_with_node_affinity("b", "ssd"), _with_node_affinity("a", "ssd", {"x": "1"})):
        pod = replica(other, 3)  # another required zone, or a nodeSelector: its own, and it rejects the node
        assert required_node_affinity(pod) is not required_node_affinity(first)
        assert not required_node_affinity(pod).matches(node, "n1")
    hdd = replica(_with_node_affinity("a", "hdd"), 4)  # only the preferred term differs
    assert required_node_affinity(hdd) is required_node_affinity(first)
    assert preferred_node_affinity(hdd) is not preferred_node_affinity(first)
    assert preferred_node_affinity(replica(make_pod("plain"), 5)) is None


def test_a_malformed_node_affinity_is_refused_every_time_and_never_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """A malformed affinity is compiled once per record (a legacy predicate asks node by node), refused on every
    call, and never kept for the template: another replica compiles it again."""
    import extender.engine.plugins.node_affinity as node_affinity

    compiled: list[object] = []

    def counting(pod: Any) -> Any:
        compiled.append(pod)
        return compile_required_node_affinity(pod)

    monkeypatch.setattr(node_affinity, "compile_required_node_affinity", counting)
    broken = make_pod("web", spec={"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        "not a node selector"]}}})
    first = replica(broken, 1)
    for pod in (first, first, replica(broken, 2)):
        with pytest.raises(SelectorError) as refused:
            required_node_affinity(pod)
        assert "requiredDuringSchedulingIgnoredDuringExecution" in str(refused.value)
    assert len(compiled) == 2
    assert required_affinity(first) == str(refused.value)  # the legacy predicate's message, from the same compile
    assert len(compiled) == 2


def _with_spread(labels: dict[str, str], selector: Any, label_keys: list[str] | None = None) -> dict[str, Any]:
    hard = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": selector}
    if label_keys is not None:
        hard["matchLabelKeys"] = label_keys
    soft = {"maxSkew": 3, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": selector}
    return make_pod("web", labels=labels, spec={"topologySpreadConstraints": [hard, soft]})


def test_replicas_of_a_template_share_their_compiled_spread_constraints_and_others_get_their_own() -> None:
    """PreFilter and PreScore compile a pod's own constraints once per template and action. The pod's labels take
    part only through matchLabelKeys: without it replicas with other labels share the compiled constraints, with
    it each value of a listed label gets the selector it names. The feature gates take part too."""
    plugin, state = PodTopologySpread(), CycleState(ClusterCache().snapshot())
    selector = {"matchLabels": {"app": "web"}}
    template = _with_spread({"app": "web", "pod-template-hash": "h1"}, selector)
    first, second = replica(template, 1), replica(template, 2)
    hard = plugin._constraints(state, first, DO_NOT_SCHEDULE)
    assert plugin._constraints(state, second, DO_NOT_SCHEDULE) is hard
    assert [(c.max_skew, c.topology_key) for c in hard] == [(1, "zone")]
    soft = plugin._constraints(state, second, SCHEDULE_ANYWAY)
    assert soft is not hard and [(c.max_skew, c.topology_key) for c in soft] == [(3, "kubernetes.io/hostname")]
    relabelled = replica(_with_spread({"app": "web", "pod-template-hash": "h2"}, selector), 3)
    assert plugin._constraints(state, relabelled, DO_NOT_SCHEDULE) is hard  # labels unread without matchLabelKeys
    other = plugin._constraints(state, replica(_with_spread({"app": "web"}, {"matchLabels": {"app": "db"}}), 4),
                                DO_NOT_SCHEDULE)
    assert not other[0].selector.matches({"app": "web"}) and hard[0].selector.matches({"app": "web"})

    keyed = [plugin._constraints(state, replica(_with_spread({"app": "web", "pod-template-hash": h}, selector,
                                                             ["pod-template-hash"]), i), DO_NOT_SCHEDULE)
             for i, h in ((5, "h1"), (6, "h2"), (7, "h1"))]
    assert keyed[0] is keyed[2] and keyed[0] is not keyed[1]
    assert keyed[0][0].selector.matches({"app": "web", "pod-template-hash": "h1"})
    assert not keyed[1][0].selector.matches({"app": "web", "pod-template-hash": "h1"})

    gated = PodTopologySpread()
    gated.enable_match_label_keys = False  # type: ignore[misc]  # a release without the gate
    unkeyed = gated._constraints(state, replica(_with_spread({"app": "web", "pod-template-hash": "h2"}, selector,
                                                             ["pod-template-hash"]), 8), DO_NOT_SCHEDULE)
    assert unkeyed is not keyed[1] and unkeyed[0].selector.matches({"app": "web", "pod-template-hash": "h1"})


def test_a_malformed_spread_constraint_is_refused_every_time_and_never_shared(monkeypatch: pytest.MonkeyPatch,
                                                                             ) -> None:
    """A constraint whose selector does not compile is refused on every call with its field path, compiled once
    per record and never kept for the template: another replica compiles it again."""
    import extender.engine.plugins.pod_topology_spread as spread

    compiled: list[object] = []
    real = spread.build_constraints

    def counting(*args: Any, **kwargs: Any) -> Any:
        compiled.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(spread, "build_constraints", counting)
    plugin, state = PodTopologySpread(), CycleState(ClusterCache().snapshot())
    broken = _with_spread({"app": "web"}, {"matchExpressions": [{"key": "app", "operator": "Near", "values": ["x"]}]})
    first = replica(broken, 1)
    raised: list[ConstraintError] = []
    for pod in (first, first, replica(broken, 2)):
        with pytest.raises(ConstraintError) as refused:
            plugin._constraints(state, pod, DO_NOT_SCHEDULE)
        assert str(refused.value).startswith("spec.topologySpreadConstraints[0].labelSelector")
        raised.append(refused.value)
    assert len(compiled) == 2
    assert len({id(error) for error in raised}) == 3  # each call raises its own: no traceback grows on a kept one
