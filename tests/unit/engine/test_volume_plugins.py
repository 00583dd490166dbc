"""The volume plugins (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone) against upstream's test
tables (kubernetes v1.36.3 pkg/scheduler/framework/plugins/{volumerestrictions,nodevolumelimits,volumebinding,
volumezone}/*_test.go), ported as data and run through the public explain path.

Where upstream's tests use fake listers, their NotFound messages name the plural resource
(``persistentvolumeclaims "x" not found``); the real informer listers kube-scheduler runs with print the singular
(``persistentvolumeclaim "x" not found``), which is what the engine reproduces and what is pinned here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from builders import make_node, make_pod
from plugin_harness import filter_verdicts, scores, single_plugin_profile

from extender.cluster.cache import ClusterCache
from extender.cluster.snapshot import Snapshot
from extender.engine.explain import explain
from extender.engine.profile import ProfileError, build_profile
from extender.engine.runtime import Framework
from extender.kube.release import release

OK = ("Success", [])
SKIP = ("Skip", [])
Verdicts = dict[str, tuple[str, list[str]]]

DISK_CONFLICT = ("Unschedulable", ["node(s) had no available disk"])
RWOP_CONFLICT = ("Unschedulable", ["node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access "
                                   "mode already in-use by another pod"])
MAX_VOLUMES = ("Unschedulable", ["node(s) exceed max volume count"])
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ZONE_CONFLICT = ("UnschedulableAndUnresolvable", ["node(s) had no available volume zone"])

ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
BETA_ZONE, BETA_REGION = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
HOSTNAME = "kubernetes.io/hostname"


def unresolvable(*reasons: str) -> tuple[str, list[str]]:
    return ("UnschedulableAndUnresolvable", list(reasons))


# ---------------------------------------------------------------------- builders


def pv(name: str, storage_class: str = "", *, capacity: str | None = None, phase: str | None = None,
       affinity: Mapping[str, list[str]] | None = None, labels: Mapping[str, str] | None = None,
       claim: tuple[str, str, str] | None = None, source: Mapping[str, Any] | None = None,
       spec: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A PersistentVolume (upstream's makePV / makeTestPV)."""
    body: dict[str, Any] = {"storageClassName": storage_class} if storage_class else {}
    if capacity is not None:
        body["capacity"] = {"storage": capacity}
    if affinity is not None:
        body["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": k, "operator": "In", "values": v} for k, v in affinity.items()]}]}}
    if claim is not None:
        body["claimRef"] = {"name": claim[0], "namespace": claim[1], **({"uid": claim[2]} if claim[2] else {})}
    body.update(source or {})
    body.update(spec or {})
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": body}
    if phase:
        obj["status"] = {"phase": phase}
    return obj


def pvc(name: str, storage_class: str | None = None, *, namespace: str = "default", volume: str = "",
        bound: bool = False, request: str | None = None, phase: str | None = None,
        modes: list[str] | None = None, annotations: Mapping[str, str] | None = None, uid: str = "",
        owner_uid: str | None = None, deleting: bool = False, spec: Mapping[str, Any] | None = None
        ) -> dict[str, Any]:
    """A PersistentVolumeClaim (upstream's makePVC / makeTestPVC; ``bound`` adds bind-completed)."""
    body: dict[str, Any] = {}
    if storage_class is not None:
        body["storageClassName"] = storage_class
    if volume:
        body["volumeName"] = volume
    if request is not None:
        body["resources"] = {"requests": {"storage": request}}
    if modes is not None:
        body["accessModes"] = modes
    body.update(spec or {})
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    if ann:
        meta["annotations"] = ann
    if uid:
        meta["uid"] = uid
    if owner_uid is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "owner", "uid": owner_uid,
                                    "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": body}
    if phase:
        obj["status"] = {"phase": phase}
    return obj


def storage_class(name: str, mode: str | None = "WaitForFirstConsumer", provisioner: str = "",
                  topologies: list[Mapping[str, list[str]]] | None = None) -> dict[str, Any]:
    """A StorageClass; ``mode=None`` leaves volumeBindingMode unset (the apiserver would default it)."""
    obj: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                           "provisioner": provisioner}
    if mode is not None:
        obj["volumeBindingMode"] = mode
    if topologies is not None:
        obj["allowedTopologies"] = [{"matchLabelExpressions": [{"key": k, "values": v} for k, v in t.items()]}
                                    for t in topologies]
    return obj


def csinode(name: str, drivers: Mapping[str, int | None], migrated: str | None = None) -> dict[str, Any]:
    """A CSINode; a driver's limit None means it reports none."""
    meta: dict[str, Any] = {"name": name}
    if migrated is not None:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": [
        {"name": d, "nodeID": name, **({"allocatable": {"count": c}} if c is not None else {})}
        for d, c in drivers.items()]}}


