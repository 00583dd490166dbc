"""The resource scorers compute a pod template's request list once, and NodeAffinity its compiled node affinity,
and only for pods that share every field the computation reads."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from builders import make_pod

from extender.cluster.records import PodRecord
from extender.engine.plugins.legacy.general_predicates import required_affinity
from extender.engine.plugins.node_affinity import preferred_node_affinity, required_node_affinity
from extender.engine.plugins.node_resources_balanced_allocation import NodeResourcesBalancedAllocation
from extender.engine.plugins.node_resources_fit import NodeResourcesFit
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
