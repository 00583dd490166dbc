"""PodTopologySpread's matching-pod counts (countPodsMatchSelector per node) stay exact through every cache
change, whether a count is taken node by node (few stale nodes) or in bulk through the profile's pod-group
index (many: a selector not seen yet, or after the warm-up)."""

from __future__ import annotations

import random

import pytest
from builders import make_node, make_pod, random_labelled_pod

from extender.cluster.cache import ClusterCache
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.pod_groups import PodGroups
from extender.engine.plugins import topology_spread_common
from extender.engine.plugins.topology_spread_common import MatchCounts, SpreadSelector
from extender.kube.selectors import compile_label_selector

NAMESPACES = ("shop", "data")
TEMPLATES = [{"app": "web", "pod-template-hash": "1"}, {"app": "web", "pod-template-hash": "2"},
             {"app": "db", "tier": "back"}, {"app": "cache"}, {}]
SELECTORS = [
    SpreadSelector({"app": "web"}),
    SpreadSelector(selectors=[compile_label_selector({"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["db", "cache"]}]}, path="test")]),
    SpreadSelector(selectors=[compile_label_selector({"matchExpressions": [
        {"key": "tier", "operator": "DoesNotExist"}]}, path="test")]),
    SpreadSelector(),  # empty: counts nothing
]


def brute_force(info: NodeInfo, selector: SpreadSelector, namespace: str) -> int:
    if selector.empty or selector.nothing:
        return 0
    return sum(1 for pod in info.pods
               if pod.namespace == namespace and not pod.terminating and selector.matches(pod.labels))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("warm", [False, True])
def test_counts_equal_a_pod_by_pod_count_through_every_change(seed: int, warm: bool) -> None:
    rng = random.Random(seed)
    cache = ClusterCache()
    names = [f"n{i}" for i in range(150)]  # more than a bulk count's threshold
    for name in names:
        cache.upsert_node(make_node(name))
    serial = 0

    def add_pod() -> None:
        nonlocal serial
        serial += 1
        cache.upsert_pod(random_labelled_pod(rng, serial, NAMESPACES, names, TEMPLATES, terminating=0.1))

    for _ in range(600):
        add_pod()
    counts, groups = MatchCounts(), PodGroups()
    if warm:
        groups.sync(cache.snapshot().all_nodes(), complete=True)
    for step in range(40):
        # A few changes (node-by-node recounts) most steps, many (bulk recounts) now and then.
        for _ in range(rng.choice([1, 2, 3, 200]) if step % 5 else 0):
            action = rng.random()
            if action < 0.5:
                add_pod()
            elif action < 0.8:
                infos = [info for info in cache.snapshot().node_list if info.pods]
                cache.remove_pod(rng.choice(rng.choice(infos).pods).cache_key)
            else:
                cache.upsert_node(make_node(rng.choice(names), labels={"step": str(step)}))
        snapshot = cache.snapshot()
        every = snapshot.all_nodes()
        for selector in SELECTORS:
            for namespace in NAMESPACES:
                got = counts.counts(every, selector, namespace, snapshot.columns, groups).tolist()
                assert got == [brute_force(info, selector, namespace) for info in every.nodes]


def test_a_new_selector_after_the_warm_up_is_counted_in_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ClusterCache()
    for i in range(200):
        cache.upsert_node(make_node(f"n{i}"))
        for j in range(3):
            cache.upsert_pod(make_pod(f"p{i}-{j}", "shop", node=f"n{i}", labels={"app": "web"}, uid=f"u{i}-{j}"))
    counts, groups = MatchCounts(), PodGroups()
    groups.sync(cache.snapshot().all_nodes(), complete=True)
    node_by_node: list[str] = []
    real = topology_spread_common.count_matching
    monkeypatch.setattr(topology_spread_common, "count_matching",
                        lambda info, *args: node_by_node.append(info.name) or real(info, *args))
    snapshot = cache.snapshot()
    assert counts.counts(snapshot.all_nodes(), SELECTORS[0], "shop", snapshot.columns, groups).tolist() == [3] * 200
    assert node_by_node == []  # every row was stale: one bulk count over the index
    cache.upsert_pod(make_pod("late", "shop", node="n7", labels={"app": "web"}, uid="late"))
    snapshot = cache.snapshot()
    assert counts.counts(snapshot.all_nodes(), SELECTORS[0], "shop", snapshot.columns, groups).tolist()[7] == 4
    assert node_by_node == ["n7"]  # one changed node: recounted on its own


def test_a_selector_answers_each_label_set_once_and_keeps_a_bounded_number_of_answers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The node a bind changed is recounted with the selector's answers kept from earlier counts (its pods'
    label sets are not matched again); pods with labels of their own cannot make those answers grow without end."""
    cache = ClusterCache()
    cache.upsert_node(make_node("n0"))
    for j in range(5):
        cache.upsert_pod(make_pod(f"web-{j}", "shop", node="n0", labels={"app": "web"}, uid=f"u-web-{j}"))
    matched: list[dict[str, str]] = []

    class Counting(SpreadSelector):
        def matches(self, labels):  # type: ignore[no-untyped-def]
            matched.append(dict(labels))
            return super().matches(labels)

    selector, counts, groups = Counting({"app": "web"}), MatchCounts(), PodGroups()

    def count() -> int:
        snapshot = cache.snapshot()
        return int(counts.counts(snapshot.all_nodes(), selector, "shop", snapshot.columns, groups)[0])

    assert count() == 5 and matched == [{"app": "web"}]
    cache.upsert_pod(make_pod("web-5", "shop", node="n0", labels={"app": "web"}, uid="u-web-5"))
    assert count() == 6 and len(matched) == 1  # the node changed; its one label set was answered already
    monkeypatch.setattr(topology_spread_common, "_MAX_ANSWERS", 10)
    for j in range(30):  # a StatefulSet's pods: a label set each
        cache.upsert_pod(make_pod(f"db-{j}", "shop", node="n0", labels={"app": "web", "pod": str(j)}, uid=f"u-db-{j}"))
        assert count() == 7 + j
    memo = counts._memo(selector, "shop")
    assert len(memo.answers()) <= 11
