"""Pods recently seen in filter or prioritize: their records for the next request of the same pod, and the pods
for the bind that follows. Bounded in count and bytes.

kube-scheduler sends one pod object to filter, then to prioritize, then names the pod in bind, all within a
few milliseconds; a bind may also name a pod the cache has not seen yet (a live cache lags the apiserver by a
watch event), or come much later. The store has two tiers:

- **records** of the last few pods (``max_records``, and ``max_record_bytes`` of their weight as the request
  measured it): prioritize reuses the record filter built for the same object, and bind assumes it as it is.
  A bind that succeeded drops its pod (:meth:`RecentPods.forget`: the cache holds it from then on), so for
  the usual pod nothing else is ever made of it;
- **encoded** pods, for binds that come after the pod left the records: only the fields the scheduler reads
  (``slim_pod``: annotations, env, managed fields and the like are dropped), encoded as JSON when the record
  leaves the first tier. The bytes held are then what is counted (decoded, a pod of many small labels weighs
  ten times its JSON), and such a bind decodes its one pod again. At most ``max_entries`` pods and
  ``max_bytes`` of their JSON are kept.

Both tiers drop the least recently seen first, so that requests carrying large or many distinct pods cannot
grow the process. Used only where the cache lives (the engine thread).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

import orjson

from extender.cluster.records import PodRecord, slim_pod
from extender.memo import BoundedMemo, exact_bytes

DEFAULT_MAX_ENTRIES = 10_000
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_RECORDS = 16
DEFAULT_MAX_RECORD_BYTES = 32 * 1024 * 1024


def _version(pod: PodRecord) -> str:
    meta = pod.raw.get("metadata")
    return str(meta.get("resourceVersion") or "") if isinstance(meta, Mapping) else ""


class RecentPods:
    """cache key -> the pod's record (the newest few) or its slimmed JSON, least recently seen first."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES, max_bytes: int = DEFAULT_MAX_BYTES, *,
                 max_records: int = DEFAULT_MAX_RECORDS, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        # key -> (resourceVersion, record); what it drops is encoded into the tier below
        self._records: BoundedMemo[str, tuple[str, PodRecord]] = BoundedMemo(
            "recent pod records", max_bytes=max_record_bytes, max_entries=max_records)
        # key -> (resourceVersion, slimmed JSON)
        self._pods: OrderedDict[str, tuple[str, bytes]] = OrderedDict()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._records) + len(self._pods)

    @property
    def record_bytes(self) -> int:
        """What the records tier holds, by the weights it was given."""
        return self._records.bytes

    def record(self, key: str, version: str) -> PodRecord | None:
        """The record kept for that cache key at that resourceVersion (marked as just seen), or None."""
        held = self._records.get(key)
        return held[1] if held is not None and held[0] == version else None

    def remember(self, pod: PodRecord, weight: int | None = None) -> None:
        """Keep a pod seen in a request, in place of any other version of it. ``weight``: what its record holds,
        in bytes (estimated by the caller from the request); without one the pod is only kept encoded."""
        key = pod.cache_key
        self.forget(key)
        if weight is None:
            self._encode(key, _version(pod), pod)
            return
        # The records the tier drops to make room (or this one, past a quarter of its budget) go down a tier.
        for old_key, (old_version, old_pod) in self._records.put(key, (_version(pod), pod), weight):
            self._encode(old_key, old_version, old_pod)

    def _encode(self, key: str, version: str, pod: PodRecord) -> None:
        """Keep a pod as its slimmed JSON (the newest of that tier)."""
        try:
            encoded = exact_bytes(orjson.dumps(slim_pod(pod.raw, intern=False), default=str))
        except orjson.JSONEncodeError:  # nested deeper than JSON encoding allows: nothing a bind could use
            return
        if len(encoded) > self.max_bytes:
            return  # larger than the whole tier: a bind will find it in the cache or the apiserver
        self._pods[key] = (version, encoded)
        self.bytes += len(encoded)
        while len(self._pods) > self.max_entries or self.bytes > self.max_bytes:
            _, (_, dropped) = self._pods.popitem(last=False)
            self.bytes -= len(dropped)

    def get(self, key: str) -> PodRecord | None:
        """The pod of that cache key as a record, or None."""
        held = self._records.get(key)
        if held is not None:
            return held[1]
        encoded = self._pods.get(key)
        return PodRecord(orjson.loads(encoded[1])) if encoded is not None else None

    def forget(self, key: str) -> None:
        """Drop a pod (bound: the cache holds it now)."""
        self._records.pop(key)
        encoded = self._pods.pop(key, None)
        if encoded is not None:
            self.bytes -= len(encoded[1])
