"""Each place where kube-scheduler v1.36.3 and v1.37.2 decide differently (docs/versions.md), on one small cluster:
the engine built for each release answers as that release does. The differential oracle checks the same against
both real schedulers on generated scenarios; these pin each branch where it lives."""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_node, make_pod
from dra_builders import claim, device_class, exact_request, gpu, pod_with_claims, resource_slice

from extender.cluster.cache import ClusterCache
from extender.config import ConfigError, parse_config
from extender.engine.explain import explain, explain_objects
from extender.engine.profile import build_profile
from extender.engine.registry import RegistryError, lookup
from extender.engine.runtime import Framework
from extender.kube.release import Release, release
from extender.kube.resources import pod_requests

V136, V137 = release(36), release(37)


def run(objects: list[dict[str, Any]], pod: dict[str, Any], chosen: Release,
        profile: dict[str, Any] | None = None) -> dict[str, Any]:
    return explain_objects(objects, pod, profile, chosen)


def only(*plugins: str) -> dict[str, Any]:
    return {"plugins": {"multiPoint": {"enabled": [{"name": p} for p in plugins], "disabled": [{"name": "*"}]}}}


# ---- profiles -----------------------------------------------------------------------------------


def test_default_plugins_and_order_per_release() -> None:
    assert build_profile(None, release=V136).filters[:2] == ["NodeUnschedulable", "NodeName"]
    assert build_profile(None, release=V137).filters[:2] == ["NodeName", "NodeUnschedulable"]
    # VolumeBinding scores (weight 1) in both; only with StorageCapacityScoring (beta in 1.37) does PreScore
    # not skip it (see test_volume_binding_scores_storage_capacity_in_v137).
    assert dict(build_profile(None, release=V136).scores)["VolumeBinding"] == 1


def test_a_gate_adds_deferred_pod_scheduling_before_node_resources_fit() -> None:
    gated = build_profile(None, release=release(37, {"InPlacePodVerticalScalingSchedulerPreemption": True}))
    fit = gated.filters.index("NodeResourcesFit")
    assert gated.filters[fit - 1] == "DeferredPodScheduling"
    assert "DeferredPodScheduling" not in build_profile(None, release=V137).filters


def test_plugins_exist_from_their_release_on() -> None:
    assert lookup("DeferredPodScheduling", V137).name == "DeferredPodScheduling"
    with pytest.raises(RegistryError, match=r"unknown plugin 'DeferredPodScheduling' in kube-scheduler v1.36.3"):
        lookup("DeferredPodScheduling", V136)


def test_configuration_names_the_release_and_its_gates() -> None:
    config = parse_config({"kubernetesVersion": "1.36", "featureGates": {"DRADeviceTaintRules": True}})
    assert config.kubernetes_version == 36 and config.profiles[0].release.minor == 36
    assert config.profiles[0].release.gate("DRADeviceTaintRules")
    auto = parse_config({})
    assert auto.kubernetes_version is None and auto.profiles[0].release.minor == 37
    with pytest.raises(ConfigError, match="kubernetesVersion"):
        parse_config({"kubernetesVersion": "1.35"})
    with pytest.raises(ConfigError, match=r"featureGates \(kube-scheduler v1.37.2\): unrecognized feature gate: Nope"):
        parse_config({"kubernetesVersion": "1.37", "featureGates": {"Nope": True}})
    with pytest.raises(ConfigError, match="featureGates: expected a map"):
        parse_config({"featureGates": ["A=true"]})


def test_auto_takes_a_configuration_valid_for_some_release_and_checks_the_chosen_one_again() -> None:
    # SidecarContainers is GA and locked in 1.36 and gone in 1.37.
    config = parse_config({"featureGates": {"SidecarContainers": True}})
    assert config.profiles_for(config.release_for(_choice(36)))[0].release.minor == 36
    with pytest.raises(ConfigError, match="unrecognized feature gate: SidecarContainers"):
        config.release_for(_choice(37))
    with pytest.raises(ConfigError, match="valid for none"):
        parse_config({"featureGates": {"Nope": True}})
    fixed = parse_config({"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "DeferredPodScheduling"}]}}}],
                          "featureGates": {"InPlacePodVerticalScalingSchedulerPreemption": True}})
    assert fixed.profiles[0].release.minor == 37


