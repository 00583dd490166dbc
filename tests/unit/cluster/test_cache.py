"""The scheduler cache: aggregates, placeholders, assume/forget/expiry, incremental snapshots."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from builders import make_node, make_pod

from extender.cluster.cache import CacheError, ClusterCache
from extender.cluster.records import PodRecord, RecordError
from extender.kube.release import release


def test_assigned_pods_feed_node_aggregates() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    cache.upsert_pod(make_pod("a", node="n1", requests=[{"cpu": "500m", "memory": "1Gi"}]))
    cache.upsert_pod(make_pod("b", node="n1", requests=[{"cpu": "250m"}]))
    info = cache.snapshot().get("n1")
    assert info is not None
    assert info.requested.milli_cpu == 750
    assert info.requested.memory == 1024**3
    # The non-zero view fills the missing memory request of "b" with the 200Mi default.
    assert info.non_zero_requested.memory == 1024**3 + 200 * 1024 * 1024
    assert len(info.pods) == 2


def test_unassigned_and_terminal_pods_do_not_count() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    cache.upsert_pod(make_pod("pending", requests=[{"cpu": "1"}]))
    cache.upsert_pod(make_pod("done", node="n1", requests=[{"cpu": "1"}], phase="Succeeded"))
    info = cache.snapshot().get("n1")
    assert info is not None and info.requested.milli_cpu == 0 and not info.pods
    assert cache.counts()["pending_pods"] == 1


def test_update_replaces_without_double_counting() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    cache.upsert_pod(make_pod("a", node="n1", requests=[{"cpu": "1"}]))
    cache.upsert_pod(make_pod("a", node="n1", requests=[{"cpu": "2"}]))
    info = cache.snapshot().get("n1")
    assert info is not None and info.requested.milli_cpu == 2000 and len(info.pods) == 1


def test_node_deleted_with_pods_stays_as_hidden_placeholder() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    cache.upsert_pod(make_pod("a", node="n1", requests=[{"cpu": "1"}]))
    cache.remove_node("n1")
    assert cache.snapshot().get("n1") is None
    assert cache.counts()["placeholder_nodes"] == 1
    # The node comes back: its pods are still accounted for.
    cache.upsert_node(make_node("n1"))
    info = cache.snapshot().get("n1")
    assert info is not None and info.requested.milli_cpu == 1000
    cache.remove_node("n1")
    cache.remove_pod(make_pod("a", node="n1"))
    assert cache.node_info("n1") is None
    assert cache.counts()["placeholder_nodes"] == 0


def test_pod_for_unknown_node_creates_placeholder_not_shown() -> None:
    cache = ClusterCache()
    cache.upsert_pod(make_pod("a", node="ghost", requests=[{"cpu": "1"}]))
    assert cache.snapshot().get("ghost") is None
    cache.upsert_node(make_node("ghost"))
    info = cache.snapshot().get("ghost")
    assert info is not None and info.requested.milli_cpu == 1000


def test_assume_then_confirm_counts_once() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    pod = PodRecord(make_pod("a", requests=[{"cpu": "1"}]))
    cache.assume_pod(pod, "n1")
    info = cache.snapshot().get("n1")
    assert info is not None and info.requested.milli_cpu == 1000
    assert cache.is_assumed(pod.cache_key)
    cache.finish_binding(pod.cache_key)
    cache.upsert_pod(make_pod("a", node="n1", requests=[{"cpu": "1"}]))  # the watch confirms it
    info = cache.snapshot().get("n1")
    assert info is not None and info.requested.milli_cpu == 1000 and len(info.pods) == 1
    assert not cache.is_assumed(pod.cache_key)


def _resized_pod_with_everything(name: str) -> dict[str, Any]:
    """A pending pod whose status reports an in-place resize (so its requests change once it names a node),
    with labels, tolerations, a host port, affinity, a claim and fields the cache's trim drops."""
    pod = make_pod(name, requests=[{"cpu": "250m", "memory": "64Mi"}], labels={"app": "web"}, host_ports=[8080],
                   tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
                   spec={"priority": 7, "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
                         "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                             {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}]}},
                         "terminationGracePeriodSeconds": 30})
    pod["metadata"]["annotations"] = {"note": "dropped by the trim"}
    pod["status"] = {"containerStatuses": [{"name": "c0", "allocatedResources": {"cpu": "1", "memory": "64Mi"},
                                            "resources": {"requests": {"cpu": "1", "memory": "64Mi"}}}]}
    return pod


