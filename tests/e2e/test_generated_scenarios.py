"""End to end: generated scenarios, and two written by hand, through the real kube-scheduler v1.36.3.

Each scenario is made real in the apiserver, explained and simulated as ``extender explain NAME`` and
``extender simulate --kubeconfig`` would (one read of the cluster), then scheduled by kube-scheduler; the pod's
whole PodScheduled message, the node it is bound to, the scores kube-scheduler logs, and what follows a
PostFilter that deallocated a claim or preempted pods must all be what explain and simulate said (see
``generated.py``). CI runs a selection of seeds covering DRA, deallocatable claims and priorities
(``E2E_SCENARIOS``, e.g. ``deallocatable=3,priorities=6,dra=6,any=6``); ``python tests/e2e/run_scenarios.py
--count 700`` runs many.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from controlplane import ControlPlane, KubeClient, Scheduler
from generated import PREDICATES, Compared, Runner, features, select, start_scheduler
from scenario_cluster import clear

pytestmark = pytest.mark.e2e

DEFAULT_SELECTION = "deallocatable=3,priorities=6,dra=6,any=6"
GPU_DRIVER = "gpu.example.com"


@pytest.fixture
def runner(control_plane: ControlPlane, kube: KubeClient, tmp_path: Path) -> Iterator[Runner]:
    """A kube-scheduler of its own (its score lines logged) and a runner; the scenarios' objects go after."""
    scheduler: Scheduler = start_scheduler(control_plane, tmp_path / "kube-scheduler")
    try:
        yield Runner(control_plane, kube, scheduler)
    finally:
        scheduler.stop()
        clear(kube)


def selection() -> list[int]:
    spec = os.environ.get("E2E_SCENARIOS", DEFAULT_SELECTION)
    wanted = {k: int(v) for k, v in (item.split("=") for item in spec.split(","))}
    return select(itertools.count(int(os.environ.get("E2E_SCENARIO_SEED", "0"))), wanted, features(),
                  {k: PREDICATES[k] for k in wanted})


def test_generated_scenarios_are_explained_as_kube_scheduler_decides(runner: Runner) -> None:
    results = [runner.run(seed) for seed in selection()]
    problems = [f"seed {r.seed} ({r.kind}): {'; '.join(r.problems)}" for r in results if not r.ok]
    assert not problems, "\n".join(problems)
    kinds = {r.kind for r in results}
    if len(results) >= 10:  # the default selection covers pods bound, failing, and retried after a deallocation
        assert "bound" in kinds and "unschedulable" in kinds and any(k.startswith("deallocated") for k in kinds), kinds


def node(name: str, cpu: str = "2", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": f"node-{name}",
                                                            "labels": {"kubernetes.io/hostname": name}},
            "spec": spec, "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                                     "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                                     "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}


def pod(name: str, *, node_name: str = "", cpu: str = "1", priority: tuple[str, int] | None = None,
        started: str = "", labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                            "resources": {"requests": {"cpu": cpu}}}], **spec}
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body.update(priorityClassName=priority[0], priority=priority[1], preemptionPolicy="PreemptLowerPriority")
    status: dict[str, Any] = {"phase": "Running" if node_name else "Pending"}
    if started:
        status["startTime"] = started
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                                                           "labels": labels or {"app": name}},
            "spec": body, "status": status}


def test_an_idle_claim_on_a_cordoned_node_is_deallocated_and_the_pod_lands_where_simulate_puts_it(
        runner: Runner) -> None:
    slices = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
               "metadata": {"name": f"{n}-gpu", "uid": f"slice-{n}"},
               "spec": {"driver": GPU_DRIVER, "nodeName": n, "devices": [{"name": "gpu-0"}],
                        "pool": {"name": n, "generation": 1, "resourceSliceCount": 1}}} for n in ("a", "b", "c")]
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": "gpu", "namespace": "default", "uid": "claim-gpu",
                          "finalizers": ["resource.kubernetes.io/delete-protection"]},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                 "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}}]}},
             "status": {"allocation": {
                 "devices": {"results": [{"request": "gpu", "driver": GPU_DRIVER, "pool": "a", "device": "gpu-0"}]},
                 "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                     {"key": "metadata.name", "operator": "In", "values": ["a"]}]}]},
                 "allocationTimestamp": "2026-01-01T00:00:00Z"}}}
    klass = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
             "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU_DRIVER}"'}}]}}
    cordoned = node("a", unschedulable=True, taints=[{"key": "node.kubernetes.io/unschedulable",
                                                      "effect": "NoSchedule"}])
    incoming = pod("trainer", resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu"}])
    incoming["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    scenario = {"objects": [cordoned, node("b"), node("c", cpu="1"), klass, *slices, claim], "pod": incoming}
    compared: Compared = runner.run_scenario(-1, scenario)
    assert compared.ok, compared.problems
    assert compared.kind == "deallocated-then-bound"
    assert compared.details["message"] == (
        "0/3 nodes are available: 1 node(s) were unschedulable, 2 resourceclaim not available on the node. "
        "deallocation of ResourceClaim completed, preemption: 0/3 nodes are available: "
        "3 Preemption is not helpful for scheduling.")
    assert compared.details["node"] in ("b", "c")


def test_a_preemption_evicts_the_victims_explain_names_and_the_pod_lands_on_the_nominated_node(
        runner: Runner) -> None:
    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n},
                "value": v, "preemptionPolicy": "PreemptLowerPriority"} for n, v in (("low", 100), ("high", 10000))]
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
              "metadata": {"name": "guarded", "namespace": "default"},
              "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}},
              "status": {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1,
                         "observedGeneration": 1}}
    # a: a guarded low pod (evicting it breaks its budget); b: two low pods that started at different times.
    running = [pod("a-guarded", node_name="a", cpu="2", priority=("low", 100), labels={"app": "guarded"},
                   started="2026-01-01T00:00:00Z"),
               pod("b-old", node_name="b", priority=("low", 100), started="2026-01-01T00:00:00Z"),
               pod("b-new", node_name="b", priority=("low", 100), started="2026-01-02T00:00:00Z")]
    scenario = {"objects": [*classes, node("a"), node("b"), budget, *running],
                "pod": pod("urgent", cpu="1500m", priority=("high", 10000))}
    compared = runner.run_scenario(-2, scenario)
    assert compared.ok, compared.problems
    assert compared.kind == "preempted-then-bound"
    # v1.37.2's kube-scheduler words the preemption it starts; v1.36.3's message is FitError alone.
    assert compared.details["message"] == "0/2 nodes are available: 2 Insufficient cpu." + (
        " preemption: found a potential placement for pod on node b, preempting 2 victims"
        if runner.cp.version == "1.37" else "")
    # b violates no budget: both its pods go (1500m needs the whole node), and the pod lands there.
    assert compared.details["node"] == "b"
