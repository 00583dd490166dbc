"""DynamicResources: claims resolved in PreFilter, allocation per node in Filter, prioritized-list scores.

Reason strings and codes are upstream's (pkg/scheduler/framework/plugins/dynamicresources, v1.36.3).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from builders import make_node, make_pod
from dra_builders import claim, device_class, exact_request, gpu, pod_with_claims, resource_slice
from plugin_harness import filter_verdicts, single_plugin_profile

from extender.cluster.cache import ClusterCache
from extender.engine.explain import explain, explain_objects, render_table
from extender.engine.plugins.dynamic_resources import DynamicResources
from extender.engine.profile import ProfileError, build_profile
from extender.engine.runtime import Framework
from extender.engine.scheduler import Scheduler
from extender.engine.simulate import Simulator
from extender.kube.duration import parse_duration
from extender.kube.release import release

NAME = "DynamicResources"
UAU = "UnschedulableAndUnresolvable"


def single(verdicts: dict[str, tuple[str, list[str]]]) -> set[tuple[str, tuple[str, ...]]]:
    """The distinct verdicts (a PreFilter rejection gives every node the same one)."""
    return {(code, tuple(reasons)) for code, reasons in verdicts.values()}


def cluster(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    """n1 with two a100s, n2 with one h100, n3 without devices."""
    return [make_node("n1"), make_node("n2"), make_node("n3"), device_class(),
            resource_slice("n1", [gpu("gpu-0"), gpu("gpu-1")]),
            resource_slice("n2", [gpu("gpu-0", model="h100", memory="80Gi")]), *extra]


def test_pod_without_claims_is_skipped() -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
    out = explain_objects(cluster(), pod, None)
    assert out["prefilter"][NAME]["code"] == "Skip"
    assert all(v["scores"][NAME]["raw"] == 0 for v in out["nodes"].values())


def test_claim_by_name_fits_only_where_devices_allow() -> None:
    objects = cluster(claim("two", [exact_request(count=2)]))
    verdicts = filter_verdicts(NAME, pod_with_claims({"name": "c", "resourceClaimName": "two"}), objects)
    assert verdicts["n1"] == ("Success", [])
    assert verdicts["n2"] == (UAU, ["cannot allocate all claims"])
    assert verdicts["n3"] == (UAU, ["cannot allocate all claims"])


def test_cel_selector_narrows_the_devices() -> None:
    selector = [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "h100"'}}]
    objects = cluster(claim("h100", [exact_request(selectors=selector)]))
    verdicts = filter_verdicts(NAME, pod_with_claims({"name": "c", "resourceClaimName": "h100"}), objects)
    assert [n for n, (code, _) in verdicts.items() if code == "Success"] == ["n2"]


def test_devices_held_by_other_claims_are_not_allocated_again() -> None:
    used = claim("used", [exact_request()], allocated_on="n2", devices=["gpu-0"])
    objects = cluster(used, claim("mine", [exact_request()]))
    verdicts = filter_verdicts(NAME, pod_with_claims({"name": "c", "resourceClaimName": "mine"}), objects)
    assert verdicts["n1"][0] == "Success"
    assert verdicts["n2"] == (UAU, ["cannot allocate all claims"])


def test_missing_claim_rejects_every_node() -> None:
    verdicts = filter_verdicts(NAME, pod_with_claims({"name": "c", "resourceClaimName": "nope"}), cluster())
    assert single(verdicts) == {(UAU, ('could not find ResourceClaim "default/nope"',))}


def test_template_claim_not_created_yet() -> None:
    pod = pod_with_claims({"name": "c", "resourceClaimTemplateName": "t"})
    verdicts = filter_verdicts(NAME, pod, cluster())
    assert single(verdicts) == {(UAU, ('pod "default/p": ResourceClaim not created yet',))}


def test_template_claim_must_be_owned_by_the_pod() -> None:
    generated = claim("p-c-abc", [exact_request()], owner_uid="someone-else")
    pod = pod_with_claims({"name": "c", "resourceClaimTemplateName": "t"},
                          statuses=[{"name": "c", "resourceClaimName": "p-c-abc"}])
    verdicts = filter_verdicts(NAME, pod, cluster(generated))
    assert single(verdicts) == {
        (UAU, ("ResourceClaim default/p-c-abc was not created for Pod default/p (Pod is not owner)",))}


def test_template_claim_owned_by_the_pod_is_allocated() -> None:
    generated = claim("p-c-abc", [exact_request()], owner_uid="pod-uid")
    pod = pod_with_claims({"name": "c", "resourceClaimTemplateName": "t"},
                          statuses=[{"name": "c", "resourceClaimName": "p-c-abc"}])
    verdicts = filter_verdicts(NAME, pod, cluster(generated))
    assert verdicts["n1"][0] == verdicts["n2"][0] == "Success"


def test_missing_device_class() -> None:
    objects = cluster(claim("c1", [exact_request(device_class_name="fpga.example.com")]))
    verdicts = filter_verdicts(NAME, pod_with_claims({"name": "c", "resourceClaimName": "c1"}), objects)
    assert single(verdicts) == {(UAU, ("request gpu: device class fpga.example.com does not exist",))}


def test_allocated_shared_claim_only_on_its_node() -> None:
    shared = claim("shared", [exact_request()], allocated_on="n2", devices=["gpu-0"])
    verdicts = filter_verdicts(NAME, pod_with_claims({"name": "c", "resourceClaimName": "shared"}),
                               cluster(shared))
    assert verdicts["n2"] == ("Success", [])
    assert verdicts["n1"] == (UAU, ["resourceclaim not available on the node"])


@pytest.mark.parametrize(("minor", "declared", "n2"), [
    (37, [], (UAU, ["resourceclaim not available on the node"])),
    (37, ["DRAOptionalNodeOperations"], ("Success", [])),
    (36, [], ("Success", [])),  # v1.36 does not look at skipNodeOperations
])
def test_a_device_allocated_with_skip_node_operations_needs_a_node_that_declares_them(
        minor: int, declared: list[str], n2: tuple[str, list[str]]) -> None:
    shared = claim("shared", [exact_request()], allocated_on="n2", devices=["gpu-0"])
    shared["status"]["allocation"]["devices"]["results"][0]["skipNodeOperations"] = ["Prepare"]
    objects = cluster(shared)
    objects[1]["status"]["declaredFeatures"] = declared
    out = explain_objects(objects, pod_with_claims({"name": "c", "resourceClaimName": "shared"}),
                          single_plugin_profile(NAME), release(minor))
    verdict = out["nodes"]["n2"]["filters"][NAME]
    assert (verdict["code"], verdict["reasons"]) == n2


def test_claim_being_deleted() -> None:
    doomed = claim("doomed", [exact_request()])
    doomed["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    verdicts = filter_verdicts(NAME, pod_with_claims({"name": "c", "resourceClaimName": "doomed"}),
                               cluster(doomed))
    assert single(verdicts) == {(UAU, ('resourceclaim "doomed" is being deleted',))}


def test_prioritized_list_scores_the_preferred_alternative_higher() -> None:
    first = [{"name": "h100", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1,
              "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "h100"'}}]},
             {"name": "any", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}]
    objects = cluster(claim("pick", [{"name": "gpu", "firstAvailable": first}]))
    pod = pod_with_claims({"name": "c", "resourceClaimName": "pick"})
    out = explain_objects(objects, pod, single_plugin_profile(NAME, weight=2))
    n1, n2 = out["nodes"]["n1"]["scores"][NAME], out["nodes"]["n2"]["scores"][NAME]
    # n2 gets the first alternative (8 - 0), n1 the second (8 - 1); normalised by the best.
    assert (n2["raw"], n2["normalized"], n2["weighted"]) == (8, 100, 200)
    assert (n1["raw"], n1["normalized"], n1["weighted"]) == (7, 87, 174)
    assert not out["nodes"]["n3"]["feasible"]


def test_broken_selector_is_an_error() -> None:
    selector = [{"cel": {"expression": 'device.attributes["gpu.example.com"].missing == "x"'}}]
    objects = cluster(claim("bad", [exact_request(selectors=selector)]))
    verdicts = filter_verdicts(NAME, pod_with_claims({"name": "c", "resourceClaimName": "bad"}), objects)
    code, reasons = verdicts["n1"]
    assert code == "Error" and reasons[0].startswith('running "DynamicResources" filter plugin: ')


@pytest.mark.parametrize(("text", "seconds"), [("10s", 10.0), ("1m30s", 90.0), ("250ms", 0.25), ("0", 0.0),
                                                ("-1s", -1.0)])
def test_durations_parse_as_go_does(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


def test_filter_timeout_arg() -> None:
    assert DynamicResources().filter_timeout == 10.0
    assert DynamicResources({"filterTimeout": "2s"}).filter_timeout == 2.0
    with pytest.raises(ProfileError, match="must be zero or positive"):
        DynamicResources({"filterTimeout": "-1s"})
    with pytest.raises(ProfileError, match="invalid duration"):
        DynamicResources({"filterTimeout": "ten"})
    with pytest.raises(ProfileError, match="unknown field"):
        DynamicResources({"timeout": "1s"})


def test_bind_assumes_the_claim_allocation_until_forgotten() -> None:
    cache = ClusterCache()
    cache.load(cluster(claim("c1", [exact_request()]), claim("c2", [exact_request()])))
    scheduler = Scheduler(cache, [Framework(build_profile(None))])
    first = pod_with_claims({"name": "c", "resourceClaimName": "c1"}, name="a", uid="ua")
    scheduler.pod_record(first)
    asyncio.run(scheduler.bind("default", "a", "ua", "n2"))
    entry = cache.snapshot().dra.claim("default", "c1")
    assert entry is not None and entry.record.allocation is not None
    # n2's only GPU is now taken: a second pod's claim no longer fits there.
    second = pod_with_claims({"name": "c", "resourceClaimName": "c2"}, name="b", uid="ub")
    out = explain(scheduler.framework(None), cache.snapshot(), second, ["n1", "n2"])
    assert out["nodes"]["n2"]["filters"][NAME]["reasons"] == ["cannot allocate all claims"]
    assert out["nodes"]["n1"]["feasible"]
    cache.forget_pod("ua")
    entry = cache.snapshot().dra.claim("default", "c1")
    assert entry is not None and entry.record.allocation is None


# ---- extended resources backed by DRA ------------------------------------------------------------
def extended_cluster() -> list[dict[str, Any]]:
    """dra-gpu: n1 offers it through DRA, n2 through a device plugin, n3 not at all."""
    klass = device_class()
    klass["spec"]["extendedResourceName"] = "example.com/dra-gpu"
    return [make_node("n1"), make_node("n2", extra={"example.com/dra-gpu": 4}), make_node("n3"), klass,
            resource_slice("n1", [gpu("gpu-0"), gpu("gpu-1")])]


def test_extended_resource_is_left_to_dra_where_no_device_plugin_offers_it() -> None:
    pod = make_pod("p", requests=[{"example.com/dra-gpu": 2}])
    fit = filter_verdicts("NodeResourcesFit", pod, extended_cluster())
    assert fit == {"n1": ("Success", []), "n2": ("Success", []), "n3": ("Success", [])}
    dra = filter_verdicts(NAME, pod, extended_cluster())
    assert dra == {"n1": ("Success", []), "n2": ("Success", []), "n3": (UAU, ["cannot allocate all claims"])}


def test_extended_resource_through_the_implicit_class_name() -> None:
    pod = make_pod("p", requests=[{"deviceclass.resource.kubernetes.io/gpu.example.com": 3}])
    dra = filter_verdicts(NAME, pod, extended_cluster())
    assert dra["n1"] == (UAU, ["cannot allocate all claims"])  # two GPUs only


def test_extended_resource_without_a_class_or_a_device_plugin() -> None:
    pod = make_pod("p", requests=[{"example.com/dra-gpu": 1, "example.com/fpga": 1}])
    dra = filter_verdicts(NAME, pod, extended_cluster())
    assert dra["n1"] == (UAU, ["cannot fit resource"])
    fit = filter_verdicts("NodeResourcesFit", pod, extended_cluster())
    assert fit["n1"] == (UAU, ["Insufficient example.com/fpga"])


def test_without_a_class_fit_decides_alone() -> None:
    objects = [o for o in extended_cluster() if o["kind"] != "DeviceClass"]
    pod = make_pod("p", requests=[{"example.com/dra-gpu": 2}])
    assert filter_verdicts("NodeResourcesFit", pod, objects)["n1"] == (UAU, ["Insufficient example.com/dra-gpu"])
    assert explain_objects(objects, pod, None)["prefilter"][NAME]["code"] == "Skip"


def test_simulation_counts_devices_taken_through_extended_resources() -> None:
    cache = ClusterCache()
    cache.load([o for o in extended_cluster() if o["metadata"]["name"] not in ("n2", "n3")])
    sim = Simulator(Framework(build_profile(None)), cache, seed=1)
    pods = [make_pod(f"p{i}", requests=[{"example.com/dra-gpu": 1}], uid=f"u{i}") for i in range(3)]
    placed = [p.node for p in sim.run(pods).placements]
    assert placed == ["n1", "n1", ""]


def test_prioritize_call_scores_prioritized_lists_without_a_filter_in_the_same_cycle() -> None:
    first = [{"name": "h100", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1,
              "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "h100"'}}]},
             {"name": "any", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}]
    cache = ClusterCache()
    cache.load(cluster(claim("pick", [{"name": "gpu", "firstAvailable": first}])))
    profile = single_plugin_profile(NAME)
    scheduler = Scheduler(cache, [Framework(build_profile(profile))])
    pod = pod_with_claims({"name": "c", "resourceClaimName": "pick"})
    answer = dict(scheduler.prioritize(None, pod, ["n1", "n2"], None))
    assert answer["n2"] > answer["n1"] > 0


def test_pods_without_claims_score_zero_as_upstream_logs_and_leave_the_answer_alone() -> None:
    # Upstream's DynamicResources has no PreScore: kube-scheduler's log shows it scoring 0 on every node.
    out = explain_objects(cluster(), make_pod("p"), None)
    assert all(e["scores"][NAME] == {"raw": 0, "normalized": 0, "weighted": 0} for e in out["nodes"].values())
    # The extender's own short cut (a Skip) keeps the 0..10 answer and the totals as without the plugin.
    without = explain_objects(cluster(), make_pod("p"), {"plugins": {"multiPoint": {"disabled": [{"name": NAME}]}}})
    assert {n: (e["total"], e["extender_score"]) for n, e in out["nodes"].items()} \
        == {n: (e["total"], e["extender_score"]) for n, e in without["nodes"].items()}


def test_prioritize_after_filter_sees_devices_taken_in_between() -> None:
    first = [{"name": "h100", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1,
              "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "h100"'}}]},
             {"name": "any", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}]
    cache = ClusterCache()
    cache.load(cluster(claim("pick", [{"name": "gpu", "firstAvailable": first}])))
    scheduler = Scheduler(cache, [Framework(build_profile(single_plugin_profile(NAME)))])
    pod = pod_with_claims({"name": "c", "resourceClaimName": "pick"})
    passed = scheduler.filter(None, pod, ["n1", "n2"], None).passed
    assert sorted(passed) == ["n1", "n2"]
    before = dict(scheduler.prioritize(None, pod, passed, None))
    assert before["n2"] > before["n1"]
    # n2's only GPU goes to another pod's claim before kube-scheduler asks for scores.
    cache.apply(claim("taken", [exact_request()], allocated_on="n2", devices=["gpu-0"]))
    after = dict(scheduler.prioritize(None, pod, passed, None))
    assert after["n1"] > after["n2"] == 0


def test_claim_entry_without_a_source() -> None:
    verdicts = filter_verdicts(NAME, pod_with_claims({"name": "c"}), cluster())
    assert single(verdicts) == {
        (UAU, ('pod "default/p", spec.resourceClaim "c": none of the supported fields are set',))}


def test_malformed_claim_lists_are_no_crash() -> None:
    pod = pod_with_claims()
    pod["spec"]["resourceClaims"] = "gpu"
    out = explain_objects(cluster(), pod, None)
    assert out["error"] is None and out["prefilter"][NAME]["code"] == "Skip"


def test_a_pending_pod_explained_from_the_cache_keeps_its_claims() -> None:
    """The cache keeps only the fields the scheduler reads: a pod's resourceClaims and its claim statuses are
    among them, so explaining a pending pod by name (the live cache, a dump) judges its claims."""
    from extender.engine.explain import explain_cached

    pending = pod_with_claims({"name": "c", "resourceClaimName": "c1"}, name="waits", uid="uw")
    pending["spec"]["hostUsers"] = False  # read by NodeDeclaredFeatures, kept too
    cache = ClusterCache()
    cache.load(cluster(claim("c1", [exact_request()], allocated_on="n2", devices=["gpu-0"]), pending))
    framework = Framework(build_profile(None))
    out = explain_cached({framework.name: framework}, framework.name, cache, "default", "waits")
    kept = cache.find_pod("default", "waits")
    assert kept is not None and kept.raw["spec"]["resourceClaims"] == pending["spec"]["resourceClaims"]
    assert kept.raw["spec"]["hostUsers"] is False
    # c1 is allocated on n2: the pod can only go there.
    assert [n for n, e in out["nodes"].items() if e["feasible"]] == ["n2"]
    assert NAME in out["nodes"]["n1"]["filters"]


# ---- PostFilter ------------------------------------------------------------------------------------
NOT_HELPFUL_3 = "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."


def idle_claim_on_cordoned(reserved_for: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """gpu allocated on n1's gpu-0 and reserved for ``reserved_for`` (nobody by default); n1 cordoned."""
    allocated = claim("gpu", [exact_request()], allocated_on="n1", devices=["gpu-0"])
    allocated["status"]["reservedFor"] = reserved_for or []
    objects = cluster(allocated)
    objects[0] = make_node("n1", unschedulable=True)
    return objects


