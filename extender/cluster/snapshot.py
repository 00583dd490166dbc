"""A consistent, read-only view of the cluster for one scheduling request (framework Snapshot).

The cache refreshes a single snapshot incrementally: only nodes changed since the previous refresh are
copied, so the cost of a request does not grow with the size of the cluster when nothing changed. The
engine never mutates a snapshot; tools that place pods (simulate) assume them in a cache of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from extender.cluster.columns import IntpArray, NodeBatch, NodeColumns
from extender.cluster.dra_objects import EMPTY_VIEW, DRAView
from extender.cluster.nodeinfo import NodeInfo

_NONE: Mapping[str, Mapping[str, Any]] = MappingProxyType({})  # a kind the snapshot holds nothing of
# Replaced NodeInfos kept to swap into the affinity groups when next read; past this many the groups are dropped.
_MAX_SWAPS = 256


class Snapshot:
    """Nodes with their pods, plus the cluster's other objects, as of one refresh."""

    __slots__ = ("_all", "_all_rows", "_groups", "_images", "_positions", "_swaps", "columns", "dra", "generation",
                 "node_infos", "node_list", "objects")

    def __init__(self) -> None:
        self.node_infos: dict[str, NodeInfo] = {}
        self.node_list: list[NodeInfo] = []
        # The node-local plugins' view: one row per node, written whenever a node is put in node_infos.
        self.columns = NodeColumns()
        # The nodes with pods with affinity and those with pods with required anti-affinity, for the legacy
        # InterPodAffinity alone: kept as of the last read, with the NodeInfos replaced since then (old, new) still
        # to swap in; None to make afresh when next read.
        self._groups: tuple[list[NodeInfo], list[NodeInfo]] | None = ([], [])
        self._swaps: list[tuple[NodeInfo, NodeInfo]] = []
        # kind -> "namespace/name" (or "name") -> raw object; replaced, never mutated, by the cache.
        self.objects: Mapping[str, Mapping[str, Mapping[str, Any]]] = {}
        self.dra: DRAView = EMPTY_VIEW  # DRA records; replaced, never mutated, by the cache
        self.generation = 0
        self._images: dict[str, int] | None = None
        self._all: tuple[int, NodeBatch] | None = None
        # Set by a full rebuild and kept while no node comes or goes: each node's index in node_list, and
        # the all-nodes batch's rows (a replaced NodeInfo keeps its node's row).
        self._positions: dict[str, int] | None = None
        self._all_rows: IntpArray | None = None

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
        if info.name not in self.node_infos:
            self._positions = None  # a node came: the next rebuild is a full one
        self.node_infos[info.name] = info
        self.columns.put(info)

    def drop(self, name: str) -> bool:
        """Stop holding a node; False if it was not held."""
        self._positions = None
        self.columns.drop(name)
        return self.node_infos.pop(name, None) is not None

    def rebuild_lists(self, nodes_changed: bool = True, replaced: Iterable[str] | None = None) -> None:
        """Recompute the derived lists after node_infos changed.

        ``nodes_changed`` False says only pods moved (no node object was added, removed or replaced), so
        the per-image node counts, which depend on node objects alone, stay valid. ``replaced``, when no node
        came or went, names the nodes whose NodeInfos were put since the last rebuild: only their entries
        are swapped (in copies of the lists, which requests may still hold), instead of walking every node in
        Python for each pod bound, and the image counts follow the replaced node objects' images.
        """
        self._all = None
        if replaced is not None and self._positions is not None:
            self._replace(replaced, nodes_changed)
            return
        if nodes_changed:
            self._images = None
        self.node_list = list(self.node_infos.values())
        self._groups = None
        self._swaps = []
        self._positions = {name: i for i, name in enumerate(self.node_infos)}
        self._all_rows = None

    def _replace(self, names: Iterable[str], nodes_changed: bool) -> None:
        positions = self._positions
        assert positions is not None
        node_list = list(self.node_list)
        # Images a replaced node object dropped (-1) or gained (+1): a kubelet's status report usually changes
        # none, and the counts are then kept as they are.
        image_moves: list[tuple[str, int]] = []
        for name in names:
            index = positions[name]
            old, new = node_list[index], self.node_infos[name]
            if old is new:
                continue
            node_list[index] = new
            if nodes_changed and old.node is not new.node:
                before, after = _image_names(old), _image_names(new)
                if before != after:
                    image_moves += [(image, -1) for image in before - after]
                    image_moves += [(image, 1) for image in after - before]
            if self._groups is not None:
                # A node joining or leaving a group, or groups nobody read for a while (the default profile never
                # does): made afresh, in order, when next read.
                if bool(old.pods_with_affinity) != bool(new.pods_with_affinity) or len(self._swaps) >= _MAX_SWAPS \
                        or bool(old.pods_with_required_anti_affinity) != bool(new.pods_with_required_anti_affinity):
                    self._groups = None
                    self._swaps = []
                else:
                    self._swaps.append((old, new))
        self.node_list = node_list
        if image_moves and self._images is not None:
            counts = dict(self._images)  # a copy: a request may still hold the counts it read
            for image, step in image_moves:
                count = counts.get(image, 0) + step
                if count:
                    counts[image] = count
                else:
                    del counts[image]
            self._images = counts

    def all_nodes(self) -> NodeBatch:
        """Every node of the snapshot as one batch (what cluster-wide counting reads), built once per
        refresh: the cache changes columns only in a refresh, which moves the generation."""
        held = self._all
        if held is None or held[0] != self.generation:
            if self._all_rows is None:
                batch = NodeBatch.of(self.node_list, self.columns)
                self._all_rows = batch.rows if batch.columns is self.columns else None
            else:
                batch = NodeBatch(self.node_list, self.columns, self._all_rows)
            held = self._all = (self.generation, batch)
        return held[1]

    def get(self, name: str) -> NodeInfo | None:
        """The NodeInfo of a node, or None if the snapshot does not hold it."""
        return self.node_infos.get(name)

    @property
    def pods_with_affinity_nodes(self) -> list[NodeInfo]:
        """The nodes holding a pod with affinity terms (of any kind), in node order (the legacy InterPodAffinity
        reads them; made when read, so that a pod bound costs the default profile nothing here)."""
        return self._settled_groups()[0]

    @property
    def pods_with_required_anti_affinity_nodes(self) -> list[NodeInfo]:
        """The nodes holding a pod with required anti-affinity terms, in node order."""
        return self._settled_groups()[1]

    def _settled_groups(self) -> tuple[list[NodeInfo], list[NodeInfo]]:
        groups = self._groups
        if groups is None:
            groups = ([n for n in self.node_list if n.pods_with_affinity],
                      [n for n in self.node_list if n.pods_with_required_anti_affinity])
        elif self._swaps:
            # Copies: a reader may still hold the lists it read. NodeInfo has no __eq__, so list.index finds this
            # very object (identity), at C speed.
            with_affinity, with_anti = list(groups[0]), list(groups[1])
            for old, new in self._swaps:
                if old.pods_with_affinity:
                    with_affinity[with_affinity.index(old)] = new
                if old.pods_with_required_anti_affinity:
                    with_anti[with_anti.index(old)] = new
            groups = (with_affinity, with_anti)
        self._groups, self._swaps = groups, []
        return groups

    def image_node_counts(self) -> dict[str, int]:
        """For each image name, on how many nodes it is present (ImageStateSummary.NumNodes)."""
        if self._images is None:
            counts: dict[str, int] = {}
            for info in self.node_list:
                for image in _image_names(info):
                    counts[image] = counts.get(image, 0) + 1
            self._images = counts
        return self._images

    def kind(self, kind: str) -> Mapping[str, Mapping[str, Any]]:
        """All objects of one kind (e.g. "Service"), keyed by namespace/name: the same mapping until an object of
        that kind changes (readers memoise by its identity)."""
        return self.objects.get(kind, _NONE)


    def __len__(self) -> int:
        return len(self.node_list)


def _image_names(info: NodeInfo) -> set[str]:
    """The image names a node lists (each once, whatever entries name it)."""
    assert info.node is not None
    return {image for names, _size in info.node.images for image in names}
