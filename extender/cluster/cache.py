"""The scheduler cache: nodes, assigned and assumed pods, and the other objects the plugins read.

Kept current from a source (a static dump, or later the apiserver's watch) and read through
:meth:`ClusterCache.snapshot`. It mirrors kube-scheduler's cache (pkg/scheduler/backend/cache):

- only assigned, non-terminal pods count toward a node's aggregates;
- a pod added for a node that is not known yet creates a placeholder entry, and a node deleted while
  pods remain on it becomes a placeholder; placeholders never appear in a snapshot;
- assume / finish binding / forget around bind: an assumed pod counts at once; when the watch confirms
  it, the confirmed pod replaces it without double counting; a failed bind forgets it; an assumed pod
  expires only after its binding finished and its TTL passed (0 = never).

All methods run on the service's event loop thread; nothing here blocks.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from extender.cluster.dra_objects import DRA_KINDS, DRAObjects
from extender.cluster.keys import object_key
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import TERMINAL_PHASES, NodeRecord, PodRecord, slim_pod
from extender.cluster.snapshot import Snapshot
from extender.kube.release import Release, default_release

# Kinds kept as raw objects for the plugins that read them (spreading, volumes, namespaces, preemption's
# disruption budgets; priority classes give a pod that was never admitted its priority).
OBJECT_KINDS = (
    "Service",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "CSINode",
    "Namespace",
    "CSIDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
    "PodDisruptionBudget",
    "PriorityClass",
)


class CacheError(ValueError):
    """A cache operation that contradicts the cache's state (e.g. assuming a pod twice)."""


@dataclass(slots=True)
class _PodState:
    pod: PodRecord
    assumed: bool = False
    binding_finished: bool = False
    deadline: float | None = None


