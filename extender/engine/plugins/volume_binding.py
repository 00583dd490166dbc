"""VolumeBinding: the pod's claims must be bound to volumes the node can reach, or be bindable or provisionable
there (upstream plugins/volumebinding: volume_binding.go and binder.go's GetPodVolumeClaims/FindPodVolumes).

PreFilter (UnschedulableAndUnresolvable for every node):

* a claim of the pod (PVC volume, or generic ephemeral volume ``<pod>-<volume>``) is missing, Lost, being
  deleted, or (ephemeral) not owned by the pod — upstream's messages; a pod without claims skips the plugin;
* a claim not yet bound whose class is not WaitForFirstConsumer (or that is pre-bound to a volume):
  "pod has unbound immediate PersistentVolumeClaims". A class without volumeBindingMode is an Error.

Filter, per node (UnschedulableAndUnresolvable, reasons in upstream's order):

* bound claims: the PV must exist ("node(s) unavailable due to one or more pvc(s) bound to non-existent
  pv(s)") and its required node affinity must match the node's labels ("node(s) didn't match
  PersistentVolume's node affinity"); an in-tree PV whose plugin the node's CSINode lists as migrated is
  checked with its CSI-translated affinity, as upstream does;
* WaitForFirstConsumer claims: a claim already provisioned for another node (selected-node annotation)
  fails; the others, smallest request first, each take the smallest Available PV of their class that is
  large enough, of the same volume mode and attributes class, not being deleted, matching the claim's
  selector and access modes and the node (a PV pre-bound to the claim wins outright); claims left over must
  be provisionable: a provisioner, the class's allowedTopologies matching the node, and — for a CSI driver
  that opts into capacity tracking — a CSIStorageCapacity object for the class, reachable from the node, with
  room ("node(s) didn't find available persistent volumes to bind", "node(s) did not have enough free
  storage").

Score (gate StorageCapacityScoring: alpha and off in v1.36, beta and on by default in v1.37): without the gate
upstream builds no scorer, PreScore always skips and ``args.shape`` is rejected, as here. With it
(volume_binding.go PreScore/Score, scorer.go), PreScore never skips, so a pod without claims scores 0 on every
node (and the plugin's weight counts in the total); on a node where the pod's WaitForFirstConsumer claims take
existing PVs (static bindings), each PV's class scores the claims' requests against the PVs' capacities; else
each class of the claims to provision scores their requests against the capacity of the CSIStorageCapacity object
that admitted them on the node (claims without one do not count). A class scores ``shape(requested × 100 /
capacity)`` (100 when over capacity or capacity is 0), with the shape of ``args.shape`` (default: 10 at 0% down
to 0 at 100%, times 10), and the node the rounded mean of its classes' scores.

CSIDriver and CSIStorageCapacity objects are read from the snapshot when it has them (kinds "CSIDriver",
"CSIStorageCapacity"); the cache does not keep them today, so capacity is never found short. Among PVs that
upstream would consider equal (same size) the one chosen is the first by name (upstream: informer order).

Per pod, PreFilter resolves the claims, the candidate PVs of each claim (everything but the node affinity)
indexed by the label their affinity requires, and the provisioning checks; Filter only matches node labels.
What is read of each PV is extracted once per PV object and the PVs are indexed by class once per generation of
the snapshot's PV mapping: both rely on the cache replacing, never mutating, raw objects.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from extender.cluster.columns import Int64Array, NodeBatch
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import (
    MAX_NODE_SCORE,
    SKIP,
    Code,
    CycleState,
    FilterPlugin,
    PluginError,
    ScorePlugin,
    Status,
    unresolvable,
)
from extender.engine.plugins.node_resources_fit import MAX_CUSTOM_PRIORITY_SCORE, broken_linear, parse_shape
from extender.engine.plugins.volume_common import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    KIND_CSIDRIVER,
    KIND_CSISTORAGECAPACITY,
    NOT_SUPPORTED_PROVISIONER,
    PVC_RESOURCE,
    WAIT_FOR_FIRST_CONSUMER,
    IdentityCache,
    InTreePlugin,
    Objects,
    TranslationError,
    access_modes,
    affinity_matches,
    annotations_of,
    as_list,
    as_mapping,
    as_str,
    claim_of,
    compile_affinity,
    csinode_migrated_plugins,
    go_quote,
    labels_of,
    meta,
    name_of,
    not_found,
    pod_volumes,
    pv_affinity,
    pv_capacity,
    pv_class,
    pv_plugin,
    pvc_class,
    spec,
    storage_request,
    translate_pv_affinity,
    volume_is_for_pod,
)
from extender.engine.profile import ProfileError
from extender.engine.registry import register
from extender.kube.quantity import QuantityError, parse_quantity, value
from extender.kube.resources import resize_deferred
from extender.kube.selectors import LabelSelector, NodeSelector, SelectorError, compile_label_selector

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

DEFAULT_BIND_TIMEOUT_SECONDS = 600

_STATE_KEY = "PreFilterVolumeBinding"
_VOLUMES_KEY = "VolumeBindingPodVolumes"  # node -> _NodeVolumes, for Score (upstream podVolumesByNode)
# v1 defaults (SetDefaults_VolumeBindingArgs) with StorageCapacityScoring: prefer nodes with more free capacity.
DEFAULT_SHAPE = ((0, MAX_CUSTOM_PRIORITY_SCORE), (100, 0))
MAX_UTILIZATION = 100

# (capacity, PV name): the order in which equally good PVs are preferred.
SortKey = tuple[Fraction, str]
Candidate = tuple[SortKey, Mapping[str, Any], NodeSelector | None]


class _BoundClaim:
    """A claim bound to a PV: the PV (None when it does not exist) and how to check its node affinity."""

    __slots__ = ("migrated_plugin", "pv", "selector", "translated")

    def __init__(self, pv: Mapping[str, Any] | None) -> None:
        self.pv = pv
        self.selector = pv_affinity(pv) if pv is not None else None
        plugin = pv_plugin(pv) if pv is not None else None
        # tryTranslatePVToCSI: only plugins 1.36 migrates are translated, and only on nodes that say so.
        self.migrated_plugin: InTreePlugin | None = plugin if plugin is not None and plugin.migration_on else None
        self.translated: NodeSelector | Status | None = None

    def translated_selector(self) -> NodeSelector | Status | None:
        """The node affinity of the CSI-translated PV (or the Error status of a failed translation)."""
        if self.translated is None:
            assert self.pv is not None and self.migrated_plugin is not None
            try:
                required = translate_pv_affinity(self.migrated_plugin, self.pv)
            except TranslationError as err:
                self.translated = Status(Code.ERROR, f"could not translate pv: {err}")
            else:
                # None means no affinity; keep a distinct value so that it is computed once.
                self.translated = compile_affinity(required) if required is not None else _MATCH_ALL
        return self.translated


_MATCH_ALL = NodeSelector(())  # a stand-in for "no node affinity" in _BoundClaim.translated


class _PVFacts:
    """What FindMatchingVolume reads of a PV, extracted once per PV object (raw objects are never mutated)."""

    __slots__ = ("affinity", "available", "bucket", "capacity", "claim_ref", "deleting", "labels", "modes", "name",
                 "pv", "reachable", "vac", "volume_mode")

    def __init__(self, pv: Mapping[str, Any]) -> None:
        pv_spec = spec(pv)
        self.pv = pv
        self.name = name_of(pv)
        ref = pv_spec.get("claimRef")
        # (name, namespace, uid) of the claim the PV is (pre-)bound to.
        self.claim_ref: tuple[str, str, str] | None = None if ref is None else (
            as_str(as_mapping(ref).get("name")), as_str(as_mapping(ref).get("namespace")),
            as_str(as_mapping(ref).get("uid")))
        self.capacity = pv_capacity(pv)
        self.volume_mode = _volume_mode(pv)
        self.vac = as_str(pv_spec.get("volumeAttributesClassName"))
        self.deleting = meta(pv).get("deletionTimestamp") is not None
        self.available = as_str(as_mapping(pv.get("status")).get("phase")) == "Available"
        self.labels: Mapping[str, Any] = as_mapping(labels_of(pv))
        self.modes = frozenset(access_modes(pv))
        self.affinity = pv_affinity(pv)
        # Whether any node can satisfy the affinity, and the label (key, values) a node needs to, if that is
        # simple to tell: a single term with an In requirement.
        self.reachable = True
        self.bucket: tuple[str, frozenset[str]] | None = None
        selector = self.affinity
        if selector is not None:
            self.reachable = any(term.valid for term in selector.terms)
            if len(selector.terms) == 1:
                for req in selector.terms[0].label_requirements:
                    if req.operator == "In":
                        self.bucket = (req.key, frozenset(req.values))
                        break


_facts_cache = IdentityCache(1 << 16)
# The PVs of the snapshot by class, for the last PersistentVolume mapping seen (the cache replaces the mapping
# whenever a PV changes, so its identity tells whether the index is current).
_class_index: tuple[Mapping[str, Any], dict[str, list[_PVFacts]]] | None = None


def _facts(pv: Mapping[str, Any]) -> _PVFacts:
    facts: _PVFacts | None = _facts_cache.get(pv)
    if facts is None:
        facts = _PVFacts(pv)
        _facts_cache.put(pv, facts)
    return facts


def _pvs_by_class(objects: Objects) -> dict[str, list[_PVFacts]]:
    """The PV informer's storage-class index (keyed by GetPersistentVolumeClass)."""
    global _class_index
    if _class_index is None or _class_index[0] is not objects.pvs:
        index: dict[str, list[_PVFacts]] = {}
        for pv in objects.pvs.values():
            index.setdefault(pv_class(pv), []).append(_facts(pv))
        _class_index = (objects.pvs, index)
    return _class_index[1]