def _choice(minor: int) -> Any:
    from extender.kube.release import choose

    return choose(None, f"v1.{minor}.0", source="apiserver")


# ---- plugins ------------------------------------------------------------------------------------


def test_node_name_narrows_the_cycle_in_v137() -> None:
    objects = [make_node("named", cpu="1"), make_node("cordoned", unschedulable=True)]
    pod = make_pod("p", requests=[{"cpu": "2"}], spec={"nodeName": "named"})
    v136 = run(objects, pod, V136)["outcome"]["fitError"]
    v137 = run(objects, pod, V137)["outcome"]["fitError"]
    assert v136 == "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable."
    assert v137 == "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [NodeName]."


def test_prefilter_results_with_nothing_in_common_reject_the_pod() -> None:
    objects = [make_node("a"), make_node("b")]
    pinned = make_pod("p", spec={"nodeName": "a", "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}})
    out = run(objects, pinned, V137)
    message = "node(s) didn't satisfy plugin(s) [NodeAffinity NodeName] simultaneously"  # sorted (sets.List)
    assert out["prefilter"]["NodeName"] == out["prefilter"]["NodeAffinity"] == {
        "code": "UnschedulableAndUnresolvable", "reasons": [message]}
    # DynamicResources' PreFilter never ran: its PostFilter fails reading its state, and that Error's words end
    # the PodScheduled message (kube-scheduler v1.37.2 in the oracle says the same).
    assert out["outcome"]["message"] == f"0/2 nodes are available: {message}. not found"
    assert run(objects, pinned, V136)["prefilter"]["NodeName"]["code"] == "Success"


def test_image_locality_counts_image_volumes_in_v137() -> None:
    image = "registry.example/big:1"
    node = make_node("n", images=[([image], 600 * 1024 * 1024)])
    pod = make_pod("p", spec={"volumes": [{"name": "v", "image": {"reference": image}}]})
    profile = only("ImageLocality")
    # Threshold 1000MiB per image: one container (v1.36) or one container and one image volume (v1.37).
    assert run([node], pod, V136, profile)["nodes"]["n"]["scores"]["ImageLocality"]["raw"] == 59
    assert run([node], pod, V137, profile)["nodes"]["n"]["scores"]["ImageLocality"]["raw"] == 29


def test_an_empty_label_namespace_selector_stays_in_force_in_v136() -> None:
    objects = [make_node("n"), {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team",
                                                                                      "labels": {"team": "a"}}},
               make_pod("web", "team", node="n", labels={"app": "web"})]
    pod = make_pod("p", spec={"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname",
        "namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]}}]}}})
    assert run(objects, pod, V136)["nodes"]["n"]["filters"]["InterPodAffinity"]["reasons"] == [
        "node(s) didn't match pod anti-affinity rules"]
    assert run(objects, pod, V137)["nodes"]["n"]["feasible"]


def test_resized_pods_count_per_container_in_v136_and_per_total_in_v137() -> None:
    pod = make_pod("p", node="n", requests=[{"cpu": "1"}, {"cpu": "3"}])
    pod["status"] = {"containerStatuses": [
        {"name": "c0", "allocatedResources": {"cpu": "2"}, "resources": {"requests": {"cpu": "2"}}},
        {"name": "c1", "allocatedResources": {"cpu": "1"}, "resources": {"requests": {"cpu": "1"}}}]}
    # v1.36: max(1, 2) + max(3, 1) = 5; v1.37: max(1 + 3, 2 + 1) = 4.
    assert pod_requests(pod, use_status_resources=True, minor=36)["cpu"] == 5
    assert pod_requests(pod, use_status_resources=True, minor=37)["cpu"] == 4


def test_volume_binding_scores_storage_capacity_in_v137() -> None:
    objects = _wffc_cluster(capacities={"zone-a": "100Gi", "zone-b": "20Gi"})
    pod = make_pod("p", spec={"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]})
    v137 = run(objects, pod, V137)
    # 10Gi of 100Gi: 10% used, shape 100 -> 0: 90; of 20Gi: 50.
    assert {n: v137["nodes"][n]["scores"]["VolumeBinding"]["raw"] for n in ("a", "b")} == {"a": 90, "b": 50}
    assert run(objects, pod, V136)["nodes"]["a"]["scores"]["VolumeBinding"]["skipped"]
    # A pod without claims scores 0 there, and the plugin's weight counts in the 0..10 mapping.
    plain = run(objects, make_pod("q"), V137)
    assert plain["nodes"]["a"]["scores"]["VolumeBinding"] == {"raw": 0, "normalized": 0, "weighted": 0}


def test_volume_binding_shape_needs_the_gate() -> None:
    with pytest.raises(Exception, match="turn on the feature gate StorageCapacityScoring"):
        Framework(build_profile({"pluginConfig": [{"name": "VolumeBinding", "args": {"shape": [
            {"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}]}, release=V136))
    most = build_profile({"pluginConfig": [{"name": "VolumeBinding", "args": {"shape": [
        {"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}]}, release=V137)
    cache = ClusterCache(release=V137)
    cache.load(_wffc_cluster(capacities={"zone-a": "100Gi", "zone-b": "20Gi"}))
    pod = make_pod("p", spec={"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]})
    out = explain(Framework(most), cache.snapshot(), pod)
    assert {n: out["nodes"][n]["scores"]["VolumeBinding"]["raw"] for n in ("a", "b")} == {"a": 10, "b": 50}


def _wffc_cluster(capacities: dict[str, str], prevent_if_missing: bool = False) -> list[dict[str, Any]]:
    nodes = [make_node("a", labels={"topology.kubernetes.io/zone": "zone-a"}),
             make_node("b", labels={"topology.kubernetes.io/zone": "zone-b"})]
    return [*nodes,
            {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "wffc"},
             "provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer"},
            {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "csi.example.com"},
             "spec": {"storageCapacity": True, "preventPodSchedulingIfMissing": prevent_if_missing}},
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
             "spec": {"storageClassName": "wffc", "accessModes": ["ReadWriteOnce"],
                      "resources": {"requests": {"storage": "10Gi"}}}, "status": {"phase": "Pending"}},
            *({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
               "metadata": {"name": f"cap-{zone}", "namespace": "default"}, "storageClassName": "wffc",
               "nodeTopology": {"matchLabels": {"topology.kubernetes.io/zone": zone}}, "capacity": size}
              for zone, size in capacities.items())]


def test_node_volume_limits_wants_the_driver_installed_in_v137() -> None:
    objects = [*_wffc_cluster({"zone-a": "100Gi", "zone-b": "100Gi"}, prevent_if_missing=True),
               {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "a"},
                "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "a"}]}}]
    pod = make_pod("p", spec={"volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]})
    v137 = run(objects, pod, V137)
    assert v137["nodes"]["a"]["feasible"]
    assert v137["nodes"]["b"]["filters"]["NodeVolumeLimits"] == {
        "code": "Unschedulable", "reasons": ["csi.example.com CSI driver is not installed on the node"]}
    assert run(objects, pod, V136)["nodes"]["b"]["feasible"]


def test_bind_mount_options_need_the_declared_feature_in_v137() -> None:
    declared = make_node("declared")
    declared["status"]["declaredFeatures"] = ["VolumeBindMountOptions"]
    objects = [declared, make_node("plain")]
    pod = make_pod("p", spec={"volumes": [{"name": "s", "emptyDir": {}}]})
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "s", "mountPath": "/s", "bindMountOptions": ["noexec"]}]
    v137 = run(objects, pod, V137)
    assert v137["nodes"]["declared"]["feasible"] and not v137["nodes"]["plain"]["feasible"]
    assert run(objects, pod, V136)["prefilter"]["NodeDeclaredFeatures"]["code"] == "Skip"


def test_device_taint_rules_taint_devices_in_v137() -> None:
    objects = [make_node("n"), device_class(), resource_slice("n", [gpu("gpu-0")]),
               claim("c", [exact_request()]),
               {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "drain"},
                "spec": {"deviceSelector": {"device": "gpu-0"}, "taint": {"key": "maintenance",
                                                                          "effect": "NoSchedule"}}}]
    pod = pod_with_claims({"name": "gpu", "resourceClaimName": "c"})
    assert run(objects, pod, V136)["nodes"]["n"]["feasible"]
    v137 = run(objects, pod, V137)["nodes"]["n"]
    assert not v137["feasible"] and v137["filters"]["DynamicResources"]["reasons"] == ["cannot allocate all claims"]
    with_gate = release(36, {"DRADeviceTaintRules": True})
    assert not run(objects, pod, with_gate)["nodes"]["n"]["feasible"]


def test_cel_runtime_errors_name_the_device_in_v137() -> None:
    objects = [make_node("n"), device_class(expression=None), resource_slice("n", [gpu("gpu-0")]),
               claim("c", [exact_request(selectors=[{"cel": {"expression": 'device.attributes["x"].y == "z"'}}])])]
    pod = pod_with_claims({"name": "gpu", "resourceClaimName": "c"})
    v136 = run(objects, pod, V136)["nodes"]["n"]["filters"]["DynamicResources"]["reasons"][0]
    v137 = run(objects, pod, V137)["nodes"]["n"]["filters"]["DynamicResources"]["reasons"][0]
    assert "selector #0: CEL runtime error: no such key: y" in v136
    assert "selector #0 on device gpu.example.com/n/gpu-0: CEL runtime error: no such key: y. consider using CEL " \
           "optional chaining" in v137


def test_a_deferred_resize_stays_on_its_node_with_the_gate() -> None:
    gated = release(37, {"InPlacePodVerticalScalingSchedulerPreemption": True})
    objects = [make_node("own", cpu="4"), make_node("other", cpu="16")]
    pod = make_pod("p", node="own", requests=[{"cpu": "3"}], uid="p-uid")
    objects.append(make_pod("neighbour", node="own", requests=[{"cpu": "1"}]))
    objects.append({**pod, "spec": {**pod["spec"], "containers": [
        {"name": "c0", "image": "pause", "resources": {"requests": {"cpu": "2"}}}]}})  # the cache's copy
    pod["status"] = {"conditions": [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}]}
    out = run(objects, pod, gated)
    # Only what it asks beyond its cached 2 cpu is checked on its node: 1 more, and 1 is free.
    assert out["nodes"]["own"]["feasible"]
    assert out["nodes"]["other"]["filters"]["DeferredPodScheduling"]["reasons"] == ["pod assigned to different node"]
    for plugin in ("TaintToleration", "NodeAffinity", "InterPodAffinity"):
        assert out["prefilter"][plugin]["code"] == "Skip"
    assert run(objects, pod, V137)["nodes"]["own"]["filters"]["NodeResourcesFit"]["code"] == "Unschedulable"


@pytest.mark.parametrize("minor", [36, 37])
def test_an_incoming_pod_fits_by_its_spec_and_balanced_allocation_scores_its_status(minor: int) -> None:
    # A pod naming a node whose status reports 3 cpu (its spec asks 1): fit.go's PreFilter and Fit's scorer count
    # the spec, BalancedAllocation's scorer the status (UseStatusResources).
    def pod_asking(cpu: str, status_cpu: str | None = None) -> dict[str, Any]:
        pod = make_pod("p", node="n", requests=[{"cpu": cpu, "memory": "1Gi"}])
        if status_cpu is not None:
            pod["status"] = {"containerStatuses": [{
                "name": "c0", "allocatedResources": {"cpu": status_cpu, "memory": "1Gi"},
                "resources": {"requests": {"cpu": status_cpu, "memory": "1Gi"}}}]}
        return pod

    objects = [make_node("n", cpu="2", memory="8Gi")]
    resized = run(objects, pod_asking("1", status_cpu="3"), release(minor))["nodes"]["n"]
    by_spec = run(objects, pod_asking("1"), release(minor))["nodes"]["n"]
    assert resized["filters"]["NodeResourcesFit"]["code"] == "Success"  # 3 cpu would not fit
    assert run(objects, pod_asking("3"), release(minor))["nodes"]["n"]["filters"]["NodeResourcesFit"]["code"] \
        == "UnschedulableAndUnresolvable"  # more than the node has at all
    assert resized["scores"]["NodeResourcesFit"]["raw"] == by_spec["scores"]["NodeResourcesFit"]["raw"]
    # Balanced caps each fraction at 1: 3 cpu of 2 scores as 2 of 2 would.
    full = run(objects, pod_asking("2"), release(minor))["nodes"]["n"]
    balanced = resized["scores"]["NodeResourcesBalancedAllocation"]["raw"]
    assert balanced == full["scores"]["NodeResourcesBalancedAllocation"]["raw"]
    assert balanced != by_spec["scores"]["NodeResourcesBalancedAllocation"]["raw"]