def claim_volumes(*claims: str) -> list[dict[str, Any]]:
    return [{"name": f"vol{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]


def pod(*claims: str, name: str = "", namespace: str = "default", node: str = "", uid: str | None = None,
        volumes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A pod using the given claims (then ``volumes``)."""
    vols = claim_volumes(*claims) + list(volumes or [])
    spec: dict[str, Any] = {"volumes": vols} if vols else {}
    return make_pod(name, namespace, node=node, spec=spec, uid=uid)


def verdicts(plugin: str, incoming: dict[str, Any], objects: list[dict[str, Any]],
             extra: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None) -> Verdicts:
    """filter_verdicts, optionally with objects of kinds the cache does not keep (CSIDriver, ...)."""
    if extra is None:
        return filter_verdicts(plugin, incoming, objects)
    cache = ClusterCache()
    cache.load(objects)
    base = cache.snapshot()
    snapshot = Snapshot.from_node_infos(base.node_list, {**base.objects, **extra})
    out = explain(Framework(build_profile(single_plugin_profile(plugin))), snapshot, incoming)
    pre = out["prefilter"].get(plugin)
    if pre and pre["code"] not in ("Success", "Skip"):
        return {n.name: (pre["code"], pre["reasons"]) for n in snapshot.node_list}
    return {node: (v["filters"][plugin]["code"], v["filters"][plugin]["reasons"]) for node, v in out["nodes"].items()}


def assert_error(got: tuple[str, list[str]], message: str) -> None:
    """An Error status ending with upstream's message (the runtime may prefix the plugin)."""
    assert got[0] == "Error", got
    assert len(got[1]) == 1 and got[1][0].endswith(message), got


# ====================================================================== VolumeRestrictions

GCE = ({"gcePersistentDisk": {"pdName": "foo"}}, {"gcePersistentDisk": {"pdName": "bar"}})
AWS = ({"awsElasticBlockStore": {"volumeID": "foo"}}, {"awsElasticBlockStore": {"volumeID": "bar"}})
RBD = ({"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}},
       {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}})
ISCSI = ({"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01",
                    "fsType": "ext4", "lun": 0}},
         {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01",
                    "fsType": "ext4", "lun": 0}})


def _vol(source: Mapping[str, Any], name: str = "v") -> list[dict[str, Any]]:
    return [{"name": name, **source}]


@pytest.mark.parametrize("states", [GCE, AWS, RBD, ISCSI], ids=["gce", "aws", "rbd", "iscsi"])
@pytest.mark.parametrize(("case", "incoming", "existing", "expected"), [
    ("nothing", None, None, SKIP),
    ("one state", None, 0, SKIP),
    ("same state", 0, 0, DISK_CONFLICT),
    ("different state", 1, 0, OK),
])
def test_disk_conflicts(states: tuple[Mapping[str, Any], Mapping[str, Any]], case: str, incoming: int | None,
                        existing: int | None, expected: tuple[str, list[str]]) -> None:
    """TestGCEDiskConflicts, TestAWSDiskConflicts, TestRBDDiskConflicts, TestISCSIDiskConflicts."""
    objects: list[dict[str, Any]] = [make_node("node-1")]
    if existing is not None:
        objects.append(pod(name="existing", node="node-1", volumes=_vol(states[existing])))
    new = pod(name="new", volumes=_vol(states[incoming]) if incoming is not None else None)
    assert verdicts("VolumeRestrictions", new, objects) == {"node-1": expected}


def test_volume_without_restrictions_skips() -> None:
    """TestGCEDiskConflicts: "pod with a volume that doesn't have restrictions"."""
    new = pod(volumes=[{"name": "volume with no restriction", "emptyDir": {}}])
    assert verdicts("VolumeRestrictions", new, [make_node("node-1")]) == {"node-1": SKIP}


@pytest.mark.parametrize(("new", "existing", "expected"), [
    ({"gcePersistentDisk": {"pdName": "foo", "readOnly": True}},
     {"gcePersistentDisk": {"pdName": "foo", "readOnly": True}}, OK),
    ({"gcePersistentDisk": {"pdName": "foo", "readOnly": True}}, {"gcePersistentDisk": {"pdName": "foo"}},
     DISK_CONFLICT),
    ({"awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}},
     {"awsElasticBlockStore": {"volumeID": "foo", "readOnly": True}}, DISK_CONFLICT),  # EBS: never shared
    ({"iscsi": {"iqn": "iqn.x", "targetPortal": "p", "lun": 0, "readOnly": True}},
     {"iscsi": {"iqn": "iqn.x", "targetPortal": "q", "lun": 1, "readOnly": True}}, OK),
    ({"iscsi": {"iqn": "iqn.x", "targetPortal": "p", "lun": 0}},
     {"iscsi": {"iqn": "iqn.x", "targetPortal": "q", "lun": 1, "readOnly": True}}, DISK_CONFLICT),
    ({"rbd": {"monitors": ["a", "b"], "pool": "p", "image": "i"}},
     {"rbd": {"monitors": ["b", "c"], "pool": "p", "image": "i"}}, DISK_CONFLICT),  # one shared monitor
    ({"rbd": {"monitors": ["a"], "pool": "p", "image": "i", "readOnly": True}},
     {"rbd": {"monitors": ["a"], "pool": "p", "image": "i", "readOnly": True}}, OK),
    ({"rbd": {"monitors": ["a"], "pool": "p", "image": "i"}},
     {"rbd": {"monitors": ["a"], "pool": "q", "image": "i"}}, OK),
    ({"gcePersistentDisk": {"pdName": "foo"}}, {"awsElasticBlockStore": {"volumeID": "foo"}}, OK),
])
def test_disk_conflict_read_only_rules(new: Mapping[str, Any], existing: Mapping[str, Any],
                                       expected: tuple[str, list[str]]) -> None:
    """isVolumeConflict's read-only and monitor-overlap rules."""
    objects = [make_node("node-1"), make_node("node-2"), pod(name="e", node="node-1", volumes=_vol(existing))]
    got = verdicts("VolumeRestrictions", pod(name="n", volumes=_vol(new)), objects)
    assert got == {"node-1": expected, "node-2": OK}


RWOP_1 = pvc("claim-with-rwop-1", modes=["ReadWriteOncePod"])
RWOP_2 = pvc("claim-with-rwop-2", modes=["ReadWriteOncePod"])
RWX = pvc("claim-with-rwx", modes=["ReadWriteMany"])


@pytest.mark.parametrize(("case", "incoming", "existing", "claims", "expected"), [
    ("nothing", (), [], [], SKIP),
    ("failed to get PVC", ("claim-with-rwop-1",), [], [],
     unresolvable('persistentvolumeclaim "claim-with-rwop-1" not found')),
    ("no access mode conflict", ("claim-with-rwop-1",), [("claim-with-rwx",)], [RWOP_1, RWX], SKIP),
    ("access mode conflict, unschedulable", ("claim-with-rwop-1",), [("claim-with-rwop-1",), ("claim-with-rwx",)],
     [RWOP_1, RWX], RWOP_CONFLICT),
    ("two conflicts, unschedulable", ("claim-with-rwop-1", "claim-with-rwop-2"),
     [("claim-with-rwop-1", "claim-with-rwop-2"), ("claim-with-rwx",)], [RWOP_1, RWOP_2, RWX], RWOP_CONFLICT),
])
def test_access_mode_conflicts(case: str, incoming: tuple[str, ...], existing: list[tuple[str, ...]],
                               claims: list[dict[str, Any]], expected: tuple[str, list[str]]) -> None:
    """TestAccessModeConflicts: a ReadWriteOncePod claim in use anywhere rejects every node."""
    objects: list[dict[str, Any]] = [make_node("node-1"), make_node("node-2"), *claims]
    objects += [pod(*c, name=f"existing-{i}", node="node-1") for i, c in enumerate(existing)]
    got = verdicts("VolumeRestrictions", pod(*incoming, name="new"), objects)
    assert got == {"node-1": expected, "node-2": expected}


def test_rwop_claim_of_another_namespace_does_not_conflict() -> None:
    objects = [make_node("node-1"), RWOP_1, pvc("claim-with-rwop-1", namespace="other", modes=["ReadWriteOncePod"]),
               pod("claim-with-rwop-1", name="e", namespace="other", node="node-1")]
    assert verdicts("VolumeRestrictions", pod("claim-with-rwop-1"), objects) == {"node-1": SKIP}


# ====================================================================== NodeVolumeLimits

EBS = "ebs.csi.aws.com"
GCE_PD = "pd.csi.storage.gke.io"
AWS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
LIMIT_NODE = "node-for-max-pd-test-1"


def csi_fixtures(driver_names: list[str]) -> list[dict[str, Any]]:
    """getFakeCSIPVLister, getFakeCSIPVCLister and getFakeCSIStorageClassLister of csi_test.go."""
    objects: list[dict[str, Any]] = []
    for driver in driver_names:
        for j in range(4):
            name = f"csi-{driver}-{j}"
            if driver == AWS_IN_TREE:
                source: dict[str, Any] = {"awsElasticBlockStore": {"volumeID": name}}
            elif driver == HOSTPATH_IN_TREE:
                source = {"hostPath": {"path": "/tmp"}}
            else:
                source = {"csi": {"driver": driver, "volumeHandle": name}}
            objects.append(pv(name, source=source))
            objects.append(pvc(name, volume=name))
    objects.append(pvc("csi-4", "csi-sc"))
    objects.append(pvc("csi-5"))
    objects.append(pvc("csi-6", "csi-sc", volume="missing-in-action"))  # a PV that does not exist
    objects.append(storage_class("csi-sc", mode=None, provisioner=driver_names[0]))
    return objects


EPHEMERAL = {"ephemeral": {}}
RUNNING = ("csi-ebs.csi.aws.com-3",)
PENDING = ("csi-4",)
MISSING_PV = ("csi-6",)
NO_SC = ("csi-5",)
GCE_TWO = ("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
IN_TREE_ONE = ("csi-kubernetes.io/aws-ebs-0",)
IN_TREE_TWO = ("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
EBS_ONE = ("csi-ebs.csi.aws.com-0",)
EBS_TWO = ("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
HOSTPATH_ONE = ("csi-kubernetes.io/hostpath-0",)
INLINE = ("inline", [{"name": "", "awsElasticBlockStore": {"volumeID": "aws-inline1"}}])
INLINE_SAME_ID = ("inline", [{"name": "", "awsElasticBlockStore": {"volumeID": "csi-ebs.csi.aws.com-1"}}])
EPH_POD = ("eph", [{"name": "xyz", **EPHEMERAL}])  # pod test/abc, uid 12345
EPH_TWO_POD = ("eph2", [{"name": "x", **EPHEMERAL}, {"name": "y", **EPHEMERAL}])  # pod test/abc, uid 12345II
CM_SECRET = [{"name": "cm", "configMap": {"name": "c"}}, {"name": "s", "secret": {"secretName": "s"}}]

EPH_CLAIM = pvc("abc-xyz", "csi-sc", namespace="test", owner_uid="12345")
CONFLICTING_CLAIM = pvc("abc-xyz", "csi-sc", namespace="test")
EPH_CLAIM_X = pvc("abc-x", "csi-sc", namespace="test", owner_uid="12345II")
EPH_CLAIM_Y = pvc("abc-y", "csi-sc", namespace="test", owner_uid="12345II")


def limits_pod(spec: Any, name: str, node: str = "") -> dict[str, Any]:
    """The pods of TestCSILimits: a tuple of claims, or one of the special shapes above."""
    if isinstance(spec, tuple) and spec and spec[0] == "inline":
        return pod(name=name, node=node, volumes=spec[1])
    if isinstance(spec, tuple) and spec and spec[0] == "eph":
        return pod(name="abc", namespace="test", uid="12345", node=node, volumes=spec[1])
    if isinstance(spec, tuple) and spec and spec[0] == "eph2":
        return pod(name="abc", namespace="test", uid="12345II", node=node, volumes=spec[1])
    if spec == "cm-secret":
        return pod(name=name, node=node, volumes=CM_SECRET)
    if spec == "pvc-cm-secret":
        return pod(*EBS_ONE, name=name, node=node, volumes=CM_SECRET)
    if spec == "eph-cm-secret":
        return pod(name="abc", namespace="test", node=node, volumes=[*CM_SECRET, {"name": "xyz", **EPHEMERAL}])
    if spec == "inline-cm-secret":
        return pod(name=name, node=node, volumes=[*CM_SECRET, *INLINE[1]])
    return pod(*spec, name=name, node=node)


CSI_LIMITS_CASES = [
    # (test, new pod, existing pods, max volumes, drivers, limit source, extra claims, expected)
    ("fits when node volume limit >= new pods CSI volume", EBS_ONE, [RUNNING, EBS_TWO], 4, [EBS], "csinode", [], OK),
    ("doesn't when node volume limit <= pods CSI volume", EBS_ONE, [RUNNING, EBS_TWO], 2, [EBS], "csinode", [],
     MAX_VOLUMES),
    ("should when driver does not support volume limits", EBS_ONE, [RUNNING, EBS_TWO], 2, [EBS],
     "csinode-with-no-limit", [], OK),
    ("count pending PVCs towards volume limit <= pods CSI volume", EBS_ONE, [PENDING, EBS_TWO], 2, [EBS], "csinode",
     [], MAX_VOLUMES),
    ("count multiple pending pvcs towards volume limit >= pods CSI volume", EBS_ONE, [PENDING, PENDING, EBS_TWO], 4,
     [EBS], "csinode", [], OK),
    ("should count PVCs with invalid PV name but valid SC", EBS_ONE, [MISSING_PV, EBS_TWO], 2, [EBS], "csinode", [],
     MAX_VOLUMES),
    ("don't count pvcs with missing SC towards volume limit", EBS_ONE, [RUNNING, NO_SC], 2, [EBS], "csinode", [], OK),
    ("count pvcs with the same type towards volume limit", EBS_ONE, [GCE_TWO, EBS_TWO], 2, [EBS, GCE_PD], "csinode",
     [], MAX_VOLUMES),
    ("don't count pvcs with different type towards volume limit", GCE_TWO, [EBS_TWO, RUNNING], 2, [EBS, GCE_PD],
     "csinode", [], OK),
    ("should count in-tree volumes if migration is enabled", IN_TREE_ONE, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS],
     "csinode", [], MAX_VOLUMES),
    ("nil csi node", INLINE, [IN_TREE_TWO], 0, [AWS_IN_TREE, EBS], "", [], OK),
    ("should count unbound in-tree volumes if migration is enabled", PENDING, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS],
     "csinode", [], MAX_VOLUMES),
    ("should not limit pod if volume used does not report limits", IN_TREE_ONE, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS],
     "csinode-with-no-limit", [], OK),
    ("should not count non-migratable in-tree volumes", HOSTPATH_ONE, [EBS_TWO], 2, [HOSTPATH_IN_TREE, EBS],
     "csinode", [], OK),
    ("should count in-tree inline volumes if migration is enabled", INLINE, [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS],
     "csinode", [], MAX_VOLUMES),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)", IN_TREE_ONE,
     [EBS_TWO], 2, [AWS_IN_TREE, EBS], "csinode", [], MAX_VOLUMES),
    ("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)", INLINE,
     [EBS_TWO, IN_TREE_ONE], 3, [AWS_IN_TREE, EBS], "csinode", [], MAX_VOLUMES),
    ("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     INLINE_SAME_ID, [EBS_TWO, IN_TREE_ONE], 3, [AWS_IN_TREE, EBS], "csinode", [], OK),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)", EBS_ONE,
     [IN_TREE_TWO], 2, [AWS_IN_TREE, EBS], "csinode", [], MAX_VOLUMES),
    ("ephemeral volume missing", EPH_POD, [], 0, [EBS], "csinode-with-no-limit", [],
     unresolvable('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found')),
    ("ephemeral volume unbound", EPH_POD, [], 0, [EBS], "csinode-with-no-limit", [EPH_CLAIM], OK),
    ("ephemeral doesn't when node volume limit <= pods CSI volume", EPH_POD, [RUNNING, EBS_TWO], 2, [EBS], "csinode",
     [EPH_CLAIM], MAX_VOLUMES),
    ("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", EBS_ONE, [RUNNING, EPH_TWO_POD], 2,
     [EBS], "csinode", [EPH_CLAIM_X, EPH_CLAIM_Y], MAX_VOLUMES),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume", EBS_ONE,
     [RUNNING, EPH_POD, EBS_TWO], 3, [EBS], "csinode", [EPH_CLAIM], MAX_VOLUMES),
    ("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume", EBS_ONE,
     [RUNNING, EPH_POD, EBS_TWO], 5, [EBS], "csinode", [EPH_CLAIM], OK),
    ("skip Filter when the pod only uses secrets and configmaps", "cm-secret", [], 2, [EBS], "csinode", [], SKIP),
    ("don't skip Filter when the pod has pvcs", "pvc-cm-secret", [], 2, [EBS], "csinode", [], OK),
    ("don't skip Filter when the pod has ephemeral volumes", "eph-cm-secret", [], 0, [EBS], "csinode-with-no-limit",
     [], unresolvable('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found')),
    ("don't skip Filter when the pod has inline migratable volumes", "inline-cm-secret", [IN_TREE_TWO], 2,
     [AWS_IN_TREE, EBS], "csinode", [], MAX_VOLUMES),
]