@pytest.mark.parametrize("minor", [36, 37])
def test_assumed_record_is_the_record_of_the_pod_naming_its_node(minor: int) -> None:
    """assume_pod builds the assumed pod's record from the pending one (PodRecord.placed_on): it must be the
    record a pod naming that node gets, field for field, including the resized requests a pod on a node counts,
    and the pending pod's own object must stay as it was."""
    raw = _resized_pod_with_everything("a")
    pending = PodRecord(raw, minor=minor)
    before = copy.deepcopy(raw)
    cache = ClusterCache(release=release(minor))
    cache.upsert_node(make_node("n1"))
    assumed = cache.assume_pod(pending, "n1")
    expected = PodRecord({**raw, "spec": {**raw["spec"], "nodeName": "n1"}}, minor=minor)
    for field in [*PodRecord.__slots__, "signature", "spec_requests"]:
        if field not in ("memo", "raw", "_signature"):  # (the signature is compared as computed)
            assert getattr(assumed, field) == getattr(expected, field), field
    assert assumed.requests.milli_cpu == 1000 and pending.requests.milli_cpu == 250  # the status counts on a node
    assert assumed.raw["spec"]["nodeName"] == "n1" and "annotations" not in assumed.raw["metadata"]
    assert raw == before and "nodeName" not in pending.raw["spec"] and pending.node_name == ""
    assert assumed.memo is not pending.memo  # plugins derive their data afresh for the placed record


def test_assume_twice_is_refused() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    pod = PodRecord(make_pod("a"))
    cache.assume_pod(pod, "n1")
    with pytest.raises(CacheError, match="already bound"):
        cache.assume_pod(pod, "n1")


def test_forget_undoes_assume() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    pod = PodRecord(make_pod("a", requests=[{"cpu": "1"}]))
    cache.assume_pod(pod, "n1")
    cache.forget_pod(pod.cache_key)
    info = cache.snapshot().get("n1")
    assert info is not None and info.requested.milli_cpu == 0 and not info.pods


def test_assumed_pod_expires_only_after_binding_finished() -> None:
    cache = ClusterCache(assumed_ttl_seconds=10)
    cache.upsert_node(make_node("n1"))
    pod = PodRecord(make_pod("a"))
    cache.assume_pod(pod, "n1")
    assert cache.cleanup_expired(now=1e12) == []  # binding not finished: never expires
    cache.finish_binding(pod.cache_key, now=100.0)
    assert cache.cleanup_expired(now=109.0) == []
    assert cache.cleanup_expired(now=110.0) == [pod.cache_key]
    assert cache.counts()["assumed_pods"] == 0


def test_assumed_count_follows_every_way_out() -> None:
    cache = ClusterCache(assumed_ttl_seconds=10)
    cache.upsert_node(make_node("n1"))
    pods = [PodRecord(make_pod(name, uid=f"uid-{name}")) for name in "abcde"]
    for pod in pods:
        cache.assume_pod(pod, "n1")
    assert cache.counts()["assumed_pods"] == 5 and cache.counts()["assigned_pods"] == 0
    cache.upsert_pod(make_pod("a", uid="uid-a", node="n1"))  # confirmed by the watch
    cache.upsert_pod(make_pod("b", uid="uid-b"))  # an event from before the binding: still assumed
    cache.remove_pod("uid-c")  # deleted
    cache.forget_pod("uid-d")  # binding failed
    cache.finish_binding("uid-e", now=0.0)
    assert cache.counts()["assumed_pods"] == 2 and cache.counts()["assigned_pods"] == 1
    assert cache.keys("Pod") == {"uid-a"}
    assert cache.cleanup_expired(now=10.0) == ["uid-e"]  # b's binding never finished: it stays
    assert cache.counts()["assumed_pods"] == 1 and cache.is_assumed("uid-b")


def test_ttl_zero_never_expires() -> None:
    cache = ClusterCache(assumed_ttl_seconds=0)
    cache.upsert_node(make_node("n1"))
    pod = PodRecord(make_pod("a"))
    cache.assume_pod(pod, "n1")
    cache.finish_binding(pod.cache_key, now=0.0)
    assert cache.cleanup_expired(now=1e12) == []


def test_snapshot_copies_only_changed_nodes() -> None:
    cache = ClusterCache()
    for i in range(5):
        cache.upsert_node(make_node(f"n{i}"))
    first = {name: info for name, info in cache.snapshot().node_infos.items()}
    cache.upsert_pod(make_pod("a", node="n3", requests=[{"cpu": "1"}]))
    second = cache.snapshot().node_infos
    for name in ("n0", "n1", "n2", "n4"):
        assert second[name] is first[name]  # untouched nodes are not copied again
    assert second["n3"] is not first["n3"]
    assert first["n3"].requested.milli_cpu == 0  # an earlier view is not changed under a reader
    assert second["n3"].requested.milli_cpu == 1000