class _Candidates:
    """The PVs a WaitForFirstConsumer claim could take, less the node-dependent checks (FindMatchingVolume).

    PVs whose affinity has a single term requiring ``key In values`` are indexed by that label, so a node only
    looks at the PVs it can reach; the rest are scanned in order (smallest first).
    """

    __slots__ = ("buckets", "general", "prebound")

    def __init__(self) -> None:
        self.prebound: list[tuple[str, Mapping[str, Any], NodeSelector | None]] = []
        self.general: list[Candidate] = []
        self.buckets: dict[str, dict[str, list[Candidate]]] = {}

    def add(self, pv: _PVFacts) -> None:
        """Add a PV that passed the node-independent checks."""
        if not pv.reachable:
            return  # its affinity matches no node
        entry: Candidate = ((pv.capacity, pv.name), pv.pv, pv.affinity)
        if pv.bucket is not None:
            key, values = pv.bucket
            by_value = self.buckets.setdefault(key, {})
            for label_value in values:
                by_value.setdefault(label_value, []).append(entry)
        else:
            self.general.append(entry)

    def finish(self) -> None:
        self.prebound.sort(key=lambda e: e[0])
        self.general.sort(key=lambda e: e[0])
        for by_value in self.buckets.values():
            for entries in by_value.values():
                entries.sort(key=lambda e: e[0])

    def ordered(self, node_labels: Mapping[str, str]) -> Iterator[Candidate]:
        """The candidates this node may reach, smallest first."""
        lists = [self.general] if self.general else []
        for key, by_value in self.buckets.items():
            label_value = node_labels.get(key)
            if label_value is not None:
                hit = by_value.get(label_value)
                if hit:
                    lists.append(hit)
        if len(lists) == 1:
            return iter(lists[0])
        if not lists:
            return iter(())
        return heapq.merge(*lists, key=lambda e: e[0])

    def find(self, node_labels: Mapping[str, str], excluded: set[str]) -> Mapping[str, Any] | None:
        """The PV FindMatchingVolume returns for this node, or None."""
        for pv_name, pv, selector in self.prebound:
            if pv_name in excluded:
                continue
            # A PV pre-bound to the claim decides alone: it is the match, or (affinity failing) nothing is.
            return pv if affinity_matches(selector, node_labels) else None
        for (_, pv_name), pv, selector in self.ordered(node_labels):
            if pv_name not in excluded and affinity_matches(selector, node_labels):
                return pv
        return None


