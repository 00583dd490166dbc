"""Memos that request data reaches are bounded in bytes: the least recently used entries go first, and an
entry larger than a quarter of the budget is never kept."""

from __future__ import annotations

import threading
import tracemalloc

import orjson
from builders import make_pod

from extender.cluster.records import PodRecord, slim_pod
from extender.engine.equivalence import EquivalenceCache
from extender.engine.framework import Code, Status
from extender.memo import ENTRY_OVERHEAD_BYTES, BoundedMemo, exact_bytes


def test_bytes_bound_the_memo_least_recently_used_first() -> None:
    memo: BoundedMemo[str, int] = BoundedMemo("test", max_bytes=10_000, max_entries=1000)
    for i in range(100):
        memo.put(f"k{i}", i, 1000 - ENTRY_OVERHEAD_BYTES)  # each entry costs 1000 bytes
        assert memo.bytes <= 10_000
    assert len(memo) == 10 and memo.get("k99") == 99 and memo.get("k89") is None
    memo.get("k90")  # used: the next eviction takes k91
    assert memo.put("new", 0, 1000 - ENTRY_OVERHEAD_BYTES) == [("k91", 91)]  # what it dropped, for a caller to keep
    assert memo.get("k90") == 90 and memo.get("k91") is None
    assert memo.put("huge", -1, 2600) == [("huge", -1)] and memo.get("huge") is None  # over a quarter: not kept
    assert memo.pop("k92") == 92 and memo.pop("k92") is None and memo.bytes == 9_000


def test_entries_bound_the_memo_too_and_replacing_a_key_does_not_count_twice() -> None:
    memo: BoundedMemo[str, int] = BoundedMemo("test", max_bytes=10**9, max_entries=3)
    for i in range(10):
        memo.put("same", i, 100)
    assert len(memo) == 1 and memo.bytes == 100 + ENTRY_OVERHEAD_BYTES and memo.get("same") == 9
    for i in range(10):
        memo.put(f"k{i}", i, 100)
    assert len(memo) == 3


def test_an_entry_over_a_quarter_of_the_budget_is_not_kept() -> None:
    memo: BoundedMemo[str, str] = BoundedMemo("test", max_bytes=4000, max_entries=10)
    memo.put("small", "s", 100)
    memo.put("huge", "h", 5000)
    assert memo.get("huge") is None and memo.get("small") == "s"


def test_threads_may_share_a_memo() -> None:
    memo: BoundedMemo[int, int] = BoundedMemo("test", max_bytes=50_000, max_entries=100)

    def hammer(offset: int) -> None:
        for i in range(5000):
            memo.put(offset + i % 300, i, 100)
            memo.get(offset + (i * 7) % 300)

    workers = [threading.Thread(target=hammer, args=(k * 1000,)) for k in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(memo) <= 100 and memo.bytes <= 50_000
    assert memo.bytes == sum(cost for _, cost in memo._entries.values())


def test_the_equivalence_cache_drops_classes_past_its_bytes() -> None:
    """Verdicts whose reasons quote what a pod asked for (long resource names) cannot fill the process."""
    from builders import make_node

    from extender.cluster.nodeinfo import NodeInfo
    from extender.cluster.records import NodeRecord

    cache = EquivalenceCache(max_classes=32, max_bytes=200_000)
    nodes = [NodeInfo(f"n{i}", NodeRecord(make_node(f"n{i}"))) for i in range(20)]
    for pod_class in range(30):
        verdict = Status(Code.UNSCHEDULABLE, f"Insufficient example.com/{pod_class}-" + "x" * 5000)
        for _ in cache.resolve(f"class-{pod_class}", nodes, 1, lambda node, verdict=verdict: verdict):
            pass
        assert cache.bytes <= 200_000 + 20 * 5200  # at most the class being filled over the budget
    assert len(cache) < 30


def test_kept_json_text_holds_its_length_not_the_encoders_buffer() -> None:
    # orjson's output keeps its buffer's capacity (4 KB at least); exact_bytes of it holds the text alone.
    values = [{"name": f"c{i}", "resources": {"requests": {"cpu": "100m"}}} for i in range(2000)]
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        kept = [exact_bytes(orjson.dumps(value)) for value in values]
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept[7] == orjson.dumps(values[7])
    assert (held - before) / len(kept) < 200, (held - before) / len(kept)


def test_the_records_of_one_template_share_their_resource_key_and_hold_little() -> None:
    pods = [make_pod(f"r-{i}", node="n1", requests=[{"cpu": "100m", "memory": "64Mi"}, {"cpu": "10m"}],
                     tolerations=[{"key": f"k{i % 3}", "operator": "Exists"}]) for i in range(2000)]
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        records = [PodRecord(slim_pod(pod)) for pod in pods]
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert all(record.resource_key is records[0].resource_key for record in records)
    # A record with its slim pod: about 1.5 KB here; with a 4 KB key of its own each, it was over 5 KB.
    assert (held - before) / len(records) < 3000, (held - before) / len(records)