def test_snapshot_is_isolated_from_later_cache_changes() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    snap_info = cache.snapshot().get("n1")
    cache.upsert_pod(make_pod("a", node="n1", requests=[{"cpu": "1"}]))
    assert snap_info is not None and snap_info.requested.milli_cpu == 0


def test_host_ports_and_removal() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    cache.upsert_pod(make_pod("a", node="n1", host_ports=[8080, (53, "UDP", "10.0.0.1")]))
    info = cache.snapshot().get("n1")
    assert info is not None
    assert info.port_conflict("0.0.0.0", "TCP", 8080)
    assert info.port_conflict("10.0.0.1", "UDP", 53)
    assert not info.port_conflict("10.0.0.2", "UDP", 53)
    assert info.port_conflict("0.0.0.0", "UDP", 53)  # 0.0.0.0 overlaps every address
    cache.remove_pod(make_pod("a", node="n1"))
    info = cache.snapshot().get("n1")
    assert info is not None and not info.used_ports


def test_bad_pod_is_rejected_with_field() -> None:
    cache = ClusterCache()
    with pytest.raises(RecordError, match="cpu"):
        cache.upsert_pod(make_pod("a", node="n1", requests=[{"cpu": "lots"}]))
    with pytest.raises(RecordError, match="hostPort"):
        cache.upsert_pod(make_pod("b", node="n1", spec={"containers": [{"name": "c", "ports": [
            {"containerPort": 1, "hostPort": 70000}]}]}))


def test_image_counts_follow_node_objects_not_pods() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1", images=[(["nginx:1"], 100)]))
    cache.upsert_node(make_node("n2", images=[(["nginx:1"], 100), (["redis:7"], 50)]))
    assert cache.snapshot().image_node_counts() == {"nginx:1": 2, "redis:7": 1}
    cache.upsert_pod(make_pod("a", node="n1"))  # pods moving do not change images...
    assert cache.snapshot().image_node_counts() == {"nginx:1": 2, "redis:7": 1}
    cache.upsert_node(make_node("n2", images=[(["redis:7"], 50)]))  # ...a node's new status does
    assert cache.snapshot().image_node_counts() == {"nginx:1": 1, "redis:7": 1}
    cache.remove_node("n1")
    assert cache.snapshot().image_node_counts() == {"redis:7": 1}


def test_image_counts_follow_every_node_change_without_a_recount() -> None:
    """Replaced node objects move the image counts by the images they gained or dropped; the counts always
    equal a count over every node, and counts a request already read are never changed under it."""
    import random

    from extender.cluster.snapshot import Snapshot

    rng = random.Random(5)
    images = [f"img-{i}:1" for i in range(6)]

    def node(name: str) -> dict:
        held = rng.sample(images, rng.randint(0, 4))
        entries = [([image, f"{image}@sha"] if rng.random() < 0.3 else [image], 10) for image in held]
        if held and rng.random() < 0.2:
            entries.append(([held[0]], 5))  # one image listed twice: still one node
        return make_node(name, images=entries, labels={"flip": str(rng.random() < 0.5)})

    cache = ClusterCache()
    names = [f"n{i}" for i in range(6)]
    for name in names:
        cache.upsert_node(node(name))
    counts = cache.snapshot().image_node_counts()
    for step in range(300):
        action = rng.random()
        name = rng.choice(names)
        if action < 0.6:
            cache.upsert_node(node(name))
        elif action < 0.8:
            cache.upsert_pod(make_pod(f"p{step}", node=name))
        elif action < 0.9:
            cache.remove_node(name)
        else:
            cache.upsert_node(node(name))
            cache.upsert_node(node(rng.choice(names)))
        read_before = dict(counts)
        snapshot = cache.snapshot()
        assert counts == read_before  # what the last request read stays as it was
        counts = snapshot.image_node_counts()
        fresh = Snapshot.from_node_infos(snapshot.node_list).image_node_counts()
        assert counts == fresh, step


def test_assumed_pod_survives_an_older_unassigned_event() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1", cpu="4"))
    pending = make_pod("a", requests=[{"cpu": "1"}])
    cache.assume_pod(PodRecord(pending), "n1")
    cache.upsert_pod(pending)  # the watch delivers the pod as it was before our Binding
    info = cache.snapshot().get("n1")
    assert info is not None and info.requested.milli_cpu == 1000 and cache.is_assumed("uid-a")
    cache.upsert_pod(make_pod("a", node="n1", requests=[{"cpu": "1"}]))  # then the bound pod
    info = cache.snapshot().get("n1")
    assert info is not None and info.requested.milli_cpu == 1000 and not cache.is_assumed("uid-a")