class _Provision:
    """checkVolumeProvisions for one claim: what does not depend on the node, and the node checks."""

    __slots__ = ("capacities", "error", "supported", "topology")

    def __init__(self, objects: Objects, pvc: Mapping[str, Any], namespace: str) -> None:
        self.error: Status | None = None
        self.supported = True
        self.topology: list[LabelSelector] | None = None
        # None: no capacity check; else the node topology and ``capacity`` (bytes, None when the object has only
        # maximumVolumeSize) of each CSIStorageCapacity with room for the claim, in the informer's order.
        self.capacities: list[tuple[LabelSelector, int | None]] | None = None
        class_name = pvc_class(pvc)
        if not class_name:
            self.error = Status(Code.ERROR, f"no class for claim {go_quote(f'{namespace}/{name_of(pvc)}')}")
            return
        sc = objects.sc(class_name)
        if sc is None:
            self.error = Status(Code.ERROR, f"failed to find storage class {go_quote(class_name)}")
            return
        provisioner = as_str(sc.get("provisioner"))
        if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
            self.supported = False
            return
        terms = as_list(sc.get("allowedTopologies"))
        if terms:
            self.topology = _topology_selectors(terms)
        self.capacities = _capacity_selectors(objects, pvc, class_name, provisioner)

    def check(self, node_labels: Mapping[str, str]) -> tuple[bool, bool, object]:
        """(provisioning satisfied, storage sufficient, the node's capacity) of this claim on a node; the capacity
        is the ``capacity`` of the CSIStorageCapacity object that admitted the claim (None: none was checked;
        NO_CAPACITY_FIELD: the object has none)."""
        if not self.supported:
            return False, True, None
        if self.topology is not None and not any(s.matches(node_labels) for s in self.topology):
            return False, True, None
        if self.capacities is None:
            return True, True, None
        for selector, capacity in self.capacities:
            if selector.matches(node_labels):
                return True, True, NO_CAPACITY_FIELD if capacity is None else capacity
        return True, False, None