def limits_objects(existing: list[Any], max_vols: int, drivers: list[str], limit_source: str,
                   extra_claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """getNodeWithPodAndVolumeLimits + enableMigrationOnNode + the fake listers."""
    objects: list[dict[str, Any]] = [make_node(LIMIT_NODE), *csi_fixtures(drivers), *extra_claims]
    objects += [limits_pod(spec, f"existing-{i}", LIMIT_NODE) for i, spec in enumerate(existing)]
    if limit_source == "csinode":
        objects.append(csinode(LIMIT_NODE, dict.fromkeys(drivers, max_vols), migrated=AWS_IN_TREE))
    elif limit_source == "csinode-with-no-limit":
        objects.append(csinode(LIMIT_NODE, dict.fromkeys(drivers), migrated=AWS_IN_TREE))
    return objects


@pytest.mark.parametrize(("test", "new", "existing", "max_vols", "drivers", "limit_source", "extra_claims",
                          "expected"), CSI_LIMITS_CASES, ids=[c[0] for c in CSI_LIMITS_CASES])
def test_csi_limits(test: str, new: Any, existing: list[Any], max_vols: int, drivers: list[str], limit_source: str,
                    extra_claims: list[dict[str, Any]], expected: tuple[str, list[str]]) -> None:
    """TestCSILimits."""
    objects = limits_objects(existing, max_vols, drivers, limit_source, extra_claims)
    got = verdicts("NodeVolumeLimits", limits_pod(new, "new"), objects)
    assert got == {LIMIT_NODE: expected}


def test_csi_limits_ephemeral_volume_not_owned() -> None:
    """TestCSILimits "ephemeral volume not owned": an Error status (not a rejection)."""
    objects = limits_objects([], 0, [EBS], "csinode-with-no-limit", [CONFLICTING_CLAIM])
    got = verdicts("NodeVolumeLimits", limits_pod(EPH_POD, "new"), objects)[LIMIT_NODE]
    assert_error(got, "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)")


def _volume_attachments(count: int, drivers: list[str]) -> dict[str, dict[str, Any]]:
    """buildFakeClientWithVALister."""
    out: dict[str, dict[str, Any]] = {}
    for driver in drivers:
        for j in range(count):
            out[f"va-{driver}-{j}"] = {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                                       "metadata": {"name": f"va-{driver}-{j}"},
                                       "spec": {"nodeName": LIMIT_NODE, "attacher": driver,
                                                "source": {"persistentVolumeName": f"csi-{driver}-{j}"}}}
    return out


@pytest.mark.parametrize(("va_count", "expected"), [(2, MAX_VOLUMES), (1, OK)])
def test_csi_limits_count_volume_attachments(va_count: int, expected: tuple[str, list[str]]) -> None:
    """TestCSILimits: "should count VolumeAttachments towards volume limit when no pods exist" and "should schedule
    pod when VolumeAttachments count does not exceed limit" (VolumeAttachments read when the snapshot has them)."""
    objects = limits_objects([], 2, [EBS], "csinode", [])
    got = verdicts("NodeVolumeLimits", limits_pod(EBS_ONE, "new"), objects,
                   extra={"VolumeAttachment": _volume_attachments(va_count, [EBS])})
    assert got == {LIMIT_NODE: expected}


def test_csi_limits_attachment_of_a_volume_in_use_counts_once() -> None:
    objects = limits_objects([EBS_TWO], 3, [EBS], "csinode", [])
    extra = {"VolumeAttachment": _volume_attachments(3, [EBS])}  # -0 (the new pod's), -1, -2 (in use)
    assert verdicts("NodeVolumeLimits", limits_pod(EBS_ONE, "new"), objects, extra) == {LIMIT_NODE: MAX_VOLUMES}
    objects = limits_objects([EBS_TWO], 3, [EBS], "csinode", [])
    extra = {"VolumeAttachment": {k: v for k, v in _volume_attachments(3, [EBS]).items() if not k.endswith("-0")}}
    assert verdicts("NodeVolumeLimits", limits_pod(EBS_ONE, "new"), objects, extra) == {LIMIT_NODE: OK}


def test_csi_limits_translations() -> None:
    """Inline and PV in-tree volumes are counted under their CSI driver with csi-translation-lib's handles."""
    drivers = {EBS: 1, GCE_PD: 1, "disk.csi.azure.com": 1, "cinder.csi.openstack.org": 1, "pxd.portworx.com": 1,
               "file.csi.azure.com": 0, "csi.vsphere.vmware.com": 0}
    base = [make_node("n"), csinode("n", drivers)]

    def run(existing: dict[str, Any], new: dict[str, Any], extra: list[dict[str, Any]] | None = None) -> Any:
        objects = [*base, *(extra or []), pod(name="e", node="n", volumes=[{"name": "a", **existing}])]
        return verdicts("NodeVolumeLimits", pod(name="p", volumes=[{"name": "b", **new}]), objects)["n"]

    # aws://<zone>/<id> and a bare id translate to the same EBS volume: counted once.
    assert run({"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}},
               {"awsElasticBlockStore": {"volumeID": "vol-1"}}) == OK
    assert run({"awsElasticBlockStore": {"volumeID": "vol-1"}},
               {"awsElasticBlockStore": {"volumeID": "vol-2"}}) == MAX_VOLUMES
    assert run({"gcePersistentDisk": {"pdName": "a"}}, {"gcePersistentDisk": {"pdName": "a", "readOnly": True}}) == OK
    assert run({"gcePersistentDisk": {"pdName": "a"}}, {"gcePersistentDisk": {"pdName": "b"}}) == MAX_VOLUMES
    assert run({"cinder": {"volumeID": "a"}}, {"cinder": {"volumeID": "b"}}) == MAX_VOLUMES
    assert run({"portworxVolume": {"volumeID": "a"}}, {"portworxVolume": {"volumeID": "b"}}) == MAX_VOLUMES
    assert run({"azureDisk": {"diskName": "a", "diskURI": "u1"}},
               {"azureDisk": {"diskName": "b", "diskURI": "u2"}}) == MAX_VOLUMES
    # Azure File and vSphere are migratable but not migrated in 1.36: never counted (limits of 0 do not bite).
    assert run({"azureFile": {"secretName": "s", "shareName": "a"}},
               {"azureFile": {"secretName": "s", "shareName": "b"}}) == OK
    assert run({"vsphereVolume": {"volumePath": "a"}}, {"vsphereVolume": {"volumePath": "b"}}) == OK
    # A failed inline translation is an error of the plugin.
    got = run({"gcePersistentDisk": {"pdName": "a"}}, {"awsElasticBlockStore": {"volumeID": "aws://zone/bad"}})
    assert_error(got, "converting volume(b) from inline to csi: failed to translate Kubernetes ID to EBS Volume ID "
                      "Invalid format for AWS volume (aws://zone/bad)")
    shared = {"azureDisk": {"diskName": "d", "diskURI": "u", "kind": "Shared"}}
    got = run({"gcePersistentDisk": {"pdName": "a"}}, shared)
    assert_error(got, "converting volume(b) from inline to csi: kind(Shared) is not supported in csi migration")
    # A PV of a GCE PD is translated with its zone: an inline volume of the same disk is a different volume.
    gce_pv = pv("gce", source={"gcePersistentDisk": {"pdName": "a"}}, labels={ZONE: "us-central1-a"})
    assert run({"persistentVolumeClaim": {"claimName": "c"}}, {"gcePersistentDisk": {"pdName": "a"}},
               [gce_pv, pvc("c", volume="gce")]) == MAX_VOLUMES


def test_csi_limits_skip_and_prefilter() -> None:
    objects = [make_node("n"), csinode("n", {EBS: 0})]
    assert verdicts("NodeVolumeLimits", pod(), objects) == {"n": SKIP}
    # A migratable in-tree inline volume is enough not to skip, even one never counted.
    assert verdicts("NodeVolumeLimits", pod(volumes=[{"name": "f", "azureFile": {"shareName": "s"}}]),
                    objects) == {"n": OK}


# ====================================================================== VolumeBinding

IMMEDIATE_SC = storage_class("immediate-sc", "Immediate")
WAIT_SC = storage_class("wait-sc")
WAIT_HDD_SC = storage_class("wait-hdd-sc")
VB_CLASSES = [IMMEDIATE_SC, WAIT_SC, WAIT_HDD_SC, storage_class("wait-sc-with-storage-capacity",
                                                                 provisioner="driver-with-storage-capacity")]


def _zonal_node(name: str, zone: str) -> dict[str, Any]:
    return make_node(name, labels={REGION: f"region-{zone[-1]}", ZONE: zone})


def _local_pvs(*specs: tuple[str, str, str]) -> list[dict[str, Any]]:
    return [pv(n, "wait-sc", phase="Available", capacity=c, affinity={HOSTNAME: [node]}) for n, c, node in specs]


def _zonal_pvs(*specs: tuple[str, str, str]) -> list[dict[str, Any]]:
    return [pv(n, "wait-sc", phase="Available", capacity=c, affinity={REGION: [f"region-{z[-1]}"], ZONE: [z]})
            for n, c, z in specs]


VOLUME_BINDING_CASES = [
    # (name, pod claims, nodes, claims, pvs, expected verdict per node (in node order) or prefilter verdict)
    ("pod has not pvcs", (), ["node-a"], [], [], [SKIP]),
    ("all bound", ("pvc-a",), ["node-a"], [pvc("pvc-a", "wait-sc", volume="pv-a", bound=True)],
     [pv("pv-a", "wait-sc", phase="Available")], [OK]),
    ("PVC does not exist", ("pvc-a",), ["node-a"], [], [],
     [unresolvable('persistentvolumeclaim "pvc-a" not found')]),
    ("Part of PVCs do not exist", ("pvc-a", "pvc-b"), ["node-a"],
     [pvc("pvc-a", "wait-sc", volume="pv-a", bound=True)], [],
     [unresolvable('persistentvolumeclaim "pvc-b" not found')]),
    ("immediate claims not bound", ("pvc-a",), ["node-a"], [pvc("pvc-a", "immediate-sc")], [],
     [unresolvable("pod has unbound immediate PersistentVolumeClaims")]),
    ("unbound claims no matches", ("pvc-a",), ["node-a"], [pvc("pvc-a", "wait-sc")], [],
     [unresolvable(BIND_CONFLICT)]),
    ("bound and unbound unsatisfied", ("pvc-a", "pvc-b"), [("node-a", {"foo": "barbar"})],
     [pvc("pvc-a", "wait-sc", volume="pv-a", bound=True), pvc("pvc-b", "wait-sc")],
     [pv("pv-a", "wait-sc", phase="Available", affinity={"foo": ["bar"]})],
     [unresolvable(NODE_CONFLICT, BIND_CONFLICT)]),
    ("pv not found", ("pvc-a",), ["node-a"], [pvc("pvc-a", "wait-sc", volume="pv-a", bound=True)], [],
     [unresolvable(PV_NOT_EXIST)]),
    ("pv not found claim lost", ("pvc-a",), ["node-a"],
     [pvc("pvc-a", "wait-sc", volume="pv-a", bound=True, phase="Lost")], [],
     [unresolvable('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"')]),
    ("local volumes with close capacity are preferred", ("pvc-a",), ["node-a", "node-b", "node-c"],
     [pvc("pvc-a", "wait-sc", request="50Gi")],
     _local_pvs(("pv-a-0", "200Gi", "node-a"), ("pv-a-1", "200Gi", "node-a"), ("pv-b-0", "100Gi", "node-b"),
                ("pv-b-1", "100Gi", "node-b")),
     [OK, OK, unresolvable(BIND_CONFLICT)]),
    ("local volumes with close capacity are preferred (multiple pvcs)", ("pvc-0", "pvc-1"),
     ["node-a", "node-b", "node-c"],
     [pvc("pvc-0", "wait-sc", request="50Gi"), pvc("pvc-1", "wait-hdd-sc", request="100Gi")],
     [*_local_pvs(("pv-a-0", "200Gi", "node-a"), ("pv-a-1", "200Gi", "node-a"), ("pv-b-0", "100Gi", "node-b"),
                  ("pv-b-1", "100Gi", "node-b")),
      *[pv(n, "wait-hdd-sc", phase="Available", capacity=c, affinity={HOSTNAME: [node]}) for n, c, node in (
          ("pv-a-2", "200Gi", "node-a"), ("pv-a-3", "200Gi", "node-a"), ("pv-b-2", "100Gi", "node-b"),
          ("pv-b-3", "100Gi", "node-b"))]],
     [OK, OK, unresolvable(BIND_CONFLICT)]),
    ("zonal volumes with close capacity are preferred", ("pvc-a",),
     [("zone-a-node-a", "zone-a"), ("zone-a-node-b", "zone-a"), ("zone-b-node-a", "zone-b"),
      ("zone-b-node-b", "zone-b"), ("zone-c-node-a", "zone-c"), ("zone-c-node-b", "zone-c")],
     [pvc("pvc-a", "wait-sc", request="50Gi")],
     _zonal_pvs(("pv-a-0", "200Gi", "zone-a"), ("pv-a-1", "200Gi", "zone-a"), ("pv-b-0", "100Gi", "zone-b"),
                ("pv-b-1", "100Gi", "zone-b")),
     [OK, OK, OK, OK, unresolvable(BIND_CONFLICT), unresolvable(BIND_CONFLICT)]),
]


def _vb_nodes(nodes: list[Any]) -> list[dict[str, Any]]:
    out = []
    for spec in nodes:
        if isinstance(spec, str):
            out.append(make_node(spec))
        elif isinstance(spec[1], dict):
            out.append(make_node(spec[0], labels=spec[1]))
        else:
            out.append(_zonal_node(spec[0], spec[1]))
    return out


@pytest.mark.parametrize(("name", "claims", "nodes", "pvcs", "pvs", "expected"), VOLUME_BINDING_CASES,
                         ids=[c[0] for c in VOLUME_BINDING_CASES])
def test_volume_binding(name: str, claims: tuple[str, ...], nodes: list[Any], pvcs: list[dict[str, Any]],
                        pvs: list[dict[str, Any]], expected: list[tuple[str, list[str]]]) -> None:
    """TestVolumeBinding (filter verdicts; its scores need StorageCapacityScoring, off in 1.36)."""
    node_objs = _vb_nodes(nodes)
    got = verdicts("VolumeBinding", pod(*claims, name="pod-a"), [*node_objs, *VB_CLASSES, *pvcs, *pvs])
    names = [n["metadata"]["name"] for n in node_objs]
    if len(expected) == 1 and len(names) > 1:
        expected = expected * len(names)
    assert got == dict(zip(names, expected, strict=True))


def test_volume_binding_never_scores_in_v1_36() -> None:
    """StorageCapacityScoring is off by default in 1.36: no scorer, PreScore skips (VolumeBinding New/PreScore)."""
    objects = [make_node("node-a"), *VB_CLASSES, pvc("pvc-a", "wait-sc", request="50Gi"),
               *_local_pvs(("pv-a-0", "200Gi", "node-a"))]
    assert scores("VolumeBinding", pod("pvc-a"), objects, release=release(36)) is None
    assert scores("VolumeBinding", pod(), [make_node("node-a")], release=release(36)) is None


def test_volume_binding_scores_storage_capacity_in_v1_37() -> None:
    """StorageCapacityScoring is on by default in 1.37: the default shape prefers the fuller node (75 for a
    50Gi claim on a 200Gi volume: the utilisation the volume would have)."""
    objects = [make_node("node-a"), *VB_CLASSES, pvc("pvc-a", "wait-sc", request="50Gi"),
               *_local_pvs(("pv-a-0", "200Gi", "node-a"))]
    assert scores("VolumeBinding", pod("pvc-a"), objects) == {"node-a": 75}
    # No claim: PreScore does not skip with the gate on, and Score finds no volumes for the node (0).
    assert scores("VolumeBinding", pod(), [make_node("node-a")]) == {"node-a": 0}


@pytest.mark.parametrize(("args", "message"), [
    ({"shape": [{"utilization": 0, "score": 0}]}, "VolumeBinding args.shape: unexpected field `shape`"),
    ({"bindTimeoutSeconds": -1}, "invalid BindTimeoutSeconds, should not be a negative value"),
    ({"bindTimeoutSeconds": "10"}, "VolumeBinding args.bindTimeoutSeconds"),
])
def test_volume_binding_args(args: dict[str, Any], message: str) -> None:
    """ValidateVolumeBindingArgsWithOptions with StorageCapacityScoring off (v1.36's default)."""
    with pytest.raises(ProfileError, match=message):
        Framework(build_profile(single_plugin_profile("VolumeBinding", args), release=release(36)))
    Framework(build_profile(single_plugin_profile("VolumeBinding", {"bindTimeoutSeconds": 300}), release=release(36)))


def test_volume_binding_takes_a_shape_with_storage_capacity_scoring() -> None:
    """v1.37's default (and v1.36 with the gate): args.shape is allowed."""
    shape = {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}
    Framework(build_profile(single_plugin_profile("VolumeBinding", shape)))
    Framework(build_profile(single_plugin_profile("VolumeBinding", shape),
                            release=release(36, {"StorageCapacityScoring": True})))


# ---- binder_test.go: FindPodVolumes through the plugin ------------------------------------------

NODE_KEY = "nodeKey"
PROVISIONER = "test-provisioner"
BINDER_CLASSES = [
    storage_class("waitClassWithProvisioner", provisioner=PROVISIONER,
                  topologies=[{NODE_KEY: ["node1", "reference-value"]}]),
    storage_class("immediateClass", "Immediate"),
    storage_class("waitClass", provisioner="kubernetes.io/no-provisioner"),
    storage_class("topoMismatchClass", provisioner=PROVISIONER, topologies=[{NODE_KEY: ["reference-value"]}]),
]


def test_pvc(name: str, size: str, state: str, pv_name: str, cls: str, node: str = "") -> dict[str, Any]:
    """makeTestPVC (namespace testns, uid pvc-uid, Filesystem)."""
    annotations = {"volume.kubernetes.io/selected-node": node} if state == "selected" else None
    return pvc(name, cls, namespace="testns", uid="pvc-uid", request=size, annotations=annotations,
               volume=pv_name if state in ("bound", "prebound") else "", bound=state == "bound",
               spec={"volumeMode": "Filesystem"})


def test_pv(name: str, node: str, capacity: str, bound_to: dict[str, Any] | None, cls: str) -> dict[str, Any]:
    """makeTestPV (Available, Filesystem, affinity nodeKey In [node])."""
    claim = None if bound_to is None else (bound_to["metadata"]["name"], bound_to["metadata"]["namespace"],
                                           bound_to["metadata"].get("uid", ""))
    return pv(name, cls, capacity=capacity, phase="Available", affinity={NODE_KEY: [node]} if node else None,
              claim=claim, spec={"volumeMode": "Filesystem"})


test_pvc.__test__ = False  # type: ignore[attr-defined]  # builders, not tests
test_pv.__test__ = False  # type: ignore[attr-defined]

UNBOUND_PVC = test_pvc("unbound-pvc", "1G", "unbound", "", "waitClass")
UNBOUND_PVC2 = test_pvc("unbound-pvc2", "5G", "unbound", "", "waitClass")
PREBOUND_PVC = test_pvc("prebound-pvc", "1G", "prebound", "pv-node1a", "waitClass")
BOUND_PVC = test_pvc("bound-pvc", "1G", "bound", "pv-bound", "waitClass")
IMMEDIATE_UNBOUND_PVC = test_pvc("immediate-unbound-pvc", "1G", "unbound", "", "immediateClass")
IMMEDIATE_BOUND_PVC = test_pvc("immediate-bound-pvc", "1G", "bound", "pv-bound-immediate", "immediateClass")
PROVISIONED_PVC = test_pvc("provisioned-pvc", "1Gi", "unbound", "", "waitClassWithProvisioner")
NO_PROVISIONER_PVC = test_pvc("no-provisioner-pvc", "1Gi", "unbound", "", "waitClass")
TOPO_MISMATCH_PVC = test_pvc("topo-mismatch-pvc", "1Gi", "unbound", "", "topoMismatchClass")
SELECTED_NODE_PVC = test_pvc("provisioned-pvc", "1Gi", "selected", "", "waitClassWithProvisioner", node="node1")

PV_NODE1A = test_pv("pv-node1a", "node1", "5G", None, "waitClass")
PV_NODE1B = test_pv("pv-node1b", "node1", "10G", None, "waitClass")
PV_NODE2 = test_pv("pv-node2", "node2", "1G", None, "waitClass")
PV_BOUND = test_pv("pv-bound", "node1", "1G", BOUND_PVC, "waitClass")
PV_NODE1A_BOUND = test_pv("pv-node1a", "node1", "5G", UNBOUND_PVC, "waitClass")
PV_BOUND_IMMEDIATE = test_pv("pv-bound-immediate", "node1", "1G", IMMEDIATE_BOUND_PVC, "immediateClass")
PV_BOUND_IMMEDIATE_NODE2 = test_pv("pv-bound-immediate", "node2", "1G", IMMEDIATE_BOUND_PVC, "immediateClass")

IMMEDIATE = unresolvable("pod has unbound immediate PersistentVolumeClaims")

FIND_WITHOUT_PROVISIONING = [
    # (name, pod claims, cached claims (None: the pod's), pvs, expected)
    ("no-pvcs", [], None, [], SKIP),
    ("pvc-not-found", [BOUND_PVC], [], [], unresolvable('persistentvolumeclaim "bound-pvc" not found')),
    ("bound-pvc", [BOUND_PVC], None, [PV_BOUND], OK),
    ("bound-pvc,pv-not-exists", [BOUND_PVC], None, [], unresolvable(PV_NOT_EXIST)),
    ("prebound-pvc", [PREBOUND_PVC], None, [PV_NODE1A_BOUND], IMMEDIATE),
    ("unbound-pvc,pv-same-node", [UNBOUND_PVC], None, [PV_NODE2, PV_NODE1A, PV_NODE1B], OK),
    ("unbound-pvc,pv-different-node", [UNBOUND_PVC], None, [PV_NODE2], unresolvable(BIND_CONFLICT)),
    ("two-unbound-pvcs", [UNBOUND_PVC, UNBOUND_PVC2], None, [PV_NODE1A, PV_NODE1B], OK),
    ("two-unbound-pvcs,order-by-size", [UNBOUND_PVC2, UNBOUND_PVC], None, [PV_NODE1A, PV_NODE1B], OK),
    ("two-unbound-pvcs,partial-match", [UNBOUND_PVC, UNBOUND_PVC2], None, [PV_NODE1A], unresolvable(BIND_CONFLICT)),
    ("one-bound,one-unbound", [UNBOUND_PVC, BOUND_PVC], None, [PV_BOUND, PV_NODE1A], OK),
    ("one-bound,one-unbound,no-match", [UNBOUND_PVC, BOUND_PVC], None, [PV_BOUND, PV_NODE2],
     unresolvable(BIND_CONFLICT)),
    ("one-prebound,one-unbound", [UNBOUND_PVC, PREBOUND_PVC], None, [PV_NODE1A, PV_NODE1B], IMMEDIATE),
    ("immediate-bound-pvc", [IMMEDIATE_BOUND_PVC], None, [PV_BOUND_IMMEDIATE], OK),
    ("immediate-bound-pvc-wrong-node", [IMMEDIATE_BOUND_PVC], None, [PV_BOUND_IMMEDIATE_NODE2],
     unresolvable(NODE_CONFLICT)),
    ("immediate-unbound-pvc", [IMMEDIATE_UNBOUND_PVC], None, [], IMMEDIATE),
    ("immediate-unbound-pvc,delayed-mode-bound", [IMMEDIATE_UNBOUND_PVC, BOUND_PVC], None, [PV_BOUND], IMMEDIATE),
    ("immediate-unbound-pvc,delayed-mode-unbound", [IMMEDIATE_UNBOUND_PVC, UNBOUND_PVC], None, [], IMMEDIATE),
]

FIND_WITH_PROVISIONING = [
    # (name, pod claims, pvs, expected, needs capacity)
    ("one-provisioned", [PROVISIONED_PVC], [], OK, True),
    ("two-unbound-pvcs,one-matched,one-provisioned", [UNBOUND_PVC, PROVISIONED_PVC], [PV_NODE1A], OK, True),
    ("one-bound,one-provisioned", [BOUND_PVC, PROVISIONED_PVC], [PV_BOUND], OK, True),
    ("one-binding,one-selected-node", [BOUND_PVC, SELECTED_NODE_PVC], [PV_BOUND], OK, True),
    ("immediate-unbound-pvc", [IMMEDIATE_UNBOUND_PVC], [], IMMEDIATE, False),
    ("one-immediate-bound,one-provisioned", [IMMEDIATE_BOUND_PVC, PROVISIONED_PVC], [PV_BOUND_IMMEDIATE], OK, True),
    ("invalid-provisioner", [NO_PROVISIONER_PVC], [], unresolvable(BIND_CONFLICT), False),
    ("volume-topology-unsatisfied", [TOPO_MISMATCH_PVC], [], unresolvable(BIND_CONFLICT), False),
]

CSI_DRIVERS = {"no CSIDriver": None, "CSIDriver with capacity tracking": True,
               "CSIDriver without capacity tracking": False}


def _binder_node() -> dict[str, Any]:
    return make_node("node1", labels={NODE_KEY: "node1"})


def _csidriver(name: str, storage_capacity: bool) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name},
            "spec": {"storageCapacity": storage_capacity}}