def test_snapshot_lists_after_random_changes_equal_a_full_rebuild() -> None:
    """The snapshot's lists are updated in place when only pods move; they must equal lists rebuilt from
    scratch after any sequence of pod and node changes (order included)."""
    import random

    from extender.cluster.columns import NodeBatch
    from extender.cluster.snapshot import Snapshot

    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    soft = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "podAffinityTerm": {
        "labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}}]}}
    rng = random.Random(5)
    cache = ClusterCache()
    nodes = [f"n{i}" for i in range(12)]
    for name in nodes:
        cache.upsert_node(make_node(name, cpu="8", memory="16Gi"))
    placed: list[str] = []
    for step in range(400):
        roll = rng.random()
        if roll < 0.5 or not placed:
            name = f"p{step}"
            affinity = rng.choice([None, anti, soft])
            cache.upsert_pod(make_pod(name, node=rng.choice(nodes), requests=[{"cpu": "100m"}],
                                      labels={"app": rng.choice(["db", "web"])},
                                      spec={"affinity": affinity} if affinity else None))
            placed.append(name)
        elif roll < 0.9:
            cache.remove_pod(f"default/{placed.pop(rng.randrange(len(placed)))}")
        elif roll < 0.95:
            gone = rng.choice(nodes)
            cache.remove_node(gone)
            nodes.remove(gone)
            if len(nodes) < 4:
                nodes.append(f"m{step}")
                cache.upsert_node(make_node(nodes[-1], cpu="8", memory="16Gi"))
        else:
            nodes.append(f"m{step}")
            cache.upsert_node(make_node(nodes[-1], cpu="8", memory="16Gi"))
        if rng.random() < 0.6:  # several changes may land in one refresh
            snap = cache.snapshot()
            fresh = Snapshot.from_node_infos(snap.node_infos.values())
            assert snap.node_list == fresh.node_list
            assert snap.pods_with_affinity_nodes == fresh.pods_with_affinity_nodes
            assert snap.pods_with_required_anti_affinity_nodes == fresh.pods_with_required_anti_affinity_nodes
            every = snap.all_nodes()
            assert list(every.nodes) == snap.node_list
            assert every.rows.tolist() == NodeBatch.of(snap.node_list, snap.columns).rows.tolist()
            assert every.column("generation").tolist() == [n.generation for n in snap.node_list]


def test_a_copy_is_independent_of_its_original() -> None:
    cache = ClusterCache(assumed_ttl_seconds=0)
    for name in ("n1", "n2", "n3"):
        cache.upsert_node(make_node(name))
    cache.upsert_pod(make_pod("a", node="n1", requests=[{"cpu": "1"}]))
    cache.upsert_pod(make_pod("waiting"))
    cache.upsert_object("Service", {"kind": "Service", "metadata": {"name": "s", "namespace": "default"}})
    before = cache.snapshot()
    copy = cache.copy()
    assert [n.name for n in copy.snapshot().node_list] == ["n1", "n2", "n3"]
    assert copy.snapshot().get("n1").requested.milli_cpu == 1000  # type: ignore[union-attr]
    copy.assume_pod(PodRecord(make_pod("b", requests=[{"cpu": "2"}])), "n2")
    copy.remove_node("n3")
    copy.upsert_node(make_node("n4"))
    copy.remove_object("Service", {"kind": "Service", "metadata": {"name": "s", "namespace": "default"}})
    after = cache.snapshot()
    assert after is before and [n.name for n in after.node_list] == ["n1", "n2", "n3"]
    assert after.get("n2").requested.milli_cpu == 0  # type: ignore[union-attr]
    assert set(after.kind("Service")) == {"default/s"}
    assert cache.counts()["assumed_pods"] == 0 and cache.counts()["pending_pods"] == 1
    assert [n.name for n in copy.snapshot().node_list] == ["n1", "n2", "n4"]
    assert copy.counts()["assumed_pods"] == 1 and copy.counts()["pending_pods"] == 1


def _version(pod: dict[str, object], version: str, **status: object) -> dict[str, object]:
    """``pod`` as the apiserver sends a later version of it: a resourceVersion and the given status fields."""
    later = copy.deepcopy(pod)
    meta = later["metadata"]
    assert isinstance(meta, dict)
    meta["resourceVersion"] = version
    later["status"] = {**dict(later.get("status") or {}), **status}  # type: ignore[arg-type]
    return later


def test_a_version_the_scheduler_reads_no_differently_leaves_the_node_as_it_was() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    pod = make_pod("a", node="n1", requests=[{"cpu": "1"}])
    held = cache.upsert_pod(_version(pod, "10", phase="Running", conditions=[{"type": "Ready", "status": "False"}],
                                     containerStatuses=[{"name": "c0", "ready": False, "restartCount": 0}]))
    before = cache.snapshot().get("n1")
    assert before is not None
    # A kubelet's status update: readiness, addresses and container states, none of which the scheduler reads.
    later = _version(pod, "11", phase="Running", podIP="10.0.0.7",
                     conditions=[{"type": "Ready", "status": "True"}],
                     containerStatuses=[{"name": "c0", "ready": True, "restartCount": 1}])
    assert cache.upsert_pod(later) is held
    assert cache.snapshot().get("n1") is before  # no node changed: the snapshot keeps its entry
    assert held.raw["metadata"]["resourceVersion"] == "11"  # the record holds the current version
    assert cache.node_info("n1").generation == before.generation  # type: ignore[union-attr]


@pytest.mark.parametrize("change", [
    {"phase": "Succeeded"},
    {"conditions": [{"type": "DisruptionTarget", "status": "True"}]},
    {"startTime": "2026-11-26T10:00:00Z"},
])
def test_a_version_that_changes_what_the_scheduler_reads_replaces_the_record(change: dict[str, object]) -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    pod = make_pod("a", node="n1", requests=[{"cpu": "1"}])
    held = cache.upsert_pod(_version(pod, "10", phase="Running"))
    before = cache.snapshot().get("n1")
    record = cache.upsert_pod(_version(pod, "11", **{"phase": "Running", **change}))
    assert record is not held
    after = cache.snapshot().get("n1")
    assert after is not before
    assert after is not None and len(after.pods) == (0 if change.get("phase") == "Succeeded" else 1)


def test_labels_and_deletion_are_read_and_the_version_alone_is_not() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    pod = make_pod("a", node="n1", labels={"app": "web"})
    held = cache.upsert_pod(_version(pod, "10"))
    relabelled = _version(pod, "11")
    relabelled["metadata"]["labels"] = {"app": "db"}  # type: ignore[index]
    record = cache.upsert_pod(relabelled)
    assert record is not held and record.labels == {"app": "db"}
    deleting = _version(relabelled, "12")
    deleting["metadata"]["deletionTimestamp"] = "2026-11-26T10:00:00Z"  # type: ignore[index]
    assert cache.upsert_pod(deleting).terminating
    # The same object listed again (a relist): nothing to do.
    assert cache.upsert_pod(copy.deepcopy(deleting)) is cache.get_pod("uid-a")


def test_a_pending_pod_updated_unread_keeps_its_record_and_its_place() -> None:
    cache = ClusterCache()
    first, second = make_pod("first"), make_pod("second")
    unschedulable = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    held = cache.upsert_pod(_version(first, "1", conditions=[{**unschedulable, "message": "0/3 nodes are available"}]))
    cache.upsert_pod(_version(second, "2"))
    # kube-scheduler marks it unschedulable again, with a new message: a condition the cache trims away.
    marked = _version(first, "3", conditions=[{**unschedulable, "message": "0/4 nodes are available"}])
    assert cache.upsert_pod(marked) is held
    assert [p.name for p in cache.pending_pods()] == ["first", "second"]
    assert held.raw["metadata"]["resourceVersion"] == "3"


def test_an_assumed_pod_is_confirmed_where_it_is_by_its_bound_version() -> None:
    cache = ClusterCache(assumed_ttl_seconds=10)
    cache.upsert_node(make_node("n1"))
    pending = cache.upsert_pod(_version(make_pod("a", uid="uid-a", requests=[{"cpu": "1"}]), "5"))
    assumed = cache.assume_pod(pending, "n1")
    cache.finish_binding(assumed.cache_key, now=0.0)
    before = cache.snapshot().get("n1")
    assert before is not None and len(before.pods) == 1
    # The version the Binding makes: spec.nodeName set, the PodScheduled condition (trimmed away), a new version.
    bound = _version(dict(assumed.raw), "6", conditions=[{"type": "PodScheduled", "status": "True"}])
    assert cache.upsert_pod(bound) is assumed
    assert not cache.is_assumed("uid-a") and cache.counts()["assigned_pods"] == 1
    assert assumed.raw["metadata"]["resourceVersion"] == "6"
    assert cache.snapshot().get("n1") is before  # its node is not copied again for the next request
    assert cache.cleanup_expired(now=100.0) == [] and cache.get_pod("uid-a") is assumed  # no expiry any more
    info = cache.snapshot().get("n1")
    assert info is not None and info.requested.milli_cpu == 1000 and len(info.pods) == 1


def test_an_assumed_pods_version_that_differs_takes_the_full_path() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    cache.upsert_node(make_node("n2"))
    pending = cache.upsert_pod(make_pod("a", uid="uid-a", requests=[{"cpu": "1"}]))
    assumed = cache.assume_pod(pending, "n1")
    elsewhere = copy.deepcopy(dict(assumed.raw))
    elsewhere["spec"]["nodeName"] = "n2"  # bound by another scheduler meanwhile
    record = cache.upsert_pod(_version(elsewhere, "9"))
    assert record is not assumed and not cache.is_assumed("uid-a")
    n1, n2 = cache.snapshot().get("n1"), cache.snapshot().get("n2")
    assert n1 is not None and n2 is not None and not n1.pods and len(n2.pods) == 1


def test_a_malformed_version_of_a_held_pod_is_reported_not_matched() -> None:
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    pod = make_pod("a", node="n1")
    cache.upsert_pod(pod)
    for bad in ({**pod, "metadata": ["a"]}, {**pod, "spec": "n1"}):
        with pytest.raises(RecordError):
            cache.upsert_pod(bad)
    assert cache.get_pod("uid-a") is not None


# ---- node versions that change only a heartbeat ----------------------------------------------------------------


def _reporting_node(name: str = "n1", version: str = "1", heartbeat: str = "2026-11-26T10:00:00Z") -> dict:
    """A node as a kubelet reports it: conditions with their heartbeat time, managed fields with the write's
    time."""
    raw = make_node(name, labels={"topology.kubernetes.io/zone": "z1"}, images=[(["nginx:1"], 100)],
                    resource_version=version)
    raw["metadata"]["uid"] = f"uid-{name}"
    raw["metadata"]["managedFields"] = [{"manager": "kubelet", "operation": "Update", "time": heartbeat}]
    raw["status"]["conditions"] = [
        {"type": kind, "status": status, "reason": f"Kubelet{kind}", "lastHeartbeatTime": heartbeat,
         "lastTransitionTime": "2026-11-20T00:00:00Z"}
        for kind, status in (("Ready", "True"), ("MemoryPressure", "False"))]
    return raw


def test_a_heartbeat_leaves_the_node_as_it_was() -> None:
    """A kubelet's periodic report (new heartbeat times, version and managed fields) keeps the record, which takes
    the new object, and changes no node for the next snapshot: the NodeInfo keeps its generation."""
    cache = ClusterCache()
    listed = _reporting_node()
    del listed["apiVersion"]  # a list's items do not state it; a watch event's object does
    cache.upsert_node(listed)
    cache.upsert_pod(make_pod("a", node="n1", uid="uid-a"))
    before = cache.snapshot().get("n1")
    assert before is not None
    record, generation = before.node, before.generation
    beat = _reporting_node(version="2", heartbeat="2026-11-26T10:05:00Z")
    assert cache.upsert_node(beat) is record
    after = cache.snapshot().get("n1")
    assert after is before and after.generation == generation and after.node is record
    assert record.raw is beat and record.resource_version == "2"


@pytest.mark.parametrize("change", [
    "condition status", "condition added", "transition time", "label", "annotation", "taint", "unschedulable",
    "allocatable", "images", "declared features", "uid",
])
def test_any_other_change_of_a_node_is_a_new_node(change: str) -> None:
    """Everything but a heartbeat is taken in full: a new record, a new generation (the snapshot copies the node)."""
    cache = ClusterCache()
    cache.upsert_node(_reporting_node())
    before = cache.snapshot().get("n1")
    assert before is not None
    new = _reporting_node(version="2", heartbeat="2026-11-26T10:05:00Z")
    meta, spec, status = new["metadata"], new["spec"], new["status"]
    if change == "condition status":
        status["conditions"][1]["status"] = "True"
    elif change == "condition added":
        status["conditions"].append({"type": "DiskPressure", "status": "False"})
    elif change == "transition time":
        status["conditions"][0]["lastTransitionTime"] = "2026-11-26T10:05:00Z"
    elif change == "label":
        meta["labels"]["pool"] = "gpu"
    elif change == "annotation":
        meta["annotations"] = {"scheduler.alpha.kubernetes.io/preferAvoidPods": "{}"}
    elif change == "taint":
        spec["taints"] = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
    elif change == "unschedulable":
        spec["unschedulable"] = True
    elif change == "allocatable":
        status["allocatable"]["cpu"] = "3"
    elif change == "images":
        status["images"].append({"names": ["redis:7"], "sizeBytes": 50})
    elif change == "declared features":
        status["declaredFeatures"] = ["InPlacePodVerticalScaling"]
    else:
        meta["uid"] = "uid-n1-recreated"
    record = cache.upsert_node(new)
    assert record is not before.node
    after = cache.snapshot().get("n1")
    assert after is not None and after.node is record and after.generation != before.generation


def test_a_malformed_node_version_is_still_refused() -> None:
    cache = ClusterCache()
    cache.upsert_node(_reporting_node())
    broken = _reporting_node(version="2")
    broken["status"]["allocatable"]["cpu"] = "lots"
    with pytest.raises(RecordError, match="allocatable"):
        cache.upsert_node(broken)
    with pytest.raises(RecordError):
        cache.upsert_node({"metadata": {"name": {"not": "a name"}}})


def test_an_object_change_replaces_only_its_kinds_mapping_and_leaves_the_nodes_alone() -> None:
    """A snapshot after a change of one kind holds a new mapping of that kind (the earlier snapshot's stays as it
    was) and the very same mappings of every other kind; the nodes' generation and batch of every node stay."""
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": {"app": "web"}}}
    cache.upsert_object("Service", service)
    first = cache.snapshot()
    services, namespaces, generation, every = (first.kind("Service"), first.kind("Namespace"), first.generation,
                                               first.all_nodes())
    cache.upsert_object("Service", {**service, "spec": {"selector": {"app": "api"}}})
    second = cache.snapshot()
    assert second.kind("Service") is not services and services["default/web"]["spec"]["selector"] == {"app": "web"}
    assert second.kind("Service")["default/web"]["spec"]["selector"] == {"app": "api"}
    assert second.kind("Namespace") is namespaces and second.kind("ReplicaSet") is first.kind("ReplicaSet")
    assert second.generation == generation and second.all_nodes() is every
    assert second.kind("NoSuchKind") is second.kind("NoSuchKind")  # an empty kind is one mapping too


def _replica_set(version: str, *, ready: int = 0, selector: str = "web") -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "namespace": "default", "resourceVersion": version,
                         "managedFields": [{"manager": "kube-controller-manager", "time": f"t{version}"}]},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": selector}}},
            "status": {"replicas": 3, "readyReplicas": ready, "observedGeneration": 1}}