# A CSIStorageCapacity that admitted a claim by its maximumVolumeSize and has no capacity: upstream's Score
# dereferences the missing capacity (and crashes); here Score answers an Error.
NO_CAPACITY_FIELD = object()


def _topology_selectors(terms: list[Any]) -> list[LabelSelector]:
    """MatchTopologySelectorTerms' terms as selectors; empty or invalid terms select nothing and are dropped."""
    selectors: list[LabelSelector] = []
    for term in terms:
        expressions = as_list(as_mapping(term).get("matchLabelExpressions"))
        if not expressions:
            continue
        try:
            selectors.append(compile_label_selector({"matchExpressions": [
                {"key": as_mapping(e).get("key"), "operator": "In", "values": as_mapping(e).get("values") or []}
                for e in expressions]}))
        except SelectorError:
            continue
    return selectors


def _capacity_selectors(objects: Objects, pvc: Mapping[str, Any], class_name: str,
                        provisioner: str) -> list[tuple[LabelSelector, int | None]] | None:
    """hasEnoughCapacity, less the node: the node topologies (and capacities) of the capacity objects with room
    for the claim.

    None when no check applies: no storage request, or a driver that is not a CSIDriver object opting into
    storage capacity tracking.
    """
    request = storage_request(pvc)
    if request is None:
        return None
    driver = objects.snapshot.kind(KIND_CSIDRIVER).get(provisioner)
    if driver is None or spec(driver).get("storageCapacity") is not True:
        return None
    size = value(request)
    selectors: list[tuple[LabelSelector, int | None]] = []
    for capacity in objects.snapshot.kind(KIND_CSISTORAGECAPACITY).values():
        if as_str(capacity.get("storageClassName")) != class_name:
            continue
        # volumeLimit: maximumVolumeSize when set (more precise), else capacity.
        limit = capacity.get("maximumVolumeSize")
        if limit is None:
            limit = capacity.get("capacity")
        if limit is None:
            continue
        try:
            if value(parse_quantity(limit)) < size:
                continue
        except (QuantityError, TypeError):
            continue
        topology = capacity.get("nodeTopology")
        if topology is None:
            continue
        try:
            selector = compile_label_selector(as_mapping(topology))
        except SelectorError:
            continue  # upstream logs the error and treats the node as without access
        total: int | None = None
        if capacity.get("capacity") is not None:
            try:
                total = value(parse_quantity(capacity["capacity"]))
            except (QuantityError, TypeError):
                total = None
        selectors.append((selector, total))
    return selectors


