"""The v1.12 volume predicates: NoDiskConflict, MaxEBSVolumeCount, MaxGCEPDVolumeCount,
MaxAzureDiskVolumeCount, MaxCSIVolumeCountPred, NoVolumeZoneConflict and CheckVolumeBinding.

Upstream: k8s.io/kubernetes v1.12.10 pkg/scheduler/algorithm/predicates/predicates.go (``NoDiskConflict``,
``MaxPDVolumeCountChecker``, ``VolumeZoneChecker``, ``VolumeBindingChecker``), csi_volume_predicate.go,
pkg/volume/util/attach_limit.go, and the volume binder the last one calls,
pkg/controller/volume/persistentvolume/scheduler_binder.go (``FindPodVolumes``) with index.go
(``findMatchingVolume``) and pv_controller.go (``shouldDelayBinding``).

- NoDiskConflict: the same GCE PD (unless both read-only), AWS EBS volume, iSCSI IQN (unless both
  read-only) or RBD image (a shared monitor, same pool and image, unless both read-only) used by a pod
  already on the node.
- Max{EBS,GCEPD,AzureDisk}VolumeCount: the distinct volumes of that type used by the node's pods plus the
  pod's new ones may not exceed the node's limit: ``KUBE_MAX_PD_VOLS`` when it is a positive integer, else
  39 for EBS (25 for Nitro instance types, label ``beta.kubernetes.io/instance-type`` matching
  ``^[cmr]5.*|t3|z1d``) and 16 for GCE PD and Azure Disk; an ``attachable-volumes-{aws-ebs,gce-pd,
  azure-disk}`` allocatable on the node overrides it (AttachVolumeLimit, beta and on in v1.12). A PVC that
  cannot be resolved to a PV (claim or volume missing, claim unbound) counts as one volume of the type.
- MaxCSIVolumeCountPred: per CSI driver, bound PVCs with a CSI PV, against the node's
  ``attachable-volumes-csi-<driver>`` allocatable (nodes without any attachable limit pass).
- NoVolumeZoneConflict: a bound PV's ``failure-domain.beta.kubernetes.io/{zone,region}`` labels (``__``
  separates several zones) must contain the node's value; only nodes with one of these labels are checked.
  An unbound claim of a WaitForFirstConsumer class is skipped; any other unbound claim, a missing claim or
  volume is an error.
- CheckVolumeBinding: bound claims (``volumeName`` set and annotation ``pv.kubernetes.io/bind-completed``)
  need their PV's required node affinity to match the node ("had volume node affinity conflict"); unbound
  claims of a WaitForFirstConsumer class need an available PV (smallest that fits: same class, selector,
  access modes, capacity, node affinity; or one pre-bound to the claim) or a class that can provision on
  the node (provisioner set and not ``kubernetes.io/no-provisioner``, allowedTopologies matching) ("didn't
  find available persistent volumes to bind"); any other unbound claim fails the pod ("pod has unbound
  immediate PersistentVolumeClaims").

v1.12 returned errors (not failures) for missing objects; such an error failed the whole scheduling
attempt as soon as one node reached the predicate. Here a node reaching the plugin gets an Error status,
which the runtime turns into an error for the pod in the same way.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, Final

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import NodeRecord, PodRecord
from extender.cluster.snapshot import Snapshot
from extender.engine.framework import SKIP, CycleState, FilterPlugin, Status
from extender.engine.plugins.legacy.common import (
    ERR_DISK_CONFLICT,
    ERR_MAX_VOLUME_COUNT_EXCEEDED,
    ERR_VOLUME_BIND_CONFLICT,
    ERR_VOLUME_NODE_CONFLICT,
    ERR_VOLUME_ZONE_CONFLICT,
    LABEL_INSTANCE_TYPE,
    LABEL_ZONE_FAILURE_DOMAIN,
    LABEL_ZONE_REGION,
    as_list,
    as_mapping,
    error,
    legacy_pod,
    node_of,
    unschedulable,
)
from extender.engine.registry import register
from extender.kube.quantity import QuantityError, decode_quantity, value
from extender.kube.selectors import (
    LabelSelector,
    NodeSelector,
    SelectorError,
    compile_label_selector,
    compile_node_selector,
    label_key_errors,
    label_value_errors,
)

KUBE_MAX_PD_VOLS: Final = "KUBE_MAX_PD_VOLS"
DEFAULT_MAX_EBS_VOLUMES: Final = 39
DEFAULT_MAX_EBS_NITRO_VOLUMES: Final = 25
DEFAULT_MAX_GCE_PD_VOLUMES: Final = 16
DEFAULT_MAX_AZURE_DISK_VOLUMES: Final = 16
EBS_NITRO_LIMIT_REGEX: Final = re.compile(r"^[cmr]5.*|t3|z1d")
ATTACHABLE_VOLUMES_PREFIX: Final = "attachable-volumes-"
CSI_ATTACH_LIMIT_PREFIX: Final = "attachable-volumes-csi-"
RESOURCE_NAME_LENGTH_LIMIT: Final = 63
MULTI_ZONE_DELIMITER: Final = "__"
ANN_BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
ANN_SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
BETA_STORAGE_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"
NOT_SUPPORTED_PROVISIONER: Final = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"

_DISK_CONFLICT: Final = unschedulable(ERR_DISK_CONFLICT)
_MAX_VOLUMES: Final = unschedulable(ERR_MAX_VOLUME_COUNT_EXCEEDED)
_ZONE_CONFLICT: Final = unschedulable(ERR_VOLUME_ZONE_CONFLICT)
_DISKS_MEMO: Final = "legacy/NoDiskConflict"
_LIMITS_MEMO: Final = "legacy/attachable-volumes"


def attachable_limits(record: NodeRecord) -> dict[str, int]:
    """NodeInfo.VolumeLimits: the node's ``attachable-volumes-*`` allocatable, by name.

    Read from the raw object: the shared Resource vector does not keep these names (its scalar test looks
    for an "attachable-volume-" prefix, where the API's is "attachable-volumes-").
    """
    cached: dict[str, int] | None = record.memo.get(_LIMITS_MEMO)
    if cached is None:
        cached = {}
        allocatable = as_mapping(as_mapping(record.raw.get("status")).get("allocatable"))
        for name, raw in allocatable.items():
            if isinstance(name, str) and name.startswith(ATTACHABLE_VOLUMES_PREFIX):
                try:
                    cached[name] = value(decode_quantity(raw))
                except QuantityError:
                    continue
        record.memo[_LIMITS_MEMO] = cached
    return cached


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(obj.get("spec"))


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(as_mapping(obj.get("metadata")).get("annotations"))


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_mapping(as_mapping(obj.get("metadata")).get("labels"))


def _claim(snapshot: Snapshot, namespace: str, name: str) -> Mapping[str, Any] | None:
    return snapshot.kind("PersistentVolumeClaim").get(f"{namespace}/{name}")


def _volume(snapshot: Snapshot, name: str) -> Mapping[str, Any] | None:
    return snapshot.kind("PersistentVolume").get(name)


def claim_class(claim: Mapping[str, Any]) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName."""
    annotations = _annotations(claim)
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return str(annotations[BETA_STORAGE_CLASS_ANNOTATION])
    return str(_spec(claim).get("storageClassName") or "")


def volume_class(volume: Mapping[str, Any]) -> str:
    """GetPersistentVolumeClass: the beta annotation first, then spec.storageClassName."""
    annotations = _annotations(volume)
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return str(annotations[BETA_STORAGE_CLASS_ANNOTATION])
    return str(_spec(volume).get("storageClassName") or "")


# ---- NoDiskConflict --------------------------------------------------------------------------------------

Disk = tuple[Any, ...]


def _disks(pod: PodRecord) -> tuple[Disk, ...]:
    """The pod's volumes that NoDiskConflict compares, once per record."""
    cached = pod.memo.get(_DISKS_MEMO)
    if cached is None:
        disks: list[Disk] = []
        for vol in legacy_pod(pod).volumes:
            vol = as_mapping(vol)
            if vol.get("gcePersistentDisk") is not None:
                src = as_mapping(vol["gcePersistentDisk"])
                disks.append(("gce", str(src.get("pdName") or ""), bool(src.get("readOnly"))))
            if vol.get("awsElasticBlockStore") is not None:
                disks.append(("aws", str(as_mapping(vol["awsElasticBlockStore"]).get("volumeID") or "")))
            if vol.get("iscsi") is not None:
                src = as_mapping(vol["iscsi"])
                disks.append(("iscsi", str(src.get("iqn") or ""), bool(src.get("readOnly"))))
            if vol.get("rbd") is not None:
                src = as_mapping(vol["rbd"])
                # SetDefaults_RBDVolumeSource: the pool defaults to "rbd".
                disks.append(("rbd", frozenset(str(m) for m in as_list(src.get("monitors"))),
                              str(src.get("pool") or "rbd"), str(src.get("image") or ""), bool(src.get("readOnly"))))
        cached = tuple(disks)
        pod.memo[_DISKS_MEMO] = cached
    assert isinstance(cached, tuple)
    return cached


def _conflict(disk: Disk, other: Disk) -> bool:
    """isVolumeConflict for one pair of volumes of the same kind."""
    kind = disk[0]
    if kind != other[0]:
        return False
    if kind == "gce":
        return bool(disk[1] == other[1] and not (disk[2] and other[2]))
    if kind == "aws":
        return bool(disk[1] == other[1])
    if kind == "iscsi":
        return bool(disk[1] == other[1] and not (disk[2] and other[2]))
    # rbd: a shared monitor, the same pool and image
    return bool(disk[1] & other[1] and disk[2] == other[2] and disk[3] == other[3] and not (disk[4] and other[4]))


@register
class NoDiskConflict(FilterPlugin):
    """A GCE PD, EBS volume, iSCSI or RBD disk already used on the node."""

    name = "NoDiskConflict"

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        return None if _disks(pod) else SKIP

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        mine = _disks(pod)
        for existing in node.pods:
            for other in _disks(existing):
                for disk in mine:
                    if _conflict(disk, other):
                        return _DISK_CONFLICT
        return None


# ---- Max*VolumeCount -----------------------------------------------------------------------------------


class _VolumeError(Exception):
    """An error of the predicate (v1.12 returned it, failing the scheduling attempt)."""


def max_volumes_from_env() -> int:
    """getMaxVolLimitFromEnv: KUBE_MAX_PD_VOLS when it is a positive integer, else -1."""
    raw = os.environ.get(KUBE_MAX_PD_VOLS, "")
    if raw:
        try:
            parsed = int(raw, 10)  # strconv.Atoi: optional sign and decimal digits only
        except ValueError:
            return -1
        if raw.strip() != raw or "_" in raw:
            return -1
        if parsed > 0:
            return parsed
    return -1


def max_ebs_volumes(instance_type: str) -> int:
    """getMaxEBSVolume: 25 on Nitro instance types, else 39."""
    return DEFAULT_MAX_EBS_NITRO_VOLUMES if EBS_NITRO_LIMIT_REGEX.search(instance_type) else DEFAULT_MAX_EBS_VOLUMES


class _MaxPDVolumeCount(FilterPlugin):
    """MaxPDVolumeCountChecker for one volume type."""

    volume_field = ""  # the Volume / PersistentVolumeSource field of the type
    id_field = ""  # the field of that source naming the volume
    limit_key = ""  # the node allocatable overriding the default limit

    def default_limit(self, labels: Mapping[str, str]) -> int:
        """The limit without the environment override and the allocatable."""
        raise NotImplementedError

    def _filter_volumes(self, snapshot: Snapshot, volumes: Sequence[Any], namespace: str, out: set[str]) -> None:
        for vol in volumes:
            vol = as_mapping(vol)
            source = vol.get(self.volume_field)
            if source is not None:
                out.add(str(as_mapping(source).get(self.id_field) or ""))
                continue
            claim_ref = vol.get("persistentVolumeClaim")
            if claim_ref is None:
                continue
            claim_name = str(as_mapping(claim_ref).get("claimName") or "")
            if not claim_name:
                raise _VolumeError("PersistentVolumeClaim had no name")
            # Until the real volume is known, namespace/claim stands for it (v1.12 prefixed it with a random
            # string so that it cannot collide with a real volume ID; the NUL does the same here).
            placeholder = f"\x00{namespace}/{claim_name}"
            claim = _claim(snapshot, namespace, claim_name)
            if claim is None:
                out.add(placeholder)
                continue
            pv_name = str(_spec(claim).get("volumeName") or "")
            if not pv_name:
                out.add(placeholder)
                continue
            pv = _volume(snapshot, pv_name)
            if pv is None:
                out.add(placeholder)
                continue
            source = _spec(pv).get(self.volume_field)
            if source is not None:
                out.add(str(as_mapping(source).get(self.id_field) or ""))

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        volumes = legacy_pod(pod).volumes
        if not volumes:
            return SKIP
        new: set[str] = set()
        try:
            self._filter_volumes(state.snapshot, volumes, pod.namespace, new)
        except _VolumeError as err:
            state.data[self._key] = str(err)
            return None
        if not new:
            return SKIP
        state.data[self._key] = (new, max_volumes_from_env())
        return None

    @property
    def _key(self) -> str:
        return f"legacy/{self.name}"

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        data = state.data[self._key]
        if isinstance(data, str):
            return error(data)
        new, env_limit = data
        existing: set[str] = set()
        try:
            for other in node.pods:
                self._filter_volumes(state.snapshot, legacy_pod(other).volumes, other.namespace, existing)
        except _VolumeError as err:
            return error(str(err))
        record = node_of(node)
        limit = env_limit if env_limit > 0 else self.default_limit(record.labels)
        limits = attachable_limits(record)
        if self.limit_key in limits:
            limit = limits[self.limit_key]
        if len(existing) + len(new - existing) > limit:
            return _MAX_VOLUMES
        return None


@register
class MaxEBSVolumeCount(_MaxPDVolumeCount):
    """AWS EBS volumes per node (39, 25 on Nitro instance types)."""

    name = "MaxEBSVolumeCount"
    volume_field = "awsElasticBlockStore"
    id_field = "volumeID"
    limit_key = "attachable-volumes-aws-ebs"

    def default_limit(self, labels: Mapping[str, str]) -> int:
        return max_ebs_volumes(labels.get(LABEL_INSTANCE_TYPE, ""))


@register
class MaxGCEPDVolumeCount(_MaxPDVolumeCount):
    """GCE persistent disks per node (16)."""

    name = "MaxGCEPDVolumeCount"
    volume_field = "gcePersistentDisk"
    id_field = "pdName"
    limit_key = "attachable-volumes-gce-pd"

    def default_limit(self, labels: Mapping[str, str]) -> int:
        return DEFAULT_MAX_GCE_PD_VOLUMES


@register
class MaxAzureDiskVolumeCount(_MaxPDVolumeCount):
    """Azure disks per node (16)."""

    name = "MaxAzureDiskVolumeCount"
    volume_field = "azureDisk"
    id_field = "diskName"
    limit_key = "attachable-volumes-azure-disk"

    def default_limit(self, labels: Mapping[str, str]) -> int:
        return DEFAULT_MAX_AZURE_DISK_VOLUMES


def csi_attach_limit_key(driver: str) -> str:
    """GetCSIAttachLimitKey: the allocatable name of a CSI driver's limit (hashed when too long)."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= RESOURCE_NAME_LENGTH_LIMIT:
        hashed = hashlib.sha1(driver.encode(), usedforsecurity=False).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + hashed
    return CSI_ATTACH_LIMIT_PREFIX + driver


def _csi_volumes(snapshot: Snapshot, volumes: Sequence[Any], namespace: str, out: dict[str, str]) -> None:
    """filterAttachableVolumes: volume handle -> limit key of the pod's bound CSI claims."""
    for vol in volumes:
        claim_ref = as_mapping(vol).get("persistentVolumeClaim")
        if claim_ref is None:
            continue
        claim_name = str(as_mapping(claim_ref).get("claimName") or "")
        if not claim_name:
            raise _VolumeError("PersistentVolumeClaim had no name")
        claim = _claim(snapshot, namespace, claim_name)
        if claim is None:
            continue
        pv_name = str(_spec(claim).get("volumeName") or "")
        pv = _volume(snapshot, pv_name) if pv_name else None
        if pv is None:
            continue
        csi = _spec(pv).get("csi")
        if csi is None:
            continue
        csi = as_mapping(csi)
        out[str(csi.get("volumeHandle") or "")] = csi_attach_limit_key(str(csi.get("driver") or ""))


@register
class MaxCSIVolumeCountPred(FilterPlugin):
    """CSI volumes per driver against the node's attachable-volumes-csi-<driver> allocatable."""

    name = "MaxCSIVolumeCountPred"
    _key = "legacy/MaxCSIVolumeCountPred"

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        if not legacy_pod(pod).volumes:
            return SKIP
        return None

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        limits = attachable_limits(node_of(node))
        if not limits:
            return None
        new: dict[str, str] = {}
        attached: dict[str, str] = {}
        try:
            _csi_volumes(state.snapshot, legacy_pod(pod).volumes, pod.namespace, new)
            if not new:
                return None
            for other in node.pods:
                _csi_volumes(state.snapshot, legacy_pod(other).volumes, other.namespace, attached)
        except _VolumeError as err:
            return error(str(err))
        attached_count: dict[str, int] = {}
        for handle, key in attached.items():
            new.pop(handle, None)
            attached_count[key] = attached_count.get(key, 0) + 1
        new_count: dict[str, int] = {}
        for key in new.values():
            new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            if key in limits and attached_count.get(key, 0) + count > limits[key]:
                return _MAX_VOLUMES
        return None


# ---- NoVolumeZoneConflict ---------------------------------------------------------------------------------


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """LabelZonesToSet: "__"-separated zones, trimmed; None (an error) when one is empty."""
    zones = set()
    for zone in value.split(MULTI_ZONE_DELIMITER):
        trimmed = zone.strip()
        if not trimmed:
            return None
        zones.add(trimmed)
    return frozenset(zones)


def _storage_class(snapshot: Snapshot, name: str) -> Mapping[str, Any] | None:
    return snapshot.kind("StorageClass").get(name)


_ZONE_KEYS: Final = (LABEL_ZONE_FAILURE_DOMAIN, LABEL_ZONE_REGION)


@register
class NoVolumeZoneConflict(FilterPlugin):
    """Bound PVs' zone and region labels must include the node's."""

    name = "NoVolumeZoneConflict"

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        return None if legacy_pod(pod).volumes else SKIP

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        labels = node_of(node).labels
        constraints: dict[str, str] = {key: labels[key] for key in _ZONE_KEYS if key in labels}
        if not constraints:
            return None
        snapshot = state.snapshot
        for vol in legacy_pod(pod).volumes:
            claim_ref = as_mapping(vol).get("persistentVolumeClaim")
            if claim_ref is None:
                continue
            claim_name = str(as_mapping(claim_ref).get("claimName") or "")
            if not claim_name:
                return error("PersistentVolumeClaim had no name")
            claim = _claim(snapshot, pod.namespace, claim_name)
            if claim is None:
                return error(f'persistentvolumeclaim "{claim_name}" not found')
            pv_name = str(_spec(claim).get("volumeName") or "")
            if not pv_name:
                class_name = claim_class(claim)
                if class_name:
                    storage_class = _storage_class(snapshot, class_name)
                    if storage_class is not None:
                        mode = storage_class.get("volumeBindingMode")
                        if mode is None:
                            return error(f'VolumeBindingMode not set for StorageClass "{class_name}"')
                        if mode == WAIT_FOR_FIRST_CONSUMER:
                            continue  # bound later by the volume binder
                return error(f'PersistentVolumeClaim is not bound: "{claim_name}"')
            pv = _volume(snapshot, pv_name)
            if pv is None:
                return error(f'persistentvolume "{pv_name}" not found')
            for key, label_value in _labels(pv).items():
                if key not in _ZONE_KEYS:
                    continue
                zones = label_zones_to_set(str(label_value))
                if zones is None:
                    continue  # an unparsable label is ignored
                if constraints.get(key, "") not in zones:
                    return _ZONE_CONFLICT
        return None


# ---- CheckVolumeBinding ----------------------------------------------------------------------------------


def _node_affinity(volume: Mapping[str, Any]) -> NodeSelector | None:
    """A PV's required node affinity (None when it has none, which every node satisfies)."""
    affinity = _spec(volume).get("nodeAffinity")
    if affinity is None:
        return None
    required = as_mapping(affinity).get("required")
    if required is None:
        return None
    return compile_node_selector(as_mapping(required))


def matches_without_fields(selector: NodeSelector, labels: Mapping[str, str]) -> bool:
    """MatchNodeSelectorTerms with a nil field set, as checkVolumeNodeAffinity calls it: every field
    requirement is evaluated against the empty string."""
    for term in selector.terms:
        if term.errors:
            continue
        if not all(req.matches(labels) for req in term.label_requirements):
            continue
        if all((req.value == "") == (req.operator == "In") for req in term.field_requirements):
            return True
    return False


def _affinity_ok(selector: NodeSelector | None, labels: Mapping[str, str]) -> bool:
    return selector is None or matches_without_fields(selector, labels)


def _storage(obj: Mapping[str, Any], field: str) -> Fraction:
    """spec.resources.requests.storage of a claim, or spec.capacity.storage of a volume (0 when absent)."""
    spec = _spec(obj)
    holder = as_mapping(as_mapping(spec.get("resources")).get("requests")) if field == "requests" else \
        as_mapping(spec.get("capacity"))
    try:
        return decode_quantity(holder.get("storage"))
    except QuantityError:
        return Fraction(0)


class _Candidate:
    """A PV as findMatchingVolume sees it for one claim, node aside."""

    __slots__ = ("affinity", "eligible", "name", "prebound", "size")

    def __init__(self, name: str, size: Fraction, prebound: bool, eligible: bool,
                 affinity: NodeSelector | None) -> None:
        self.name = name
        self.size = size
        self.prebound = prebound
        self.eligible = eligible
        self.affinity = affinity


class _ClaimToBind:
    __slots__ = ("candidates", "claim", "requested")

    def __init__(self, claim: Mapping[str, Any], requested: Fraction, candidates: list[_Candidate]) -> None:
        self.claim = claim
        self.requested = requested
        self.candidates = candidates


class _BindingState:
    __slots__ = ("bound", "error", "to_bind")

    def __init__(self) -> None:
        self.error: str | None = None
        # bound claims in order: the PV's affinity, or the error of looking the PV up
        self.bound: list[NodeSelector | str | None] = []
        self.to_bind: list[_ClaimToBind] = []


def _claim_key(claim: Mapping[str, Any]) -> str:
    meta = as_mapping(claim.get("metadata"))
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


def _bound_to_claim(volume: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    """isVolumeBoundToClaim: the PV's claimRef names the claim (and its UID, when set)."""
    ref = _spec(volume).get("claimRef")
    if ref is None:
        return False
    ref = as_mapping(ref)
    meta = as_mapping(claim.get("metadata"))
    if str(ref.get("name") or "") != str(meta.get("name") or "") or \
            str(ref.get("namespace") or "") != str(meta.get("namespace") or ""):
        return False
    uid = str(ref.get("uid") or "")
    return not uid or uid == str(meta.get("uid") or "")


def _candidates(snapshot: Snapshot, claim: Mapping[str, Any], selector: LabelSelector | None) -> list[_Candidate]:
    """The PVs of the claim's spec.storageClassName (v1.12's PV cache index), with what does not depend on
    the node already decided."""
    spec = _spec(claim)
    wanted_class = str(spec.get("storageClassName") or "")
    requested_class = claim_class(claim)
    modes = {str(m) for m in as_list(spec.get("accessModes"))}
    out: list[_Candidate] = []
    for name in sorted(snapshot.kind("PersistentVolume")):
        volume = snapshot.kind("PersistentVolume")[name]
        pv_spec = _spec(volume)
        if str(pv_spec.get("storageClassName") or "") != wanted_class:
            continue
        if as_mapping(volume.get("metadata")).get("deletionTimestamp") is not None:
            continue  # StorageObjectInUseProtection (GA)
        prebound = _bound_to_claim(volume, claim)
        eligible = (pv_spec.get("claimRef") is None
                    and (selector is None or selector.matches({str(k): str(v) for k, v in _labels(volume).items()}))
                    and volume_class(volume) == requested_class
                    and modes <= {str(m) for m in as_list(pv_spec.get("accessModes"))})
        if not prebound and not eligible:
            continue
        try:
            affinity = _node_affinity(volume)
        except SelectorError:
            affinity = NodeSelector(())
        out.append(_Candidate(name, _storage(volume, "capacity"), prebound, eligible, affinity))
    return out


@register
class CheckVolumeBinding(FilterPlugin):
    """Bound PVs' node affinity, and an available or provisionable PV for each delayed-binding claim."""

    name = "CheckVolumeBinding"
    _key = "legacy/CheckVolumeBinding"

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        volumes = [v for v in legacy_pod(pod).volumes if as_mapping(v).get("persistentVolumeClaim") is not None]
        if not volumes:
            return SKIP
        state.data[self._key] = self._classify(state.snapshot, pod, volumes)
        return None

    def _classify(self, snapshot: Snapshot, pod: PodRecord, volumes: list[Any]) -> _BindingState:
        """getPodVolumes, and what of the bound and to-bind claims does not depend on the node."""
        data = _BindingState()
        immediate = False
        to_bind: list[Mapping[str, Any]] = []
        for vol in volumes:
            claim_name = str(as_mapping(as_mapping(vol).get("persistentVolumeClaim")).get("claimName") or "")
            claim = _claim(snapshot, pod.namespace, claim_name)
            if claim is None:
                data.error = (f'error getting PVC "{claim_name}": could not find v1.PersistentVolumeClaim '
                              f'"{pod.namespace}/{claim_name}"')
                return data
            pv_name = str(_spec(claim).get("volumeName") or "")
            if pv_name and ANN_BIND_COMPLETED in _annotations(claim):
                pv = _volume(snapshot, pv_name)
                if pv is None:
                    data.bound.append(f'could not find v1.PersistentVolume "{pv_name}"')
                else:
                    try:
                        data.bound.append(_node_affinity(pv))
                    except SelectorError:
                        data.bound.append(NodeSelector(()))
                continue
            delay = False
            if ANN_SELECTED_NODE not in _annotations(claim):
                class_name = claim_class(claim)
                storage_class = _storage_class(snapshot, class_name) if class_name else None
                if storage_class is not None:
                    mode = storage_class.get("volumeBindingMode")
                    if mode is None:
                        data.error = f'VolumeBindingMode not set for StorageClass "{class_name}"'
                        return data
                    delay = mode == WAIT_FOR_FIRST_CONSUMER
            if delay and not pv_name:
                to_bind.append(claim)
            else:
                immediate = True  # pre-bound claims count as immediate
        if immediate:
            data.error = "pod has unbound immediate PersistentVolumeClaims"
            return data
        claims = sorted(((c, _storage(c, "requests")) for c in to_bind), key=lambda pair: pair[1])
        for claim, requested in claims:
            raw_selector = _spec(claim).get("selector")
            selector = None
            if raw_selector is not None:
                try:
                    selector = compile_label_selector(as_mapping(raw_selector))
                except SelectorError as err:
                    data.error = f"error creating internal label selector for claim: {_claim_key(claim)}: {err}"
                    return data
            data.to_bind.append(_ClaimToBind(claim, requested, _candidates(snapshot, claim, selector)))
        return data

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        data: _BindingState = state.data[self._key]
        if data.error:
            return error(data.error)
        labels = node_of(node).labels
        bound_ok = True
        for entry in data.bound:
            if isinstance(entry, str):
                return error(entry)
            if not _affinity_ok(entry, labels):
                bound_ok = False
                break
        unbound_ok = True
        if data.to_bind:
            chosen: set[str] = set()
            unmatched: list[Mapping[str, Any]] = []
            for claim in data.to_bind:
                found = self._find_matching(claim, labels, chosen)
                if found is None:
                    unmatched.append(claim.claim)
                    unbound_ok = False
                else:
                    chosen.add(found)
            if not unbound_ok:
                provisionable = self._provisionable(state.snapshot, unmatched, labels)
                if isinstance(provisionable, str):
                    return error(provisionable)
                unbound_ok = provisionable
        reasons = []
        if not bound_ok:
            reasons.append(ERR_VOLUME_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_VOLUME_BIND_CONFLICT)
        return unschedulable(*reasons) if reasons else None

    @staticmethod
    def _find_matching(claim: _ClaimToBind, labels: Mapping[str, str], chosen: set[str]) -> str | None:
        """findMatchingVolume on the scheduler path: a pre-bound PV, else the smallest one that fits."""
        smallest: _Candidate | None = None
        for candidate in claim.candidates:
            if candidate.name in chosen:
                continue
            valid = _affinity_ok(candidate.affinity, labels)
            if candidate.prebound:
                if candidate.size < claim.requested:
                    continue
                return candidate.name if valid else None
            if not candidate.eligible or not valid:
                continue
            if candidate.size >= claim.requested and (smallest is None or smallest.size > candidate.size):
                smallest = candidate
        return smallest.name if smallest is not None else None

    @staticmethod
    def _provisionable(snapshot: Snapshot, claims: list[Mapping[str, Any]], labels: Mapping[str, str]) -> bool | str:
        """checkVolumeProvisions: every claim's class can provision a volume reachable from the node."""
        for claim in claims:
            class_name = claim_class(claim)
            if not class_name:
                return f'no class for claim "{_claim_key(claim)}"'
            storage_class = _storage_class(snapshot, class_name)
            if storage_class is None:
                return f'failed to find storage class "{class_name}"'
            provisioner = str(storage_class.get("provisioner") or "")
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False
            if not match_topology_selector_terms(as_list(storage_class.get("allowedTopologies")), labels):
                return False
        return True


def match_topology_selector_terms(terms: Sequence[Any], labels: Mapping[str, str]) -> bool:
    """MatchTopologySelectorTerms: no terms match everything; a term's expressions are "key In values",
    ANDed; an empty or invalid term matches nothing; terms are ORed."""
    if not terms:
        return True
    for term in terms:
        expressions = as_list(as_mapping(term).get("matchLabelExpressions"))
        if not expressions:
            continue
        ok = True
        for expr in expressions:
            expr = as_mapping(expr)
            key = str(expr.get("key") or "")
            values = [str(v) for v in as_list(expr.get("values"))]
            if label_key_errors(key) or not values or any(label_value_errors(v) for v in values):
                ok = False  # NewRequirement fails: the term is skipped
                break
            if labels.get(key) not in values:
                ok = False
                break
        if ok:
            return True
    return False