def test_a_controllers_status_update_leaves_the_snapshots_mapping_of_its_kind() -> None:
    """kube-controller-manager writes a ReplicaSet's status at each step of its pods; nothing the engine reads
    changes, so the snapshot keeps its mapping (and the memos keyed by it), while the cache holds the latest
    version. A change to what the engine reads, or a status change of a kind whose status it reads, still
    gives the kind a new mapping."""
    cache = ClusterCache()
    cache.upsert_object("ReplicaSet", _replica_set("1"))
    first = cache.snapshot().kind("ReplicaSet")
    for version, ready in (("2", 1), ("3", 2)):
        cache.upsert_object("ReplicaSet", _replica_set(version, ready=ready))
        assert cache.snapshot().kind("ReplicaSet") is first
        assert cache.get_object("ReplicaSet", "default/web-1")["metadata"]["resourceVersion"] == version  # type: ignore[index]
    listed = _replica_set("3", ready=2)
    del listed["apiVersion"]  # a list's items state no apiVersion
    cache.upsert_object("ReplicaSet", listed)
    assert cache.snapshot().kind("ReplicaSet") is first

    cache.upsert_object("ReplicaSet", _replica_set("4", ready=2, selector="api"))
    changed = cache.snapshot().kind("ReplicaSet")
    assert changed is not first and changed["default/web-1"]["metadata"]["resourceVersion"] == "4"
    assert first["default/web-1"]["spec"]["selector"] == {"matchLabels": {"app": "web"}}  # never mutated

    labelled = _replica_set("5", ready=2, selector="api")
    labelled["metadata"]["labels"] = {"tier": "front"}
    cache.upsert_object("ReplicaSet", labelled)
    assert cache.snapshot().kind("ReplicaSet") is not changed

    claim = {"kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default",
                                                            "resourceVersion": "1"}, "status": {"phase": "Pending"}}
    cache.upsert_object("PersistentVolumeClaim", claim)
    claims = cache.snapshot().kind("PersistentVolumeClaim")
    cache.upsert_object("PersistentVolumeClaim", {**claim, "metadata": {**claim["metadata"], "resourceVersion": "2"},
                                                  "status": {"phase": "Bound"}})
    assert cache.snapshot().kind("PersistentVolumeClaim") is not claims  # VolumeBinding reads a claim's phase