def _volume_mode(obj: Mapping[str, Any]) -> str:
    return as_str(spec(obj).get("volumeMode")) or "Filesystem"


class _DelayClaim:
    """A WaitForFirstConsumer claim not yet bound, with everything Filter needs about it."""

    __slots__ = ("candidates", "error", "provision", "pvc", "selected_node", "size")

    def __init__(self, objects: Objects, pvc: Mapping[str, Any], namespace: str,
                 pvs_by_class: Mapping[str, list[_PVFacts]]) -> None:
        self.pvc = pvc
        ann = annotations_of(pvc)
        self.selected_node: str | None = as_str(ann[ANN_SELECTED_NODE]) if ANN_SELECTED_NODE in ann else None
        request = storage_request(pvc)
        self.size = request if request is not None else Fraction(0)
        self.provision = _Provision(objects, pvc, namespace)
        self.error: Status | None = None
        self.candidates = _Candidates()
        if self.selected_node is None:
            self._collect(pvs_by_class.get(pvc_class(pvc), []), namespace)

    def _collect(self, pvs: list[_PVFacts], namespace: str) -> None:
        """FindMatchingVolume's node-independent checks, in its order."""
        pvc = self.pvc
        pvc_spec = spec(pvc)
        selector: LabelSelector | None = None
        if pvc_spec.get("selector") is not None:
            try:
                selector = compile_label_selector(as_mapping(pvc_spec["selector"]))
            except SelectorError as err:
                self.error = Status(Code.ERROR, "error creating internal label selector for claim: "
                                                f"{namespace}/{name_of(pvc)}: {err}")
                return
        claim_name, claim_uid = name_of(pvc), as_str(meta(pvc).get("uid"))
        claim_vac = as_str(pvc_spec.get("volumeAttributesClassName"))
        claim_mode = _volume_mode(pvc)
        claim_modes = access_modes(pvc)
        size = self.size
        candidates = self.candidates
        for pv in pvs:
            ref = pv.claim_ref
            # IsVolumeBoundToClaim: name and namespace match, and the UID too when the reference has one.
            bound_here = ref is not None and ref[0] == claim_name and ref[1] == namespace and (
                not ref[2] or ref[2] == claim_uid)
            if ref is not None and not bound_here:
                continue
            if pv.capacity < size or pv.volume_mode != claim_mode:
                continue
            if pv.vac != claim_vac:
                continue  # VolumeAttributesClass is GA (locked on) in 1.36
            if pv.deleting:
                continue
            if bound_here:
                candidates.prebound.append((pv.name, pv.pv, pv.affinity))
                continue
            if not pv.available:
                continue
            if selector is not None and not selector.matches(pv.labels):
                continue
            if any(mode not in pv.modes for mode in claim_modes):
                continue
            candidates.add(pv)
        candidates.finish()