def _binder_verdict(claims: list[dict[str, Any]], cached: list[dict[str, Any]] | None, pvs: list[dict[str, Any]],
                    capacity_tracking: bool | None, capacities: list[dict[str, Any]] | None = None,
                    incoming: dict[str, Any] | None = None) -> tuple[str, list[str]]:
    extra: dict[str, dict[str, Mapping[str, Any]]] = {}
    if capacity_tracking is not None:
        extra["CSIDriver"] = {PROVISIONER: _csidriver(PROVISIONER, capacity_tracking)}
    if capacities is not None:
        extra["CSIStorageCapacity"] = {f"testns/cap-{i}": c for i, c in enumerate(capacities)}
    objects = [_binder_node(), *BINDER_CLASSES, *(claims if cached is None else cached), *pvs]
    if incoming is None:
        incoming = pod(*[c["metadata"]["name"] for c in claims], name="test-pod", namespace="testns")
    return verdicts("VolumeBinding", incoming, objects, extra or None)["node1"]


@pytest.mark.parametrize("driver", list(CSI_DRIVERS))
@pytest.mark.parametrize(("name", "claims", "cached", "pvs", "expected"), FIND_WITHOUT_PROVISIONING,
                         ids=[c[0] for c in FIND_WITHOUT_PROVISIONING])