def test_postfilter_deallocates_an_idle_claim_whose_node_is_ruled_out_and_the_retry_lands_elsewhere() -> None:
    cache = ClusterCache(assumed_ttl_seconds=0)
    cache.load(idle_claim_on_cordoned())
    pod = pod_with_claims({"name": "gpu", "resourceClaimName": "gpu"})
    result = explain(Framework(build_profile(None)), cache.snapshot(), pod)
    outcome = result["outcome"]
    # n1 is cordoned: NodeUnschedulable rejects it before DynamicResources runs there; n2 and n3 are outside
    # the allocation's node selector.
    assert outcome["message"] == ("0/3 nodes are available: 1 node(s) were unschedulable, 2 resourceclaim not "
                                  "available on the node. deallocation of ResourceClaim completed, " + NOT_HELPFUL_3)
    assert outcome["postFilter"]["actions"] == [{"action": "deallocate", "claim": "default/gpu",
                                                 "allocatedFor": ["n1"]}]
    # Tried again once the claim is deallocated: only n2 has a free GPU.
    assert outcome["retry"]["status"] == "Schedulable" and outcome["retry"]["feasibleNodes"] == ["n2"]
    assert "kube-scheduler would deallocate ResourceClaim default/gpu, allocated for n1" in render_table(result)
    assert cache.dra.view().claim("default", "gpu").raw["status"]["allocation"]  # nothing was written

    placed = Simulator(Framework(build_profile(None)), cache, seed=1).run([pod])
    [placement] = placed.scheduled
    assert placement.node == "n2"
    assert placement.attempts == [{"message": outcome["message"], "postFilter": outcome["postFilter"]["actions"]}]
    # In the simulation's own cache the claim is now allocated on n2 for the pod.
    allocation = cache.dra.view().claim("default", "gpu").raw["status"]["allocation"]
    assert allocation["devices"]["results"][0]["pool"] == "n2"