def test_a_held_status_version_reaches_the_snapshot_with_the_next_change_of_its_kind() -> None:
    cache = ClusterCache()
    cache.upsert_object("ReplicaSet", _replica_set("1"))
    other = {**_replica_set("1"), "metadata": {"name": "api-1", "namespace": "default", "resourceVersion": "1"}}
    cache.upsert_object("ReplicaSet", other)
    cache.snapshot()
    cache.upsert_object("ReplicaSet", _replica_set("2", ready=3))
    assert cache.snapshot().kind("ReplicaSet")["default/web-1"]["metadata"]["resourceVersion"] == "1"
    cache.remove_object("ReplicaSet", other)
    held = cache.snapshot().kind("ReplicaSet")
    assert set(held) == {"default/web-1"} and held["default/web-1"]["status"]["readyReplicas"] == 3


def test_unread_affinity_groups_hold_no_more_than_a_bounded_number_of_replaced_nodes() -> None:
    """The groups of nodes with (anti-)affinity pods are made when read (only the legacy InterPodAffinity reads
    them). Until then the NodeInfos replaced since the last read wait to be swapped in; a service on the default
    profile never reads them, so that queue must not keep every replaced NodeInfo alive."""
    from extender.cluster import snapshot as snapshot_module

    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    cache = ClusterCache()
    cache.upsert_node(make_node("n1", cpu="1000", memory="1000Gi"))
    cache.upsert_pod(make_pod("db", node="n1", labels={"app": "db"}, spec={"affinity": anti}))
    held = cache.snapshot().pods_with_required_anti_affinity_nodes
    for i in range(3 * snapshot_module._MAX_SWAPS):
        cache.upsert_pod(make_pod(f"p{i}", node="n1", requests=[{"cpu": "1m"}]))
        cache.snapshot()
        assert len(cache.snapshot()._swaps) <= snapshot_module._MAX_SWAPS
    assert [n.name for n in cache.snapshot().pods_with_required_anti_affinity_nodes] == ["n1"]
    assert cache.snapshot().pods_with_required_anti_affinity_nodes[0] is cache.snapshot().get("n1")
    assert held[0] is not cache.snapshot().get("n1")  # what a reader held is left as it was