def test_find_pod_volumes_without_provisioning(driver: str, name: str, claims: list[dict[str, Any]],
                                               cached: list[dict[str, Any]] | None, pvs: list[dict[str, Any]],
                                               expected: tuple[str, list[str]]) -> None:
    """TestFindPodVolumesWithoutProvisioning ("shouldFail" cases fail in PreFilter)."""
    assert _binder_verdict(claims, cached, pvs, CSI_DRIVERS[driver]) == expected


@pytest.mark.parametrize(("name", "volume", "cached", "expected"), [
    ("generic-ephemeral,no-pvc", "no-such-pvc", [],
     unresolvable('waiting for ephemeral volume controller to create the persistentvolumeclaim '
                  '"test-pod-no-such-pvc"')),
    ("generic-ephemeral,with-pvc", "test-volume", "owned", OK),
    ("generic-ephemeral,wrong-pvc", "test-volume", "not owned",
     unresolvable("PVC testns/test-pod-test-volume was not created for pod testns/test-pod (pod is not owner)")),
])
def test_find_pod_volumes_generic_ephemeral(name: str, volume: str, cached: Any,
                                            expected: tuple[str, list[str]]) -> None:
    """TestFindPodVolumesWithoutProvisioning's generic ephemeral volume cases."""
    claims = [] if cached == [] else [test_pvc("test-pod-test-volume", "1G", "bound", "pv-bound", "immediateClass")]
    if cached == "owned":
        claims[0]["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "test-pod",
                                                     "uid": "uid-test-pod", "controller": True}]
    pv_bound_generic = test_pv("pv-bound", "node1", "1G", claims[0] if claims else None, "waitClass")
    incoming = pod(name="test-pod", namespace="testns", volumes=[{"name": volume, "ephemeral": {}}])
    assert _binder_verdict([], claims, [pv_bound_generic], None, incoming=incoming) == expected


