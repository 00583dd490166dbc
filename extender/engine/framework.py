"""The plugin interfaces and the values that cross them, modelled on kube-scheduler's framework.

A plugin is an ordinary class with a stable ``name``; it implements only the extension points it needs
by subclassing :class:`FilterPlugin` and/or :class:`ScorePlugin`. Per-pod work belongs in
``pre_filter`` / ``pre_score`` (run once per request) and is kept in the :class:`CycleState`; the
per-node methods stay small. Plugins are pure: the runtime owns looping, timing and error handling.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self

import numpy as np

from extender.cluster.columns import Int64Array, NodeBatch
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.pod_groups import PodGroups
from extender.cluster.records import PodRecord
from extender.cluster.snapshot import Snapshot

if TYPE_CHECKING:
    from extender.kube.release import Release

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_EXTENDER_PRIORITY = 10


class Code(IntEnum):
    """Status codes, in upstream's order and with its names."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        """The name upstream prints (e.g. "UnschedulableAndUnresolvable")."""
        return _CODE_LABELS[self]


_CODE_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


class Status:
    """A plugin's verdict: a code and the reasons behind it. ``None`` stands for success on hot paths."""

    __slots__ = ("code", "plugin", "reasons")

    def __init__(self, code: Code, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.plugin = plugin

    @property
    def message(self) -> str:
        """The reasons joined as upstream's Status.Message() does."""
        return ", ".join(self.reasons)


    def with_plugin(self, plugin: str) -> Status:
        """The same verdict attributed to a plugin."""
        return Status(self.code, *self.reasons, plugin=plugin)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Status({self.code.label}, {list(self.reasons)!r}, plugin={self.plugin!r})"


SKIP = Status(Code.SKIP)


def unschedulable(*reasons: str) -> Status:
    """An Unschedulable status (preemption may help)."""
    return Status(Code.UNSCHEDULABLE, *reasons)


def unresolvable(*reasons: str) -> Status:
    """An UnschedulableAndUnresolvable status (preemption cannot help)."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)


class CycleState:
    """Per-request state: the snapshot being read and what plugins precomputed for this pod."""

    __slots__ = ("candidates", "data", "prefilter_nodes", "record_plugin_metrics", "score_weight", "skip_filter",
                 "skip_score", "snapshot")

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.data: dict[str, Any] = {}
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        # plugin -> the only node names its PreFilter leaves (upstream's PreFilterResult); upstream never
        # filters the others and reports them as "node(s) didn't satisfy plugin(s) [...]".
        self.prefilter_nodes: dict[str, frozenset[str]] = {}
        self.score_weight = 0  # sum of the weights of the score plugins that ran (not skipped)
        # The runtime's batch of candidates, which its PreFilter / PreScore plugins are given as their nodes.
        self.candidates: NodeBatch | None = None
        # Whether this cycle's plugin times are recorded (drawn by the framework when it first asks).
        self.record_plugin_metrics: bool | None = None

    def copy(self, snapshot: Snapshot | None = None) -> CycleState:
        """A copy sharing what PreFilter computed (upstream's CycleState.Clone), on ``snapshot`` if given."""
        copied = CycleState(self.snapshot if snapshot is None else snapshot)
        copied.data = dict(self.data)
        copied.skip_filter = set(self.skip_filter)
        copied.skip_score = set(self.skip_score)
        copied.prefilter_nodes = dict(self.prefilter_nodes)
        copied.record_plugin_metrics = self.record_plugin_metrics
        return copied

    def batch_of(self, nodes: Sequence[NodeInfo]) -> NodeBatch:
        """The nodes a PreFilter or PreScore plugin was given, as a batch (the runtime's, when it is theirs)."""
        if self.candidates is not None and nodes is self.candidates:
            return self.candidates
        return NodeBatch.of(nodes, self.snapshot.columns)


class NodeToStatus:
    """Why the pod fits none of the nodes, node by node (upstream's ``framework.NodeToStatus``).

    Nodes named explicitly carry the status that rejected them; every other node carries ``absent``
    (by default UnschedulableAndUnresolvable without a reason: a PreFilter rejection, or the nodes a
    PreFilterResult left out, are stored that way). PostFilter plugins read it.
    """

    __slots__ = ("absent", "explicit")

    def __init__(self, explicit: Mapping[str, Status] | None = None, absent: Status | None = None) -> None:
        self.explicit: dict[str, Status] = dict(explicit or {})
        self.absent = absent if absent is not None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def get(self, node: str) -> Status:
        """The node's status (``absent`` when it is not named)."""
        return self.explicit.get(node, self.absent)

    def __len__(self) -> int:
        return len(self.explicit)

    def nodes_for_code(self, nodes: Iterable[NodeInfo], code: Code) -> list[NodeInfo]:
        """NodesForStatusCode: the nodes (of ``nodes``, in their order) whose status has ``code``."""
        return [node for node in nodes if self.get(node.name).code == code]


@dataclass
class PostFilterResult:
    """What a PostFilter plugin asks for beside its status: the pod's nominated node (None leaves it as it
    is; "" clears it), and the writes kube-scheduler would make to the cluster (``actions``), which a
    simulation applies to its own cache and an explanation reports."""

    nominated_node: str | None = None
    actions: list[PostFilterAction] = field(default_factory=list)


class PostFilterAction(Protocol):
    """A write a PostFilter plugin makes (deallocate a claim, evict a pod): described, and applied to a
    simulation's cache, never to a cluster."""

    def describe(self) -> dict[str, Any]:
        """A JSON-ready account of the write."""
        ...

    def apply(self, cache: Any) -> None:
        """Make the write in a simulation's ClusterCache."""
        ...


class Verdicts:
    """Filter verdicts over a batch of nodes: ``codes[i]`` is 0 where node i passes, else k where
    ``statuses[k - 1]`` rejects it (nodes rejected for the same reason share one Status)."""

    __slots__ = ("codes", "statuses")

    def __init__(self, codes: Int64Array, statuses: Sequence[Status]) -> None:
        self.codes = codes
        self.statuses = statuses

    @classmethod
    def all_pass(cls, count: int) -> Verdicts:
        """Every node passes."""
        return cls(np.zeros(count, np.int64), ())

    @classmethod
    def where(cls, rejected: Any, status: Status) -> Verdicts:
        """Nodes where ``rejected`` (a boolean array) is true get ``status``; the others pass."""
        return cls(np.asarray(rejected, np.int64), (status,))

    def status(self, i: int) -> Status | None:
        """Node i's verdict (None: it passes)."""
        code = int(self.codes[i])
        return self.statuses[code - 1] if code else None


class Plugin:
    """Base of every plugin: a stable name, and a constructor taking the plugin's args.

    ``node_local`` declares that every verdict and raw score of the plugin depends only on the pod and on
    the one node's NodeInfo (not on other nodes, nor on cluster objects, nor on the set of candidate
    nodes), which lets the equivalence cache reuse them while the node's generation is unchanged.
    ``columnar`` declares that it implements the batch methods over a NodeBatch's columns.

    ``release`` is the kube-scheduler release (minor and feature gates) the plugin follows, as upstream
    hands each plugin's factory its ``feature.Features``: the framework builds plugins with :meth:`build`,
    which sets it before ``__init__`` runs, so that a constructor may read it. A plugin constructed directly
    follows the newest supported release with its default gates. ``introduced`` is the minor of the first
    release whose registry has the plugin.
    """

    name: ClassVar[str] = ""
    node_local: ClassVar[bool] = False
    # True when the plugin computes over a NodeBatch's columns (filter_batch / score_batch) rather than
    # node by node; the equivalence cache is only worth its lookups for node-local plugins that are not.
    columnar: ClassVar[bool] = False
    introduced: ClassVar[int] = 0
    # v1.37 with InPlacePodVerticalScalingSchedulerPreemption: a pod whose in-place resize is deferred is already
    # on its node, and these plugins' PreFilter skips it (so their Filter never runs); the runtime applies it.
    skips_deferred_resize: ClassVar[bool] = False
    release: Release

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        self.args = args or {}
        if "release" not in self.__dict__:
            from extender.kube.release import default_release

            self.release = default_release()
        # The Framework running this plugin (upstream's framework.Handle), set by the runtime: what a plugin
        # that runs the profile's other plugins (preemption's dry run) runs them with.
        self.handle: Any = None

    @property
    def pod_groups(self) -> PodGroups:
        """The profile's index of pods per label set per node (Framework.pod_groups), shared by the plugins
        that count pods; a plugin run without a framework (a unit test) keeps one of its own."""
        if self.handle is not None:
            groups: PodGroups = self.handle.pod_groups
            return groups
        own: PodGroups | None = self.__dict__.get("_own_pod_groups")
        if own is None:
            own = self.__dict__["_own_pod_groups"] = PodGroups()
        return own

    def warm_up(self, snapshot: Snapshot) -> None:
        """Build what the plugin keeps across pods (indexes over every node) before the service reports ready,
        so that the first pod after ready does not pay for it. Most plugins keep nothing of the kind."""

    @classmethod
    def build(cls, args: dict[str, Any] | None, release: Release) -> Self:
        """An instance following ``release`` (set before the constructor runs, which may read it)."""
        plugin = cls.__new__(cls)
        plugin.release = release
        plugin.__init__(args)  # type: ignore[misc]  # the class's own constructor, as cls(args) would run it
        return plugin


class FilterPlugin(Plugin):
    """A plugin with the PreFilter/Filter extension points (and, optionally, PreEnqueue).

    ``prefilter_reads_pods`` declares that what PreFilter computes depends on the pods on the nodes (upstream
    gives such plugins AddPod/RemovePod extensions): preemption's dry run, which removes pods from a copy of
    a node, runs their PreFilter again on a snapshot holding that copy, and reuses every other plugin's.
    """

    prefilter_reads_pods: ClassVar[bool] = False

    def pre_enqueue(self, snapshot: Snapshot, pod: PodRecord) -> Status | None:
        """PreEnqueue: a rejection keeps the pod out of the scheduling queue (no cycle is tried at all)."""
        return None

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        """Precompute per-pod state; return SKIP to skip Filter, or a rejection to reject every node."""
        return None

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        """None if the pod fits the node, else the reason it does not."""
        return self.filter_batch(state, pod, NodeBatch.of([node], state.snapshot.columns)).status(0)

    def filter_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Verdicts:
        """Every node's verdict. Columnar plugins implement this over the batch's columns (and inherit
        ``filter``); the others implement ``filter`` and inherit this loop. An exception on a node
        becomes that node's Error status, as the runtime reports it."""
        statuses: list[Status] = []
        codes = np.zeros(len(batch), np.int64)
        check = self.filter
        for i, node in enumerate(batch.nodes):
            try:
                status = check(state, pod, node)
            except Exception as err:
                status = Status(Code.ERROR, str(err))
            if status is not None and status.code != Code.SUCCESS:
                statuses.append(status)
                codes[i] = len(statuses)
        return Verdicts(codes, statuses)


class ScorePlugin(Plugin):
    """A plugin with the PreScore/Score/NormalizeScore extension points.

    ``max_score`` is the top of the plugin's normalised range: 100 (MaxNodeScore) for the framework's
    plugins, 10 (MaxPriority) for the 0-10 era priorities. A profile's score plugins share one scale.
    """

    max_score: ClassVar[int] = MAX_NODE_SCORE
    # True for a plugin upstream never skips (it has no PreScore) whose Skip here is only a shortcut for
    # "every node scores 0": explanations then show the zeros kube-scheduler's log prints, not a skip.
    skip_scores_zero: ClassVar[bool] = False

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        """Precompute per-pod state over the feasible nodes; return SKIP to contribute nothing."""
        return None

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        """The raw score of one feasible node."""
        return int(self.score_batch(state, pod, NodeBatch.of([node], state.snapshot.columns))[0])

    def score_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Int64Array:
        """Raw scores of every node: columnar plugins implement this (and inherit ``score``), the others
        implement ``score`` and inherit this loop."""
        check = self.score
        return np.array([check(state, pod, node) for node in batch.nodes], np.int64)

    def normalize(self, state: CycleState, pod: PodRecord, scores: list[int]) -> None:
        """Rescale raw scores in place into 0..MAX_NODE_SCORE (default: they already are)."""

    def normalize_batch(self, state: CycleState, pod: PodRecord, scores: Int64Array) -> Int64Array:
        """``normalize`` over an array: columnar plugins override it, the others run their list version."""
        if type(self).normalize is ScorePlugin.normalize:
            return scores  # no NormalizeScore (most plugins): nothing to convert to a list and back
        as_list = scores.tolist()
        self.normalize(state, pod, as_list)
        return np.array(as_list, np.int64)


class PostFilterPlugin(Plugin):
    """A plugin with the PostFilter extension point: run when no node fits, to make the pod schedulable
    in a later cycle (preemption, deallocating a claim). It returns its status (Success when it helped)
    and, optionally, a nomination and the writes it would make."""

    def post_filter(self, state: CycleState, pod: PodRecord,
                    statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status]:
        """The plugin's answer for a pod that fits nowhere."""
        raise NotImplementedError


class PluginError(Exception):
    """Raised by a plugin for an internal error; the runtime turns it into an Error status."""


def default_normalize(scores: list[int], reverse: bool, max_priority: int = MAX_NODE_SCORE) -> None:
    """helper.DefaultNormalizeScore: scale to max_priority by the largest score, optionally reversed."""
    highest = max(max(scores, default=0), 0)
    if highest == 0:
        if reverse:
            for i in range(len(scores)):
                scores[i] = max_priority
        return
    for i, score in enumerate(scores):
        scaled = go_div(max_priority * score, highest)
        scores[i] = max_priority - scaled if reverse else scaled


def default_normalize_batch(scores: Int64Array, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> Int64Array:
    """default_normalize over an array (the same integer arithmetic, truncating toward zero)."""
    from extender.cluster.columns import trunc_div

    highest = max(int(scores.max()) if len(scores) else 0, 0)
    if highest == 0:
        return np.full(len(scores), max_priority, np.int64) if reverse else scores
    scaled = trunc_div(max_priority * scores, highest)
    return max_priority - scaled if reverse else scaled


def go_div(a: int, b: int) -> int:
    """Integer division truncating toward zero, as Go's ``/`` on integers does."""
    if a >= 0 and b > 0:  # the usual case: floor and truncation agree
        return a // b
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q
