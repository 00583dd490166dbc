"""Per-node numeric state in columns: what the node-local plugins read, one array element per node.

A :class:`NodeColumns` belongs to one snapshot; the cache writes a node's row whenever it copies that node
into the snapshot, so the columns stay current at the cost of the nodes that changed, never of the cluster.
Plugins read them through a :class:`NodeBatch`: the candidate nodes of one request as row indexes, with
the columns gathered for exactly those nodes, so that a verdict or a score over thousands of nodes is a
handful of array operations instead of a Python loop per node.

Everything is held in the scheduler's integer units (int64: millicores, bytes, counts), so the plugins'
integer arithmetic stays exact. Values that are not numbers are interned: a node's taints as a code into
the table of distinct taint lists, a label's value as a code into that key's table of distinct values
(-1 where the node lacks the key), so that a predicate is evaluated once per distinct value and gathered.

NodeInfos that are not rows of a snapshot (a NodeList sent in full, preemption's what-if copies) get a
private NodeColumns built for the request: the same representation, the same plugin code.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar, overload

import numpy as np
import numpy.typing as npt
import orjson

from extender.cluster.nodeinfo import NodeInfo
from extender.kube.taints import Taint
from extender.memo import BoundedMemo

Int64Array = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
IntpArray = npt.NDArray[np.intp]

# Numeric columns, one int64 per row.
NUMERIC = ("alloc_cpu", "alloc_mem", "alloc_eph", "alloc_pods", "req_cpu", "req_mem", "req_eph",
           "nonzero_cpu", "nonzero_mem", "pod_count", "unschedulable", "has_ports", "taint_code", "generation")



def distinct(codes: npt.NDArray[np.integer[Any]]) -> IntpArray:
    """The distinct values of an integer array, ascending (what ``np.unique`` gives).

    The engine asks this of label-value codes and status indexes, small dense ranges: counting them is several
    times cheaper than numpy's hashing unique. Values spread wider than the array is long fall back to it.
    """
    if not len(codes):
        return np.zeros(0, np.intp)
    low, high = int(codes.min()), int(codes.max())
    if high - low > 4 * len(codes) + 1024:
        return np.unique(codes).astype(np.intp)
    present: IntpArray = np.bincount(codes - low if low else codes).nonzero()[0]
    return present + low if low else present


_ROW_BITS = 32
_owners = itertools.count(1)
# How many requests' name lists keep their rows memoised (see NodeNames).
_NAMED_MEMO_SIZE = 8
_NAMED_MEMO_BYTES = 8 * 1024 * 1024
#: Name keys added before NodeColumns compacts them at all (beside an eighth of the keys held).
_COMPACT_MIN = 32
# What NodeColumns.by_records keeps at most (each value an array over the rows): past either, it starts again.
_BY_RECORDS_ENTRIES = 256
_BY_RECORDS_BYTES = 8 * 1024 * 1024


class NodeNames(list[str]):
    """Node names as a request listed them, with the JSON text they arrived as.

    kube-scheduler sends the same list again and again (every node in its own order, or the nodes a pod
    of a workload passed), and finding thousands of rows by name is a dictionary lookup each; the text
    keys a small memo of the rows it resolved to (:meth:`NodeColumns.rows_named`). Read-only once made:
    the decoder hands the same object to every request that sends the same text.
    """

    __slots__ = ("_unique", "text")

    def __init__(self, names: Sequence[str], text: bytes, *, unique: bool | None = None) -> None:
        super().__init__(names)
        self.text = text
        self._unique: bool | None = unique

    @classmethod
    def encoded(cls, names: list[str], *, unique: bool | None = None) -> NodeNames:
        """Names with their own JSON text (as an answer sends them, and as kube-scheduler sends them back: Go's
        encoder writes a list of node names byte for byte as orjson does). ``unique``: known to hold no name
        twice (a part of a list that was checked)."""
        return cls(names, orjson.dumps(names), unique=unique)

    def unique(self) -> bool:
        """Whether no name is listed twice (decided once per list)."""
        if self._unique is None:
            self._unique = len(set(self)) == len(self)
        return self._unique


class LabelCounts(Mapping[str, int]):
    """A count per value of one label key, held as an array over that key's value codes in one NodeColumns.

    The cluster-wide plugins add pods up per topology domain with ``bincount`` over the label codes; kept in
    that form, :meth:`NodeBatch.label_in` turns the counts into a node mask without one lookup per value (a
    hostname topology has as many values as nodes). Read as a mapping, it holds the values whose count is
    positive.
    """

    __slots__ = ("columns", "counts", "key")

    def __init__(self, columns: NodeColumns, key: str, counts: Int64Array) -> None:
        self.columns = columns
        self.key = key
        self.counts = counts  # by code into columns.label_values[key]; never longer than that table

    def __getitem__(self, value: str) -> int:
        code = self.columns._label_codes.get(self.key, {}).get(value)
        if code is None or code >= len(self.counts) or self.counts[code] <= 0:
            raise KeyError(value)
        return int(self.counts[code])

    def __iter__(self) -> Iterator[str]:
        values = self.columns.label_values.get(self.key, [])  # no node has the key: no count either
        return iter([values[code] for code in (self.counts > 0).nonzero()[0].tolist()])

    def __len__(self) -> int:
        return int(np.count_nonzero(self.counts > 0))

    def plus(self, other: LabelCounts) -> LabelCounts:
        """The sum of two counts of the same key and columns."""
        assert other.columns is self.columns and other.key == self.key
        longer, shorter = (self.counts, other.counts) if len(self.counts) >= len(other.counts) \
            else (other.counts, self.counts)
        total = longer.copy()
        total[:len(shorter)] += shorter
        return LabelCounts(self.columns, self.key, total)


class NodeColumns:
    """Columns over a set of NodeInfos; rows are reused after a node leaves."""

    def __init__(self, capacity: int = 64) -> None:
        self.owner = next(_owners)  # tags NodeInfo.row so that a row of other columns is never read here
        self.capacity = max(capacity, 1)
        self.numeric: dict[str, Int64Array] = {name: np.zeros(self.capacity, np.int64) for name in NUMERIC}
        # scalar resource -> (allocatable, requested)
        self.scalars: dict[str, tuple[Int64Array, Int64Array]] = {}
        # label key -> value codes; and per key, the values by code
        self.labels: dict[str, npt.NDArray[np.int32]] = {}
        self.label_values: dict[str, list[str]] = {}
        self._label_codes: dict[str, dict[str, int]] = {}
        self._row_labels: list[tuple[str, ...]] = [()] * self.capacity
        # image name -> size on each node (0 where absent)
        self.images: dict[str, Int64Array] = {}
        self._row_images: list[tuple[str, ...]] = [()] * self.capacity
        self.taint_sets: list[tuple[Taint, ...]] = [()]
        self._taint_codes: dict[tuple[Taint, ...], int] = {(): 0}
        # Node name -> row. Its keys are copies made together (see _compact_names): a request's names are new
        # string objects, so each lookup compares against the key's text, and keys packed side by side in
        # memory cost a request's lookups about half of what keys scattered over the heap do on cold caches.
        self._rows: dict[str, int] = {}
        self._names_added = 0  # keys put since the last compaction
        # NodeNames text -> its rows, while no node has come or gone (a row's name changes only then).
        self._named: BoundedMemo[bytes, IntpArray] = BoundedMemo(
            "rows of node name lists", max_bytes=_NAMED_MEMO_BYTES, max_entries=_NAMED_MEMO_SIZE)
        # The NodeInfo each row holds (None for a free row): a batch's nodes are gathered from it.
        self.infos: list[NodeInfo | None] = [None] * self.capacity
        self._free: list[int] = []
        self._next = 0
        # Values computed over every row from the node records alone (see by_records): emptied whenever a row's
        # record is written (a new or reused row's included), so that none is ever read stale. (A dropped row's
        # entry is read by no batch until the row holds a node again.)
        self._by_records: dict[Any, Any] = {}
        self._by_records_bytes = 0

    @classmethod
    def of(cls, nodes: Sequence[NodeInfo]) -> NodeColumns:
        """Private columns for NodeInfos that are not rows of a snapshot (their ``row`` is not set)."""
        columns = cls(len(nodes))
        for node in nodes:
            row = columns._rows[node.name] = columns._allocate()
            columns._write_record(row, node)
            columns._write_pods(row, node)
            columns.infos[row] = node
        return columns

    def _add_name(self, name: str) -> int:
        """A row for a new name; the name keys are compacted once an eighth of them came since the last time."""
        row = self._rows[name] = self._allocate()
        self._names_added += 1
        if self._names_added > _COMPACT_MIN + len(self._rows) // 8:
            self._compact_names()
        self._named.clear()
        return row

    def _compact_names(self) -> None:
        """Make the name keys again as copies allocated one after the other. Keys put one by one, each when its
        node came (the first snapshot puts thousands while decoding and building rows), lie a cache line or
        more apart among other objects; finding a request's names touches each key's text. Amortised: a
        compaction happens after len/8 additions and costs one copy per key."""
        self._rows = {name.encode().decode(): row for name, row in self._rows.items()}
        self._names_added = 0

    def by_records(self, key: Any, compute: Callable[[NodeBatch], T]) -> T:
        """``compute`` over a batch of every row, kept under ``key`` until a row's node record is written (a
        node changed, or a row holds a new one): for values that read nothing of a node but its record (a label
        selector's mask over the rows). Free rows read as nodes without labels, taints or resources, and the
        batch's NodeInfos must not be read. A node's record changes only when its object does (not when pods
        come and go, nor on a kubelet's heartbeat), so a value serves request after request. Used on the
        cache's thread only (explain off it reads a frozen snapshot, whose batches build columns of their own).
        The key is kept with the value and weighed by its text (a template's tolerations can be long)."""
        held: T | None = self._by_records.get(key)
        if held is None:
            held = compute(NodeBatch.of_rows(self, np.arange(self.capacity, dtype=np.intp)))
            size = int(getattr(held, "nbytes", 0)) + 200 + len(repr(key))  # the entry and its key, beside the data
            if len(self._by_records) >= _BY_RECORDS_ENTRIES or self._by_records_bytes + size > _BY_RECORDS_BYTES:
                self._forget_by_records()
            self._by_records[key] = held
            self._by_records_bytes += size
        return held

    def _forget_by_records(self) -> None:
        self._by_records.clear()
        self._by_records_bytes = 0

    # ---- maintenance ---------------------------------------------------------------------------
    def _grow(self) -> None:
        size = self.capacity * 2
        for name, column in self.numeric.items():
            self.numeric[name] = np.concatenate([column, np.zeros(size - self.capacity, np.int64)])
        for name, (alloc, used) in self.scalars.items():
            self.scalars[name] = (np.concatenate([alloc, np.zeros(size - self.capacity, np.int64)]),
                                  np.concatenate([used, np.zeros(size - self.capacity, np.int64)]))
        for key, codes in self.labels.items():
            self.labels[key] = np.concatenate([codes, np.full(size - self.capacity, -1, np.int32)])
        for image, sizes in self.images.items():
            self.images[image] = np.concatenate([sizes, np.zeros(size - self.capacity, np.int64)])
        self._row_labels += [()] * (size - self.capacity)
        self._row_images += [()] * (size - self.capacity)
        self.infos += [None] * (size - self.capacity)
        self.capacity = size

    def _allocate(self) -> int:
        if self._free:
            return self._free.pop()
        if self._next == self.capacity:
            self._grow()
        row = self._next
        self._next += 1
        return row

    def put(self, node: NodeInfo) -> None:
        """Write a node's row (allocated on first sight) and tag the NodeInfo with it."""
        row = self._rows.get(node.name)
        if row is None:
            row = self._add_name(node.name)
        held = self.infos[row]
        if held is None or held.node is not node.node:
            self._write_record(row, node)
        # else: the same node object as the row holds (a pod bound or removed): its labels, images, taints and
        # allocatable are in the row already, and only what the pods make changes.
        self._write_pods(row, node)
        self.infos[row] = node
        node.row = (self.owner << _ROW_BITS) | row

    def drop(self, name: str) -> None:
        """Forget a node's row (the node left the snapshot)."""
        row = self._rows.pop(name, None)
        if row is None:
            return
        self._named.clear()
        self._clear_keyed(row)
        self.infos[row] = None
        self._free.append(row)

    def _clear_keyed(self, row: int) -> None:
        for key in self._row_labels[row]:
            self.labels[key][row] = -1
        for image in self._row_images[row]:
            self.images[image][row] = 0
        self._row_labels[row] = ()
        self._row_images[row] = ()
        for alloc, used in self.scalars.values():
            alloc[row] = used[row] = 0

    def _write_record(self, row: int, node: NodeInfo) -> None:
        """The row's fields that come from the node object: allocatable, unschedulable, taints, labels, images."""
        record = node.node
        assert record is not None, "placeholders are never columns"
        self._forget_by_records()
        alloc = record.allocatable
        n = self.numeric
        n["alloc_cpu"][row] = alloc.milli_cpu
        n["alloc_mem"][row] = alloc.memory
        n["alloc_eph"][row] = alloc.ephemeral_storage
        n["alloc_pods"][row] = alloc.allowed_pods
        n["unschedulable"][row] = record.unschedulable
        code = self._taint_codes.get(record.taints)
        if code is None:
            code = self._taint_codes[record.taints] = len(self.taint_sets)
            self.taint_sets.append(record.taints)
        n["taint_code"][row] = code
        self._clear_keyed(row)
        for name, amount in alloc.scalars.items():
            self._scalar(name)[0][row] = amount
        for key, value in record.labels.items():
            codes = self.labels.get(key)
            if codes is None:
                codes = self.labels[key] = np.full(self.capacity, -1, np.int32)
                self.label_values[key] = []
                self._label_codes[key] = {}
            table = self._label_codes[key]
            value_code = table.get(value)
            if value_code is None:
                value_code = table[value] = len(self.label_values[key])
                self.label_values[key].append(value)
            codes[row] = value_code
        self._row_labels[row] = tuple(record.labels)
        sizes: dict[str, int] = {}
        for names, size in record.images:
            for image in names:
                sizes[image] = size  # a name listed twice on one node: the last entry wins (as upstream)
        for image, size in sizes.items():
            column = self.images.get(image)
            if column is None:
                column = self.images[image] = np.zeros(self.capacity, np.int64)
            column[row] = size
        self._row_images[row] = tuple(sizes)

    def _write_pods(self, row: int, node: NodeInfo) -> None:
        """The row's fields that come from the node's pods: what they request, how many, their ports, and the
        NodeInfo's generation (what per-node memos, spreading's match counts, compare with)."""
        requested, nonzero = node.requested, node.non_zero_requested
        n = self.numeric
        n["req_cpu"][row] = requested.milli_cpu
        n["req_mem"][row] = requested.memory
        n["req_eph"][row] = requested.ephemeral_storage
        n["nonzero_cpu"][row] = nonzero.milli_cpu
        n["nonzero_mem"][row] = nonzero.memory
        n["pod_count"][row] = len(node.pods)
        n["has_ports"][row] = bool(node.used_ports)
        n["generation"][row] = node.generation
        for name in requested.scalars.keys() - self.scalars.keys():
            self._scalar(name)
        for name, (_, used) in self.scalars.items():
            used[row] = requested.scalars.get(name, 0)

    def _scalar(self, name: str) -> tuple[Int64Array, Int64Array]:
        """A scalar resource's columns (allocatable, requested), made on first sight."""
        pair = self.scalars.get(name)
        if pair is None:
            pair = self.scalars[name] = (np.zeros(self.capacity, np.int64), np.zeros(self.capacity, np.int64))
        return pair

    # ---- reading -------------------------------------------------------------------------------
    def rows_named(self, names: Sequence[str]) -> IntpArray:
        """The row of each name (-1 for a name with no row here), in order; read-only when memoised."""
        text = names.text if isinstance(names, NodeNames) else None
        if text is not None:
            held = self._named.get(text)
            if held is not None:
                return held
        rows = np.fromiter(map(self._rows.get, names, itertools.repeat(-1)), np.intp, len(names))
        if text is not None:
            rows.flags.writeable = False
            self._named.put(text, rows, len(text) + rows.nbytes)
        return rows

    def remember_rows(self, names: NodeNames, rows: IntpArray) -> None:
        """Remember the rows of a list of names found otherwise (the rows of a filter's passed nodes), for the
        request that sends the same text (the prioritize call that follows); ``rows`` must be these columns'."""
        held = rows.copy()
        held.flags.writeable = False
        self._named.put(names.text, held, len(names.text) + held.nbytes)

    def rows_of(self, nodes: Sequence[NodeInfo]) -> IntpArray | None:
        """Row indexes of NodeInfos, or None unless every one of them is a row of these columns."""
        tagged = np.fromiter((node.row for node in nodes), np.int64, len(nodes))
        if len(tagged) and not ((tagged >> _ROW_BITS) == self.owner).all():
            return None
        return (tagged & ((1 << _ROW_BITS) - 1)).astype(np.intp)


class NodeBatch(Sequence[NodeInfo]):
    """Candidate nodes of one request with their columns gathered: element i is ``nodes[i]``.

    A batch made from rows gathers its NodeInfos from the columns only when something reads them (a
    plugin computed node by node, an answer listing nodes): array plugins never need them.
    """

    __slots__ = ("_cache", "_nodes", "columns", "rows")

    def __init__(self, nodes: Sequence[NodeInfo] | None, columns: NodeColumns, rows: IntpArray) -> None:
        self._nodes = nodes
        self.columns = columns
        self.rows = rows
        self._cache: dict[Any, Any] = {}

    @classmethod
    def of(cls, nodes: Sequence[NodeInfo], columns: NodeColumns | None) -> NodeBatch:
        """A batch over nodes: gathered from the snapshot's columns, or from private ones if they are not
        all rows of it (full Node objects from the request, what-if copies)."""
        if isinstance(nodes, NodeBatch) and nodes.columns is columns:
            return nodes
        rows = columns.rows_of(nodes) if columns is not None else None
        if rows is None or columns is None:
            columns = NodeColumns.of(nodes)
            rows = np.arange(len(nodes), dtype=np.intp)
        return cls(nodes, columns, rows)

    @classmethod
    def of_rows(cls, columns: NodeColumns, rows: IntpArray) -> NodeBatch:
        """A batch over rows of columns (each holding a node)."""
        return cls(None, columns, rows)

    @property
    def nodes(self) -> Sequence[NodeInfo]:
        """The NodeInfos, in order (gathered from the rows on first use)."""
        if self._nodes is None:
            infos = self.columns.infos
            gathered: list[NodeInfo] = [infos[row] for row in self.rows.tolist()]
            self._nodes = gathered
        return self._nodes

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[NodeInfo]: ...

    def __getitem__(self, index: int | slice) -> NodeInfo | Sequence[NodeInfo]:
        return self.nodes[index]

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.nodes)

    def take(self, keep: BoolArray) -> NodeBatch:
        """The nodes where ``keep`` is true, in order."""
        if keep.all():
            return self
        indexes = keep.nonzero()[0]
        nodes = self._nodes
        subset = None if nodes is None else [nodes[i] for i in indexes.tolist()]
        return NodeBatch(subset, self.columns, self.rows[indexes])

    def _memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        value = self._cache.get(key)
        if value is None:
            value = self._cache[key] = compute()
        return value

    def of_every_row(self, key: Any, compute: Callable[[NodeBatch], npt.NDArray[Any]]) -> npt.NDArray[Any]:
        """``compute`` over every row of the columns, kept with them (NodeColumns.by_records: for values read
        from the node records alone), gathered for these nodes."""
        every: npt.NDArray[Any] = self.columns.by_records(key, compute)
        return every[self.rows]

    def column(self, name: str) -> Int64Array:
        """A numeric column (one of NUMERIC) for these nodes."""
        result: Int64Array = self._memo(name, lambda: self.columns.numeric[name][self.rows])
        return result

    def scalar(self, name: str) -> tuple[Int64Array, Int64Array]:
        """(allocatable, requested) of a scalar resource for these nodes (zeros where a node has none)."""
        def gather() -> tuple[Int64Array, Int64Array]:
            pair = self.columns.scalars.get(name)
            if pair is None:
                zeros = np.zeros(len(self.rows), np.int64)
                return zeros, zeros
            return pair[0][self.rows], pair[1][self.rows]
        result: tuple[Int64Array, Int64Array] = self._memo(("scalar", name), gather)
        return result

    def image_sizes(self, image: str) -> Int64Array:
        """Size of an image on each node (0 where the node does not hold it)."""
        column = self.columns.images.get(image)
        return column[self.rows] if column is not None else np.zeros(len(self.rows), np.int64)

    def by_taints(self, per_set: Callable[[tuple[Taint, ...]], Any], dtype: Any, *, key: Any = None,
                  ) -> npt.NDArray[Any]:
        """A function of a node's taints, evaluated once per distinct taint list and gathered. With ``key`` (what
        the function is made of, e.g. a template's shared tolerations), the values of every row are kept with
        the columns until a node record changes (of_every_row): a template's replicas only gather them."""
        if key is not None:
            return self.of_every_row(("taints", key), lambda every: every.by_taints(per_set, dtype))
        codes = self.column("taint_code")
        table = np.zeros(len(self.columns.taint_sets), dtype)
        for code in distinct(codes).tolist():
            table[code] = per_set(self.columns.taint_sets[code])
        gathered: npt.NDArray[Any] = table[codes]
        return gathered

    def label_codes(self, key: str) -> npt.NDArray[np.int32]:
        """Each node's code of its value of ``key`` into ``columns.label_values[key]`` (-1: no such label)."""
        def gather() -> npt.NDArray[np.int32]:
            codes = self.columns.labels.get(key)
            return codes[self.rows] if codes is not None else np.full(len(self.rows), -1, np.int32)
        result: npt.NDArray[np.int32] = self._memo(("labels", key), gather)
        return result

    def label_in(self, key: str, values: Collection[str]) -> BoolArray:
        """Where a node's value of ``key`` is one of ``values`` (never where the node lacks the key)."""
        codes = self.label_codes(key)
        table = np.zeros(len(self.columns.label_values.get(key, ())) + 1, np.bool_)  # -1 reads the last entry
        if isinstance(values, LabelCounts) and values.columns is self.columns and values.key == key:
            table[:len(values.counts)] = values.counts > 0
        else:
            known = self.columns._label_codes.get(key, {})
            table[[code for code in map(known.get, values) if code is not None]] = True
        mask: BoolArray = table[codes]
        return mask

    def label_table(self, key: str, by_value: Mapping[str, int]) -> Int64Array:
        """Each node's entry of ``by_value`` for its value of ``key`` (0 where absent or the node lacks it)."""
        codes = self.label_codes(key)
        table = np.zeros(len(self.columns.label_values.get(key, ())) + 1, np.int64)  # -1 reads the last entry
        if isinstance(by_value, LabelCounts) and by_value.columns is self.columns and by_value.key == key:
            table[:len(by_value.counts)] = by_value.counts
        else:
            known = self.columns._label_codes.get(key, {})
            for value, entry in by_value.items():
                code = known.get(value)
                if code is not None:
                    table[code] = entry
        gathered: Int64Array = table[codes]
        return gathered

    def label_mask(self, key: str, matches: Callable[[Mapping[str, str]], bool]) -> BoolArray:
        """Where a predicate over one label key holds: ``matches`` is called with ``{key: value}`` for each
        distinct value and with ``{}`` for nodes without the key, then gathered (it must read only ``key``)."""
        codes_all = self.columns.labels.get(key)
        missing = bool(matches({}))
        if codes_all is None:
            return np.full(len(self.rows), missing, np.bool_)
        codes = codes_all[self.rows]
        values = self.columns.label_values[key]
        table = np.empty(len(values) + 1, np.bool_)
        table[-1] = missing  # code -1 reads the last entry
        for code in distinct(codes).tolist():
            if code >= 0:
                table[code] = matches({key: values[code]})
        mask: BoolArray = table[codes]
        return mask


class RowGenerations:
    """The NodeInfo generation each row of one NodeColumns was last seen at: what an index kept beside the
    columns (counts per row, contributions per node) needs to find the rows of a batch whose node changed
    since, with one comparison against the batch's generation column.

    It follows one NodeColumns at a time (``owner``): when those grow, what was seen is kept; other columns
    (preemption's what-if snapshots, a NodeList sent in full) start it afresh.
    """

    __slots__ = ("generations", "owner")

    def __init__(self) -> None:
        self.owner = 0
        self.generations: Int64Array = np.zeros(0, np.int64)  # generations start at 1: 0 is never current

    def follow(self, columns: NodeColumns) -> int:
        """Hold a generation for every row of ``columns``; how many leading rows keep what was seen (all of
        them when nothing changed, 0 after a switch to other columns)."""
        if self.owner == columns.owner and len(self.generations) >= columns.capacity:
            return len(self.generations)
        kept = len(self.generations) if self.owner == columns.owner else 0
        grown = np.zeros(columns.capacity, np.int64)
        grown[:kept] = self.generations[:kept]
        self.owner, self.generations = columns.owner, grown
        return kept

    def stale(self, batch: NodeBatch) -> IntpArray:
        """The positions in ``batch`` (over the columns followed) whose node changed since its row was seen."""
        changed: IntpArray = (self.generations[batch.rows] != batch.column("generation")).nonzero()[0]
        return changed


T = TypeVar("T")


class NodeContributions(Generic[T]):
    """What each node put into an index kept beside a snapshot's columns, by node name and the NodeInfo
    generation it was taken at.

    ``sync`` finds the nodes of a batch that changed since their row was last seen (RowGenerations) and moves
    each one's contribution in the index from the old to the new one (``apply(name, old, new)``, with
    ``take(info, old)`` making the new one; None for a node coming or going), so that an index can change only
    what differs between the two: a pod bound to a node of thirty changes one of its label groups, not thirty.
    A ``take`` that finds nothing it reads changed returns ``old`` itself, and nothing is applied.
    With ``complete`` (the batch is every node of a snapshot) the nodes it lacks are taken out. Kept by name,
    so that reading other columns redoes only the nodes that differ there.
    """

    __slots__ = ("_apply", "_complete", "_synced", "_take", "held")

    def __init__(self, take: Callable[[NodeInfo, T | None], T],
                 apply: Callable[[str, T | None, T | None], None]) -> None:
        self._take = take
        self._apply = apply
        self._synced = RowGenerations()
        self.held: dict[str, tuple[int, T]] = {}  # node name -> (its generation then, its contribution)
        # The batch of the last sync, when it was complete and nothing was synced since: a batch's nodes never
        # change (a snapshot's batch of every node is made again at each refresh), so syncing it again, as
        # prioritize does after filter, finds nothing to do.
        self._complete: NodeBatch | None = None

    def sync(self, batch: NodeBatch, *, complete: bool = False) -> None:
        """Bring the batch's changed nodes in (and, ``complete``, the nodes it lacks out)."""
        if complete and batch is self._complete:
            return
        self._complete = None
        self._synced.follow(batch.columns)
        rows, infos, held = batch.rows, batch.columns.infos, self.held
        for i in self._synced.stale(batch).tolist():
            row = int(rows[i])
            info = infos[row]
            assert info is not None
            previous = held.get(info.name)
            if previous is None or previous[0] != info.generation:
                old = previous[1] if previous is not None else None
                contribution = self._take(info, old)
                if contribution is not old:
                    self._apply(info.name, old, contribution)
                held[info.name] = (info.generation, contribution)
            self._synced.generations[row] = info.generation
        if complete and len(held) > len(batch):
            present = {info.name for info in batch.nodes}
            for name in [name for name in held if name not in present]:
                self._apply(name, held.pop(name)[1], None)
        if complete:
            self._complete = batch


def trunc_div(numerator: Int64Array, denominator: Int64Array | int) -> Int64Array:
    """Integer division truncating toward zero, as Go's ``/`` (numpy's ``//`` floors)."""
    if type(denominator) is int and denominator > 0 and (not numerator.size or numerator.min() >= 0):
        return numerator // denominator  # the usual case (scores by a positive count): floor is truncation
    quotient = np.abs(numerator) // np.abs(denominator)
    negative = (numerator < 0) != (np.asarray(denominator) < 0)
    result: Int64Array = np.where(negative, -quotient, quotient)
    return result
