"""The profile's index of pods per label set per node (PodGroups) equals a pod-by-pod count on every row,
with and without terminating pods, through cache changes, node removals, and switches between the snapshot's
columns and private ones (preemption's what-if snapshots); and one index serves both pod-counting plugins."""

from __future__ import annotations

import random
from collections.abc import Mapping

import numpy as np
from builders import make_node, make_pod, random_labelled_pod

from extender.cluster.cache import ClusterCache
from extender.cluster.columns import NodeBatch, NodeColumns
from extender.cluster.pod_groups import PodGroups
from extender.engine.plugins.inter_pod_affinity import InterPodAffinity
from extender.engine.plugins.pod_topology_spread import PodTopologySpread
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework

NAMESPACES = ("shop", "data")
TEMPLATES = [{"app": "web", "hash": "1"}, {"app": "web", "hash": "2"}, {"app": "db"}, {}]
SELECTORS: list[Mapping[str, str]] = [{"app": "web"}, {"app": "db"}, {}]


def matches(wanted: Mapping[str, str]) -> object:
    return lambda labels: all(labels.get(k) == v for k, v in wanted.items())


def test_rows_equal_a_pod_by_pod_count_through_changes_and_column_switches() -> None:
    rng = random.Random(3)
    cache = ClusterCache()
    names = [f"n{i}" for i in range(40)]
    for name in names:
        cache.upsert_node(make_node(name))
    groups = PodGroups()
    serial = 0
    for step in range(120):
        for _ in range(rng.choice([1, 3, 30])):
            action = rng.random()
            if action < 0.55:
                serial += 1
                cache.upsert_pod(random_labelled_pod(rng, serial, NAMESPACES, names, TEMPLATES, terminating=0.2))
            elif action < 0.85:
                placed = [info for info in cache.snapshot().node_list if info.pods]
                if placed:
                    cache.remove_pod(rng.choice(rng.choice(placed).pods).cache_key)
            elif action < 0.93:
                cache.remove_node(rng.choice(names))  # its pods stay: a placeholder, out of the snapshot
            else:
                cache.upsert_node(make_node(rng.choice(names), labels={"step": str(step)}))
        snapshot = cache.snapshot()
        every = snapshot.all_nodes()
        if step % 4 == 3:
            # A what-if snapshot: private columns over copies of some nodes, one of them changed.
            copies = [info.clone() for info in every.nodes[: len(every) // 2]]
            if copies and copies[0].pods:
                copies[0].remove_pod(copies[0].pods[0])
            batch = NodeBatch.of(copies, NodeColumns.of(copies))
        else:
            batch = every
        groups.sync(batch, complete=True)
        for namespace in NAMESPACES:
            for wanted in SELECTORS:
                keys = groups.matching(namespace, matches(wanted))  # type: ignore[arg-type]
                for terminating in (False, True):
                    per_row = groups.pods_per_row(keys, terminating=terminating)[batch.rows]
                    expected = [sum(1 for p in info.pods if p.namespace == namespace
                                    and (terminating or not p.terminating)
                                    and all(p.labels.get(k) == v for k, v in wanted.items()))
                                for info in batch.nodes]
                    assert per_row.tolist() == expected, (step, namespace, wanted, terminating)
        fresh = PodGroups()
        fresh.sync(batch, complete=True)
        assert fresh.by_node() == groups.by_node()


def test_one_index_serves_both_pod_counting_plugins_and_the_warm_up_fills_it() -> None:
    cache = ClusterCache()
    for i in range(3):
        cache.upsert_node(make_node(f"n{i}"))
        cache.upsert_pod(make_pod(f"web-{i}", "shop", node=f"n{i}", labels={"app": "web"}, uid=f"u{i}"))
    framework = Framework(build_profile(None))
    plugins = [p for p in framework.filter_plugins if isinstance(p, (InterPodAffinity, PodTopologySpread))]
    assert len(plugins) == 2
    assert all(p.pod_groups is framework.pod_groups for p in plugins)
    assert framework.pod_groups.by_node() == {}
    framework.warm_up(cache.snapshot())
    assert framework.pod_groups.by_node() == {("shop", (("app", "web"),)): {f"n{i}": (1, 1) for i in range(3)}}
    assert np.array_equal(framework.pod_groups.pods_per_row([("shop", (("app", "web"),))], terminating=False)[
        cache.snapshot().all_nodes().rows], [1, 1, 1])
