"""The equivalence cache: filter verdicts reused for equivalent pods (v1.12 had one for pods of the same
controller; it was removed upstream in 1.14 because its invalidation was hard to get right).

Ours is correct by construction rather than by invalidation rules:

- Only *node-local* filter plugins are cached: those whose verdict depends on the pod and on that one
  node's NodeInfo alone (``FilterPlugin.node_local``), and only the leading run of them in the profile's
  order, so that the first rejecting plugin, and thus the reason, is unchanged.
- A verdict is stored with the node's generation; every change to the node object or to the pods on it
  gives the NodeInfo a new generation, so a stale verdict can never match.
- Pods are equivalent when every field those plugins read is equal (resources, ports, node name,
  selectors, node affinity, tolerations), as a digest; pods from one ReplicaSet or Job share it.

Cluster-wide plugins (pod affinity, topology spread, volumes) always run.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import orjson

from extender.cluster.nodeinfo import NodeInfo

# Container fields the node-local plugins read (resources for NodeResourcesFit, ports for NodePorts,
# restartPolicy for sidecar semantics of init containers).
_CONTAINER_FIELDS = ("resources", "ports", "restartPolicy")
# Pod spec fields the node-local plugins read.
_SPEC_FIELDS = ("nodeName", "nodeSelector", "tolerations", "overhead", "resources")


def _object(value: Any) -> Mapping[str, Any]:
    """A JSON object, or an empty one for anything else (a request's fields are not trusted to be objects)."""
    return value if isinstance(value, Mapping) else {}


def _objects(value: Any) -> list[Mapping[str, Any]]:
    """The objects of a JSON array (other entries and other values count as nothing)."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def equivalence_key(raw_pod: Mapping[str, Any]) -> str:
    """A digest of what node-local plugins read from a pod; equal for equivalent pods."""
    spec = _object(raw_pod.get("spec"))
    affinity = _object(spec.get("affinity"))
    status = _object(raw_pod.get("status"))
    relevant = {
        "spec": {k: spec.get(k) for k in _SPEC_FIELDS},
        "nodeAffinity": affinity.get("nodeAffinity"),
        "containers": [{k: c.get(k) for k in _CONTAINER_FIELDS} for c in _objects(spec.get("containers"))],
        "initContainers": [{k: c.get(k) for k in _CONTAINER_FIELDS} for c in _objects(spec.get("initContainers"))],
        # Resized pods count with their status resources.
        "statusResources": [c.get("resources") for c in _objects(status.get("containerStatuses"))],
    }
    text = orjson.dumps(relevant, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return hashlib.blake2b(text, digest_size=16).hexdigest()


MISSING: Any = object()  # a value not computed yet for this class and node
_ENTRY_WEIGHT = 160  # an entry's list and dict slot


def _weight(value: Any) -> int:
    """About what a stored verdict or tuple of raw scores holds in memory."""
    reasons = getattr(value, "reasons", None)
    if reasons is not None:
        return _ENTRY_WEIGHT + sum(len(reason) for reason in reasons)
    if isinstance(value, tuple):
        return _ENTRY_WEIGHT + 32 * len(value)
    return _ENTRY_WEIGHT

FILTER_SLOT = 1  # the verdict of the leading node-local filter plugins (a Status, or None for "fits")
SCORES_SLOT = 2  # the raw scores of the node-local score plugins, a tuple in profile order


class EquivalenceCache:
    """Per equivalence class: node name -> [node generation, filter verdict, raw scores].

    One entry per node and class holds both slots, so that a class costs one dict entry per node. An entry
    whose generation differs from the node's is stale: it is replaced when the node is next computed. At
    most ``max_classes`` classes are kept, and about ``max_bytes`` of entries (a verdict's reasons can quote
    what a pod asked for): past either, the least recently used classes are dropped.
    """

    def __init__(self, max_classes: int = 32, max_bytes: int = 16 * 1024 * 1024) -> None:
        self.max_classes = max_classes
        self.max_bytes = max_bytes
        self._classes: OrderedDict[str, dict[str, list[Any]]] = OrderedDict()
        self._weights: dict[str, int] = {}  # class -> the weight of its entries
        self.bytes = 0
        self.hits = 0
        self.misses = 0

    def table(self, key: str) -> dict[str, list[Any]]:
        """The entries of one class (created on first use; least recently used classes are dropped)."""
        table = self._classes.get(key)
        if table is None:
            table = self._classes[key] = {}
            self._weights[key] = 0
            self._shrink(keep=key)
        else:
            self._classes.move_to_end(key)
        return table

    def _shrink(self, keep: str) -> None:
        while len(self._classes) > 1 and (len(self._classes) > self.max_classes or self.bytes > self.max_bytes):
            oldest = next(iter(self._classes))
            if oldest == keep:
                break
            del self._classes[oldest]
            self.bytes -= self._weights.pop(oldest)

    def _stored(self, key: str, value: Any) -> None:
        weight = _weight(value)
        self._weights[key] += weight
        self.bytes += weight
        if self.bytes > self.max_bytes:
            self._shrink(keep=key)

    def resolve(self, key: str, nodes: Iterable[NodeInfo], slot: int,
                compute: Callable[[NodeInfo], Any]) -> Iterator[tuple[NodeInfo, Any]]:
        """(node, value of ``slot``) for each node: cached while the node's generation is unchanged, else
        ``compute(node)``, stored. An exception from ``compute`` stores nothing and ends the iteration."""
        table = self.table(key)
        for node in nodes:
            entry = table.get(node.name)
            generation = node.generation
            if entry is not None and entry[0] == generation:
                value = entry[slot]
                if value is not MISSING:
                    self.hits += 1
                    yield node, value
                    continue
            else:
                entry = table[node.name] = [generation, MISSING, MISSING]
            self.misses += 1
            value = entry[slot] = compute(node)
            if key in self._weights:
                self._stored(key, value)
            yield node, value

    def __len__(self) -> int:
        return len(self._classes)
