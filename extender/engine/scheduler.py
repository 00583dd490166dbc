"""The extender's verbs over the engine: filter, prioritize and bind for one profile, on the cache.

This is the domain side of each HTTP route: it takes already-decoded request parts (a raw Pod, node
names or raw Nodes) and returns plain answers; the HTTP layer only translates. Nodes are resolved
from the cache when only names arrive (nodeCacheCapable) and taken as sent, together with the cache's
pods on them, when full Node objects arrive.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np
import orjson

from extender.cluster.cache import CacheError, ClusterCache, source_key
from extender.cluster.columns import Int64Array, IntpArray, NodeBatch, NodeNames
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import NodeRecord, PodRecord, RecordError
from extender.cluster.snapshot import Snapshot
from extender.engine.equivalence import EquivalenceCache, equivalence_key
from extender.engine.framework import Code, CycleState
from extender.engine.mapping import map_scores
from extender.engine.plugins.dra_claims import has_claims
from extender.engine.plugins.dra_extended_resources import dra_equivalence_suffix
from extender.engine.plugins.dynamic_resources import claims_to_assume
from extender.engine.preemption import Candidate, process_preemption
from extender.engine.recent import RecentPods
from extender.engine.runtime import Framework, PluginScoreError
from extender.engine.sent_nodes import SentNode, SentNodeError
from extender.kube.release import Release

UNKNOWN_NODE_REASON = "node(s) unknown to the scheduler extender"

T = TypeVar("T")
# Runs a step of bind that touches the cache where the cache lives (the engine thread in the service).
CacheStep = Callable[..., Awaitable[Any]]


async def _in_place(fn: Callable[..., T], *args: Any) -> T:
    return fn(*args)


class RequestError(ValueError):
    """A request whose content cannot be used (bad Pod, bad Node); the message names the field."""


class MalformedError(RequestError):
    """Part of a request that is not even valid JSON (found only when that part is read): a bad request."""


@dataclass
class FilterAnswer:
    """The outcome of a filter call in domain terms."""

    passed: NodeNames = field(default_factory=lambda: NodeNames.encoded([]))  # with names in, their JSON text
    passed_nodes: list[Any] | None = None  # the passing Nodes as sent (SentNode.echo)
    failed: dict[str, str] = field(default_factory=dict)
    failed_unresolvable: dict[str, str] = field(default_factory=dict)
    error: str = ""
    # reason -> count, for metrics
    reasons: dict[str, int] = field(default_factory=dict)


class Binder(Protocol):
    """Creates the Binding of a pod to a node (through the apiserver, or nowhere for a static cluster)."""

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """Bind, or raise an exception whose message says why."""

    async def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The pod as the source knows it, for a bind of a pod the cache has not seen (None if unknown)."""


class BindError(RuntimeError):
    """A binding that failed; the message is returned to kube-scheduler."""


class StaticBinder:
    """For a static cluster dump: binding only assumes the pod in our cache."""

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        return None

    async def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        return None


# The pod warm_up runs through the profiles: one container asking for nothing, no affinity, no claims.
_WARM_UP_POD: dict[str, Any] = {
    "kind": "Pod",
    "metadata": {"name": "extender-warm-up", "namespace": "default", "uid": "extender-warm-up"},
    "spec": {"containers": [{"name": "warm-up"}]},
}

_RECORD_WEIGHT = 8


class HostScores:
    """prioritize's answer: each host given, in order, and its score; iterates as (host, score) pairs."""

    __slots__ = ("hosts", "scores")

    def __init__(self, hosts: list[str], scores: Int64Array) -> None:
        self.hosts = hosts
        self.scores = scores

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return zip(self.hosts, self.scores.tolist(), strict=True)

    def __len__(self) -> int:
        return len(self.hosts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HostScores) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # mutable contents, like a list


def _identity(raw: Mapping[str, Any]) -> tuple[str, str] | None:
    """A pod object's UID and resourceVersion, when it has both (an apiserver's object always does)."""
    meta = raw.get("metadata")
    if not isinstance(meta, Mapping):
        return None
    uid, version = meta.get("uid"), meta.get("resourceVersion")
    if isinstance(uid, str) and uid and isinstance(version, str) and version:
        return uid, version
    return None


