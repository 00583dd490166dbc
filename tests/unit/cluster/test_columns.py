"""The snapshot's columns stay equal to its NodeInfos through any sequence of cache changes (and so do the
values kept with them from the node records), and a batch reads the same values whether it gathers from the
snapshot's rows or builds private columns."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import orjson
import pytest
from builders import make_node, make_pod

from extender.cluster.cache import ClusterCache
from extender.cluster.columns import (
    _BY_RECORDS_BYTES,
    NUMERIC,
    LabelCounts,
    NodeBatch,
    NodeColumns,
    NodeContributions,
    NodeNames,
    RowGenerations,
    trunc_div,
)
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.plugins.node_affinity import preferred_scores, required_mask
from extender.kube.selectors import compile_preferred_terms, compile_required_node_affinity

TAINTS = [[], [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}],
          [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]]


def random_node(rng: random.Random, name: str) -> dict[str, Any]:
    labels = {"disk": rng.choice(["ssd", "hdd"])}
    if rng.random() < 0.5:
        labels["zone"] = rng.choice(["a", "b"])
    extra = {"example.com/gpu": rng.choice([1, 2])} if rng.random() < 0.3 else None
    images = [([f"img-{rng.randrange(3)}:1"], rng.randrange(1, 5) * 2**20)] if rng.random() < 0.5 else None
    return make_node(name, cpu=str(rng.choice([1, 2, 4])), memory=rng.choice(["1Gi", "4Gi"]), labels=labels,
                     taints=rng.choice(TAINTS), unschedulable=rng.random() < 0.2, extra=extra, images=images)


def expected(info: NodeInfo, columns: NodeColumns) -> dict[str, Any]:
    record = info.node
    assert record is not None
    sizes: dict[str, int] = {}
    for names, size in record.images:
        for image in names:
            sizes[image] = size
    return {
        "numeric": {
            "alloc_cpu": record.allocatable.milli_cpu, "alloc_mem": record.allocatable.memory,
            "alloc_eph": record.allocatable.ephemeral_storage, "alloc_pods": record.allocatable.allowed_pods,
            "req_cpu": info.requested.milli_cpu, "req_mem": info.requested.memory,
            "req_eph": info.requested.ephemeral_storage, "nonzero_cpu": info.non_zero_requested.milli_cpu,
            "nonzero_mem": info.non_zero_requested.memory, "pod_count": len(info.pods),
            "unschedulable": int(record.unschedulable), "has_ports": int(bool(info.used_ports)),
            "taint_code": columns.taint_sets.index(record.taints), "generation": info.generation,
        },
        "labels": dict(record.labels),
        "gpu": (record.allocatable.scalars.get("example.com/gpu", 0), info.requested.scalars.get("example.com/gpu", 0)),
        "images": {image: sizes.get(image, 0) for image in columns.images},
    }


def observed(batch: NodeBatch, i: int) -> dict[str, Any]:
    columns = batch.columns
    labels = {}
    for key in columns.labels:
        mask = batch.label_mask(key, lambda labels, key=key: key in labels)
        if mask[i]:
            values = {value: batch.label_mask(key, lambda labels, key=key, value=value: labels.get(key) == value)[i]
                      for value in columns.label_values[key]}
            labels[key] = next(value for value, hit in values.items() if hit)
    alloc, used = batch.scalar("example.com/gpu")
    return {
        "numeric": {name: int(batch.column(name)[i]) for name in NUMERIC},
        "labels": labels,
        "gpu": (int(alloc[i]), int(used[i])),
        "images": {image: int(batch.image_sizes(image)[i]) for image in columns.images},
    }


@pytest.mark.parametrize("seed", range(8))
def test_columns_follow_every_change(seed: int) -> None:
    rng = random.Random(seed)
    cache = ClusterCache()
    names = [f"n{i}" for i in range(6)]
    for name in names:
        cache.upsert_node(random_node(rng, name))
    serial = 0
    for _ in range(80):
        action = rng.random()
        if action < 0.3:
            cache.upsert_node(random_node(rng, rng.choice(names)))
        elif action < 0.6:
            serial += 1
            ports = [8080] if serial % 4 == 0 else None
            cache.upsert_pod(make_pod(f"p{serial}", node=rng.choice(names), host_ports=ports,
                                      requests=[{"cpu": "100m", "memory": "64Mi", "example.com/gpu": "1"}
                                                if serial % 3 == 0 else {"cpu": "200m"}]))
        elif action < 0.75:
            for info in cache.snapshot().node_list:
                if info.pods:
                    cache.remove_pod(rng.choice(info.pods).cache_key)
                    break
        else:
            name = rng.choice(names)
            info = cache.node_info(name)
            if info is not None and info.node is not None:
                cache.remove_node(name)
            else:
                cache.upsert_node(random_node(rng, name))
        snapshot = cache.snapshot()
        nodes = list(snapshot.node_list)
        rng.shuffle(nodes)
        gathered = NodeBatch.of(nodes, snapshot.columns)
        assert gathered.columns is snapshot.columns  # rows of the snapshot, not a private copy
        # Names resolve to the same rows, and the rows hold the snapshot's NodeInfos; unknown names have none.
        rows = snapshot.columns.rows_named([*(n.name for n in nodes), "no-such-node"])
        assert rows[-1] == -1 and rows[:-1].tolist() == gathered.rows.tolist()
        assert NodeBatch.of_rows(snapshot.columns, rows[:-1]).nodes == nodes
        private = NodeBatch.of([n.clone() for n in nodes], snapshot.columns)
        assert private.columns is not snapshot.columns or not nodes
        for i, info in enumerate(nodes):
            want = expected(info, snapshot.columns)
            got = observed(gathered, i)
            assert got == want, info.name
            copy = observed(private, i)
            assert copy["numeric"] | {"taint_code": 0} == want["numeric"] | {"taint_code": 0}
            assert (copy["labels"], copy["gpu"]) == (want["labels"], want["gpu"])
        # Node affinity's masks, kept with the columns for one compiled affinity across the changes above (nodes
        # relabelled, added, removed; pods coming and going), are those the nodes' labels give now.
        for batch in (gathered, private):
            records = [info.node for info in batch.nodes]
            assert required_mask(AFFINITY, batch).tolist() == [
                r is not None and AFFINITY.matches(r.labels, r.name) for r in records]
            assert preferred_scores(PREFERRED, batch).tolist() == [
                PREFERRED.score(r.labels, r.name) if r is not None else 0 for r in records]
            # So are a function of the taints kept under a key (a template's tolerations), and without one.
            def no_schedule(taints: tuple[Any, ...]) -> int:
                return sum(t.effect == "NoSchedule" for t in taints)
            want_counts = [no_schedule(r.taints) if r is not None else 0 for r in records]
            assert batch.by_taints(no_schedule, np.int64, key="NoSchedule taints").tolist() == want_counts
            assert batch.by_taints(no_schedule, np.int64).tolist() == want_counts


_SSD_IN_A = {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]},
                                  {"key": "zone", "operator": "NotIn", "values": ["b"]}]}
AFFINITY = compile_required_node_affinity({"spec": {"nodeSelector": {"disk": "ssd"}, "affinity": {"nodeAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [_SSD_IN_A]}}}}})
PREFERRED = compile_preferred_terms([{"weight": 3, "preference": _SSD_IN_A},
                                     {"weight": 5, "preference": {"matchExpressions": [
                                         {"key": "zone", "operator": "Exists"}]}}])


def test_memoised_name_lists_follow_nodes_coming_and_going() -> None:
    cache = ClusterCache()
    for name in ("a", "b", "c"):
        cache.upsert_node(make_node(name))
    listed = NodeNames(["c", "x", "a"], b'["c","x","a"]')

    def rows() -> list[int]:
        snapshot = cache.snapshot()
        found = snapshot.columns.rows_named(listed)
        return [snapshot.columns.infos[r].name if r >= 0 else None for r in found.tolist()]  # type: ignore[union-attr]

    assert rows() == ["c", None, "a"]
    assert rows() == ["c", None, "a"]  # from the memo
    cache.upsert_node(make_node("x"))  # a node arrives: its name now has a row
    assert rows() == ["c", "x", "a"]
    cache.remove_node("c")  # and one leaves: its row is free (and may be reused)
    assert rows() == [None, "x", "a"]
    cache.upsert_node(make_node("d"))  # takes the freed row; "c" must still resolve to nothing
    assert rows() == [None, "x", "a"]


def test_names_find_their_rows_through_the_name_keys_compactions() -> None:
    # Nodes come one by one and in bursts, some leave and come back; the columns copy their name keys anew
    # every so often (see NodeColumns._compact_names). Every name must still find the row holding its node.
    rng = random.Random(5)
    cache = ClusterCache()
    present: set[str] = set()
    for step in range(600):
        name = f"node-{rng.randrange(400):03d}"
        if name in present and rng.random() < 0.3:
            cache.remove_node(name)
            present.discard(name)
        else:
            cache.upsert_node(make_node(name))
            present.add(name)
        if rng.random() < 0.2:  # rows are written when a snapshot is taken: one at a time, or many at once
            snapshot = cache.snapshot()
            asked = [f"node-{i:03d}" for i in range(400)]
            rows = snapshot.columns.rows_named(orjson.loads(orjson.dumps(asked)))  # new strings, as decoded
            found = [snapshot.columns.infos[r].name if r >= 0 else None for r in rows.tolist()]  # type: ignore[union-attr]
            assert found == [n if n in present else None for n in asked], step
    columns = cache.snapshot().columns
    # The keys were compacted: copies, not the node records' own name strings.
    assert sum(key is not columns.infos[row].name for key, row in columns._rows.items()) > len(present) // 2  # type: ignore[union-attr]


def test_label_counts_read_as_their_positive_values_and_mask_as_a_dict_would() -> None:
    cache = ClusterCache()
    for name, zone in (("a", "z1"), ("b", "z2"), ("c", "z1"), ("d", "z3"), ("e", "")):
        cache.upsert_node(make_node(name, labels={"zone": zone} if zone else {}))
    snapshot = cache.snapshot()
    columns = snapshot.columns
    codes = {value: i for i, value in enumerate(columns.label_values["zone"])}
    raw = np.zeros(len(codes), np.int64)
    raw[codes["z1"]], raw[codes["z3"]] = 2, 5
    counts = LabelCounts(columns, "zone", raw)
    assert dict(counts) == {"z1": 2, "z3": 5} and len(counts) == 2 and "z2" not in counts
    assert counts.get("z2") is None and counts.get("nowhere") is None
    extra = np.zeros(len(codes), np.int64)
    extra[codes["z2"]] = 1
    assert dict(counts.plus(LabelCounts(columns, "zone", extra))) == {"z1": 2, "z2": 1, "z3": 5}
    batch = snapshot.all_nodes()
    names = [n.name for n in batch.nodes]
    assert batch.label_in("zone", counts).tolist() == batch.label_in("zone", dict(counts)).tolist()
    assert [n for n, hit in zip(names, batch.label_in("zone", counts).tolist(), strict=True) if hit] == ["a", "c", "d"]
    # Counts over other columns (a NodeList sent in full) are read by value.
    other = NodeBatch.of([n.clone() for n in batch.nodes], None)
    assert other.label_in("zone", counts).tolist() == batch.label_in("zone", counts).tolist()
    # As a table of each node's count (0 without the key), read by code or by value alike.
    assert batch.label_table("zone", counts).tolist() == [2, 0, 2, 5, 0]
    assert batch.label_table("zone", dict(counts)).tolist() == other.label_table("zone", counts).tolist() \
        == [2, 0, 2, 5, 0]
    # Counts of a key no node has are empty, and read as nothing anywhere.
    nowhere = LabelCounts(columns, "rack", np.zeros(0, np.int64))
    assert dict(nowhere) == {} and other.label_table("rack", nowhere).tolist() == [0] * 5


def test_a_batch_of_nodes_from_another_snapshot_builds_its_own_columns() -> None:
    first, second = ClusterCache(), ClusterCache()
    for cache in (first, second):
        cache.upsert_node(make_node("a", cpu="2"))
        cache.upsert_node(make_node("b", cpu="8"))
    nodes = first.snapshot().node_list
    batch = NodeBatch.of(nodes, second.snapshot().columns)
    assert batch.columns is not second.snapshot().columns
    assert np.array_equal(batch.column("alloc_cpu"), [2000, 8000])


def test_trunc_div_truncates_toward_zero_as_go_does() -> None:
    numerators = np.array([7, -7, 7, -7, 0, -1, 1], np.int64)
    denominators = np.array([2, 2, -2, -2, 3, 2, -2], np.int64)
    # Go: 7/2=3, -7/2=-3, 7/-2=-3, -7/-2=3, 0/3=0, -1/2=0, 1/-2=0 (Python's // would floor -7//2 to -4).
    assert trunc_div(numerators, denominators).tolist() == [3, -3, -3, 3, 0, 0, 0]
    assert trunc_div(np.array([-150, 150], np.int64), 100).tolist() == [-1, 1]
    # By a positive int: the usual case floors directly when nothing is negative; with a negative numerator it
    # still truncates; an empty array and a numpy scalar are divided as well.
    assert trunc_div(np.array([0, 5, 199], np.int64), 100).tolist() == [0, 0, 1]
    assert trunc_div(np.array([199, -199, -1], np.int64), 100).tolist() == [1, -1, 0]
    assert trunc_div(np.zeros(0, np.int64), 3).tolist() == []
    assert int(trunc_div(np.int64(-7), 2)) == -3


def test_distinct_is_numpys_unique_for_any_integer_array() -> None:
    import random

    import numpy as np

    from extender.cluster.columns import distinct

    rng = random.Random(3)
    for _ in range(300):
        size = rng.choice([0, 1, 5, 200])
        low, span = rng.choice([-1, 0, 7, -5000, 2**40]), rng.choice([1, 3, 100, 10**6, 2**50])
        dtype = rng.choice([np.int32, np.int64]) if abs(low) + span < 2**31 else np.int64
        codes = np.array([low + rng.randrange(span) for _ in range(size)], dtype)
        assert distinct(codes).tolist() == np.unique(codes).tolist(), (codes, low, span)


def test_row_generations_find_changed_rows_keep_them_as_columns_grow_and_start_afresh_on_other_columns() -> None:
    cache = ClusterCache()
    for i in range(3):
        cache.upsert_node(make_node(f"n{i}"))
    snapshot = cache.snapshot()
    seen = RowGenerations()
    assert seen.follow(snapshot.columns) == 0
    every = snapshot.all_nodes()
    assert seen.stale(every).tolist() == [0, 1, 2]  # nothing seen yet
    seen.generations[every.rows] = every.column("generation")
    assert seen.stale(every).tolist() == []
    cache.upsert_pod(make_pod("p", node="n1", uid="u-p"))
    for i in range(3, 200):  # past the columns' first capacity: they grow
        cache.upsert_node(make_node(f"n{i}"))
    snapshot = cache.snapshot()
    every = snapshot.all_nodes()
    kept = seen.follow(snapshot.columns)
    assert 3 <= kept < snapshot.columns.capacity == len(seen.generations)
    assert [every.nodes[i].name for i in seen.stale(every)] == ["n1", *(f"n{i}" for i in range(3, 200))]
    copies = [info.clone() for info in every.nodes[:5]]
    private = NodeBatch.of(copies, NodeColumns.of(copies))
    assert seen.follow(private.columns) == 0  # other columns: nothing carried over
    assert seen.stale(private).tolist() == [0, 1, 2, 3, 4]


def test_node_contributions_redo_changed_nodes_only_and_take_missing_ones_out_of_a_complete_batch() -> None:
    cache = ClusterCache()
    for i in range(3):
        cache.upsert_node(make_node(f"n{i}"))
    # (node, pods it held when last taken or None, pods it holds now or None)
    applied: list[tuple[str, int | None, int | None]] = []
    index = NodeContributions(lambda info, _old: len(info.pods),
                              lambda name, old, new: applied.append((name, old, new)))
    index.sync(cache.snapshot().all_nodes(), complete=True)
    assert sorted(applied) == [("n0", None, 0), ("n1", None, 0), ("n2", None, 0)]
    applied.clear()
    index.sync(cache.snapshot().all_nodes(), complete=True)
    assert applied == []  # nothing changed
    cache.upsert_pod(make_pod("p", node="n1", uid="u-p"))
    index.sync(cache.snapshot().all_nodes(), complete=True)
    assert applied == [("n1", 0, 1)]  # from the old contribution to the new one
    applied.clear()
    cache.remove_node("n2")
    snapshot = cache.snapshot()
    index.sync(NodeBatch.of(snapshot.node_list[:1], snapshot.columns))  # a partial batch: nothing taken out
    assert applied == [] and set(index.held) == {"n0", "n1", "n2"}
    index.sync(snapshot.all_nodes(), complete=True)
    assert applied == [("n2", 0, None)] and set(index.held) == {"n0", "n1"}


def test_node_contributions_apply_nothing_when_take_keeps_the_old_contribution() -> None:
    """A take that finds nothing it reads changed hands back the old contribution: nothing is applied, and the
    node's new generation is held (it is not taken again at the next sync)."""
    cache = ClusterCache()
    cache.upsert_node(make_node("n0"))
    applied: list[tuple[str, Any, Any]] = []
    taken: list[str] = []

    def take(info: Any, old: tuple[int] | None) -> tuple[int]:
        taken.append(info.name)
        return old if old is not None and old[0] == len(info.pods) else (len(info.pods),)

    index = NodeContributions(take, lambda name, old, new: applied.append((name, old, new)))
    index.sync(cache.snapshot().all_nodes(), complete=True)
    assert applied == [("n0", None, (0,))]
    applied.clear()
    cache.upsert_node(make_node("n0", labels={"relabelled": "yes"}))  # a new generation, the same pods
    every = cache.snapshot().all_nodes()
    index.sync(every, complete=True)
    assert applied == [] and taken == ["n0", "n0"]
    assert index.held["n0"][0] == every.nodes[0].generation
    cache.upsert_pod(make_pod("p", node="n0", uid="u-p"))
    index.sync(cache.snapshot().all_nodes(), complete=True)
    assert applied == [("n0", (0,), (1,))]