def test_a_pod_is_found_by_name_through_its_whole_life() -> None:
    """find_pod by namespace and name (no UID) follows a pod from pending to assumed, bound, terminal or gone, a
    successor of the same name included, and a copy of the cache finds what the cache finds."""
    cache = ClusterCache()
    cache.upsert_node(make_node("n1"))
    old = make_pod("web-0", uid="u-old", node="n1")
    cache.upsert_pod(old)
    new = make_pod("web-0", uid="u-new")
    cache.upsert_pod(new)  # the successor, pending while the old one is still held
    assert cache.find_pod("default", "web-0").uid == "u-old"  # the placed one first
    cache.remove_pod(old)
    assert cache.find_pod("default", "web-0").uid == "u-new"
    assumed = cache.assume_pod(PodRecord(new), "n1")
    assert cache.find_pod("default", "web-0") is assumed
    cache.forget_pod(assumed.cache_key)
    assert cache.find_pod("default", "web-0") is None  # forgotten: held nowhere until the source sends it again
    cache.upsert_pod(new)
    twin = cache.copy()
    cache.upsert_pod(make_pod("web-0", uid="u-new", node="n1", phase="Succeeded"))
    assert cache.find_pod("default", "web-0") is None  # terminal: no longer held
    assert twin.find_pod("default", "web-0").uid == "u-new"
    assert cache.find_pod("other", "web-0") is None
    assert cache._named == {}


