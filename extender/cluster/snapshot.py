"""A consistent, read-only view of the cluster for one scheduling request (framework Snapshot).

The cache refreshes a single snapshot incrementally: only nodes changed since the previous refresh are
copied, so the cost of a request does not grow with the size of the cluster when nothing changed. The
engine never mutates a snapshot; tools that place pods (simulate) assume them in a cache of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from extender.cluster.columns import NodeBatch, NodeColumns
from extender.cluster.dra_objects import EMPTY_VIEW, DRAView
from extender.cluster.nodeinfo import NodeInfo


class Snapshot:
    """Nodes with their pods, plus the cluster's other objects, as of one refresh."""

    __slots__ = ("_all", "_images", "columns", "dra", "generation", "node_infos", "node_list", "objects",
                 "pods_with_affinity_nodes",
                 "pods_with_required_anti_affinity_nodes")

    def __init__(self) -> None:
        self.node_infos: dict[str, NodeInfo] = {}
        self.node_list: list[NodeInfo] = []
        # The node-local plugins' view: one row per node, written whenever a node is put in node_infos.
        self.columns = NodeColumns()
        self.pods_with_affinity_nodes: list[NodeInfo] = []
        self.pods_with_required_anti_affinity_nodes: list[NodeInfo] = []
        # kind -> "namespace/name" (or "name") -> raw object; replaced, never mutated, by the cache.
        self.objects: Mapping[str, Mapping[str, Mapping[str, Any]]] = {}
        self.dra: DRAView = EMPTY_VIEW  # DRA records; replaced, never mutated, by the cache
        self.generation = 0
        self._images: dict[str, int] | None = None
        self._all: tuple[int, NodeBatch] | None = None

    @classmethod
    def from_node_infos(cls, infos: Iterable[NodeInfo],
                        objects: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
                        dra: DRAView | None = None) -> Snapshot:
        """A snapshot of the given NodeInfos (placeholders are left out).

        Its columns stay empty: the NodeInfos may be rows of another snapshot (preemption's trials share
        them), and their tags must keep pointing there. Batches over them build private columns.
        """
        snap = cls()
        for info in infos:
            if info.node is not None:
                snap.node_infos[info.name] = info
        snap.objects = objects or {}
        snap.dra = dra if dra is not None else EMPTY_VIEW
        snap.rebuild_lists()
        return snap

    def put(self, info: NodeInfo) -> None:
        """Hold a (non-placeholder) NodeInfo, replacing the node's previous one; rebuild_lists() follows."""
        self.node_infos[info.name] = info
        self.columns.put(info)

    def drop(self, name: str) -> bool:
        """Stop holding a node; False if it was not held."""
        self.columns.drop(name)
        return self.node_infos.pop(name, None) is not None

    def rebuild_lists(self, nodes_changed: bool = True) -> None:
        """Recompute the derived lists after node_infos changed.

        ``nodes_changed`` False says only pods moved (no node object was added, removed or replaced), so
        the per-image node counts, which depend on node objects alone, stay valid.
        """
        self.node_list = list(self.node_infos.values())
        self.pods_with_affinity_nodes = [n for n in self.node_list if n.pods_with_affinity]
        self.pods_with_required_anti_affinity_nodes = [
            n for n in self.node_list if n.pods_with_required_anti_affinity
        ]
        self._all = None
        if nodes_changed:
            self._images = None

    def all_nodes(self) -> NodeBatch:
        """Every node of the snapshot as one batch (what cluster-wide counting reads), built once per
        refresh: the cache changes columns only in a refresh, which moves the generation."""
        held = self._all
        if held is None or held[0] != self.generation:
            held = self._all = (self.generation, NodeBatch.of(self.node_list, self.columns))
        return held[1]

    def get(self, name: str) -> NodeInfo | None:
        """The NodeInfo of a node, or None if the snapshot does not hold it."""
        return self.node_infos.get(name)

    def image_node_counts(self) -> dict[str, int]:
        """For each image name, on how many nodes it is present (ImageStateSummary.NumNodes)."""
        if self._images is None:
            counts: dict[str, int] = {}
            for info in self.node_list:
                assert info.node is not None
                seen: set[str] = set()
                for names, _size in info.node.images:
                    for image in names:
                        if image not in seen:
                            seen.add(image)
                            counts[image] = counts.get(image, 0) + 1
            self._images = counts
        return self._images

    def kind(self, kind: str) -> Mapping[str, Mapping[str, Any]]:
        """All objects of one kind (e.g. "Service"), keyed by namespace/name."""
        return self.objects.get(kind, {})


    def __len__(self) -> int:
        return len(self.node_list)