def test_node_contributions_sync_the_last_complete_batch_again_only_after_another_batch() -> None:
    """Syncing the same complete batch twice in a row changes nothing; once another batch was synced (a what-if
    copy of a node with a pod more), the first batch's nodes are compared again and put back."""
    cache = ClusterCache()
    for i in range(2):
        cache.upsert_node(make_node(f"n{i}"))
    applied: list[tuple[str, int | None, int | None]] = []
    index = NodeContributions(lambda info, _old: len(info.pods),
                              lambda name, old, new: applied.append((name, old, new)))
    every = cache.snapshot().all_nodes()
    index.sync(every, complete=True)
    index.sync(every, complete=True)
    assert sorted(applied) == [("n0", None, 0), ("n1", None, 0)]
    applied.clear()
    copy = every.nodes[1].clone()
    copy.add_pod(PodRecord(make_pod("what-if", node="n1", uid="u-what-if")))
    index.sync(NodeBatch.of([copy], NodeColumns.of([copy])))
    assert applied == [("n1", 0, 1)]
    applied.clear()
    index.sync(every, complete=True)
    assert applied == [("n1", 1, 0)]


def test_values_kept_with_the_node_records_weigh_their_keys() -> None:
    """A key (a template's tolerations, say) is kept with its value: long keys count against the memo's budget,
    which starts again rather than grow past it."""
    cache = ClusterCache()
    cache.upsert_node(make_node("a"))
    columns = cache.snapshot().columns
    long_key = "x" * (3 << 20)  # 3 MiB of key text, a few bytes of value
    for i in range(4):
        columns.by_records((i, long_key), lambda every: np.zeros(len(every), np.int64))
        assert columns._by_records_bytes >= len(long_key) * len(columns._by_records)
        assert columns._by_records_bytes <= _BY_RECORDS_BYTES
    assert len(columns._by_records) < 4
