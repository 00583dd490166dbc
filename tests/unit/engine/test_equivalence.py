"""The equivalence cache never serves a stale verdict or raw score: random cluster changes between
equivalent pods, compared with a scheduler that has no cache.

The cache serves node-local plugins computed node by node (the v1.12 predicates of the legacy preset);
the default profile's node-local plugins are columnar and computed afresh for every pod, so for it the
same comparison checks that the cache is not consulted and answers still agree."""

from __future__ import annotations

import random
from typing import Any

import pytest
from builders import make_node, make_pod

from extender.cluster.cache import ClusterCache
from extender.engine.equivalence import equivalence_key
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.engine.scheduler import Scheduler

TAINTS = [[], [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}],
          [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]]
TEMPLATES: list[dict[str, Any]] = [
    {"requests": [{"cpu": "500m", "memory": "1Gi"}]},
    {"requests": [{"cpu": "1", "memory": "512Mi"}], "host_ports": [8080]},
    {"requests": [{"cpu": "250m"}], "tolerations": [{"key": "dedicated", "operator": "Exists"}],
     "spec": {"nodeSelector": {"disk": "ssd"}}},
    {"requests": [{"cpu": "2"}], "labels": {"app": "web"}, "spec": {"affinity": {"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}}},
]


def random_node(rng: random.Random, name: str) -> dict[str, Any]:
    return make_node(name, cpu=str(rng.choice([1, 2, 4])), memory=rng.choice(["1Gi", "4Gi"]),
                     pods=str(rng.choice([2, 5, 110])), labels={"disk": rng.choice(["ssd", "hdd"])},
                     taints=rng.choice(TAINTS), unschedulable=rng.random() < 0.1)


def incoming(template: int, serial: int) -> dict[str, Any]:
    spec = TEMPLATES[template]
    return make_pod(f"t{template}-{serial}", **spec)


PROFILES = {"legacy": {"preset": "legacy"}, "default": None}


@pytest.mark.parametrize("profile_name", list(PROFILES))
@pytest.mark.parametrize("seed", range(12))
def test_equivalent_pods_get_fresh_verdicts_after_any_change(seed: int, profile_name: str) -> None:
    rng = random.Random(seed)
    cache = ClusterCache()
    names = [f"n{i}" for i in range(8)]
    for name in names:
        cache.upsert_node(random_node(rng, name))
    profile = build_profile(PROFILES[profile_name])
    cached = Scheduler(cache, [Framework(profile)])
    plain = Scheduler(cache, [Framework(profile)], equivalence_cache=False)
    serial = 0
    for _ in range(60):
        action = rng.random()
        if action < 0.3:  # a node changes (labels, taints, allocatable, cordon)
            cache.upsert_node(random_node(rng, rng.choice(names)))
        elif action < 0.6:  # a pod lands somewhere (counts, ports, anti-affinity)
            serial += 1
            template = rng.randrange(len(TEMPLATES))
            cache.upsert_pod({**incoming(template, serial), "spec": {**incoming(template, serial)["spec"],
                                                                     "nodeName": rng.choice(names)}})
        elif action < 0.75:  # a pod leaves
            for info in cache.snapshot().node_list:
                if info.pods:
                    cache.remove_pod(rng.choice(info.pods).cache_key)
                    break
        elif action < 0.85:  # a node goes away, or comes back
            name = rng.choice(names)
            if cache.node_info(name) is not None and cache.node_info(name).node is not None:  # type: ignore[union-attr]
                cache.remove_node(name)
            else:
                cache.upsert_node(random_node(rng, name))
        serial += 1
        pod = incoming(rng.randrange(len(TEMPLATES)), serial)
        got = cached.filter(None, pod, names, None)
        want = plain.filter(None, pod, names, None)
        assert (got.passed, got.failed, got.failed_unresolvable) == (want.passed, want.failed,
                                                                     want.failed_unresolvable)
        if len(want.passed) > 1:
            assert cached.prioritize(None, pod, want.passed, None) == plain.prioritize(None, pod, want.passed, None)
    hits = cached.equivalence["default-scheduler"].hits
    assert hits > 0 if profile_name == "legacy" else hits == 0


def test_unchanged_cluster_hits_for_every_node() -> None:
    cache = ClusterCache()
    for i in range(5):
        cache.upsert_node(make_node(f"n{i}"))
    scheduler = Scheduler(cache, [Framework(build_profile(PROFILES["legacy"]))])
    eq = scheduler.equivalence["default-scheduler"]
    scheduler.filter(None, incoming(0, 1), [f"n{i}" for i in range(5)], None)
    assert (eq.hits, eq.misses) == (0, 5)
    scheduler.filter(None, incoming(0, 2), [f"n{i}" for i in range(5)], None)
    assert (eq.hits, eq.misses) == (5, 5)
    cache.upsert_pod(make_pod("x", node="n3", requests=[{"cpu": "1"}]))
    scheduler.filter(None, incoming(0, 3), [f"n{i}" for i in range(5)], None)
    assert (eq.hits, eq.misses) == (9, 6)  # only n3 was recomputed


def test_equivalence_key_ignores_identity_but_not_requirements() -> None:
    a, b = incoming(0, 1), incoming(0, 2)
    assert equivalence_key(a) == equivalence_key(b)
    assert equivalence_key(a) != equivalence_key(incoming(1, 1))
    tolerant = make_pod("x", requests=[{"cpu": "500m", "memory": "1Gi"}],
                        tolerations=[{"key": "dedicated", "operator": "Exists"}])
    assert equivalence_key(tolerant) != equivalence_key(a)


def test_only_profiles_with_plugins_computed_node_by_node_key_their_pods() -> None:
    assert Framework(build_profile({"preset": "legacy"})).reuses_equivalence
    default = Framework(build_profile(None))
    assert not default.reuses_equivalence  # every node-local plugin is columnar: nothing to reuse
    cache = ClusterCache()
    cache.upsert_node(random_node(random.Random(0), "n0"))
    scheduler = Scheduler(cache, [default])
    pod = scheduler.pod_record(incoming(0, 0))
    assert scheduler._equivalence(default, cache.snapshot(), pod) is None
