"""Memos that request data reaches, bounded in bytes as well as in entries.

A memo keyed by what a request sends (a pod's tolerations, a list of node names, a pod) is only as small as
those requests: bounded by its number of entries alone, 4,096 distinct 80 KB keys hold hundreds of megabytes.
Each memo here is given a byte budget and a weight per entry (an estimate of what the key and value hold in
memory, from the size of their JSON text); the least recently used entries go first, and an entry that would
take more than a quarter of the budget is not kept at all.

The budgets of every such memo in the service are listed in docs/operations.md (*Memory*).

JSON text kept beyond a call (a memo's key, a record's key) is kept as :func:`exact_bytes` of it: orjson returns
its output in the buffer it wrote it into, which holds 4 KB at least whatever the text's length, so 150,000
pods each keeping a 170-byte key held 600 MB (bench/RESULTS.md, "Memory").
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["BoundedMemo", "exact_bytes"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

#: What one entry costs beyond its weight: the dict slot, the key and value objects' headers.
ENTRY_OVERHEAD_BYTES = 200


def exact_bytes(text: bytes) -> bytes:
    """A copy of ``text`` holding exactly its length, to keep: orjson's own result keeps the capacity its buffer
    grew to (at least 4 KB)."""
    return bytes(memoryview(text))


class BoundedMemo(Generic[K, V]):
    """key -> value, at most ``max_entries`` of them weighing at most ``max_bytes``, least recently used out.

    Safe to use from several threads (the engine thread, and the event loop's quick steps and explain's
    workers).
    """

    __slots__ = ("_entries", "_lock", "bytes", "max_bytes", "max_entries", "name")

    def __init__(self, name: str, max_bytes: int, max_entries: int) -> None:
        self.name = name
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.bytes = 0
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (marked as just used), or None."""
        with self._lock:
            held = self._entries.get(key)
            if held is None:
                return None
            self._entries.move_to_end(key)
            return held[0]

    def put(self, key: K, value: V, weight: int) -> list[tuple[K, V]]:
        """Keep ``value`` for ``key``; ``weight`` is an estimate of the bytes key and value hold. Returns what was
        not kept, least recently used first: the entries dropped to make room, and this one when it weighs more
        than a quarter of the memo (a previous value of ``key`` is replaced, not returned)."""
        cost = weight + ENTRY_OVERHEAD_BYTES
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            if cost > self.max_bytes // 4:
                return [(key, value)]  # too large to be worth a quarter of the memo
            self._entries[key] = (value, cost)
            self.bytes += cost
            dropped: list[tuple[K, V]] = []
            while len(self._entries) > self.max_entries or self.bytes > self.max_bytes:
                out_key, (out_value, out_cost) = self._entries.popitem(last=False)
                self.bytes -= out_cost
                dropped.append((out_key, out_value))
            return dropped

    def pop(self, key: K) -> V | None:
        """Forget ``key``: the value kept for it, or None."""
        with self._lock:
            held = self._entries.pop(key, None)
            if held is None:
                return None
            self.bytes -= held[1]
            return held[0]

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._entries.clear()
            self.bytes = 0
