"""Pods per label set per node, over a whole snapshot: what the pod-counting plugins read in bulk.

InterPodAffinity (existing pods matching an incoming pod's terms) and PodTopologySpread (pods matching a
constraint's selector) both count, per node, the pods of one namespace whose labels a selector accepts. Each
NodeInfo keeps its pods grouped by namespace and label set (``NodeInfo.label_groups``: pods of one template
share one group); :class:`PodGroups` gathers those groups over the nodes of a snapshot, so that a selector is
checked once per label set of the cluster, and the pods of the matching groups are added up per row of the
snapshot's columns with one bincount.

One index serves a whole profile (``Framework.pod_groups``): both plugins, every request, PreFilter's and
PreScore's counts alike. It is brought up to date by node generation: a node whose NodeInfo changed since the
index last saw it takes its old contribution out and its new one in. Contributions are kept by node name, so
that switching between the snapshot's columns and other columns (preemption's what-if snapshots, a NodeList
sent in full) redoes only the nodes that differ; what is kept per row of one NodeColumns (the generation each
row was synced at, and each group's rows as arrays) is dropped when another NodeColumns is read.

Each group counts its pods twice: all of them, and those not being deleted. InterPodAffinity counts
terminating pods like any other; the spreading plugins leave them out (kubernetes #87621).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

import numpy as np

from extender.cluster.columns import Int64Array, IntpArray, NodeBatch, NodeColumns, NodeContributions
from extender.cluster.nodeinfo import LabelGroups, LabelPairs, NodeInfo

_NO_GROUPS: LabelGroups = {}
_NONE: dict[LabelPairs, tuple[Mapping[str, str], int, int]] = {}

#: A group: its namespace and its sorted label pairs.
GroupKey = tuple[str, LabelPairs]
Labels = Mapping[str, str]
#: A group's labels, and its pods on each node: all of them, and those not being deleted.
_Group = tuple[Labels, dict[str, int], dict[str, int]]


class PodGroups:
    """Every synced node's label groups, by namespace and label set: which nodes hold such pods, and how many
    (all, and not terminating) each."""

    __slots__ = ("_columns", "_groups", "_nodes", "_rows")

    def __init__(self) -> None:
        # Each node's groups as of its last sync (a copy: the cache's NodeInfos change in place).
        self._nodes: NodeContributions[LabelGroups] = NodeContributions(_groups_of, self._apply)
        # namespace -> label pairs -> (those labels, node name -> all pods, node name -> pods not terminating);
        # the two dicts have the same keys in the same order, so that each reads into an array in one call
        self._groups: dict[str, dict[LabelPairs, _Group]] = {}
        self._columns: NodeColumns | None = None  # the columns of the last sync, which the arrays below index
        # group -> (its nodes' rows in ``_columns``, their pods not terminating, all their pods); dropped when
        # the group changes
        self._rows: dict[GroupKey, tuple[IntpArray, Int64Array, Int64Array]] = {}

    def sync(self, batch: NodeBatch, *, complete: bool = False) -> None:
        """Bring the batch's nodes into the index (those whose generation differs from the one their row was
        synced at). ``complete``: the batch is every node of a snapshot, and nodes it lacks are taken out."""
        if self._columns is not batch.columns:
            self._columns = batch.columns
            self._rows.clear()
        self._nodes.sync(batch, complete=complete)

    def _apply(self, name: str, old: LabelGroups | None, new: LabelGroups | None) -> None:
        """Move a node's groups from ``old`` to ``new`` (None: it has none): a group is touched (and its rows'
        arrays dropped) only where the node's pods of it differ, so a pod bound to a node changes one group."""
        before, after = old or _NO_GROUPS, new or _NO_GROUPS
        for namespace in before.keys() | after.keys():
            had, has = before.get(namespace, _NONE), after.get(namespace, _NONE)
            for pairs in had.keys() - has.keys():
                self._take_out(namespace, pairs, name)
            for pairs, entry in has.items():
                if had.get(pairs) != entry:
                    self._put(namespace, pairs, name, entry)

    def _put(self, namespace: str, pairs: LabelPairs, name: str, entry: tuple[Labels, int, int]) -> None:
        labels, live, every = entry
        in_namespace = self._groups.setdefault(namespace, {})
        group = in_namespace.get(pairs)
        if group is None:
            group = in_namespace[pairs] = (labels, {}, {})
        # A node already in the group keeps its place in both dicts, which stay in the same order.
        group[1][name] = every
        group[2][name] = live
        self._rows.pop((namespace, pairs), None)

    def _take_out(self, namespace: str, pairs: LabelPairs, name: str) -> None:
        in_namespace = self._groups[namespace]
        _, all_pods, live_pods = in_namespace[pairs]
        del all_pods[name]
        del live_pods[name]
        self._rows.pop((namespace, pairs), None)
        if not all_pods:
            del in_namespace[pairs]
            if not in_namespace:
                del self._groups[namespace]

    def groups(self, namespaces: Iterable[str] | None = None) -> Iterator[tuple[GroupKey, Labels]]:
        """Every group (of these namespaces only, when given): its key and its labels."""
        if namespaces is None:
            buckets: Iterable[tuple[str, dict[LabelPairs, _Group]]] = self._groups.items()
        else:
            buckets = ((namespace, self._groups[namespace]) for namespace in namespaces if namespace in self._groups)
        for namespace, by_labels in buckets:
            for pairs, group in by_labels.items():
                yield (namespace, pairs), group[0]

    def matching(self, namespace: str, match: Callable[[Labels], bool]) -> list[GroupKey]:
        """The groups of the namespace whose labels ``match`` accepts."""
        return [(namespace, pairs) for pairs, group in self._groups.get(namespace, {}).items() if match(group[0])]

    def _group_rows(self, key: GroupKey) -> tuple[IntpArray, Int64Array, Int64Array]:
        """A group's nodes as rows of the columns last synced, with their pods (not terminating, all)."""
        held = self._rows.get(key)
        if held is None:
            columns = self._columns
            assert columns is not None, "sync first"
            _, all_pods, live_pods = self._groups[key[0]][key[1]]
            size = len(all_pods)
            held = self._rows[key] = (columns.rows_named(list(all_pods)),
                                      np.fromiter(live_pods.values(), np.int64, size),
                                      np.fromiter(all_pods.values(), np.int64, size))
        return held

    def prepare(self) -> None:
        """Put every group's rows in arrays now (the warm-up), not when a request first counts the group."""
        for namespace, by_labels in self._groups.items():
            for pairs in by_labels:
                self._group_rows((namespace, pairs))

    def pods_per_row(self, keys: Iterable[GroupKey], *, terminating: bool) -> Int64Array:
        """The pods of these groups (with or without those being deleted) on each row of the columns last
        synced, ``capacity`` long; exact for the rows synced since those columns were first read."""
        columns = self._columns
        assert columns is not None, "sync first"
        rows: list[IntpArray] = []
        pods: list[Int64Array] = []
        for key in keys:
            held = self._group_rows(key)
            rows.append(held[0])
            pods.append(held[2] if terminating else held[1])
        if not rows:
            return np.zeros(columns.capacity, np.int64)
        on_rows, counts = np.concatenate(rows), np.concatenate(pods)
        present = on_rows >= 0  # a node of the index that is not a row of these columns adds nothing
        per_row: Int64Array = np.bincount(on_rows[present], weights=counts[present].astype(np.float64),
                                          minlength=columns.capacity).astype(np.int64)
        return per_row

    def by_node(self) -> dict[GroupKey, dict[str, tuple[int, int]]]:
        """What the index holds: every group's pods per node (not terminating, all), as plain data."""
        return {(namespace, pairs): {name: (live_pods[name], every) for name, every in all_pods.items()}
                for namespace, by_labels in self._groups.items()
                for pairs, (_, all_pods, live_pods) in by_labels.items()}


def _groups_of(info: NodeInfo, _old: LabelGroups | None) -> LabelGroups:
    return {namespace: dict(groups) for namespace, groups in info.label_groups.items()}
