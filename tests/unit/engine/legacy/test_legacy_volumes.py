"""v1.12 volume predicates against upstream's tables (k8s.io/kubernetes v1.12.10):
pkg/scheduler/algorithm/predicates/predicates_test.go (Test{GCE,AWS,RBD,ISCSI}DiskConflicts,
TestVolumeZonePredicate*, TestGetMaxVols), max_attachable_volume_predicate_test.go (TestVolumeCountConflicts,
TestMaxVolumeFunc*), csi_volume_predicate_test.go (TestCSIVolumeCountPredicate) and
pkg/controller/volume/persistentvolume/scheduler_binder_test.go (TestFindPodVolumesWith{out,}Provisioning)
for CheckVolumeBinding."""

from __future__ import annotations

from typing import Any

import pytest
from test_legacy_harness import Obj, fits, node, obj, pod, verdicts

from extender.engine.plugins.legacy.volumes import csi_attach_limit_key, max_ebs_volumes, max_volumes_from_env

DISK_CONFLICT = "node(s) had no available disk"

GCE = [{"gcePersistentDisk": {"pdName": "foo"}}], [{"gcePersistentDisk": {"pdName": "bar"}}]
AWS = [{"awsElasticBlockStore": {"volumeID": "foo"}}], [{"awsElasticBlockStore": {"volumeID": "bar"}}]
RBD = ([{"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}],
       [{"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}])
ISCSI = ([{"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01",
                     "fsType": "ext4", "lun": 0}}],
         [{"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01",
                     "fsType": "ext4", "lun": 0}}])


def with_volumes(volumes: list[Obj] | None, node_name: str = "") -> Obj:
    named = [{"name": f"v{i}", **v} for i, v in enumerate(volumes or [])]
    return pod(node_name=node_name, spec={"volumes": named} if volumes is not None else None)


@pytest.mark.parametrize("kind", ["gce", "aws", "rbd", "iscsi"])
@pytest.mark.parametrize(("name", "incoming", "existing", "ok"), [
    ("nothing", None, None, True),
    ("one state", None, 0, True),
    ("same state", 0, 0, False),
    ("different state", 1, 0, True),
])
def test_disk_conflicts(kind: str, name: str, incoming: int | None, existing: int | None, ok: bool) -> None:
    states = {"gce": GCE, "aws": AWS, "rbd": RBD, "iscsi": ISCSI}[kind]
    objects: list[Obj] = [node()]
    if existing is not None:
        objects.append(with_volumes(states[existing], "node"))
    new = with_volumes(states[incoming]) if incoming is not None else pod()
    assert fits("NoDiskConflict", new, objects) == ((True, []) if ok else (False, [DISK_CONFLICT]))


def test_disk_conflict_read_only_and_rbd_pool_default() -> None:
    ro = [{"gcePersistentDisk": {"pdName": "foo", "readOnly": True}}]
    assert fits("NoDiskConflict", with_volumes(ro), [node(), with_volumes(ro, "node")]) == (True, [])
    assert fits("NoDiskConflict", with_volumes(GCE[0]), [node(), with_volumes(ro, "node")])[0] is False
    # SetDefaults_RBDVolumeSource: an absent pool is "rbd"
    a = [{"rbd": {"monitors": ["a"], "image": "x"}}]
    b = [{"rbd": {"monitors": ["a", "z"], "pool": "rbd", "image": "x"}}]
    assert fits("NoDiskConflict", with_volumes(a), [node(), with_volumes(b, "node")])[0] is False


# ---- TestVolumeCountConflicts ---------------------------------------------------------------------------

EBS, GCE_PD, AZURE = "EBS", "GCE", "AzureDisk"
PLUGIN = {EBS: "MaxEBSVolumeCount", GCE_PD: "MaxGCEPDVolumeCount", AZURE: "MaxAzureDiskVolumeCount"}
LIMIT_KEY = {EBS: "attachable-volumes-aws-ebs", GCE_PD: "attachable-volumes-gce-pd",
             AZURE: "attachable-volumes-azure-disk"}


def ebs(volume_id: str) -> Obj:
    return {"awsElasticBlockStore": {"volumeID": volume_id}}


def claim(name: str) -> Obj:
    return {"persistentVolumeClaim": {"claimName": name}}


POD_VOLUMES: dict[str, list[Obj]] = {
    "oneVol": [ebs("ovp")],
    "twoVol": [ebs("tvp1"), ebs("tvp2")],
    "splitVols": [{"hostPath": {"path": "/"}}, ebs("svp")],
    "nonApplicable": [{"hostPath": {"path": "/"}}],
    "deletedPVC": [claim("deletedPVC")],
    "twoDeletedPVC": [claim("deletedPVC"), claim("anotherDeletedPVC")],
    "deletedPV": [claim("pvcWithDeletedPV")],
    "deletedPV2": [claim("pvcWithDeletedPV")],
    "anotherDeletedPV": [claim("anotherPVCWithDeletedPV")],
    "empty": [],
    "unboundPVC": [claim("unboundPVC")],
    "unboundPVC2": [claim("unboundPVC")],
    "anotherUnboundPVC": [claim("anotherUnboundPVC")],
}


def pod_volumes(spec: str, filter_name: str) -> list[Obj]:
    if spec == "onePVC":
        return [claim(f"some{filter_name}Vol")]
    if spec == "splitPVC":
        return [claim(f"someNon{filter_name}Vol"), claim(f"some{filter_name}Vol")]
    return POD_VOLUMES[spec]


def fake_volumes(filter_name: str) -> list[Obj]:
    """getFakePVInfo / getFakePVCInfo: the PV behind some<F>Vol is an EBS volume whatever the filter."""
    pvs = [obj("PersistentVolume", f"some{filter_name}Vol", None,
               spec={"awsElasticBlockStore": {"volumeID": f"{filter_name.lower()}Vol"}}),
           obj("PersistentVolume", f"someNon{filter_name}Vol", None, spec={})]
    claims = [(f"some{filter_name}Vol", f"some{filter_name}Vol"), (f"someNon{filter_name}Vol",
                                                                     f"someNon{filter_name}Vol"),
              ("pvcWithDeletedPV", "pvcWithDeletedPV"), ("anotherPVCWithDeletedPV", "anotherPVCWithDeletedPV"),
              ("unboundPVC", ""), ("anotherUnboundPVC", "")]
    return pvs + [obj("PersistentVolumeClaim", n, spec={"volumeName": v}) for n, v in claims]


def cases(filter_name: str, fits_: list[bool]) -> list[tuple[str, str, str, list[str], int, bool]]:
    rows = [
        ("fits when node capacity >= new pod's volumes", "oneVol", ["twoVol", "oneVol"], 4),
        ("doesn't fit when node capacity < new pod's volumes", "twoVol", ["oneVol"], 2),
        ("new pod's count ignores non-matching volumes", "splitVols", ["twoVol"], 3),
        ("existing pods' counts ignore non-matching volumes", "twoVol", ["splitVols", "nonApplicable", "empty"], 3),
        ("new pod's count considers PVCs backed by matching volumes", "onePVC",
         ["splitVols", "nonApplicable", "empty"], 3),
        ("new pod's count ignores PVCs not backed by matching volumes", "splitPVC", ["splitVols", "oneVol"], 3),
        ("existing pods' counts considers PVCs backed by matching volumes", "twoVol", ["oneVol", "onePVC"], 3),
        ("already-mounted volumes are always ok to allow", "twoVol", ["oneVol", "twoVol", "onePVC"], 4),
        ("the same volumes are not counted multiple times", "splitVols", ["oneVol", "oneVol", "onePVC"], 3),
        ("pod with missing PVC is counted towards the PV limit", "onePVC", ["oneVol", "deletedPVC"], 2),
        ("pod with missing PVC is counted towards the PV limit (3)", "onePVC", ["oneVol", "deletedPVC"], 3),
        ("pod with missing two PVCs is counted towards the PV limit twice", "onePVC", ["oneVol", "twoDeletedPVC"], 3),
        ("pod with missing PV is counted towards the PV limit", "onePVC", ["oneVol", "deletedPV"], 2),
        ("pod with missing PV is counted towards the PV limit (3)", "onePVC", ["oneVol", "deletedPV"], 3),
        ("two pods missing the same PV are counted towards the PV limit only once", "deletedPV2",
         ["oneVol", "deletedPV"], 2),
        ("two pods missing different PVs are counted towards the PV limit twice", "anotherDeletedPV",
         ["oneVol", "deletedPV"], 2),
        ("pod with unbound PVC is counted towards the PV limit", "onePVC", ["oneVol", "unboundPVC"], 2),
        ("pod with unbound PVC is counted towards the PV limit (3)", "onePVC", ["oneVol", "unboundPVC"], 3),
        ("the same unbound PVC in multiple pods is counted towards the PV limit only once", "unboundPVC2",
         ["oneVol", "unboundPVC"], 2),
        ("two different unbound PVCs are counted towards the PV limit as two volumes", "anotherUnboundPVC",
         ["oneVol", "unboundPVC"], 2),
    ]
    return [(f"{filter_name}: {name}", filter_name, new, existing, max_vols, ok)
            for (name, new, existing, max_vols), ok in zip(rows, fits_, strict=True)]


T, F = True, False
VOLUME_COUNT = (
    cases(EBS, [T, F, T, T, T, T, F, T, T, F, T, F, F, T, T, F, F, T, T, F])
    # The volumes of upstream's pods are all EBS, so only the claims that cannot be resolved count for GCE PD
    # and Azure Disk, and only when the new pod has one of those: nothing ever exceeds the limit.
    + cases(GCE_PD, [T] * 20)
    + cases(AZURE, [T] * 20)
)


@pytest.mark.parametrize(("name", "filter_name", "new", "existing", "max_vols", "ok"), VOLUME_COUNT,
                         ids=[c[0] for c in VOLUME_COUNT])
@pytest.mark.parametrize("limit_from", ["env", "allocatable"])
def test_volume_count_conflicts(monkeypatch: pytest.MonkeyPatch, limit_from: str, name: str, filter_name: str,
                                new: str, existing: list[str], max_vols: int, ok: bool) -> None:
    if limit_from == "env":
        monkeypatch.setenv("KUBE_MAX_PD_VOLS", str(max_vols))
        the_node = node()
    else:
        monkeypatch.delenv("KUBE_MAX_PD_VOLS", raising=False)
        the_node = node(allocatable={LIMIT_KEY[filter_name]: max_vols})
    objects = [the_node, *fake_volumes(filter_name)]
    objects += [with_volumes(pod_volumes(e, filter_name), "node") for e in existing]
    expected = (True, []) if ok else (False, ["node(s) exceed max volume count"])
    assert fits(PLUGIN[filter_name], with_volumes(pod_volumes(new, filter_name)), objects) == expected


@pytest.mark.parametrize(("instance_type", "expected"), [
    ("m5.large", 25), ("t3.medium", 25), ("r5d.xlarge", 25), ("m4.2xlarge", 39), ("", 39)])
def test_max_volume_func_ebs(instance_type: str, expected: int) -> None:
    assert max_ebs_volumes(instance_type) == expected


@pytest.mark.parametrize(("raw", "expected"), [("invalid", -1), ("-2", -1), ("40", 40), ("", -1), (" 4", -1)])
def test_get_max_vols(monkeypatch: pytest.MonkeyPatch, raw: str, expected: int) -> None:
    monkeypatch.setenv("KUBE_MAX_PD_VOLS", raw)
    assert max_volumes_from_env() == expected


def test_default_limits_and_missing_claim_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBE_MAX_PD_VOLS", raising=False)
    gce = [{"gcePersistentDisk": {"pdName": f"d{i}"}} for i in range(16)]
    objects = [node(), with_volumes(gce, "node")]
    assert fits("MaxGCEPDVolumeCount", with_volumes([{"gcePersistentDisk": {"pdName": "d0"}}]), objects) == (True, [])
    assert fits("MaxGCEPDVolumeCount", with_volumes([{"gcePersistentDisk": {"pdName": "new"}}]), objects)[0] is False
    # a claim without a name is an error of the predicate (v1.12 failed the scheduling attempt)
    code, reasons = verdicts("MaxEBSVolumeCount", with_volumes([claim("")]), [node()])["node"]
    assert (code, reasons) == ("Error", ["PersistentVolumeClaim had no name"])


# ---- TestCSIVolumeCountPredicate ------------------------------------------------------------------------

def csi_objects(limit: int) -> list[Obj]:
    objects: list[Obj] = [node(allocatable={csi_attach_limit_key("csi-ebs"): limit})]
    for name in ("csi-ebs", "csi-ebs-2", "csi-ebs-3"):
        objects.append(obj("PersistentVolume", name, None, spec={"csi": {"driver": "csi-ebs", "volumeHandle": name}}))
        objects.append(obj("PersistentVolumeClaim", name, spec={"volumeName": name}))
    objects.append(with_volumes([claim("csi-ebs-3")], "node"))  # runningPod
    objects.append(with_volumes([claim("cs-ebs-1"), claim("csi-ebs-2")], "node"))  # twoVolPod
    return objects


@pytest.mark.parametrize(("name", "limit", "ok"), [
    ("fits when node capacity >= new pods CSI volume", 4, True),
    ("doesn't when node capacity <= pods CSI volume", 2, False),
])
def test_csi_volume_count(name: str, limit: int, ok: bool) -> None:
    expected = (True, []) if ok else (False, ["node(s) exceed max volume count"])
    assert fits("MaxCSIVolumeCountPred", with_volumes([claim("csi-ebs")]), csi_objects(limit)) == expected


def test_csi_attach_limit_key() -> None:
    assert csi_attach_limit_key("csi-ebs") == "attachable-volumes-csi-csi-ebs"
    long_name = "a" * 40
    key = csi_attach_limit_key(long_name)
    assert key.startswith("attachable-volumes-csi-" + "a" * 23) and len(key) == len("attachable-volumes-csi-") + 39


# ---- TestVolumeZonePredicate ----------------------------------------------------------------------------

ZONE = "failure-domain.beta.kubernetes.io/zone"
REGION = "failure-domain.beta.kubernetes.io/region"


def zone_objects(pv_labels: dict[str, dict[str, str]], claims: dict[str, Obj]) -> list[Obj]:
    objects = [obj("PersistentVolume", n, None, labels=lbl, spec={}) for n, lbl in pv_labels.items()]
    return objects + [obj("PersistentVolumeClaim", n, spec=spec) for n, spec in claims.items()]


ZONE_PVS = {"Vol_1": {ZONE: "us-west1-a"}, "Vol_2": {REGION: "us-west1-b", "uselessLabel": "none"},
            "Vol_3": {REGION: "us-west1-c"}}
ZONE_PVCS = {"PVC_1": {"volumeName": "Vol_1"}, "PVC_2": {"volumeName": "Vol_2"}, "PVC_3": {"volumeName": "Vol_3"},
             "PVC_4": {"volumeName": "Vol_not_exist"}}

ZONE_CASES = [
    ("pod without volume", None, {ZONE: "us-west1-a"}, True),
    ("node without labels", "PVC_1", None, True),
    ("label zone failure domain matched", "PVC_1", {ZONE: "us-west1-a", "uselessLabel": "none"}, True),
    ("label zone region matched", "PVC_2", {REGION: "us-west1-b", "uselessLabel": "none"}, True),
    ("label zone region failed match", "PVC_2", {REGION: "no_us-west1-b", "uselessLabel": "none"}, False),
    ("label zone failure domain failed match", "PVC_1", {ZONE: "no_us-west1-a", "uselessLabel": "none"}, False),
]


@pytest.mark.parametrize(("name", "claim_name", "labels", "ok"), ZONE_CASES, ids=[c[0] for c in ZONE_CASES])
def test_volume_zone(name: str, claim_name: str | None, labels: dict[str, str] | None, ok: bool) -> None:
    incoming = with_volumes([claim(claim_name)]) if claim_name else pod()
    objects = [node("host1", labels=labels), *zone_objects(ZONE_PVS, ZONE_PVCS)]
    expected = (True, []) if ok else (False, ["node(s) had no available volume zone"])
    assert fits("NoVolumeZoneConflict", incoming, objects, node_name="host1") == expected


MULTI_PVS = {"Vol_1": {ZONE: "us-west1-a"}, "Vol_2": {ZONE: "us-west1-b", "uselessLabel": "none"},
             "Vol_3": {ZONE: "us-west1-c__us-west1-a"}}


@pytest.mark.parametrize(("name", "claim_name", "labels", "ok"), [
    ("node without labels", "PVC_3", None, True),
    ("label zone failure domain matched", "PVC_3", {ZONE: "us-west1-a", "uselessLabel": "none"}, True),
    ("label zone failure domain failed match", "PVC_1", {ZONE: "us-west1-b", "uselessLabel": "none"}, False),
])
def test_volume_zone_multi_zone(name: str, claim_name: str, labels: dict[str, str] | None, ok: bool) -> None:
    objects = [node("host1", labels=labels), *zone_objects(MULTI_PVS, ZONE_PVCS)]
    expected = (True, []) if ok else (False, ["node(s) had no available volume zone"])
    assert fits("NoVolumeZoneConflict", with_volumes([claim(claim_name)]), objects, node_name="host1") == expected


def storage_class(name: str, mode: str | None = None, provisioner: str = "",
                  topologies: list[Obj] | None = None) -> Obj:
    out = obj("StorageClass", name, None)
    out["apiVersion"] = "storage.k8s.io/v1"
    if mode:
        out["volumeBindingMode"] = mode
    if provisioner:
        out["provisioner"] = provisioner
    if topologies is not None:
        out["allowedTopologies"] = topologies
    return out


@pytest.mark.parametrize(("name", "claim_name", "outcome"), [
    ("label zone failure domain matched", "PVC_1", "fits"),
    ("unbound volume empty storage class", "PVC_EmptySC", 'PersistentVolumeClaim is not bound: "PVC_EmptySC"'),
    ("unbound volume no storage class", "PVC_NoSC", 'PersistentVolumeClaim is not bound: "PVC_NoSC"'),
    ("unbound volume immediate binding mode", "PVC_ImmediateSC",
     'VolumeBindingMode not set for StorageClass "Class_Immediate"'),
    ("unbound volume wait binding mode", "PVC_WaitSC", "fits"),
    ("missing claim", "PVC_missing", 'persistentvolumeclaim "PVC_missing" not found'),
    ("missing volume", "PVC_4", 'persistentvolume "Vol_not_exist" not found'),
])
def test_volume_zone_with_volume_binding(name: str, claim_name: str, outcome: str) -> None:
    claims = {"PVC_1": {"volumeName": "Vol_1"}, "PVC_NoSC": {"storageClassName": "Class_0"}, "PVC_EmptySC": {},
              "PVC_WaitSC": {"storageClassName": "Class_Wait"},
              "PVC_ImmediateSC": {"storageClassName": "Class_Immediate"}, "PVC_4": {"volumeName": "Vol_not_exist"}}
    objects = [node("host1", labels={ZONE: "us-west1-a", "uselessLabel": "none"}),
               *zone_objects({"Vol_1": {ZONE: "us-west1-a"}}, claims),
               storage_class("Class_Immediate"), storage_class("Class_Wait", "WaitForFirstConsumer")]
    result = verdicts("NoVolumeZoneConflict", with_volumes([claim(claim_name)]), objects)["host1"]
    assert result == (("Success", []) if outcome == "fits" else ("Error", [outcome]))


# ---- CheckVolumeBinding: TestFindPodVolumesWith{out,}Provisioning -----------------------------------------

NODE_KEY = "nodeKey"
WAIT, IMMEDIATE, WAIT_PROVISIONER, TOPO_MISMATCH = ("waitClass", "immediateClass", "waitClassWithProvisioner",
                                                    "topoMismatchClass")


def binder_classes() -> list[Obj]:
    def topology(*values: str) -> list[Obj]:
        return [{"matchLabelExpressions": [{"key": NODE_KEY, "values": list(values)}]}]

    return [storage_class(WAIT_PROVISIONER, "WaitForFirstConsumer", "test-provisioner",
                          topology("node1", "reference-value")),
            storage_class(IMMEDIATE, "Immediate"),
            storage_class(WAIT, "WaitForFirstConsumer", "kubernetes.io/no-provisioner"),
            storage_class(TOPO_MISMATCH, "WaitForFirstConsumer", "test-provisioner", topology("reference-value"))]


def make_pvc(name: str, size: str, state: str, pv_name: str, class_name: str) -> Obj:
    """makeTestPVC: state is unbound, prebound or bound."""
    annotations = {"pv.kubernetes.io/bind-completed": "yes"} if state == "bound" else None
    spec: dict[str, Any] = {"resources": {"requests": {"storage": size}}, "storageClassName": class_name}
    if state in ("bound", "prebound"):
        spec["volumeName"] = pv_name
    out = obj("PersistentVolumeClaim", name, "testns", spec=spec, annotations=annotations)
    out["metadata"]["uid"] = "pvc-uid"
    return out


def make_pv(name: str, node_value: str, capacity: str, bound_to: Obj | None, class_name: str) -> Obj:
    """makeTestPV."""
    spec: dict[str, Any] = {"capacity": {"storage": capacity}, "storageClassName": class_name}
    if node_value:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": NODE_KEY, "operator": "In", "values": [node_value]}]}]}}
    if bound_to is not None:
        spec["claimRef"] = {"name": bound_to["metadata"]["name"], "namespace": "testns", "uid": "pvc-uid"}
    return obj("PersistentVolume", name, None, spec=spec)


UNBOUND = make_pvc("unbound-pvc", "1G", "unbound", "", WAIT)
UNBOUND2 = make_pvc("unbound-pvc2", "5G", "unbound", "", WAIT)
PREBOUND = make_pvc("prebound-pvc", "1G", "prebound", "pv-node1a", WAIT)
BOUND = make_pvc("bound-pvc", "1G", "bound", "pv-bound", WAIT)
IMMEDIATE_UNBOUND = make_pvc("immediate-unbound-pvc", "1G", "unbound", "", IMMEDIATE)
IMMEDIATE_BOUND = make_pvc("immediate-bound-pvc", "1G", "bound", "pv-bound-immediate", IMMEDIATE)
PROVISIONED = make_pvc("provisioned-pvc", "1Gi", "unbound", "", WAIT_PROVISIONER)
NO_PROVISIONER = make_pvc("no-provisioner-pvc", "1Gi", "unbound", "", WAIT)
TOPO_MISMATCH_PVC = make_pvc("topo-mismatch-pvc", "1Gi", "unbound", "", TOPO_MISMATCH)

PV_NO_NODE = make_pv("pv-no-node", "", "1G", None, WAIT)
PV_NODE1A = make_pv("pv-node1a", "node1", "5G", None, WAIT)
PV_NODE1B = make_pv("pv-node1b", "node1", "10G", None, WAIT)
PV_NODE2 = make_pv("pv-node2", "node2", "1G", None, WAIT)
PV_BOUND = make_pv("pv-bound", "node1", "1G", BOUND, WAIT)
PV_NODE1A_BOUND = make_pv("pv-node1a", "node1", "5G", UNBOUND, WAIT)
PV_BOUND_IMMEDIATE = make_pv("pv-bound-immediate", "node1", "1G", IMMEDIATE_BOUND, IMMEDIATE)
PV_BOUND_IMMEDIATE_NODE2 = make_pv("pv-bound-immediate", "node2", "1G", IMMEDIATE_BOUND, IMMEDIATE)

NODE_CONFLICT = "node(s) had volume node affinity conflict"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERROR = "error"

# (name, pod claims, claims in the cluster (None: the pod's), PVs, unbound satisfied, bound satisfied / ERROR)
BINDING_CASES: list[tuple[str, list[Obj], list[Obj] | None, list[Obj], bool, bool | str]] = [
    ("no-volumes", [], None, [], True, True),
    ("pvc-not-found", [BOUND], [], [], False, ERROR),
    ("bound-pvc", [BOUND], None, [PV_BOUND], True, True),
    ("bound-pvc,pv-not-exists", [BOUND], None, [], False, ERROR),
    ("prebound-pvc", [PREBOUND], None, [PV_NODE1A_BOUND], False, ERROR),
    ("unbound-pvc,pv-same-node", [UNBOUND], None, [PV_NODE2, PV_NODE1A, PV_NODE1B], True, True),
    ("unbound-pvc,pv-different-node", [UNBOUND], None, [PV_NODE2], False, True),
    ("two-unbound-pvcs", [UNBOUND, UNBOUND2], None, [PV_NODE1A, PV_NODE1B], True, True),
    ("two-unbound-pvcs,order-by-size", [UNBOUND2, UNBOUND], None, [PV_NODE1A, PV_NODE1B], True, True),
    ("two-unbound-pvcs,partial-match", [UNBOUND, UNBOUND2], None, [PV_NODE1A], False, True),
    ("one-bound,one-unbound", [UNBOUND, BOUND], None, [PV_BOUND, PV_NODE1A], True, True),
    ("one-bound,one-unbound,no-match", [UNBOUND, BOUND], None, [PV_BOUND, PV_NODE2], False, True),
    ("one-prebound,one-unbound", [UNBOUND, PREBOUND], None, [PV_NODE1A, PV_NODE1B], False, ERROR),
    ("immediate-bound-pvc", [IMMEDIATE_BOUND], None, [PV_BOUND_IMMEDIATE], True, True),
    ("immediate-bound-pvc-wrong-node", [IMMEDIATE_BOUND], None, [PV_BOUND_IMMEDIATE_NODE2], True, False),
    ("immediate-unbound-pvc", [IMMEDIATE_UNBOUND], None, [], False, ERROR),
    ("immediate-unbound-pvc,delayed-mode-bound", [IMMEDIATE_UNBOUND, BOUND], None, [PV_BOUND], False, ERROR),
    ("immediate-unbound-pvc,delayed-mode-unbound", [IMMEDIATE_UNBOUND, UNBOUND], None, [], False, ERROR),
    # TestFindPodVolumesWithProvisioning
    ("one-provisioned", [PROVISIONED], None, [], True, True),
    ("two-unbound-pvcs,one-matched,one-provisioned", [UNBOUND, PROVISIONED], None, [PV_NODE1A], True, True),
    ("one-bound,one-provisioned", [BOUND, PROVISIONED], None, [PV_BOUND], True, True),
    ("one-immediate-bound,one-provisioned", [IMMEDIATE_BOUND, PROVISIONED], None, [PV_BOUND_IMMEDIATE], True, True),
    ("invalid-provisioner", [NO_PROVISIONER], None, [], False, True),
    ("volume-topology-unsatisfied", [TOPO_MISMATCH_PVC], None, [], False, True),
]


@pytest.mark.parametrize(("name", "claims", "cached", "pvs", "unbound_ok", "bound_ok"), BINDING_CASES,
                         ids=[c[0] for c in BINDING_CASES])
def test_find_pod_volumes(name: str, claims: list[Obj], cached: list[Obj] | None, pvs: list[Obj], unbound_ok: bool,
                          bound_ok: bool | str) -> None:
    incoming = pod("test-pod", "testns", spec={"nodeName": "node1", "volumes": [
        {"name": f"vol{i}", **claim(c["metadata"]["name"])} for i, c in enumerate(claims)]})
    objects = [node("node1", labels={NODE_KEY: "node1"}), *binder_classes(), *pvs,
               *(claims if cached is None else cached)]
    code, reasons = verdicts("CheckVolumeBinding", incoming, objects)["node1"]
    if bound_ok == ERROR:
        assert code == "Error"
        return
    expected = ([] if bound_ok else [NODE_CONFLICT]) + ([] if unbound_ok else [BIND_CONFLICT])
    code = "Success" if code == "Skip" else code
    assert (code, reasons) == (("Unschedulable", expected) if expected else ("Success", []))


def test_volume_binding_errors_name_the_object() -> None:
    incoming = pod("p", "testns", spec={"volumes": [{"name": "v", **claim("immediate-unbound-pvc")}]})
    objects = [node("node1"), *binder_classes(), IMMEDIATE_UNBOUND]
    assert verdicts("CheckVolumeBinding", incoming, objects)["node1"] == (
        "Error", ["pod has unbound immediate PersistentVolumeClaims"])
    missing = pod("p", "testns", spec={"volumes": [{"name": "v", **claim("nope")}]})
    assert verdicts("CheckVolumeBinding", missing, [node("node1")])["node1"] == (
        "Error", ['error getting PVC "nope": could not find v1.PersistentVolumeClaim "testns/nope"'])