class _NodeVolumes:
    """What Score reads of FindPodVolumes on one node: (class, requested bytes, capacity bytes) of each static
    binding (the PV's class and capacity), and of each dynamic provision (the claim's class, the capacity of the
    CSIStorageCapacity that admitted it, None when none was checked)."""

    __slots__ = ("dynamic", "static")

    def __init__(self) -> None:
        self.static: list[tuple[str, int, int]] = []
        self.dynamic: list[tuple[str, int, object]] = []

    def score(self, scorer: Callable[[int, int], int]) -> int:
        """volume_binding.go Score with scorer.go's volumeCapacityScorer: the rounded mean of the class scores."""
        classes: dict[str, list[int]] = {}  # class -> [requested, capacity]
        if self.static:
            for class_name, requested, capacity in self.static:
                entry = classes.setdefault(class_name, [0, 0])
                entry[0] += requested
                entry[1] += capacity
        else:
            for class_name, requested, node_capacity in self.dynamic:
                if node_capacity is None:
                    continue
                if node_capacity is NO_CAPACITY_FIELD:
                    raise PluginError("the CSIStorageCapacity admitting a claim has no capacity")
                entry = classes.setdefault(class_name, [0, 0])
                entry[1] = int(node_capacity)  # type: ignore[call-overload]  # the node's capacity, not a sum
                entry[0] += requested
        if not classes:
            return 0
        total = sum(scorer(requested, capacity) for requested, capacity in classes.values())
        return (2 * total + len(classes)) // (2 * len(classes))  # math.Round of a non-negative mean


class _State:
    """What PreFilter resolved for the pod."""

    __slots__ = ("bound", "delay", "objects", "to_match")

    def __init__(self, objects: Objects, bound: list[_BoundClaim], delay: list[_DelayClaim]) -> None:
        self.objects = objects
        self.bound = bound
        self.delay = delay
        # findMatchingVolumes sorts the claims by increasing request (a stable sort for the few claims a pod has).
        self.to_match = sorted((c for c in delay if c.selected_node is None), key=lambda c: c.size)


def _validate_args(args: Mapping[str, Any]) -> None:
    timeout = args.get("bindTimeoutSeconds", DEFAULT_BIND_TIMEOUT_SECONDS)
    if timeout is None:
        timeout = DEFAULT_BIND_TIMEOUT_SECONDS
    if not isinstance(timeout, int) or isinstance(timeout, bool):
        raise ProfileError("VolumeBinding args.bindTimeoutSeconds: expected an integer")
    if timeout < 0:
        raise ProfileError("VolumeBinding args.bindTimeoutSeconds: invalid BindTimeoutSeconds, should not be a "
                           "negative value")
