"""The resource scorers compute a pod template's request list once, and only for pods that share every field
the computation reads."""

from __future__ import annotations

import copy
from typing import Any

from builders import make_pod

from extender.cluster.records import PodRecord
from extender.engine.plugins.node_resources_balanced_allocation import NodeResourcesBalancedAllocation
from extender.engine.plugins.node_resources_fit import NodeResourcesFit


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
