"""Pods recently seen in filter or prioritize, kept for the bind that follows: bounded in count and bytes.

kube-scheduler binds a pod it filtered moments earlier; a bind may also name a pod the cache has not seen
yet (a live cache lags the apiserver by a watch event). Only the fields the scheduler reads are kept
(``slim_pod``: annotations, env, managed fields and the like are dropped), encoded as JSON: the bytes held
are then what is counted (decoded, a pod of many small labels weighs ten times its JSON), and a bind decodes
its one pod again. The store holds at most ``max_entries`` pods and ``max_bytes`` of their JSON, dropping
the least recently seen first, so that requests carrying large or many distinct pods cannot grow the
process.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

import orjson

from extender.cluster.records import PodRecord, slim_pod
from extender.memo import exact_bytes

DEFAULT_MAX_ENTRIES = 10_000
DEFAULT_MAX_BYTES = 16 * 1024 * 1024


class RecentPods:
    """cache key -> the slimmed pod, least recently seen first."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._pods: OrderedDict[str, tuple[str, bytes]] = OrderedDict()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._pods)

    def remember(self, pod: PodRecord) -> None:
        """Keep (or refresh) a pod seen in a request."""
        key = pod.cache_key
        meta = pod.raw.get("metadata")
        version = str(meta.get("resourceVersion") or "") if isinstance(meta, Mapping) else ""
        held = self._pods.get(key)
        if held is not None and version and held[0] == version:
            self._pods.move_to_end(key)  # the same object again (filter, then prioritize)
            return
        try:
            encoded = exact_bytes(orjson.dumps(slim_pod(pod.raw, intern=False), default=str))
        except orjson.JSONEncodeError:  # nested deeper than JSON encoding allows: nothing a bind could use
            return
        if held is not None:
            self.bytes -= len(held[1])
            del self._pods[key]
        if len(encoded) > self.max_bytes:
            return  # larger than the whole store: a bind will find it in the cache or the apiserver
        self._pods[key] = (version, encoded)
        self.bytes += len(encoded)
        while len(self._pods) > self.max_entries or self.bytes > self.max_bytes:
            _, (_, dropped) = self._pods.popitem(last=False)
            self.bytes -= len(dropped)

    def get(self, key: str) -> PodRecord | None:
        """The pod of that cache key as a record, or None."""
        held = self._pods.get(key)
        return PodRecord(orjson.loads(held[1])) if held is not None else None