def test_postfilter_deallocates_a_claim_reserved_only_for_the_pod_itself() -> None:
    cache = ClusterCache(assumed_ttl_seconds=0)
    cache.load(idle_claim_on_cordoned([{"resource": "pods", "name": "p", "uid": "pod-uid"}]))
    cycle = explain(Framework(build_profile(None)), cache.snapshot(),
                    pod_with_claims({"name": "gpu", "resourceClaimName": "gpu"}))["outcome"]
    assert "deallocation of ResourceClaim completed" in cycle["message"]


@pytest.mark.parametrize("minor", [36, 37])
def test_postfilter_leaves_a_claim_another_pod_uses(minor: int) -> None:
    cache = ClusterCache(assumed_ttl_seconds=0)
    cache.load(idle_claim_on_cordoned([{"resource": "pods", "name": "other", "uid": "other-uid"}]))
    outcome = explain(Framework(build_profile(None, release=release(minor))), cache.snapshot(),
                      pod_with_claims({"name": "gpu", "resourceClaimName": "gpu"}))["outcome"]
    # v1.37.2's deallocateOrDeletePodClaims says nothing when it does nothing.
    assert outcome["message"].endswith(("" if minor >= 37 else "still not schedulable, ") + NOT_HELPFUL_3)
    assert outcome["message"].count("preemption:") == 1
    assert outcome["postFilter"]["actions"] == [] and "retry" not in outcome


def test_postfilter_when_an_earlier_prefilter_rejected_the_pod_reads_no_state() -> None:
    # NodeAffinity's PreFilter rejects the pod before DynamicResources' PreFilter runs: v1.36.3's PostFilter
    # then fails reading its state, and that Error ("not found") ends the PostFilter step.
    pod = pod_with_claims({"name": "gpu", "resourceClaimName": "gpu"})
    pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]},
                                               {"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}}}
    outcome = explain_objects(idle_claim_on_cordoned(), pod)["outcome"]
    assert outcome["message"] == "0/3 nodes are available: pod affinity terms conflict. not found"
    assert outcome["postFilter"]["code"] == "Error"
    assert [p["plugin"] for p in outcome["postFilter"]["plugins"]] == ["DynamicResources"]