def same_but_version(held: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether two versions of an object are equal in everything but metadata.resourceVersion."""
    return equal_but(held, new, _VERSION)


def same_but_heartbeat(held: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether two versions of a Node are equal in everything but what a kubelet's periodic status report
    changes and no scheduler reads: metadata.resourceVersion and managedFields (the writers' bookkeeping, with
    the time of each write), and each condition's lastHeartbeatTime; and apiVersion, which a watch event's
    object states and a list's items do not (a Node's is always v1)."""
    return equal_but(held, new, _HEARTBEAT)


#: What equal_but leaves out: for each key of a mapping, None (the key may be absent on either side, and its value
#: is not compared), a rule for its own value (a mapping), or a rule for each item of its list (a 1-tuple).
Ignored = Mapping[str, Any]
_VERSION: Ignored = {"metadata": {"resourceVersion": None}}
_HEARTBEAT: Ignored = {"apiVersion": None, "metadata": {"resourceVersion": None, "managedFields": None},
                       "status": {"conditions": ({"lastHeartbeatTime": None},)}}
_STATUS: Ignored = {"apiVersion": None, "status": None, "metadata": {"resourceVersion": None, "managedFields": None}}
_COMPARED = object()

#: Kinds the engine reads for their identity and spec alone (default spreading's selectors: a Service's, a
#: controller's). Their controllers write their status at each step of their pods (a ReplicaSet's replica counts
#: as each of its pods is created, scheduled and becomes ready), and such a version leaves the snapshot as it was.
STATUS_UNREAD_KINDS = frozenset({"Service", "ReplicationController", "ReplicaSet", "StatefulSet"})


def equal_but(held: Any, new: Any, ignored: Ignored | tuple[Ignored]) -> bool:
    """Two JSON values equal in everything but what ``ignored`` leaves out (see Ignored): mappings with the same
    keys, or lists of the same length item by item, where a rule applies."""
    if isinstance(ignored, tuple):
        return isinstance(held, list) and isinstance(new, list) and len(held) == len(new) \
            and all(equal_but(a, b, ignored[0]) for a, b in zip(held, new, strict=True))
    if not (isinstance(held, Mapping) and isinstance(new, Mapping)):
        return False
    if held.keys() != new.keys():
        skipped = {key for key, rule in ignored.items() if rule is None}
        if not skipped or held.keys() - skipped != new.keys() - skipped:
            return False
    for key, value in new.items():
        rule = ignored.get(key, _COMPARED)
        if rule is _COMPARED:
            if held[key] != value:
                return False
        elif rule is not None and not equal_but(held[key], value, rule):
            return False
    return True


def source_key(obj: Mapping[str, Any], kind: str) -> str:
    """The key the cache files an object under: a pod's UID (namespace/name without one), a node's name."""
    meta = obj.get("metadata") or {}
    if kind == "Pod":
        return str(meta.get("uid") or f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}")
    if kind == "Node":
        return str(meta.get("name") or "")
    return object_key(obj, kind)


class ClusterCache:
    """Nodes, pods and related objects; the single writer of scheduling state."""

    def __init__(self, assumed_ttl_seconds: float = 30.0, release: Release | None = None) -> None:
        self.assumed_ttl_seconds = assumed_ttl_seconds
        # The kube-scheduler release whose rules the cache's own computations follow (a resized pod's requests,
        # which DRA objects count): set before the first object arrives, see follow().
        self.release = release or default_release()
        self._nodes: dict[str, NodeInfo] = {}
        self._pods: dict[str, _PodState] = {}
        # Keys of the assumed pods among them: counts and expiry read these, never all 150k pods.
        self._assumed: set[str] = set()
        self._pending: dict[str, PodRecord] = {}
        # The key of each pod held (assigned, assumed or pending) by namespace and name: a bind or an explain
        # that names a pod without its UID finds it here, never by a walk over every pod. Two pods can share a
        # name for a while (one deleted, its successor created): the name then holds a tuple of their keys.
        # (One key string, the very one _pods holds, per name: about 100 bytes a pod at 150,000 pods.)
        self._named: dict[tuple[str, str], str | tuple[str, ...]] = {}
        self._objects: dict[str, dict[str, Mapping[str, Any]]] = {kind: {} for kind in OBJECT_KINDS}
        self._dirty: set[str] = set()
        # Kinds of _objects changed since the last snapshot: only their mappings are copied into the next one
        # (the others stay the very mappings readers memoise by, e.g. the Service index of default spreading).
        self._objects_dirty: set[str] = set(OBJECT_KINDS)
        # ResourceSlices, ResourceClaims, DeviceClasses, DeviceTaintRules (records), assumed claims
        self.dra = DRAObjects(self.release)
        self._snapshot = Snapshot()

    def follow(self, release: Release) -> None:
        """Follow another release's rules; only before any pod or DRA object is held (the live source settles the
        release before it lists anything, and a dump's recorded version is read before its objects)."""
        if self._pods or self._pending or not self.dra.empty:
            raise CacheError("the cache's release can only change while it holds no pods and no DRA objects")
        self.release = release
        self.dra = DRAObjects(release)

    @classmethod
    def of_snapshot(cls, snapshot: Snapshot, release: Release) -> ClusterCache:
        """A cache of its own holding a snapshot's nodes (copies, with their pods), objects and DRA state, for
        placing pods on a what-if copy of the cluster: nothing done to it reaches the snapshot's cache.
        Assumed pods never expire in it (nothing confirms them). ``release`` is the one whose rules the snapshot's
        cache followed (the snapshot's DRA view already carries its device taint rules)."""
        cache = cls(assumed_ttl_seconds=0, release=release)
        for info in snapshot.node_list:
            cache._nodes[info.name] = info.clone()
            cache._dirty.add(info.name)
        cache._objects = {kind: dict(objects) for kind, objects in snapshot.objects.items()}
        cache._objects_dirty = set(cache._objects)
        cache.dra = DRAObjects.of_view(snapshot.dra, release)
        return cache

    def copy(self) -> ClusterCache:
        """An independent cache holding what this one holds, for what-if work (plan variants start from one
        base). Records are shared (they are immutable); NodeInfos, the pod and object maps and the DRA state
        are copied, and the copy builds its own snapshot: neither cache sees the other's later changes."""
        other = ClusterCache(self.assumed_ttl_seconds, self.release)
        other._nodes = {name: info.clone() for name, info in self._nodes.items()}
        other._pods = {key: _PodState(state.pod, state.assumed, state.binding_finished, state.deadline)
                       for key, state in self._pods.items()}
        other._assumed = set(self._assumed)
        other._pending = dict(self._pending)
        other._named = dict(self._named)
        other._objects = {kind: dict(objects) for kind, objects in self._objects.items()}
        other._objects_dirty = set(other._objects)
        other._dirty = set(other._nodes)
        other.dra = self.dra.copy()
        return other

    # ---- nodes ---------------------------------------------------------------------------------
    def upsert_node(self, raw: Mapping[str, Any]) -> NodeRecord:
        """Add or replace a node (its pods stay).

        A new version that differs from the held one only where a kubelet's periodic status report does (its
        conditions' heartbeat times, the version, the managed fields; see same_but_heartbeat) leaves the cache
        as it was: same record, and no node changed for the next snapshot and the memos kept by node
        generation. At 5000 nodes kubelets send such a report about 17 times a second.
        """
        held = self._unchanged_node(raw)
        if held is not None:
            return held
        record = NodeRecord(raw)
        info = self._nodes.get(record.name)
        if info is None:
            self._nodes[record.name] = NodeInfo(record.name, record)
        else:
            info.set_node(record)
        self._dirty.add(record.name)
        return record

    def _unchanged_node(self, raw: Any) -> NodeRecord | None:
        """The record held for this node when ``raw`` equals its object but for a heartbeat; the record then
        takes ``raw`` as its object (and its resourceVersion), so that it holds the current version. Nothing
        else of a record is derived from what a heartbeat changes, and plugins read nothing else of it."""
        meta = raw.get("metadata") if isinstance(raw, Mapping) else None
        if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
            return None  # the full path reports what is wrong with it
        info = self._nodes.get(meta["name"])
        held = info.node if info is not None else None
        if held is None or not same_but_heartbeat(held.raw, raw):
            return None
        held.raw = raw
        held.resource_version = str(meta.get("resourceVersion") or "")
        return held

    def remove_node(self, name: str) -> None:
        """Delete a node; while pods remain on it, it stays as a placeholder."""
        info = self._nodes.get(name)
        if info is None:
            return
        if info.pods:
            info.remove_node()
        else:
            del self._nodes[name]
        self._dirty.add(name)

    # ---- pods ----------------------------------------------------------------------------------
    def upsert_pod(self, raw: Mapping[str, Any]) -> PodRecord:
        """Add or replace a pod as reported by the source (confirms an assumed pod).

        A new version that differs from the held one only in its resourceVersion once trimmed to what the
        scheduler reads (a kubelet's status update of a running pod, kube-scheduler's PodScheduled condition, a
        relist of an unchanged pod) leaves the cache as it was: same record, same accounting, and no node
        changed for the next snapshot and the memos kept by node generation.
        """
        slim = slim_pod(raw) if isinstance(raw, Mapping) else raw
        held = self._unchanged_pod(slim)
        if held is not None:
            return held
        record = PodRecord(slim, minor=self.release.minor)
        state = self._pods.get(record.cache_key)
        if state is not None and state.assumed and not record.node_name:
            # An event from before our Binding (or a relist racing it): the assumption stands until the
            # bound pod arrives, as kube-scheduler's cache, which only ever sees assigned pods, keeps it.
            return state.pod
        if state is not None:
            self._unaccount(state.pod)
            del self._pods[record.cache_key]
            self._assumed.discard(record.cache_key)
        self._pending.pop(record.cache_key, None)
        if record.node_name and record.phase not in TERMINAL_PHASES:
            self._account(record)
            self._pods[record.cache_key] = _PodState(record)
        elif not record.node_name:
            self._pending[record.cache_key] = record
        if record.cache_key in self._pods or record.cache_key in self._pending:
            self._hold_name(record)
        else:  # a terminal pod: no longer held
            self._drop_name(record)
        return record

    def _unchanged_pod(self, slim: Any) -> PodRecord | None:
        """The record held for this pod (assigned, assumed or pending) when ``slim`` equals its object in
        everything but metadata.resourceVersion; the record then takes ``slim`` as its object, so that it
        holds the current version. Nothing else of a record is derived from the version, and the record's
        object is all that plugins read of a pod: what they see is unchanged.

        For an assumed pod such a version is its binding's confirmation (the Binding sets spec.nodeName, which
        the assumed object already has, and the PodScheduled condition, which the trim leaves out): the pod is
        confirmed where it is, so its node stays as the last snapshot copied it. Rebuilding the record and
        moving it off its node and back, as any other version does, would give the next request one more node
        to copy and every memo kept by node generation one more node to redo, for every pod bound. An event
        from before the Binding has no spec.nodeName and is not equal: the full path keeps the assumption."""
        if not isinstance(slim, Mapping) or not isinstance(slim.get("metadata"), Mapping):
            return None  # the full path reports what is wrong with it
        key = source_key(slim, "Pod")
        state = self._pods.get(key)
        if state is not None:
            held = state.pod
        else:
            pending = self._pending.get(key)
            if pending is None:
                return None
            held = pending
        if not same_but_version(held.raw, slim):
            return None
        held.raw = slim
        if state is not None and state.assumed:
            self._pods[key] = _PodState(held)  # confirmed: no longer assumed, no expiry
            self._assumed.discard(key)
        return held

    def remove_pod(self, raw_or_key: Mapping[str, Any] | str) -> None:
        """Delete a pod (by object or cache key); unknown pods are ignored."""
        key = raw_or_key if isinstance(raw_or_key, str) else PodRecord(raw_or_key).cache_key
        pending = self._pending.pop(key, None)
        if pending is not None:
            self._drop_name(pending)
        state = self._pods.pop(key, None)
        if state is not None:
            self._drop_name(state.pod)
            self._assumed.discard(key)
            self._unaccount(state.pod)
            if state.assumed:  # deleted before its binding was confirmed: its claims' devices go back too
                self.dra.forget(key)

    def _hold_name(self, pod: PodRecord) -> None:
        """The pod is held: its key is found by its namespace and name."""
        name, key = (pod.namespace, pod.name), pod.cache_key
        held = self._named.get(name)
        if held is None or held == key:
            self._named[name] = key
        elif isinstance(held, str):
            self._named[name] = (held, key)
        elif key not in held:
            self._named[name] = (*held, key)

    def _drop_name(self, pod: PodRecord) -> None:
        """The pod is no longer held: its key leaves the name index."""
        name, key = (pod.namespace, pod.name), pod.cache_key
        held = self._named.get(name)
        if held is None:
            return
        if isinstance(held, str):
            if held == key:
                del self._named[name]
            return
        rest = tuple(k for k in held if k != key)
        self._named[name] = rest[0] if len(rest) == 1 else rest

    def _account(self, pod: PodRecord) -> None:
        info = self._nodes.get(pod.node_name)
        if info is None:
            info = self._nodes[pod.node_name] = NodeInfo(pod.node_name)
        info.add_pod(pod)
        self._dirty.add(pod.node_name)

    def _unaccount(self, pod: PodRecord) -> None:
        info = self._nodes.get(pod.node_name)
        if info is None:
            return
        info.remove_pod(pod)
        if info.node is None and not info.pods:
            del self._nodes[pod.node_name]
        self._dirty.add(pod.node_name)

    def get_pod(self, key: str) -> PodRecord | None:
        """An assigned, assumed or pending pod by cache key (UID, or namespace/name without one)."""
        state = self._pods.get(key)
        if state is not None:
            return state.pod
        return self._pending.get(key)

    def pending_pods(self) -> list[PodRecord]:
        """The pods waiting for a node (neither bound nor assumed), in the order they arrived."""
        return list(self._pending.values())

    def find_pod(self, namespace: str, name: str, uid: str = "") -> PodRecord | None:
        """Look a pod up by UID first, then by namespace/name."""
        if uid:
            found = self.get_pod(uid)
            if found is not None:
                return found
        return self.find_named(namespace, name)  # a pod without a UID is held under its name too

    def find_named(self, namespace: str, name: str) -> PodRecord | None:
        """A pod of that namespace and name, whatever its UID: an assigned or assumed one before a pending one
        (when a deleted pod and its successor are both held), else None. One lookup, no walk."""
        held = self._named.get((namespace, name), ())
        pending: PodRecord | None = None
        for key in (held,) if isinstance(held, str) else held:
            state = self._pods.get(key)
            if state is not None:
                return state.pod
            pending = pending or self._pending.get(key)
        return pending

    def is_assumed(self, key: str) -> bool:
        """Whether a pod is currently assumed (bound by us, not yet confirmed by the source)."""
        state = self._pods.get(key)
        return state is not None and state.assumed

    # ---- assume / bind -------------------------------------------------------------------------
    def assume_pod(self, pod: PodRecord, node_name: str,
                   claims: Iterable[Mapping[str, Any]] = ()) -> PodRecord:
        """Count a pod on a node before its binding is confirmed; refuses a pod already placed.

        ``claims`` are the pod's ResourceClaims as they will be once bound (allocated for the node): they
        count as allocated until the source reports the claims again, or the pod is forgotten.
        """
        if pod.cache_key in self._pods:
            placed = self._pods[pod.cache_key].pod
            raise CacheError(f"pod {pod.key} is already bound to node {placed.node_name!r}")
        self.dra.assume(pod.cache_key, claims)
        assumed = pod.placed_on(node_name, minor=self.release.minor)
        self._pending.pop(pod.cache_key, None)
        self._account(assumed)
        self._pods[assumed.cache_key] = _PodState(assumed, assumed=True)
        self._assumed.add(assumed.cache_key)
        self._hold_name(assumed)
        return assumed

    def finish_binding(self, key: str, now: float | None = None) -> None:
        """The bind call returned: start the assumed pod's expiry clock."""
        state = self._pods.get(key)
        if state is None or not state.assumed:
            return
        state.binding_finished = True
        if self.assumed_ttl_seconds > 0:
            state.deadline = (time.monotonic() if now is None else now) + self.assumed_ttl_seconds

    def forget_pod(self, key: str) -> None:
        """Drop an assumed pod whose binding failed."""
        state = self._pods.get(key)
        if state is None or not state.assumed:
            return
        del self._pods[key]
        self._assumed.discard(key)
        self._drop_name(state.pod)
        self._unaccount(state.pod)
        self.dra.forget(key)

    def cleanup_expired(self, now: float | None = None) -> list[str]:
        """Expire assumed pods whose binding finished and whose TTL passed; returns their keys."""
        now = time.monotonic() if now is None else now
        expired = [
            key
            for key in self._assumed
            if (state := self._pods[key]).binding_finished and state.deadline is not None and state.deadline <= now
        ]
        for key in expired:
            self.forget_pod(key)
        return expired

    # ---- other objects -------------------------------------------------------------------------
    def upsert_object(self, kind: str, raw: Mapping[str, Any]) -> None:
        """Add or replace a Service, PV, StorageClass... (kinds in OBJECT_KINDS).

        For the kinds whose status nothing reads (STATUS_UNREAD_KINDS), a version that differs from the held one
        only in its status, resourceVersion, managedFields or apiVersion is held, but the kind is not marked
        changed: the snapshot keeps its mapping of the kind (and the memos keyed by that mapping stay valid),
        whose version of the object differs from this one in nothing the engine reads. Copying the mapping for
        such an update cost the next request about 140 µs at 10,000 ReplicaSets, and made every memo of default
        spreading's selectors start again."""
        objects = self._objects.setdefault(kind, {})
        key = object_key(raw, kind)
        held = objects.get(key)
        objects[key] = raw
        if held is None or kind not in STATUS_UNREAD_KINDS or not equal_but(held, raw, _STATUS):
            self._objects_dirty.add(kind)

    def get_object(self, kind: str, key: str) -> Mapping[str, Any] | None:
        """The latest version the source reported of an object of one of OBJECT_KINDS (the snapshot may hold an
        earlier one that differs only in what the engine does not read; see upsert_object)."""
        return self._objects.get(kind, {}).get(key)

    def remove_object(self, kind: str, raw: Mapping[str, Any]) -> None:
        """Delete an object of one of OBJECT_KINDS."""
        self._objects.get(kind, {}).pop(object_key(raw, kind), None)
        self._objects_dirty.add(kind)

    def apply(self, raw: Mapping[str, Any]) -> None:
        """Add or replace any supported object by its ``kind``."""
        kind = raw.get("kind")
        if kind == "Node":
            self.upsert_node(raw)
        elif kind == "Pod":
            self.upsert_pod(raw)
        elif kind in DRA_KINDS:
            self.dra.upsert(str(kind), raw)
        elif kind in OBJECT_KINDS:
            self.upsert_object(str(kind), raw)
        else:
            raise CacheError(f"unsupported kind {kind!r}")

    def delete(self, raw: Mapping[str, Any]) -> None:
        """Remove any supported object by its ``kind``; unknown objects are ignored."""
        kind = raw.get("kind")
        if kind == "Node":
            self.remove_node(str((raw.get("metadata") or {}).get("name") or ""))
        elif kind == "Pod":
            self.remove_pod(raw)
        elif kind in DRA_KINDS:
            self.dra.remove(str(kind), object_key(raw, str(kind)))
        elif kind in OBJECT_KINDS:
            self.remove_object(str(kind), raw)
        else:
            raise CacheError(f"unsupported kind {kind!r}")

    def keys(self, kind: str) -> set[str]:
        """The keys the cache holds for a kind as the source reported them (assumed pods excluded)."""
        if kind == "Node":
            return {name for name, info in self._nodes.items() if info.node is not None}
        if kind == "Pod":
            return (self._pods.keys() - self._assumed) | self._pending.keys()
        if kind in DRA_KINDS:
            return self.dra.keys(kind)
        return set(self._objects.get(kind, {}))

    def replace(self, kind: str, objects: Iterable[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], Exception]]:
        """Make the cache's view of a kind equal to a fresh list (a relist): upsert all, drop the rest.

        Objects that cannot be read are skipped and returned with their error; the rest still apply.
        """
        seen: set[str] = set()
        failures = self.apply_many(kind, objects, seen)
        self.drop_unseen(kind, seen)
        return failures

    def apply_many(self, kind: str, objects: Iterable[Mapping[str, Any]],
                   seen: set[str]) -> list[tuple[Mapping[str, Any], Exception]]:
        """Upsert objects of one kind, adding their keys to ``seen`` (one page of a relist)."""
        failures: list[tuple[Mapping[str, Any], Exception]] = []
        for raw in objects:
            try:
                self.apply(raw)
            except (ValueError, CacheError) as err:
                failures.append((raw, err))
                continue
            seen.add(source_key(raw, kind))
        return failures

    def drop_unseen(self, kind: str, seen: set[str]) -> None:
        """End a relist: remove the objects of a kind that the list did not return."""
        for key in self.keys(kind) - seen:
            if kind == "Node":
                self.remove_node(key)
            elif kind == "Pod":
                self.remove_pod(key)
            elif kind in DRA_KINDS:
                self.dra.remove(kind, key)
            else:
                self._objects.get(kind, {}).pop(key, None)
                self._objects_dirty.add(kind)

    def load(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """Apply many objects (nodes first is not required: pods create placeholders)."""
        for raw in objects:
            self.apply(raw)

    # ---- reading -------------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The current snapshot, refreshed by copying only the nodes changed since the last call."""
        snap = self._snapshot
        if self._dirty:
            membership_changed = records_changed = False
            replaced: list[str] = []
            for name in self._dirty:
                info = self._nodes.get(name)
                if info is None or info.node is None:
                    membership_changed |= snap.drop(name)
                else:
                    previous = snap.node_infos.get(name)
                    membership_changed |= previous is None
                    records_changed |= previous is not None and previous.node is not info.node
                    snap.put(info.clone())
                    replaced.append(name)
            self._dirty.clear()
            if membership_changed:
                # Keep the node order stable (the order nodes entered the cache), whatever the dirty set's order.
                snap.node_infos = {n: snap.node_infos[n] for n in self._nodes if n in snap.node_infos}
            snap.rebuild_lists(nodes_changed=membership_changed or records_changed,
                               replaced=None if membership_changed else replaced)
            snap.generation += 1
        # Objects and DRA state leave the generation alone: it says whether the nodes (the columns, the batch of
        # every node) changed, and an object update (a ReplicaSet's status at each of its pods' steps) does not.
        if self._objects_dirty:
            snap.objects = {kind: dict(objs) if kind in self._objects_dirty else snap.objects.get(kind, {})
                            for kind, objs in self._objects.items()}
            self._objects_dirty.clear()
        dra = self.dra.view()
        if dra is not snap.dra:
            snap.dra = dra
        return snap

    def node_names(self) -> list[str]:
        """Names of the real (non-placeholder) nodes."""
        return [name for name, info in self._nodes.items() if info.node is not None]

    def node_info(self, name: str) -> NodeInfo | None:
        """The live NodeInfo of a node, placeholder included (bind checks its target here; tests, diagnostics)."""
        return self._nodes.get(name)

    def counts(self) -> dict[str, int]:
        """Object counts for metrics and readiness reports."""
        assumed = len(self._assumed)
        out = {
            "nodes": sum(1 for i in self._nodes.values() if i.node is not None),
            "placeholder_nodes": sum(1 for i in self._nodes.values() if i.node is None),
            "assigned_pods": len(self._pods) - assumed,
            "assumed_pods": assumed,
            "pending_pods": len(self._pending),
        }
        for kind, objs in self._objects.items():
            out[kind] = len(objs)
        out.update(self.dra.counts())
        return out
