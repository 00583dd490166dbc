"""NodeInfo's label groups: the spreading plugins count a node's pods per label set, and the count must equal a
pod-by-pod count (countPodsMatchSelector: same namespace, not terminating, labels matched) through every
add, remove, terminating replacement and clone."""

from __future__ import annotations

import random
from collections.abc import Mapping

from builders import make_node, make_pod

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import NodeRecord, PodRecord, label_signature


def pod(name: str, namespace: str, labels: dict[str, str], *, terminating: bool = False) -> PodRecord:
    raw = make_pod(name, namespace, node="n1", labels=labels, uid=f"uid-{namespace}-{name}")
    if terminating:
        raw["metadata"]["deletionTimestamp"] = "2026-11-25T00:00:00Z"
    return PodRecord(raw)


def pod_by_pod(info: NodeInfo, namespace: str, wanted: Mapping[str, str]) -> int:
    return sum(1 for p in info.pods if p.namespace == namespace and not p.terminating
               and all(p.labels.get(k) == v for k, v in wanted.items()))


def count(info: NodeInfo, namespace: str, wanted: Mapping[str, str]) -> int:
    return info.count_matching(namespace, lambda labels: all(labels.get(k) == v for k, v in wanted.items()), {})


def test_counts_follow_adds_removes_and_clones() -> None:
    rng = random.Random(7)
    info = NodeInfo("n1", NodeRecord(make_node("n1")))
    templates = [{"app": "web"}, {"app": "web", "tier": "front"}, {"app": "db"}, {}]
    held: list[PodRecord] = []
    selectors = [{"app": "web"}, {"app": "db"}, {"tier": "front"}, {}]
    for step in range(400):
        if held and rng.random() < 0.35:
            info.remove_pod(held.pop(rng.randrange(len(held))))
        else:
            new = pod(f"p{step}", rng.choice(["a", "b"]), dict(rng.choice(templates)), terminating=rng.random() < 0.2)
            info.add_pod(new)
            held.append(new)
        copy = info.clone()
        for namespace in ("a", "b", "c"):
            for wanted in selectors:
                assert count(info, namespace, wanted) == pod_by_pod(info, namespace, wanted)
                assert count(copy, namespace, wanted) == pod_by_pod(info, namespace, wanted)
    # A clone's changes leave the original's groups alone.
    before = count(info, "a", {"app": "web"})
    for p in list(copy.pods):
        copy.remove_pod(p)
    assert count(copy, "a", {}) == 0 and copy.label_groups == {}
    assert count(info, "a", {"app": "web"}) == before


def test_a_label_set_is_checked_once_per_count() -> None:
    info = NodeInfo("n1", NodeRecord(make_node("n1")))
    for i in range(30):
        info.add_pod(pod(f"p{i}", "shop", {"app": "web", "pod-template-hash": "abc"}))
    checked: list[Mapping[str, str]] = []

    def match(labels: Mapping[str, str]) -> bool:
        checked.append(labels)
        return labels.get("app") == "web"

    assert info.count_matching("shop", match, {}) == 30
    assert len(checked) == 1


def test_pods_of_one_template_share_their_signature() -> None:
    first, second = pod("a", "shop", {"app": "web", "x": "1"}), pod("b", "shop", {"x": "1", "app": "web"})
    assert first.signature is second.signature
    assert first.signature == ("shop", (("app", "web"), ("x", "1")))
    assert pod("c", "other", {"app": "web", "x": "1"}).signature != first.signature
    assert label_signature("shop", {"app": "web", "x": "1"}) is first.signature


def test_a_pod_is_removed_by_its_record_or_by_another_record_of_its_key() -> None:
    # The cache removes the record it holds (found by reference, from the most recent); a record made again
    # from the same pod (its key, another object) removes it too; a pod that is not there removes nothing.
    info = NodeInfo("n1", NodeRecord(make_node("n1")))
    records = [pod(f"p{i}", "ns", {"app": "web"}) for i in range(6)]
    for record in records:
        info.add_pod(record)
    assert info.remove_pod(records[2]) and info.remove_pod(records[5])
    assert info.remove_pod(PodRecord(records[0].raw))  # equal key, not the held object
    assert not info.remove_pod(records[2]) and not info.remove_pod(pod("p9", "ns", {}))
    assert [p.name for p in info.pods] == ["p1", "p3", "p4"] and count(info, "ns", {"app": "web"}) == 3
    assert info.requested.milli_cpu == sum(p.requests.milli_cpu for p in info.pods)
