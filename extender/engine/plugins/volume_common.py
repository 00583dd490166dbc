"""Helpers shared by the volume plugins (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone).

Upstream pieces re-implemented here, each in its own section:

* reading PersistentVolumeClaims, PersistentVolumes and StorageClasses out of the snapshot's raw objects,
  with the listers' NotFound messages (``persistentvolumeclaim "x" not found``);
* ``k8s.io/component-helpers/storage/volume`` (storage class of a claim or volume, access modes,
  ``CheckNodeAffinity``) and ``.../storage/ephemeral`` (generic ephemeral volume claim names, ownership);
* ``k8s.io/cloud-provider/volume/helpers.LabelZonesToSet``;
* ``k8s.io/csi-translation-lib`` (in-tree volume plugins migrated to CSI: which sources are migratable, the CSI
  driver and volume handle they translate to, and the topology rewrite of a translated PV's node affinity).

Objects stay raw dicts (camelCase JSON, as the apiserver stores them). A PV's node affinity is compiled once per
object and kept in a small identity cache, because VolumeBinding checks it on every node.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from extender.cluster.records import PodRecord
from extender.cluster.snapshot import Snapshot
from extender.kube.quantity import QuantityError, parse_quantity
from extender.kube.selectors import NodeSelector, SelectorError, compile_node_selector

# ---------------------------------------------------------------------- constants

BETA_STORAGE_CLASS_ANNOTATION: Final = "volume.beta.kubernetes.io/storage-class"
ANN_BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
ANN_SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
NOT_SUPPORTED_PROVISIONER: Final = "kubernetes.io/no-provisioner"
MIGRATED_PLUGINS_ANNOTATION: Final = "storage.alpha.kubernetes.io/migrated-plugins"
WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"

LABEL_ZONE_BETA: Final = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_BETA: Final = "failure-domain.beta.kubernetes.io/region"
LABEL_ZONE: Final = "topology.kubernetes.io/zone"
LABEL_REGION: Final = "topology.kubernetes.io/region"
LABEL_MULTI_ZONE_DELIMITER: Final = "__"

# The GroupResource strings of client-go's listers (listers/core/v1, listers/storage/v1): what their
# NotFound errors print. Upstream's unit tests use fake listers that print plural names instead.
PVC_RESOURCE: Final = "persistentvolumeclaim"
PV_RESOURCE: Final = "persistentvolume"
SC_RESOURCE: Final = "storageclass.storage.k8s.io"

KIND_PVC: Final = "PersistentVolumeClaim"
KIND_PV: Final = "PersistentVolume"
KIND_SC: Final = "StorageClass"
KIND_CSINODE: Final = "CSINode"
# Not kept by the cache today; read when present (see the plugins' docstrings).
KIND_CSIDRIVER: Final = "CSIDriver"
KIND_CSISTORAGECAPACITY: Final = "CSIStorageCapacity"
KIND_VOLUMEATTACHMENT: Final = "VolumeAttachment"


# ---------------------------------------------------------------------- raw object access


def as_mapping(obj: Any) -> Mapping[str, Any]:
    """``obj`` if it is a mapping, else an empty one (absent and null fields read as empty)."""
    return obj if isinstance(obj, Mapping) else {}


def as_list(obj: Any) -> list[Any]:
    """``obj`` if it is a list, else an empty one."""
    return obj if isinstance(obj, list) else []


def as_str(obj: Any) -> str:
    """``obj`` if it is a string, else "" (a Go string field's zero value)."""
    return obj if isinstance(obj, str) else ""


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The object's metadata."""
    return as_mapping(obj.get("metadata"))


def spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The object's spec."""
    return as_mapping(obj.get("spec"))


def name_of(obj: Mapping[str, Any]) -> str:
    """metadata.name."""
    return as_str(meta(obj).get("name"))


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """metadata.annotations."""
    return as_mapping(meta(obj).get("annotations"))


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """metadata.labels."""
    return as_mapping(meta(obj).get("labels"))


def is_set(source: Mapping[str, Any], key: str) -> bool:
    """Whether a pointer field (a volume source, ``ephemeral``...) is set: Go's ``!= nil``."""
    return source.get(key) is not None


def go_quote(text: str) -> str:
    """Go's ``%q`` of a string (strconv.Quote) for the characters object names can hold."""
    out = ['"']
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def not_found(resource: str, name: str) -> str:
    """The message of apierrors.NewNotFound, as a lister's Get returns it."""
    return f"{resource} {go_quote(name)} not found"


# Go's unicode.IsSpace set (strings.TrimSpace): Python's str.strip() also strips \x1c-\x1f.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000"


def go_trim_space(text: str) -> str:
    """strings.TrimSpace."""
    return text.strip(_GO_SPACE)


class Objects:
    """The snapshot's storage objects, looked up the way upstream's listers do."""

    __slots__ = ("csinodes", "pvcs", "pvs", "scs", "snapshot")

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.pvcs = snapshot.kind(KIND_PVC)
        self.pvs = snapshot.kind(KIND_PV)
        self.scs = snapshot.kind(KIND_SC)
        self.csinodes = snapshot.kind(KIND_CSINODE)

    def pvc(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """The claim namespace/name, or None."""
        return self.pvcs.get(f"{namespace}/{name}")

    def pv(self, name: str) -> Mapping[str, Any] | None:
        """The volume of that name, or None."""
        return self.pvs.get(name)

    def sc(self, name: str) -> Mapping[str, Any] | None:
        """The storage class of that name, or None."""
        return self.scs.get(name)

    def csinode(self, name: str) -> Mapping[str, Any] | None:
        """The CSINode of a node, or None."""
        return self.csinodes.get(name)


# ---------------------------------------------------------------------- pod volumes


def pod_volumes(pod: PodRecord) -> list[Mapping[str, Any]]:
    """spec.volumes of a pod (each as a mapping)."""
    return [as_mapping(v) for v in as_list(pod.spec.get("volumes"))]


def claim_of(pod: PodRecord, volume: Mapping[str, Any]) -> tuple[str, bool] | None:
    """(claim name, is generic ephemeral) of a volume backed by a PVC, else None.

    A generic ephemeral volume's claim is named ``<pod>-<volume>`` (ephemeral.VolumeClaimName).
    """
    if is_set(volume, "persistentVolumeClaim"):
        return as_str(as_mapping(volume.get("persistentVolumeClaim")).get("claimName")), False
    if is_set(volume, "ephemeral"):
        return f"{pod.name}-{as_str(volume.get('name'))}", True
    return None


def volume_is_for_pod(pod: PodRecord, pvc: Mapping[str, Any]) -> str | None:
    """ephemeral.VolumeIsForPod: None when the claim is controlled by the pod, else the error message."""
    pvc_meta = meta(pvc)
    namespace = as_str(pvc_meta.get("namespace")) or "default"
    controlled = False
    for ref in as_list(pvc_meta.get("ownerReferences")):
        ref = as_mapping(ref)
        # metav1.IsControlledBy: the (first) controller reference's UID is the pod's.
        if ref.get("controller") is True:
            controlled = as_str(ref.get("uid")) == pod.uid
            break
    if namespace != pod.namespace or not controlled:
        return (f"PVC {namespace}/{name_of(pvc)} was not created for pod {pod.namespace}/{pod.name} "
                "(pod is not owner)")
    return None


# ---------------------------------------------------------------------- storage helpers


def pvc_class(pvc: Mapping[str, Any]) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName."""
    ann = annotations_of(pvc)
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return as_str(ann[BETA_STORAGE_CLASS_ANNOTATION])
    return as_str(spec(pvc).get("storageClassName"))


def pv_class(pv: Mapping[str, Any]) -> str:
    """GetPersistentVolumeClass: the beta annotation first, then spec.storageClassName."""
    ann = annotations_of(pv)
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return as_str(ann[BETA_STORAGE_CLASS_ANNOTATION])
    return as_str(spec(pv).get("storageClassName"))


def access_modes(obj: Mapping[str, Any]) -> list[str]:
    """spec.accessModes."""
    return [as_str(m) for m in as_list(spec(obj).get("accessModes"))]


def _quantity(raw: Any) -> Fraction:
    try:
        return parse_quantity(raw)
    except (QuantityError, TypeError):
        # A stored object never holds an invalid quantity (the apiserver rejects it); read it as zero.
        return Fraction(0)


def storage_request(pvc: Mapping[str, Any]) -> Fraction | None:
    """spec.resources.requests.storage of a claim, None when absent."""
    requests = as_mapping(as_mapping(spec(pvc).get("resources")).get("requests"))
    if "storage" not in requests:
        return None
    return _quantity(requests["storage"])


def pv_capacity(pv: Mapping[str, Any]) -> Fraction:
    """spec.capacity.storage of a volume (zero when absent, as a missing map entry reads in Go)."""
    capacity = as_mapping(spec(pv).get("capacity"))
    return _quantity(capacity["storage"]) if "storage" in capacity else Fraction(0)


def label_zones_to_set(value: str) -> set[str] | None:
    """volumehelpers.LabelZonesToSet: zones separated by "__", trimmed; None if one of them is empty."""
    zones: set[str] = set()
    for zone in value.split(LABEL_MULTI_ZONE_DELIMITER):
        trimmed = go_trim_space(zone)
        if not trimmed:
            return None
        zones.add(trimmed)
    return zones


# ---------------------------------------------------------------------- PV node affinity

_NEVER = NodeSelector(())


class IdentityCache:
    """Values derived from raw objects, keyed by the object's identity (raw objects are never mutated).

    The object is kept with its value, so an id cannot be reused while its entry lives; the cache is simply
    emptied when it grows past its bound.
    """

    __slots__ = ("_entries", "_limit")

    def __init__(self, limit: int) -> None:
        self._entries: dict[int, tuple[object, Any]] = {}
        self._limit = limit

    def get(self, obj: object) -> Any:
        """The value cached for this very object, or None."""
        entry = self._entries.get(id(obj))
        if entry is not None and entry[0] is obj:
            return entry[1]
        return None

    def put(self, obj: object, value: Any) -> None:
        """Cache a value for this object."""
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[id(obj)] = (obj, value)


_affinity_cache = IdentityCache(1 << 16)
_NO_AFFINITY = object()


def compile_affinity(required: Any) -> NodeSelector:
    """A PV's spec.nodeAffinity.required compiled; invalid terms never match (MatchNodeSelectorTerms)."""
    try:
        return compile_node_selector(as_mapping(required))
    except SelectorError:
        # Values of the wrong JSON type cannot come from an apiserver: such a selector matches nothing.
        return _NEVER


def pv_affinity(pv: Mapping[str, Any]) -> NodeSelector | None:
    """The compiled required node affinity of a PV, None when it has none (then every node matches)."""
    cached = _affinity_cache.get(pv)
    if cached is None:
        node_affinity = spec(pv).get("nodeAffinity")
        required = as_mapping(node_affinity).get("required") if node_affinity is not None else None
        cached = _NO_AFFINITY if required is None else compile_affinity(required)
        _affinity_cache.put(pv, cached)
    return None if cached is _NO_AFFINITY else cached


def affinity_matches(selector: NodeSelector | None, node_labels: Mapping[str, str]) -> bool:
    """volume.CheckNodeAffinity: the node is given by its labels only, so matchFields are not evaluated."""
    return selector is None or selector.matches(node_labels, "")


# ---------------------------------------------------------------------- CSI translation (csi-translation-lib)


class TranslationError(ValueError):
    """An in-tree volume that csi-translation-lib cannot translate; the message is upstream's."""


@dataclass(frozen=True, slots=True)
class InTreePlugin:
    """An in-tree volume plugin csi-translation-lib knows, and the CSI driver it migrates to."""

    name: str  # e.g. kubernetes.io/aws-ebs
    driver: str  # e.g. ebs.csi.aws.com
    source: str  # the volume source field, e.g. awsElasticBlockStore
    migration_on: bool  # isCSIMigrationOn / isCSIMigrationOnForPlugin: migration is always on for it in 1.36
    topology_key: str | None  # the CSI zone key a translated PV's node affinity is rewritten to, if any


AWS_EBS: Final = InTreePlugin("kubernetes.io/aws-ebs", "ebs.csi.aws.com", "awsElasticBlockStore", True,
                              "topology.ebs.csi.aws.com/zone")
GCE_PD: Final = InTreePlugin("kubernetes.io/gce-pd", "pd.csi.storage.gke.io", "gcePersistentDisk", True,
                             "topology.gke.io/zone")
CINDER: Final = InTreePlugin("kubernetes.io/cinder", "cinder.csi.openstack.org", "cinder", True,
                             "topology.cinder.csi.openstack.org/zone")
AZURE_DISK: Final = InTreePlugin("kubernetes.io/azure-disk", "disk.csi.azure.com", "azureDisk", True, None)
AZURE_FILE: Final = InTreePlugin("kubernetes.io/azure-file", "file.csi.azure.com", "azureFile", False, None)
VSPHERE: Final = InTreePlugin("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com", "vsphereVolume", False, None)
PORTWORX: Final = InTreePlugin("kubernetes.io/portworx-volume", "pxd.portworx.com", "portworxVolume", True, None)

# Upstream walks a Go map of these; a valid object sets one source only, so the order does not matter.
IN_TREE_PLUGINS: Final = (GCE_PD, AWS_EBS, CINDER, AZURE_DISK, AZURE_FILE, VSPHERE, PORTWORX)
IN_TREE_BY_NAME: Final = {p.name: p for p in IN_TREE_PLUGINS}


def inline_plugin(volume: Mapping[str, Any]) -> InTreePlugin | None:
    """The in-tree plugin of a migratable inline volume (IsInlineMigratable), else None."""
    for plugin in IN_TREE_PLUGINS:
        if is_set(volume, plugin.source):
            return plugin
    return None


def pv_plugin(pv: Mapping[str, Any]) -> InTreePlugin | None:
    """The in-tree plugin of a migratable PV (IsPVMigratable), else None."""
    pv_spec = spec(pv)
    for plugin in IN_TREE_PLUGINS:
        if is_set(pv_spec, plugin.source):
            return plugin
    return None


def csinode_migrated_plugins(csinode: Mapping[str, Any] | None) -> set[str]:
    """The plugins a CSINode's storage.alpha.kubernetes.io/migrated-plugins annotation lists."""
    if csinode is None:
        return set()
    value = as_str(annotations_of(csinode).get(MIGRATED_PLUGINS_ANNOTATION))
    return set(value.split(",")) if value else set()


_AWS_VOLUME_RE = re.compile(r"vol-[^/]*")


def _aws_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: aws://<zone>/<id>, aws:///<id> or a bare id."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    rest = kubernetes_id[len("aws://"):].split("#", 1)[0].split("?", 1)[0]
    slash = rest.find("/")
    path = rest[slash:] if slash >= 0 else ""
    if re.search(r"%(?![0-9A-Fa-f]{2})", path):
        # url.Parse rejects a malformed escape; upstream wraps its error.
        raise TranslationError(f"Invalid disk name ({kubernetes_id}): parse {go_quote(kubernetes_id)}: "
                               "invalid URL escape")
    aws_id = re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), path).strip("/")
    if not _AWS_VOLUME_RE.fullmatch(aws_id):
        raise TranslationError(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _go_set_string(items: set[str]) -> str:
    """fmt's %v of a sets.String (a Go map, printed with sorted keys)."""
    return "map[" + " ".join(f"{k}:{{}}" for k in sorted(items)) + "]"


def _gce_region(zones: Sequence[str]) -> str:
    """gceGetRegionFromZones."""
    regions: set[str] = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError("failed to get region from zones: zone in unexpected format, expected: "
                                   f"{{locale}}-{{region}}-{{zone}}, got: {zone}")
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        raise TranslationError("failed to get region from zones: multiple or no regions gotten from zones, got: "
                               + _go_set_string(regions))
    return next(iter(regions))


def _azure_disk_kind_ok(source: Mapping[str, Any]) -> None:
    kind = source.get("kind")
    if kind is not None and as_str(kind).lower() != "managed":
        raise TranslationError(f"kind({as_str(kind)}) is not supported in csi migration")


def translate_inline_handle(plugin: InTreePlugin, volume: Mapping[str, Any]) -> str:
    """The CSI volume handle TranslateInTreeInlineVolumeToCSI gives an inline volume of a migrated plugin."""
    source = as_mapping(volume.get(plugin.source))
    if plugin is AWS_EBS:
        try:
            return _aws_volume_id(as_str(source.get("volumeID")))
        except TranslationError as err:
            raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID {err}") from err
    if plugin is GCE_PD:
        return f"projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{as_str(source.get('pdName'))}"
    if plugin is AZURE_DISK:
        _azure_disk_kind_ok(source)
        return as_str(source.get("diskURI"))
    if plugin in (CINDER, PORTWORX):
        return as_str(source.get("volumeID"))
    volume_name = go_quote(as_str(volume.get("name")))
    raise TranslationError(f"could not find in-tree plugin translation logic for {volume_name}")


def translate_pv_handle(plugin: InTreePlugin, pv: Mapping[str, Any]) -> str:
    """The CSI volume handle TranslateInTreePVToCSI gives a PV of a migrated plugin."""
    source = as_mapping(spec(pv).get(plugin.source))
    if plugin is AWS_EBS:
        try:
            return _aws_volume_id(as_str(source.get("volumeID")))
        except TranslationError as err:
            raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID {err}") from err
    if plugin is GCE_PD:
        pv_labels = labels_of(pv)
        zones_label = as_str(pv_labels.get(LABEL_ZONE_BETA)) or as_str(pv_labels.get(LABEL_ZONE))
        zones = zones_label.split(LABEL_MULTI_ZONE_DELIMITER)
        pd_name = as_str(source.get("pdName"))
        if len(zones) == 1 and zones[0]:
            return f"projects/UNSPECIFIED/zones/{zones[0]}/disks/{pd_name}"
        if len(zones) > 1:
            return f"projects/UNSPECIFIED/regions/{_gce_region(zones)}/disks/{pd_name}"
        return f"projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{pd_name}"
    if plugin is AZURE_DISK:
        _azure_disk_kind_ok(source)
        return as_str(source.get("diskURI"))
    if plugin in (CINDER, PORTWORX):
        return as_str(source.get("volumeID"))
    raise TranslationError(f"could not find in-tree plugin translation logic for {go_quote(name_of(pv))}")


def _terms_of(required: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    return [as_mapping(t) for t in as_list(as_mapping(required).get("nodeSelectorTerms"))]


def _topology_key_exists(key: str, terms: list[Mapping[str, Any]]) -> bool:
    return any(as_str(as_mapping(e).get("key")) == key for t in terms for e in as_list(t.get("matchExpressions")))


def _topology_values(key: str, terms: list[Mapping[str, Any]]) -> list[str]:
    values: set[str] = set()
    for term in terms:
        for expr in as_list(term.get("matchExpressions")):
            expr = as_mapping(expr)
            if as_str(expr.get("key")) == key:
                values.update(as_str(v) for v in as_list(expr.get("values")))
    return sorted(values)


def _replace_key(terms: list[dict[str, Any]], old: str, new: str) -> None:
    for term in terms:
        term["matchExpressions"] = [
            {**as_mapping(e), "key": new} if as_str(as_mapping(e).get("key")) == old else e
            for e in as_list(term.get("matchExpressions"))
        ]


def translate_pv_affinity(plugin: InTreePlugin, pv: Mapping[str, Any]) -> Any:
    """The spec.nodeAffinity.required of the PV TranslateInTreePVToCSI returns (None when it has none).

    Raises TranslationError where upstream's translation fails. The zone topology is moved to the CSI
    driver's key (translateTopologyFromInTreeToCSI): zone requirements are re-keyed, or, without any, the PV's
    zone label becomes one; a beta region requirement becomes a GA one.
    """
    translate_pv_handle(plugin, pv)  # the same failures as upstream's translation, before the topology
    node_affinity = spec(pv).get("nodeAffinity")
    required = as_mapping(node_affinity).get("required") if node_affinity is not None else None
    if plugin.topology_key is None:
        return required
    terms = _terms_of(required)
    pv_labels = labels_of(pv)
    # getTopologyLabel: which zone/region keys the PV uses (GA when nothing says otherwise).
    if _topology_key_exists(LABEL_ZONE, terms):
        zone_key, region_key = LABEL_ZONE, LABEL_REGION
    elif _topology_key_exists(LABEL_ZONE_BETA, terms):
        zone_key, region_key = LABEL_ZONE_BETA, LABEL_REGION_BETA
    elif LABEL_ZONE in pv_labels:
        zone_key, region_key = LABEL_ZONE, LABEL_REGION
    elif LABEL_ZONE_BETA in pv_labels:
        zone_key, region_key = LABEL_ZONE_BETA, LABEL_REGION_BETA
    else:
        zone_key, region_key = LABEL_ZONE, LABEL_REGION
    new_terms: list[dict[str, Any]] = [dict(t) for t in terms]
    new_required: dict[str, Any] | None = None if required is None else {**as_mapping(required)}
    if _topology_values(zone_key, terms):
        _replace_key(new_terms, zone_key, plugin.topology_key)
    elif zone_key in pv_labels:
        zones = sorted({go_trim_space(z) for z in as_str(pv_labels[zone_key]).split(LABEL_MULTI_ZONE_DELIMITER)}
                       - {""})
        if zones:  # addTopology: nothing to add is an error upstream ignores
            if not new_terms:
                new_terms = [{}]
            requirement = {"key": plugin.topology_key, "operator": "In", "values": zones}
            for term in new_terms:
                term["matchExpressions"] = [*as_list(term.get("matchExpressions")), requirement]
            if new_required is None:
                new_required = {}
    if region_key == LABEL_REGION_BETA and _topology_values(LABEL_REGION_BETA, terms):
        _replace_key(new_terms, LABEL_REGION_BETA, LABEL_REGION)
    if new_required is None:
        return None
    if "nodeSelectorTerms" in new_required or new_terms:
        new_required["nodeSelectorTerms"] = new_terms
    return new_required