@pytest.mark.parametrize("driver", list(CSI_DRIVERS))
@pytest.mark.parametrize(("name", "claims", "pvs", "expected", "needs_capacity"), FIND_WITH_PROVISIONING,
                         ids=[c[0] for c in FIND_WITH_PROVISIONING])
def test_find_pod_volumes_with_provisioning(driver: str, name: str, claims: list[dict[str, Any]],
                                            pvs: list[dict[str, Any]], expected: tuple[str, list[str]],
                                            needs_capacity: bool) -> None:
    """TestFindPodVolumesWithProvisioning: a driver tracking capacity, without capacity objects, blocks provisioning."""
    tracking = CSI_DRIVERS[driver]
    if needs_capacity and tracking:
        expected = unresolvable(NOT_ENOUGH_SPACE)
    assert _binder_verdict(claims, None, pvs, tracking) == expected


def test_find_pod_volumes_selected_node_elsewhere() -> None:
    """A claim being provisioned for another node: the selected-node fast path."""
    other = test_pvc("provisioned-pvc", "1Gi", "selected", "", "waitClassWithProvisioner", node="node2")
    assert _binder_verdict([BOUND_PVC, other], None, [PV_BOUND], None) == unresolvable(BIND_CONFLICT)


def _capacity(cls: str, node: str | None, capacity: str = "", maximum: str = "") -> dict[str, Any]:
    """makeCapacity."""
    obj: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                           "metadata": {"name": "net", "namespace": "testns"}, "storageClassName": cls,
                           "nodeTopology": {"matchLabels": {NODE_KEY: node}} if node else {}}
    if capacity:
        obj["capacity"] = capacity
    if maximum:
        obj["maximumVolumeSize"] = maximum
    return obj


WCP = "waitClassWithProvisioner"
CAPACITY_CASES = [
    ("network-attached", [_capacity(WCP, None, "1Gi")], OK),
    ("local-storage", [_capacity(WCP, "node1", "1Gi")], OK),
    ("multiple", [_capacity(WCP, None, "1Gi"), _capacity(WCP, "node2", "1Gi"), _capacity(WCP, "node1", "1Gi")], OK),
    ("no-storage", [], unresolvable(NOT_ENOUGH_SPACE)),
    ("wrong-node", [_capacity(WCP, "node2", "1Gi")], unresolvable(NOT_ENOUGH_SPACE)),
    ("wrong-storage-class", [_capacity("waitClass", "node1", "1Gi")], unresolvable(NOT_ENOUGH_SPACE)),
    ("insufficient-storage", [_capacity(WCP, "node1", "1Mi")], unresolvable(NOT_ENOUGH_SPACE)),
    ("insufficient-volume-size", [_capacity(WCP, "node1", "1Gi", "1Mi")], unresolvable(NOT_ENOUGH_SPACE)),
    ("zero-storage", [_capacity(WCP, "node1", "0Mi")], unresolvable(NOT_ENOUGH_SPACE)),
    ("zero-volume-size", [_capacity(WCP, "node1", "", "0Mi")], unresolvable(NOT_ENOUGH_SPACE)),
    ("nil-storage", [_capacity(WCP, "node1")], unresolvable(NOT_ENOUGH_SPACE)),
]