class Scheduler:
    """The profiles' frameworks over one cache."""

    def __init__(self, cache: ClusterCache, frameworks: Sequence[Framework], binder: Binder | None = None,
                 *, equivalence_cache: bool = True) -> None:
        if not frameworks:
            raise ValueError("at least one profile is required")
        self.cache = cache
        self.frameworks = {fw.name: fw for fw in frameworks}
        self.default_profile = frameworks[0].name
        self.binder: Binder = binder or StaticBinder()
        # The last requests' pods (see pod_record), bounded in bytes: a pod can be as large as a request body.
        self.recent = RecentPods()
        # One equivalence cache per profile (verdicts depend on the profile's plugins and args).
        self.equivalence: dict[str, EquivalenceCache] = (
            {name: EquivalenceCache() for name in self.frameworks} if equivalence_cache else {})

    def framework(self, profile: str | None) -> Framework:
        """The framework of a profile; KeyError if there is none of that name."""
        return self.frameworks[profile or self.default_profile]

    @property
    def release(self) -> Release:
        """The kube-scheduler release the profiles follow (they are built for one release together)."""
        return self.frameworks[self.default_profile].release

    def use_frameworks(self, frameworks: Sequence[Framework]) -> None:
        """Replace the profiles' frameworks by ones built for another release (the same profile names), e.g.
        once the apiserver's version is known. Run where the cache lives (the engine thread in the service), so
        that no request sees half of each; plugin timers carry over, equivalence caches start empty."""
        names = [fw.name for fw in frameworks]
        if sorted(names) != sorted(self.frameworks) or names[0] != self.default_profile:
            raise ValueError(f"profiles {names} do not match {list(self.frameworks)}")
        for fw in frameworks:
            fw.timer = self.frameworks[fw.name].timer
        self.frameworks = {fw.name: fw for fw in frameworks}
        if self.equivalence:
            self.equivalence = {name: EquivalenceCache() for name in self.frameworks}

    # ---- inputs --------------------------------------------------------------------------------
    def pod_record(self, raw: Any) -> PodRecord:
        """The incoming pod as a record, remembered for the next request of the same pod and for its bind."""
        if not isinstance(raw, Mapping):
            raise RequestError("Pod: expected a Pod object")
        # kube-scheduler sends the same pod object to filter, then to prioritize: its record (with whatever
        # plugins derived from it) is built once. A record is reused only for a pod equal to it in full, so a
        # hand-written request that keeps a UID and resourceVersion but changes the pod gets a fresh one.
        identity = _identity(raw)
        held = self.recent.record(*identity) if identity is not None else None
        if held is not None and held.raw == raw:
            return held
        try:
            pod = PodRecord(raw, minor=self.cache.release.minor)
        except RecordError as err:
            raise RequestError(f"Pod: {err}") from err
        try:
            # A record (the decoded pod, and what plugins derive from it) weighs several times its JSON.
            weight: int | None = _RECORD_WEIGHT * len(orjson.dumps(raw))
        except (TypeError, orjson.JSONEncodeError):  # an integer past 64 bits: not kept as a record
            weight = None
        self.recent.remember(pod, weight)
        return pod

    def _equivalence(self, framework: Framework, snapshot: Snapshot,
                     pod: PodRecord) -> tuple[EquivalenceCache, str] | None:
        """The profile's equivalence cache and the pod's class key in it (None when disabled)."""
        equivalence = self.equivalence.get(framework.name)
        if equivalence is None or not framework.reuses_equivalence:
            return None  # never consulted: the pod's key is not worth computing
        return equivalence, equivalence_key(pod.raw) + dra_equivalence_suffix(snapshot, pod)

    def resolve_names(self, snapshot: Snapshot, names: Sequence[Any]) -> tuple[NodeBatch, IntpArray]:
        """The known nodes among the given names as a batch of the snapshot's rows (in order), and the
        position in ``names`` of each of them; names the cache does not know are left out."""
        columns = snapshot.columns
        try:
            rows = columns.rows_named(names)
        except TypeError:  # an unhashable name
            raise RequestError("NodeNames: expected a list of strings") from None
        known = rows >= 0
        if not known.all():
            if not all(isinstance(names[i], str) for i in (~known).nonzero()[0].tolist()):
                raise RequestError("NodeNames: expected a list of strings")
            positions = known.nonzero()[0]
            rows = rows[positions]
        else:
            positions = np.arange(len(rows))
        return NodeBatch.of_rows(columns, rows), positions

    def resolve_nodes(self, snapshot: Snapshot, items: Sequence[SentNode]) -> list[NodeInfo]:
        """NodeInfos for full Node objects: as sent, with the cache's pods on them.

        A node whose resourceVersion equals the cached one is the cached node (the apiserver gives an object
        a new resourceVersion on every change), and its text is never decoded.
        """
        out: list[NodeInfo] = []
        node_infos = snapshot.node_infos
        for i, sent in enumerate(items):
            cached = node_infos.get(sent.name) if sent.name is not None else None
            if cached is not None and sent.resource_version and cached.node is not None and (
                    cached.node.resource_version == sent.resource_version):
                out.append(cached)
                continue
            try:
                raw = sent.object
            except SentNodeError as err:
                raise MalformedError(f"Nodes.items[{i}]: {err}") from None
            if not isinstance(raw, Mapping):
                raise RequestError(f"Nodes.items[{i}]: expected a Node object")
            try:
                record = NodeRecord(raw)
            except RecordError as err:
                raise RequestError(f"Nodes.items[{i}]: {err}") from err
            if cached is not None:
                info = cached.clone()
                info.set_node(record)
            else:
                info = NodeInfo(record.name, record)
            out.append(info)
        return out

    # ---- verbs ---------------------------------------------------------------------------------
    def filter(self, profile: str | None, raw_pod: Any, names: Sequence[Any] | None,
               nodes: Sequence[SentNode] | None) -> FilterAnswer:
        """Which of the given nodes the pod fits, and why the others do not."""
        framework = self.framework(profile)
        answer = FilterAnswer()
        pod = self.pod_record(raw_pod)
        snapshot = self.cache.snapshot()
        if names is not None:
            candidates, positions = self.resolve_names(snapshot, names)
            known_names: list[str] = [names[i] for i in positions.tolist()] \
                if len(positions) < len(names) else list(names)
        else:
            candidates = NodeBatch.of(self.resolve_nodes(snapshot, nodes or []), snapshot.columns)
            known_names = [node.name for node in candidates.nodes]
        state = CycleState(snapshot)
        result = framework.filter(state, pod, candidates, self._equivalence(framework, snapshot, pod))
        if result.error is not None:
            answer.error = result.error.message
            return answer
        if names is not None and len(known_names) < len(names):
            known = set(known_names)
            unknown = [name for name in names if name not in known]
            answer.failed = dict.fromkeys(unknown, UNKNOWN_NODE_REASON)
            answer.reasons[UNKNOWN_NODE_REASON] = len(unknown)
        codes = result.codes
        statuses = result.statuses
        # Failures in the order the nodes were given, so answers read like the request; each reason's
        # message is made once and shared by every node it rejected.
        rejected = codes.nonzero()[0]
        if len(rejected):
            messages = np.array(["", *(status.message for status in statuses)], dtype=object)
            unresolvable = np.array([False, *(status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
                                              for status in statuses)])
            name_array = np.array(known_names, dtype=object)
            for into, where in ((answer.failed, ~unresolvable[codes[rejected]]),
                                (answer.failed_unresolvable, unresolvable[codes[rejected]])):
                chosen = rejected[where]
                into.update(zip(name_array[chosen].tolist(), messages[codes[chosen]].tolist(), strict=True))
            for code, count in enumerate(np.bincount(codes).tolist()):
                if code and count:
                    for reason in statuses[code - 1].reasons:
                        answer.reasons[reason] = answer.reasons.get(reason, 0) + count
        passed = (codes == 0).nonzero()[0]
        if names is not None:
            # kube-scheduler sends these names back to prioritize as the text we answer them with: that text
            # finds their rows (and, in the HTTP layer, the decoded list) without looking each name up again.
            if isinstance(names, NodeNames) and len(passed) == len(names):
                # Every name known and passed (what kube-scheduler usually sends: the nodes its own filters
                # passed): the answer is the request's own list, whose text found its rows already.
                answer.passed = names
            else:
                checked = isinstance(names, NodeNames) and names.unique()  # no name twice in the request
                answer.passed = NodeNames.encoded([known_names[i] for i in passed.tolist()], unique=checked or None)
                snapshot.columns.remember_rows(answer.passed, candidates.rows[passed])
        else:
            sent = nodes or []
            answer.passed_nodes = [sent[i].echo() for i in passed.tolist()]
        return answer

    def prioritize(self, profile: str | None, raw_pod: Any, names: Sequence[Any] | None,
                   nodes: Sequence[SentNode] | None) -> HostScores:
        """Each given node's 0..10 score, in the order given; unknown nodes score 0."""
        framework = self.framework(profile)
        pod = self.pod_record(raw_pod)
        snapshot = self.cache.snapshot()
        if names is not None:
            candidates, positions = self.resolve_names(snapshot, names)
            order = list(names)  # every name is a string once resolved
        else:
            candidates = NodeBatch.of(self.resolve_nodes(snapshot, nodes or []), snapshot.columns)
            positions = np.arange(len(candidates))
            order = [n.name for n in candidates.nodes]
        state = CycleState(snapshot)
        try:
            totals = framework.score(state, pod, candidates, None, self._equivalence(framework, snapshot, pod))
        except PluginScoreError as err:
            raise RequestError(str(err)) from err
        mapped = map_scores(totals, state.score_weight, framework.profile.score_mapping,
                            framework.profile.max_score)
        scores = np.zeros(len(order), np.int64)  # unknown nodes score 0
        scores[positions] = mapped
        return HostScores(order, scores)

    def preempt(self, profile: str | None, raw_pod: Any,
                candidates: Mapping[str, tuple[Sequence[str | Mapping[str, Any]], int]]
                ) -> dict[str, tuple[list[str], int]]:
        """Candidate nodes (node -> (victims as UIDs or full pods, PDB violations)) on which the pod passes
        our filters after eviction, each with the victims (by UID) our filters need."""
        framework = self.framework(profile)
        pod = self.pod_record(raw_pod)
        # A victim proposed twice on one node is one victim (dict.fromkeys keeps the first, in order).
        proposed = {
            node: Candidate(list(dict.fromkeys(v if isinstance(v, str) else source_key(v, "Pod") for v in victims)),
                            pdb)
            for node, (victims, pdb) in candidates.items()
        }
        answer = process_preemption(framework, self.cache.snapshot(), pod, proposed)
        return {node: (c.victims, c.num_pdb_violations) for node, c in answer.items()}

    def warm_up(self) -> None:
        """Build now what the first request would otherwise build: the snapshot with its columns and
        batch of every node, and the default profile's cluster-wide indexes (InterPodAffinity's counts over
        every node, ImageLocality's image counts), by running that profile's filter and score for a pod
        that asks for nothing, over every node, then each plugin's own ``warm_up`` (PodTopologySpread's
        index of every node's pods by label set). Called once the cache is loaded and before the service
        reports itself ready, so the first pod kube-scheduler sends costs what the next ones do.

        Only the default profile (the one ``/filter`` serves): warming every profile would make readiness
        wait for profiles that may never be asked (the legacy preset's per-pod scores alone took 6.6 s of CPU
        at 1000 nodes and 30000 pods). Nothing of it is kept beyond those indexes: the pod is no request's
        (not remembered for a bind, not in the equivalence caches) and the cache is only read."""
        snapshot = self.cache.snapshot()
        every = snapshot.all_nodes()
        pod = PodRecord(_WARM_UP_POD)
        framework = self.framework(None)
        result = framework.filter(CycleState(snapshot), pod, every)
        if result.error is None:
            feasible = NodeBatch.of_rows(snapshot.columns, every.rows[result.codes == 0])
            with contextlib.suppress(PluginScoreError):
                framework.score(CycleState(snapshot), pod, feasible)
        framework.warm_up(snapshot)

    def _claims_to_assume(self, snapshot: Snapshot, pod: PodRecord, node: NodeInfo) -> list[dict[str, Any]]:
        """The pod's claims allocated for the node, to count until the watch reports the real ones.

        kube-scheduler writes the allocation itself (PreBind, before it calls bind); until our watch
        sees it, the devices the allocator picks for that node stand in for it. A claim the cache
        already reports allocated is not assumed again.
        """
        framework = self.framework(None)
        state = CycleState(snapshot)
        result = framework.filter(state, pod, [node])
        if result.error is not None or not result.feasible:
            return []
        return claims_to_assume(framework.filter_plugins, state, pod, node.name)

    async def bind(self, namespace: str, name: str, uid: str, node: str, *,
                   on_cache: CacheStep = _in_place) -> None:
        """Bind a pod: assume it (so the next filter counts it), bind, then finish or forget.

        The pod is found among those recently filtered, then in the cache, then (live) from the apiserver;
        its namespace, name and UID must all be those of the request. A pod already bound or being bound is
        refused: a Binding is never created twice. Each step touching the cache runs through ``on_cache``
        (the engine thread in the service); the apiserver calls run between them.
        """
        if not name or not node:
            raise BindError("PodName and Node are required")
        namespace = namespace or "default"
        # The usual case (the pod was filtered or is cached) finds and assumes it in one step on the cache.
        assumed = await on_cache(self._find_and_assume, namespace, name, uid, node)
        if assumed is None:
            raw = await self.binder.get_pod(namespace, name)
            pod: PodRecord | None = None
            if raw is not None and (not uid or (raw.get("metadata") or {}).get("uid") == uid):
                try:
                    pod = PodRecord(raw)
                except RecordError as err:
                    raise BindError(f"pod {namespace}/{name}: {err}") from err
            if pod is None:
                raise BindError(f"pod {namespace}/{name} (UID {uid or 'unknown'}) is not known to the extender")
            _check_identity(pod, namespace, name, uid)
            assumed = await on_cache(self._assume, pod, namespace, name, node)
        try:
            await self.binder.bind(namespace, name, uid, node)
        except Exception as err:
            await on_cache(self.cache.forget_pod, assumed.cache_key)
            raise BindError(str(err) or type(err).__name__) from err
        await on_cache(self._bound, assumed.cache_key)

    def _bound(self, key: str) -> None:
        """The Binding was created: the assumed pod's expiry clock starts, and the cache alone holds it now."""
        self.cache.finish_binding(key)
        self.recent.forget(key)

    def _find_and_assume(self, namespace: str, name: str, uid: str, node: str) -> PodRecord | None:
        """The known pod, checked and assumed on ``node``; None when the extender does not know it."""
        pod = self._known_pod(namespace, name, uid)
        if pod is None:
            return None
        _check_identity(pod, namespace, name, uid)
        return self._assume(pod, namespace, name, node)

    def _known_pod(self, namespace: str, name: str, uid: str) -> PodRecord | None:
        if not uid:  # a hand-written bind: the pod of that name, whatever its UID (for a precise refusal)
            return self.cache.find_pod(namespace, name)
        # By key, then by name (a pod of that name with another UID is refused by name, pending or placed): one
        # lookup each, never a walk over every pod of the cache for a UID nobody holds (37 ms at 150000 pods).
        return self.recent.get(uid) or self.cache.get_pod(uid) or self.cache.find_named(namespace, name)

    def _assume(self, pod: PodRecord, namespace: str, name: str, node: str) -> PodRecord:
        placed = self.cache.get_pod(pod.cache_key)
        bound_to = pod.node_name or (placed.node_name if placed is not None else "")
        if bound_to:
            raise BindError(f"pod {namespace}/{name} is already bound to node {bound_to!r}")
        known = self.cache.node_info(node)
        if known is None or known.node is None:  # none, or only a placeholder for pods naming it
            raise BindError(f"node {node!r} is not known to the extender")
        claims: list[dict[str, Any]] = []
        if has_claims(pod):  # not extended ones
            # Only the claims' allocation needs a snapshot: refreshing one for every bind would copy the nodes
            # the last events changed once more than the next request does.
            snapshot = self.cache.snapshot()
            target = snapshot.get(node)
            assert target is not None
            claims = self._claims_to_assume(snapshot, pod, target)
        try:
            return self.cache.assume_pod(pod, node, claims)
        except CacheError as err:
            raise BindError(str(err)) from err


def _check_identity(pod: PodRecord, namespace: str, name: str, uid: str) -> None:
    """A bind names its pod three ways (namespace, name, UID): all must be the pod found, or nothing binds. A
    bind without a UID names only a pod that has none (kube-scheduler always sends the pod's UID)."""
    if (pod.namespace, pod.name) != (namespace, name) or (uid or "") != (pod.uid or ""):
        raise BindError(f"bind names pod {namespace}/{name} with UID {uid or '(none)'}, but the extender knows "
                        f"that pod as {pod.namespace}/{pod.name} with UID {pod.uid or '(none)'}: not bound")