def _scorer(args: Mapping[str, Any], scoring: bool) -> Callable[[int, int], int] | None:
    """ValidateVolumeBindingArgsWithOptions and New's scorer: none without StorageCapacityScoring (and ``shape``
    refused), else the shape's broken-linear function of utilization (default DEFAULT_SHAPE)."""
    if not scoring:
        if args.get("shape") is not None:
            raise ProfileError("VolumeBinding args.shape: unexpected field `shape`, remove it or turn on the feature "
                               "gate StorageCapacityScoring")
        return None
    shape = parse_shape(args, "VolumeBinding args") if args.get("shape") is not None else list(DEFAULT_SHAPE)
    raw = broken_linear([(u, s * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in shape])

    def class_score(requested: int, capacity: int) -> int:
        utilization = MAX_UTILIZATION if capacity == 0 or requested > capacity \
            else requested * MAX_UTILIZATION // capacity
        return int(raw(np.array([utilization], np.int64))[0])

    return class_score


@register
class VolumeBinding(FilterPlugin, ScorePlugin):
    """Check that the pod's claims are bound to reachable volumes, or can be bound or provisioned on the node."""

    name = "VolumeBinding"
    skips_deferred_resize = True  # v1.37 PreFilter: Skip a deferred resize (see Plugin)

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        _validate_args(self.args)
        self.scorer = _scorer(self.args, self.release.gate("StorageCapacityScoring"))
        timeout = self.args.get("bindTimeoutSeconds")
        self.bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS if timeout is None else int(timeout)

    # ---- PreFilter -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        objects = Objects(state.snapshot)
        claims: list[Mapping[str, Any]] = []
        # podHasPVCs: every claim must exist and be usable.
        for volume in pod_volumes(pod):
            claimed = claim_of(pod, volume)
            if claimed is None:
                continue
            claim, ephemeral = claimed
            pvc = objects.pvc(pod.namespace, claim)
            if pvc is None:
                if ephemeral:
                    # Normal right after the pod is created: the ephemeral volume controller has not caught up.
                    return unresolvable("waiting for ephemeral volume controller to create the persistentvolumeclaim "
                                        + go_quote(claim))
                return unresolvable(not_found(PVC_RESOURCE, claim))
            if as_str(as_mapping(pvc.get("status")).get("phase")) == "Lost":
                return unresolvable(f"persistentvolumeclaim {go_quote(name_of(pvc))} bound to non-existent "
                                    f"persistentvolume {go_quote(as_str(spec(pvc).get('volumeName')))}")
            if meta(pvc).get("deletionTimestamp") is not None:
                return unresolvable(f"persistentvolumeclaim {go_quote(name_of(pvc))} is being deleted")
            if ephemeral:
                error = volume_is_for_pod(pod, pvc)
                if error is not None:
                    return unresolvable(error)
            claims.append(pvc)
        if not claims:
            return SKIP
        # GetPodVolumeClaims: bound, unbound WaitForFirstConsumer, and unbound immediate claims.
        bound: list[Mapping[str, Any]] = []
        delay: list[Mapping[str, Any]] = []
        immediate = False
        for pvc in claims:
            volume_name = as_str(spec(pvc).get("volumeName"))
            if volume_name and ANN_BIND_COMPLETED in annotations_of(pvc):
                bound.append(pvc)
                continue
            class_name = pvc_class(pvc)
            delay_mode = False
            if class_name:
                sc = objects.sc(class_name)
                if sc is not None:
                    mode = sc.get("volumeBindingMode")
                    if mode is None:
                        return Status(Code.ERROR, f"VolumeBindingMode not set for StorageClass {go_quote(class_name)}")
                    delay_mode = mode == WAIT_FOR_FIRST_CONSUMER
            if delay_mode and not volume_name:
                delay.append(pvc)
            else:
                immediate = True  # includes claims pre-bound to a volume: the PV controller binds those
        if immediate:
            return unresolvable(ERR_UNBOUND_IMMEDIATE)
        pvs_by_class = _pvs_by_class(objects) if delay else {}
        state.data[_STATE_KEY] = _State(
            objects,
            [_BoundClaim(objects.pv(as_str(spec(pvc).get("volumeName")))) for pvc in bound],
            [_DelayClaim(objects, pvc, pod.namespace, pvs_by_class) for pvc in delay],
        )
        return None

    # ---- Filter --------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        pre: _State | None = state.data.get(_STATE_KEY)
        if pre is None:
            status = self.pre_filter(state, pod, [node])
            if status is not None:
                return None if status is SKIP else status
            pre = state.data[_STATE_KEY]
        record = node.node
        assert record is not None
        node_labels = record.labels
        node_conflict = bind_conflict = not_enough_space = pv_missing = False

        # checkBoundClaims: stops at the first missing PV or affinity mismatch.
        if pre.bound:
            migrated: set[str] | None = None
            for claim in pre.bound:
                if claim.pv is None:
                    pv_missing = True
                    break
                selector: NodeSelector | None = claim.selector
                if claim.migrated_plugin is not None:
                    if migrated is None:
                        migrated = csinode_migrated_plugins(pre.objects.csinode(node.name))
                    if claim.migrated_plugin.name in migrated:
                        translated = claim.translated_selector()
                        if isinstance(translated, Status):
                            return translated
                        selector = None if translated is _MATCH_ALL else translated
                if not affinity_matches(selector, node_labels):
                    node_conflict = True
                    break

        if pre.delay:
            unbound = self._unbound(pre, node.name, node_labels)
            if isinstance(unbound, Status):
                return unbound
            bind_conflict, not_enough_space, volumes = unbound
            if self.scorer is not None:
                state.data.setdefault(_VOLUMES_KEY, {})[node.name] = volumes

        reasons: list[str] = []
        if node_conflict:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if bind_conflict:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not_enough_space:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if pv_missing:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return unresolvable(*reasons) if reasons else None

    @staticmethod
    def _unbound(pre: _State, node_name: str,
                 node_labels: Mapping[str, str]) -> tuple[bool, bool, _NodeVolumes] | Status:
        """(bind conflict, not enough space, what Score reads) of the WaitForFirstConsumer claims on a node, or an
        Error (FindPodVolumes: the PVs the claims take, then the claims left to provision)."""
        volumes = _NodeVolumes()
        to_provision: list[_DelayClaim] = []
        for claim in pre.delay:
            if claim.selected_node is not None:
                if claim.selected_node != node_name:
                    return True, False, volumes  # provisioning already started for another node
                to_provision.append(claim)
        satisfied = True
        if pre.to_match:
            chosen: set[str] = set()
            for claim in pre.to_match:
                if claim.error is not None:
                    return claim.error
                pv = claim.candidates.find(node_labels, chosen)
                if pv is None:
                    satisfied = False
                    to_provision.append(claim)
                    continue
                chosen.add(name_of(pv))
                volumes.static.append((pv_class(pv), int(value(claim.size)), int(value(pv_capacity(pv)))))
        sufficient = True
        if to_provision:
            # Claims without a volume must be provisionable here; this decides satisfaction afresh.
            satisfied = True
            for claim in to_provision:
                provision = claim.provision
                if provision.error is not None:
                    return provision.error
                satisfied, sufficient, capacity = provision.check(node_labels)
                if not satisfied or not sufficient:
                    break
                volumes.dynamic.append((as_str(spec(claim.pvc).get("storageClassName")), int(value(claim.size)),
                                        capacity))
        return not satisfied, not sufficient, volumes

    # ---- Score ---------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        if self.scorer is None:
            return SKIP  # StorageCapacityScoring off: upstream has no scorer, and its PreScore always skips
        if self.release.gate("InPlacePodVerticalScalingSchedulerPreemption") and resize_deferred(pod.raw):
            # v1.37: PreFilter skipped the deferred resize without writing its state, which PreScore then reads:
            # upstream's error (kube-scheduler only scores with two feasible nodes, and such a pod has one).
            return Status(Code.ERROR, "not found")
        if _STATE_KEY not in state.data:
            # A prioritize call runs no PreFilter: resolve the claims now (no claims, or rejected: every node 0).
            self.pre_filter(state, pod, nodes)
        return None

    def _binds_nothing(self, state: CycleState) -> bool:
        """No scorer, or no claim left to bind for this pod: upstream's podVolumesByNode has every node with
        nothing in it, and every node scores 0."""
        pre: _State | None = state.data.get(_STATE_KEY)
        return self.scorer is None or pre is None or not pre.delay

    def score_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Int64Array:
        if self._binds_nothing(state):
            return np.zeros(len(batch), np.int64)  # without a call per node
        return super().score_batch(state, pod, batch)

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        if self._binds_nothing(state):
            return 0
        pre: _State = state.data[_STATE_KEY]
        assert self.scorer is not None  # _binds_nothing otherwise
        by_node: dict[str, _NodeVolumes] = state.data.setdefault(_VOLUMES_KEY, {})
        volumes = by_node.get(node.name)
        if volumes is None:  # prioritize: Filter did not run on this node in this cycle
            record = node.node
            assert record is not None
            unbound = self._unbound(pre, node.name, record.labels)
            if isinstance(unbound, Status):
                raise PluginError(unbound.message)
            volumes = by_node[node.name] = unbound[2]
        return volumes.score(self.scorer)