@pytest.mark.parametrize("opt_in", [True, False])
@pytest.mark.parametrize(("name", "capacities", "expected"), CAPACITY_CASES, ids=[c[0] for c in CAPACITY_CASES])
def test_capacity(opt_in: bool, name: str, capacities: list[dict[str, Any]], expected: tuple[str, list[str]]) -> None:
    """TestCapacity: only a driver opting into capacity tracking is checked."""
    got = _binder_verdict([PROVISIONED_PVC], None, [], opt_in, capacities)
    assert got == (expected if opt_in else OK)


GCE_PD_MIGRATION_PV = pv("pv-migration-bound", "waitClass", capacity="1G", phase="Available",
                         labels={BETA_ZONE: "us-east-1", BETA_REGION: "us-east-1a"},
                         claim=("pvc-migration-bound", "testns", "pvc-uid"),
                         source={"gcePersistentDisk": {"pdName": "test-disk", "fsType": "ext4"}},
                         spec={"volumeMode": "Filesystem"})
BOUND_MIGRATION_PVC = test_pvc("pvc-migration-bound", "1G", "bound", "pv-migration-bound", "waitClass")


@pytest.mark.parametrize(("name", "zone", "csinode_plugins", "expected"), [
    ("pvc-bound", "us-east-1", "kubernetes.io/gce-pd", OK),
    ("pvc-bound,csinode-not-migrated", "us-east-1", "", OK),
    ("pvc-bound,missing-csinode", "us-east-1", None, OK),
    ("pvc-bound,node-different-zone", "us-east-2", "kubernetes.io/gce-pd", unresolvable(NODE_CONFLICT)),
])
def test_find_pod_volumes_with_csi_migration(name: str, zone: str, csinode_plugins: str | None,
                                             expected: tuple[str, list[str]]) -> None:
    """TestFindPodVolumesWithCSIMigration: a migrated PV's zone label becomes a topology.gke.io/zone affinity."""
    objects: list[dict[str, Any]] = [make_node("node1", labels={"topology.gke.io/zone": zone}), *BINDER_CLASSES,
                                     BOUND_MIGRATION_PVC, GCE_PD_MIGRATION_PV]
    if csinode_plugins is not None:
        objects.append(csinode("node1", {}, migrated=csinode_plugins))
    got = verdicts("VolumeBinding", pod("pvc-migration-bound", name="test-pod", namespace="testns"), objects)
    assert got == {"node1": expected}


