"""bench.engine_loop, bench.node_churn and bench.status_churn measure what they say: the events they feed are the
ones they describe, and a side's worker runs them through this checkout's engine on a small cluster."""

from __future__ import annotations

from pathlib import Path

from bench import engine_loop, node_churn, object_churn, status_churn
from bench.cluster import generate
from extender.cluster.cache import ClusterCache, same_but_heartbeat


def test_node_churn_feeds_heartbeats_that_change_nothing_the_scheduler_reads() -> None:
    node = next(o for o in generate(3, pods_per_node=0) if o["kind"] == "Node")
    first, second = node_churn._reported(node, 0), node_churn._reported(node, 1)
    assert first != second  # a new object each time, so the apiserver sends each as a MODIFIED event...
    assert same_but_heartbeat(first, second)  # ...that the cache keeps as it was
    cache = ClusterCache()
    record = cache.upsert_node(first)
    assert cache.upsert_node(second) is record


def test_the_churn_worker_times_heartbeats_and_requests(tmp_path: Path) -> None:
    node_churn.write_inputs(tmp_path, nodes=30, block=2)
    figures = status_churn.worker(tmp_path)
    assert figures["extender"] == str(Path(__file__).resolve().parents[2])
    assert figures["event_us"] > 0 and figures["request_after_block_ms"] > 0 and figures["request_alone_ms"] > 0


def test_object_churn_changes_one_object_and_the_churn_worker_times_it(tmp_path: Path) -> None:
    for kind in ("PersistentVolumeClaim", "ReplicaSet"):
        first, second = object_churn.changed(kind, 1), object_churn.changed(kind, 2)
        assert first["status"] != second["status"] and first["metadata"]["name"] == second["metadata"]["name"]
    object_churn.write_inputs(tmp_path, "ReplicaSet", replicasets=20)
    figures = status_churn.worker(tmp_path)
    assert figures["event_us"] > 0 and figures["request_after_block_ms"] > 0


def test_engine_loop_worker_schedules_every_pod(tmp_path: Path) -> None:
    engine_loop.write_inputs(tmp_path, nodes=30, template="plain", pods=engine_loop.BLOCK, names=10)
    figures = engine_loop.worker(tmp_path)
    assert figures["bound_pods"] == engine_loop.WARM + engine_loop.BLOCK
    # As kube-scheduler's loop: filter is sent only nodes the pod fits (the cluster has tainted, cordoned and
    # full nodes, which a window round every node would include).
    assert figures["rejected_names"] == 0
    assert figures["cpu_per_pod_ms"] > 0
    assert list(figures["steps_ms"]) == list(engine_loop.STEPS)
    assert all(ms > 0 for ms in figures["steps_ms"].values())


def test_engine_loop_follows_a_template_whose_feasible_nodes_move_pod_by_pod(tmp_path: Path) -> None:
    """The spread template's hard zone constraint moves which nodes fit with every pod bound: a pod whose window
    holds none of them gets a window of the nodes it fits now, as kube-scheduler's own filters would send."""
    engine_loop.write_inputs(tmp_path, nodes=30, template="spread", pods=engine_loop.BLOCK, names=3)
    figures = engine_loop.worker(tmp_path)
    assert figures["bound_pods"] == engine_loop.WARM + engine_loop.BLOCK
    assert figures["cpu_per_pod_ms"] > 0


def test_engine_loop_leaves_its_cache_eviction_out_of_the_figures(tmp_path: Path) -> None:
    """``--evict-mb`` writes its buffer before every step, outside the timing: 128 MiB takes about 9 ms to write
    here, so five writes per pod would put a pod above 40 ms, where a pod of a 30-node cluster costs a few
    milliseconds with its caches emptied that thoroughly."""
    engine_loop.write_inputs(tmp_path, nodes=30, template="plain", pods=engine_loop.BLOCK, names=10, evict_mb=128)
    figures = engine_loop.worker(tmp_path)
    assert figures["bound_pods"] == engine_loop.WARM + engine_loop.BLOCK
    assert 0 < figures["cpu_per_pod_ms"] < 20
    assert 0 < sum(figures["steps_ms"].values()) < 20
