"""Workloads expand into the pods their controllers would create, with what scheduling reads of them."""

from __future__ import annotations

from typing import Any

import pytest

from extender.plan.planfile import PlanError, WorkloadEntry
from extender.plan.workload import expand_workload, fnv32a, name_suffix, safe_encode, template_hash

TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "resources": {"requests": {"cpu": "1"}}}]}}


def _entry(*objects: dict[str, Any], replicas: int | None = None) -> WorkloadEntry:
    return WorkloadEntry("w.yaml", tuple(objects), replicas)


def _deployment(replicas: int = 3) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}}


def test_hashing_follows_the_controllers_alphabet() -> None:
    assert fnv32a(b"") == 0x811C9DC5 and fnv32a(b"a") == 0xE40C292C  # FNV-1a test vectors
    assert safe_encode("0123456789") == "456789bcdf"  # rand.SafeEncodeString: byte % 27
    assert template_hash(TEMPLATE) == template_hash({"spec": TEMPLATE["spec"], "metadata": TEMPLATE["metadata"]})
    assert len(name_suffix("uid", 0)) == 5 and name_suffix("uid", 0) != name_suffix("uid", 1)


def test_a_deployment_becomes_a_replicaset_and_its_pods() -> None:
    out = expand_workload([_entry(_deployment())])
    [replicaset] = out.objects
    hash_ = template_hash(TEMPLATE)
    assert replicaset["kind"] == "ReplicaSet" and replicaset["metadata"]["name"] == f"web-{hash_}"
    assert replicaset["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": hash_}
    assert len(out.pods) == 3
    pod = out.pods[0]
    assert pod["metadata"]["name"].startswith(f"web-{hash_}-") and pod["metadata"]["namespace"] == "shop"
    assert pod["metadata"]["labels"] == {"app": "web", "pod-template-hash": hash_}
    [owner] = pod["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == \
        ("ReplicaSet", replicaset["metadata"]["name"], replicaset["metadata"]["uid"], True)
    assert "nodeName" not in pod["spec"] and pod["status"] == {"phase": "Pending"}
    assert expand_workload([_entry(_deployment())]).pods == out.pods  # the same pods every time


def test_replicas_on_the_entry_override_the_objects() -> None:
    assert len(expand_workload([_entry(_deployment(), replicas=7)]).pods) == 7


def test_a_deployment_running_in_the_cluster_is_scaled_through_its_newest_replicaset() -> None:
    def replicaset(name: str, revision: str) -> dict[str, Any]:
        return {"kind": "ReplicaSet", "metadata": {
            "name": name, "namespace": "shop", "uid": f"uid-{name}",
            "annotations": {"deployment.kubernetes.io/revision": revision},
            "ownerReferences": [{"kind": "Deployment", "name": "web", "controller": True}]},
            "spec": {"selector": {"matchLabels": {"app": "web", "pod-template-hash": name[-3:]}},
                     "template": {**TEMPLATE, "metadata": {"labels": {"app": "web", "pod-template-hash": name[-3:]}}}}}
    out = expand_workload([_entry(_deployment(), replicas=2)], [replicaset("web-old", "1"), replicaset("web-new", "2")])
    assert out.objects == []  # the ReplicaSet is already in the cluster
    assert {p["metadata"]["ownerReferences"][0]["name"] for p in out.pods} == {"web-new"}
    assert out.pods[0]["metadata"]["labels"]["pod-template-hash"] == "new"


def test_a_statefulset_gets_ordinal_pods_and_their_claims() -> None:
    sts = {"kind": "StatefulSet", "metadata": {"name": "db", "namespace": "data"}, "spec": {
        "replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "db"}]}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
            "resources": {"requests": {"storage": "1Gi"}}}}]}}
    out = expand_workload([_entry(sts)])
    assert [p["metadata"]["name"] for p in out.pods] == ["db-0", "db-1"]
    labels = out.pods[1]["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "db-1" and labels["apps.kubernetes.io/pod-index"] == "1"
    assert out.pods[1]["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-1"}}]
    assert out.pods[1]["spec"]["hostname"] == "db-1" and out.pods[1]["spec"]["subdomain"] == "db"
    kinds = [(o["kind"], o["metadata"]["name"]) for o in out.objects]
    assert kinds == [("StatefulSet", "db"), ("PersistentVolumeClaim", "data-db-0"),
                     ("PersistentVolumeClaim", "data-db-1")]
    assert out.objects[1]["spec"]["storageClassName"] == "fast"


def test_a_job_runs_parallelism_pods_at_most_its_completions() -> None:
    def job(parallelism: int, completions: int | None, mode: str = "NonIndexed") -> dict[str, Any]:
        spec: dict[str, Any] = {"parallelism": parallelism, "completionMode": mode, "template": TEMPLATE}
        if completions is not None:
            spec["completions"] = completions
        return {"kind": "Job", "metadata": {"name": "j"}, "spec": spec}
    assert len(expand_workload([_entry(job(5, 3))]).pods) == 3
    assert len(expand_workload([_entry(job(5, None))]).pods) == 5
    indexed = expand_workload([_entry(job(2, 4, "Indexed"))]).pods
    assert [p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in indexed] == ["0", "1"]
    assert indexed[1]["metadata"]["name"].startswith("j-1-")
    assert indexed[0]["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "j"
    assert indexed[0]["metadata"]["ownerReferences"][0]["kind"] == "Job"


def test_pods_are_copied_with_replicas() -> None:
    pod = {"kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}}, "spec": {"nodeName": "n1"}}
    assert [p["metadata"]["name"] for p in expand_workload([_entry(pod)]).pods] == ["p"]
    copies = expand_workload([_entry(pod, replicas=3)]).pods
    assert [p["metadata"]["name"] for p in copies] == ["p-0", "p-1", "p-2"]
    assert len({p["metadata"]["uid"] for p in copies}) == 3 and "nodeName" not in copies[0]["spec"]


@pytest.mark.parametrize(("obj", "message"), [
    ({"kind": "DaemonSet", "metadata": {"name": "d"}, "spec": {}}, "w.yaml: DaemonSet 'd': a workload holds"),
    ({"kind": "Deployment", "metadata": {"name": "d"}, "spec": {}},
     "w.yaml: Deployment 'd': spec.template is required"),
    ({"kind": "Deployment", "metadata": {}, "spec": {}}, "w.yaml: a Deployment without metadata.name"),
    ({"kind": "ReplicaSet", "metadata": {"name": "r"}, "spec": {"replicas": -1, "template": TEMPLATE}},
     "w.yaml: ReplicaSet: spec.replicas: expected a non-negative integer, got -1"),
])
def test_what_cannot_be_expanded_is_an_error(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(PlanError) as caught:
        expand_workload([_entry(obj)])
    assert str(caught.value) == message or str(caught.value).startswith(message)


def test_a_pod_created_twice_is_an_error() -> None:
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
    with pytest.raises(PlanError, match="pod default/p would be created twice"):
        expand_workload([_entry(pod), _entry(pod)])