def test_csi_migration_rewrites_affinity_keys() -> None:
    """translateTopologyFromInTreeToCSI: zone requirements move to the driver's key, beta region to GA."""
    aws_pv = pv("ebs", "waitClass", source={"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}},
                affinity={BETA_ZONE: ["us-east-1a"], BETA_REGION: ["us-east-1"]})
    claim = pvc("c", "waitClass", volume="ebs", bound=True)
    csi_labels = {"topology.ebs.csi.aws.com/zone": "us-east-1a", REGION: "us-east-1"}
    tree_labels = {BETA_ZONE: "us-east-1a", BETA_REGION: "us-east-1"}
    node_csi = make_node("csi", labels=csi_labels)
    node_tree = make_node("tree", labels=tree_labels)
    objects = [node_csi, node_tree, make_node("tree-migrated", labels=tree_labels), claim, aws_pv,
               csinode("csi", {}, migrated="kubernetes.io/aws-ebs"),
               csinode("tree", {}, migrated="kubernetes.io/gce-pd"),
               csinode("tree-migrated", {}, migrated="kubernetes.io/aws-ebs")]
    assert verdicts("VolumeBinding", pod("c"), objects) == {"csi": OK, "tree": OK,
                                                            "tree-migrated": unresolvable(NODE_CONFLICT)}
    # With the GA zone key the region keys are GA too (getTopologyLabel): a beta region requirement stays.
    ga_pv = pv("ebs", "waitClass", source={"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}},
               affinity={ZONE: ["us-east-1a"], BETA_REGION: ["us-east-1"]})
    objects = [ga_pv if o is aws_pv else o for o in objects]
    assert verdicts("VolumeBinding", pod("c"), objects) == {"csi": unresolvable(NODE_CONFLICT),
                                                            "tree": unresolvable(NODE_CONFLICT),
                                                            "tree-migrated": unresolvable(NODE_CONFLICT)}
    # Without zone requirements, the PV's zone label becomes one.
    labelled = pv("ebs", "waitClass", source={"awsElasticBlockStore": {"volumeID": "vol-1"}},
                  labels={ZONE: "us-east-1a__us-east-1b"})
    got = verdicts("VolumeBinding", pod("c"), [node_csi, node_tree, claim, labelled,
                                               csinode("csi", {}, migrated="kubernetes.io/aws-ebs")])
    assert got == {"csi": OK, "tree": OK}
    node_csi_b = make_node("csi", labels={"topology.ebs.csi.aws.com/zone": "us-east-1c"})
    got = verdicts("VolumeBinding", pod("c"), [node_csi_b, claim, labelled,
                                               csinode("csi", {}, migrated="kubernetes.io/aws-ebs")])
    assert got == {"csi": unresolvable(NODE_CONFLICT)}
    # A PV whose in-tree id cannot be translated is an error on nodes that migrated its plugin.
    bad = pv("ebs", "waitClass", source={"awsElasticBlockStore": {"volumeID": "aws://zone/nope"}})
    got = verdicts("VolumeBinding", pod("c"), [node_csi, node_tree, claim, bad,
                                               csinode("csi", {}, migrated="kubernetes.io/aws-ebs")])
    assert got["tree"] == OK
    assert_error(got["csi"], "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID Invalid "
                             "format for AWS volume (aws://zone/nope)")


def test_find_matching_volume_rules() -> None:
    """FindMatchingVolume: pre-bound PVs win, then the smallest Available PV that fits every constraint."""
    node = make_node("node1", labels={NODE_KEY: "node1"})

    def run(claim: dict[str, Any], *pvs: dict[str, Any]) -> tuple[str, list[str]]:
        return verdicts("VolumeBinding", pod(claim["metadata"]["name"], namespace="testns"),
                        [node, *BINDER_CLASSES, claim, *pvs])["node1"]

    claim = test_pvc("c", "2G", "unbound", "", "waitClass")
    fits = test_pv("fits", "node1", "5G", None, "waitClass")
    assert run(claim, fits) == OK
    assert run(claim, test_pv("small", "node1", "1G", None, "waitClass")) == unresolvable(BIND_CONFLICT)
    assert run(claim, pv("released", "waitClass", capacity="5G", phase="Released")) == unresolvable(BIND_CONFLICT)
    assert run(claim, pv("block", "waitClass", capacity="5G", phase="Available",
                         spec={"volumeMode": "Block"})) == unresolvable(BIND_CONFLICT)
    assert run(claim, pv("vac", "waitClass", capacity="5G", phase="Available",
                         spec={"volumeAttributesClassName": "gold"})) == unresolvable(BIND_CONFLICT)
    assert run(claim, test_pv("other", "node1", "5G", test_pvc("x", "1G", "unbound", "", "waitClass"),
                              "waitClass")) == unresolvable(BIND_CONFLICT)
    rwx = test_pvc("c", "2G", "unbound", "", "waitClass")
    rwx["spec"]["accessModes"] = ["ReadWriteMany"]
    assert run(rwx, fits) == unresolvable(BIND_CONFLICT)
    selected = test_pvc("c", "2G", "unbound", "", "waitClass")
    selected["spec"]["selector"] = {"matchLabels": {"tier": "gold"}}
    assert run(selected, fits) == unresolvable(BIND_CONFLICT)
    gold = test_pv("gold", "node1", "5G", None, "waitClass")
    gold["metadata"]["labels"] = {"tier": "gold"}
    assert run(selected, fits, gold) == OK
    bad_selector = test_pvc("c", "2G", "unbound", "", "waitClass")
    bad_selector["spec"]["selector"] = {"matchExpressions": [{"key": "tier", "operator": "Bogus"}]}
    # (upstream's message is labels.Requirement's: '"Bogus" is not a valid label selector operator')
    assert run(bad_selector, fits)[0] == "Error"
    # A PV pre-bound to the claim decides alone, even against a better one.
    prebound_elsewhere = test_pv("mine", "node2", "5G", claim, "waitClass")
    assert run(claim, fits, prebound_elsewhere) == unresolvable(BIND_CONFLICT)
    assert run(claim, fits, test_pv("mine", "node1", "100G", claim, "waitClass")) == OK
    # A PV pre-bound with another UID is not this claim's.
    wrong_uid = test_pv("mine", "node1", "5G", None, "waitClass")
    wrong_uid["spec"]["claimRef"] = {"name": "c", "namespace": "testns", "uid": "other"}
    assert run(claim, wrong_uid) == unresolvable(BIND_CONFLICT)


def test_volume_binding_prefilter_errors() -> None:
    node = make_node("n")
    objects = [node, storage_class("nomode", mode=None), pvc("c", "nomode")]
    got = verdicts("VolumeBinding", pod("c"), objects)["n"]
    assert_error(got, 'VolumeBindingMode not set for StorageClass "nomode"')
    deleting = [node, WAIT_SC, pvc("c", "wait-sc", deleting=True)]
    assert verdicts("VolumeBinding", pod("c"), deleting) == {"n": unresolvable('persistentvolumeclaim "c" is being '
                                                                               'deleted')}
    # A missing class is not WaitForFirstConsumer: the claim must already be bound.
    assert verdicts("VolumeBinding", pod("c"), [node, pvc("c", "missing")]) == {"n": IMMEDIATE}
    # A claim without class, or one pre-bound to a volume, is immediate too.
    assert verdicts("VolumeBinding", pod("c"), [node, pvc("c")]) == {"n": IMMEDIATE}
    assert verdicts("VolumeBinding", pod("c"), [node, WAIT_SC, pvc("c", "wait-sc", volume="v")]) == {"n": IMMEDIATE}


def test_selected_node_claims() -> None:
    """A claim whose provisioning started (selected-node) fits its node only, and must still be provisionable."""
    nodes = [make_node("n"), make_node("m")]
    claim = pvc("c", "wait-sc", annotations={"volume.kubernetes.io/selected-node": "n"})
    got = verdicts("VolumeBinding", pod("c"), [*nodes, WAIT_SC, claim])  # wait-sc has no provisioner
    assert got == {"n": unresolvable(BIND_CONFLICT), "m": unresolvable(BIND_CONFLICT)}
    got = verdicts("VolumeBinding", pod("c"), [*nodes, storage_class("wait-sc", provisioner="p"), claim])
    assert got == {"n": OK, "m": unresolvable(BIND_CONFLICT)}


def test_allowed_topologies() -> None:
    sc = storage_class("zonal", provisioner="p", topologies=[{ZONE: ["a"]}, {ZONE: ["b"], REGION: ["r1"]}])
    nodes = [make_node("a", labels={ZONE: "a"}), make_node("b", labels={ZONE: "b"}),
             make_node("b1", labels={ZONE: "b", REGION: "r1"}), make_node("c", labels={ZONE: "c"})]
    got = verdicts("VolumeBinding", pod("c"), [*nodes, sc, pvc("c", "zonal")])
    assert got == {"a": OK, "b": unresolvable(BIND_CONFLICT), "b1": OK, "c": unresolvable(BIND_CONFLICT)}


# ====================================================================== VolumeZone

SINGLE_ZONE_PVS = [
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", labels={BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", labels={REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
]
SINGLE_ZONE_PVCS = [pvc(f"PVC_{s}", volume=f"Vol_{s}") for s in ("1", "2", "3", "Stable_1", "Stable_2", "Stable_3")]
SINGLE_ZONE_PVCS.append(pvc("PVC_4", volume="Vol_not_exist"))

SINGLE_ZONE_CASES = [
    ("pod without volume", None, {BETA_ZONE: "us-west1-a"}, SKIP),
    ("node without labels", "PVC_1", {}, OK),
    ("beta zone label matched", "PVC_1", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, OK),
    ("beta region label matched", "PVC_2", {BETA_REGION: "us-west1", "uselessLabel": "none"}, OK),
    ("beta region label doesn't match", "PVC_2", {BETA_REGION: "no_us-west1", "uselessLabel": "none"}, ZONE_CONFLICT),
    ("beta zone label doesn't match", "PVC_1", {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"}, ZONE_CONFLICT),
    ("zone label matched", "PVC_Stable_1", {ZONE: "us-west1-a", "uselessLabel": "none"}, OK),
    ("region label matched", "PVC_Stable_2", {REGION: "us-west1", "uselessLabel": "none"}, OK),
    ("region label doesn't match", "PVC_Stable_2", {REGION: "no_us-west1", "uselessLabel": "none"}, ZONE_CONFLICT),
    ("zone label doesn't match", "PVC_Stable_1", {ZONE: "no_us-west1-a", "uselessLabel": "none"}, ZONE_CONFLICT),
    ("pv with zone and region, node with only zone", "PVC_Stable_3", {ZONE: "us-west1-a"}, ZONE_CONFLICT),
    ("pv with zone,node with beta zone", "PVC_Stable_1", {BETA_ZONE: "us-west1-a"}, ZONE_CONFLICT),
    ("pv with beta label,node with ga label, matched", "PVC_1", {ZONE: "us-west1-a"}, OK),
    ("pv with beta label,node with ga label, don't match", "PVC_1", {ZONE: "us-west1-b"}, ZONE_CONFLICT),
    ("pv does not exist", "PVC_4", {ZONE: "us-west1-a"}, unresolvable('persistentvolume "Vol_not_exist" not found')),
]


def _zone_node(node_labels: Mapping[str, str]) -> dict[str, Any]:
    node = make_node("host1", labels=dict(node_labels))
    node["metadata"]["labels"] = dict(node_labels)  # exactly these labels (no hostname)
    return node


@pytest.mark.parametrize(("name", "claim", "node_labels", "expected"), SINGLE_ZONE_CASES,
                         ids=[c[0] for c in SINGLE_ZONE_CASES])
def test_single_zone(name: str, claim: str | None, node_labels: Mapping[str, str],
                     expected: tuple[str, list[str]]) -> None:
    """TestSingleZone."""
    objects = [_zone_node(node_labels), *SINGLE_ZONE_PVS, *SINGLE_ZONE_PVCS]
    incoming = pod(*([claim] if claim else []), name="pod_1")
    assert verdicts("VolumeZone", incoming, objects) == {"host1": expected}


MULTI_ZONE_PVS = [
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", labels={BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", labels={BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", labels={ZONE: "us-west1-c__us-west1-a"}),
]
MULTI_ZONE_PVCS = [pvc(f"PVC_{s}", volume=f"Vol_{s}") for s in ("1", "2", "3", "Stable_1", "Stable_2")]
MULTI_ZONE_CASES = [
    ("node without labels", "PVC_3", {}, OK),
    ("beta zone label matched", "PVC_3", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, OK),
    ("beta zone label doesn't match", "PVC_1", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}, ZONE_CONFLICT),
    ("zone label matched", "PVC_Stable_2", {ZONE: "us-west1-a", "uselessLabel": "none"}, OK),
    ("zone label doesn't match", "PVC_Stable_1", {ZONE: "us-west1-b", "uselessLabel": "none"}, ZONE_CONFLICT),
]


@pytest.mark.parametrize(("name", "claim", "node_labels", "expected"), MULTI_ZONE_CASES,
                         ids=[c[0] for c in MULTI_ZONE_CASES])
def test_multi_zone(name: str, claim: str, node_labels: Mapping[str, str], expected: tuple[str, list[str]]) -> None:
    """TestMultiZone: a PV label may list zones separated by "__"."""
    objects = [_zone_node(node_labels), *MULTI_ZONE_PVS, *MULTI_ZONE_PVCS]
    assert verdicts("VolumeZone", pod(claim, name="pod_1"), objects) == {"host1": expected}


WITH_BINDING_OBJECTS = [
    storage_class("Class_Immediate", mode=None), storage_class("Class_Wait"),
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pvc("PVC_1", volume="Vol_1"), pvc("PVC_NoSC", "Class_0"), pvc("PVC_EmptySC"), pvc("PVC_WaitSC", "Class_Wait"),
    pvc("PVC_ImmediateSC", "Class_Immediate"),
]


@pytest.mark.parametrize(("name", "claim", "expected"), [
    ("label zone failure domain matched", "PVC_1", OK),
    ("unbound volume empty storage class", "PVC_EmptySC",
     unresolvable("PersistentVolumeClaim had no pv name and storageClass name")),
    ("unbound volume no storage class", "PVC_NoSC", unresolvable('storageclass.storage.k8s.io "Class_0" not found')),
    ("unbound volume immediate binding mode", "PVC_ImmediateSC",
     unresolvable('VolumeBindingMode not set for StorageClass "Class_Immediate"')),
    ("unbound volume wait binding mode", "PVC_WaitSC", SKIP),
])
def test_with_binding(name: str, claim: str, expected: tuple[str, list[str]]) -> None:
    """TestWithBinding."""
    node = _zone_node({BETA_ZONE: "us-west1-a", "uselessLabel": "none"})
    assert verdicts("VolumeZone", pod(claim, name="pod_1"), [node, *WITH_BINDING_OBJECTS]) == {"host1": expected}


def test_volume_zone_more() -> None:
    node = _zone_node({ZONE: "a"})
    objects = [node, storage_class("imm", "Immediate"), pvc("c", "imm"),
               pv("bad", labels={ZONE: "a__"}), pvc("b", volume="bad")]
    assert verdicts("VolumeZone", pod("c"), objects) == {"host1": unresolvable("PersistentVolume had no name")}
    # An unparsable zone label is ignored (upstream logs it), leaving nothing to check.
    assert verdicts("VolumeZone", pod("b"), objects) == {"host1": SKIP}
    assert verdicts("VolumeZone", pod("missing"), objects) == {
        "host1": unresolvable('persistentvolumeclaim "missing" not found')}
    assert verdicts("VolumeZone", pod(""), objects) == {"host1": unresolvable("PersistentVolumeClaim had no name")}
    # Zones are trimmed.
    spaced = [node, pv("s", labels={ZONE: " a __ b"}), pvc("s", volume="s")]
    assert verdicts("VolumeZone", pod("s"), spaced) == {"host1": OK}