def test_pod_records_read_any_mapping_as_an_object_and_refuse_anything_else() -> None:
    """The JSON-object check tests for a dict first (the usual case, and the cheapest); other mappings are
    objects too, and a list where an object belongs is refused with its field named."""
    from types import MappingProxyType

    from extender.cluster.records import SlimPod, is_mapping

    pod = make_pod("web-1", requests=[{"cpu": "250m", "memory": "64Mi"}], labels={"app": "web"},
                   tolerations=[{"key": "k", "operator": "Exists"}])
    proxied = MappingProxyType({**pod, "metadata": MappingProxyType(pod["metadata"]),
                                "spec": MappingProxyType(pod["spec"])})
    read, plain = PodRecord(proxied), PodRecord(pod)
    assert (read.name, read.labels, read.requests, read.tolerations, read.resource_key) == \
        (plain.name, plain.labels, plain.requests, plain.tolerations, plain.resource_key)
    with pytest.raises(RecordError, match="spec: expected an object, got list"):
        PodRecord({**pod, "spec": []})
    with pytest.raises(RecordError, match="Pod: expected an object, got list"):
        PodRecord([])  # type: ignore[arg-type]
    assert is_mapping({}) and is_mapping(SlimPod()) and is_mapping(MappingProxyType({}))
    assert not is_mapping([]) and not is_mapping("spec") and not is_mapping(None)
