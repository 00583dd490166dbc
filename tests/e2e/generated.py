"""Generated scenarios through the real kube-scheduler, compared with what explain and simulate say.

For each seed, the scenario of ``tests/oracle/scenarios.py`` (DRA, priorities, budgets and deallocatable
claims included) is made real in the kube-apiserver (``scenario_cluster.py``), read once as ``extender
explain NAME`` reads a cluster (``read_cluster``), explained and simulated; then its pod's scheduling gate is
lifted and kube-scheduler v1.36.3 (default profile, no extender) schedules it, watched. Compared:

- a pod kube-scheduler fails: its PodScheduled condition's reason (Unschedulable or SchedulerError) and
  whole message (FitError followed by the PostFilter plugins' words) against explain's outcome (a
  SchedulerError's words are one of the Errors explain found: upstream filters nodes in parallel and the
  first Error met ends the cycle);
- a pod it binds: the node is one of those explain ranks top (or its nominated node), and every plugin's
  weighted score and every total its V(10) log prints ("Plugin scored node for pod", "Calculated node's
  final score for pod") are explain's, plugin for plugin (a plugin upstream skips prints nothing);
- after a PostFilter that wrote something (a claim deallocated, pods preempted), what happens next:
  kube-scheduler's next message or the node it binds the pod to, against explain's ``retry`` and the node
  ``simulate`` places the pod on; preempted pods are gone.

``run`` does one seed; ``tests/e2e/test_generated_scenarios.py`` runs a CI-sized selection and
``tests/e2e/run_scenarios.py`` runs many.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "oracle"))

from controlplane import ApiError, ControlPlane, KubeClient, Scheduler, scheduler_configuration  # noqa: E402
from scenario_cluster import Loaded, clear, load, ungate, wait_for, watch_pod  # noqa: E402
from scenarios import Features, generate  # noqa: E402

from extender.cluster.cache import ClusterCache  # noqa: E402
from extender.cluster.live import watched_kinds  # noqa: E402
from extender.cluster.oneshot import read_cluster  # noqa: E402
from extender.config import load_config  # noqa: E402
from extender.engine.explain import cycle_errors, explain_found  # noqa: E402
from extender.engine.runtime import Framework  # noqa: E402
from extender.engine.simulate import Simulator  # noqa: E402
from extender.kube.release import release  # noqa: E402
from extender.kubeapi import config as kubeconfig  # noqa: E402

SETTLE_SECONDS = 0.5  # for kube-scheduler's informers to see the scenario before the gate is lifted
DECIDE_SECONDS = 30.0
NOT_QUEUED_SECONDS = 3.0
# A preemptor is retried once its victims' deletion requeues it; where that event finds it still gated by
# the preemption in flight, kube-scheduler retries it at its five-minute flush of unschedulable pods.
AFTER_PREEMPTION_SECONDS = 330.0
# kube-scheduler's V(10) lines about scores (schedule_one.go), with --vmodule=schedule_one=10.
SCORE_LINE = re.compile(r'"Plugin scored node for pod" pod="(?P<pod>[^"]+)" plugin="(?P<plugin>[^"]+)" '
                        r'node="(?P<node>[^"]+)" score=(?P<score>-?\d+)')
TOTAL_LINE = re.compile(r'"Calculated node\'s final score for pod" pod="(?P<pod>[^"]+)" node="(?P<node>[^"]+)" '
                        r"score=(?P<score>-?\d+)")
SCHEDULER_ARGS = ("--vmodule=schedule_one=10",)


def start_scheduler(control_plane: ControlPlane, workdir: Path) -> Scheduler:
    """kube-scheduler with the default profile, short backoffs, and its score lines logged."""
    sched = Scheduler(control_plane, workdir, scheduler_configuration(control_plane.kubeconfig, []), 2,
                      SCHEDULER_ARGS)
    sched.wait_ready()
    return sched


def features() -> Features:
    """What generated scenarios may contain here: everything the apiserver stores as the generator writes it."""
    return Features()


@dataclass
class Compared:
    """One scenario: what kube-scheduler did (``kind``) and every disagreement with explain and simulate."""

    seed: int
    kind: str  # bound, unschedulable, scheduler-error, deallocated-then-bound, preempted-then-bound, skipped, ...
    problems: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """No disagreement."""
        return not self.problems


class Runner:
    """Runs seeds one after the other on one control plane and one kube-scheduler."""

    def __init__(self, control_plane: ControlPlane, kube: KubeClient, scheduler: Scheduler,
                 feats: Features | None = None) -> None:
        self.cp = control_plane
        self.kube = kube
        self.scheduler = scheduler
        self.features = feats or features()
        config = load_config(None)
        # The control plane's release, as `extender explain --kubeconfig` follows it (kubernetesVersion auto).
        self.release = release(int(control_plane.version.split(".")[1]))
        self.frameworks = {p.name: Framework(p) for p in config.profiles_for(self.release)}
        self.default = config.profiles[0].name
        self.cluster_config = kubeconfig.load(str(control_plane.kubeconfig), None)

    def run(self, seed: int) -> Compared:
        """Make the seed's scenario real, explain it, let kube-scheduler schedule it, compare."""
        return self.run_scenario(seed, generate(seed, self.features, self.cp.version))

    def run_scenario(self, seed: int, scenario: Mapping[str, Any]) -> Compared:
        """The same for a scenario in the generator's shape (``{"objects", "pod"}``)."""
        if scenario["pod"]["spec"].get("nodeName"):
            return Compared(seed, "skipped")  # bound at creation: nothing for kube-scheduler to do
        clear(self.kube)
        loaded = load(self.kube, scenario)
        time.sleep(SETTLE_SECONDS)
        ours, simulated = self.explain(loaded)
        log = self.scheduler.process.log_path
        offset = log.stat().st_size if log.exists() else 0
        with watch_pod(self.cp.url, self.cp.headers, loaded.namespace, loaded.pod_name) as history:
            ungate(self.kube, loaded)
            # Bound, failed, or (binding waits in PreBind) nominated to its node; a pod explain says is not
            # queued gets a few seconds to show that nothing happens.
            wait_for(history, lambda h: h.node or h.failures or h.nominated,
                     NOT_QUEUED_SECONDS if ours["outcome"]["status"] == "Gated" else DECIDE_SECONDS)
            return self.compare(seed, loaded, ours, simulated, history, log, offset)

    def explain(self, loaded: Loaded) -> tuple[dict[str, Any], str]:
        """Explain the pod as ``extender explain NAME`` does, and where ``simulate`` places it."""
        cache = ClusterCache(assumed_ttl_seconds=0, release=self.release)
        raw = read_cluster(self.cluster_config, cache, (loaded.namespace, loaded.pod_name),
                           kinds_for_version=lambda _version: watched_kinds(self.release))
        assert raw is not None
        pod = {**raw, "spec": {k: v for k, v in raw["spec"].items() if k != "schedulingGates"}}
        result = explain_found(self.frameworks, self.default, cache.snapshot(), pod)
        framework = self.frameworks[result["profile"]]
        [placement] = Simulator(framework, cache, seed=0).run([pod]).placements
        return result, placement.node

    def compare(self, seed: int, loaded: Loaded, ours: Mapping[str, Any], simulated: str, history: Any,
                log: Path, offset: int) -> Compared:
        outcome = ours["outcome"]
        attempted = f'"Attempting to schedule pod" pod="{loaded.namespace}/{loaded.pod_name}"' in read_log(log, offset)
        if outcome["status"] == "Gated" or not (history.failures or history.node or history.nominated):
            compared = Compared(seed, "not-queued")
            if attempted or history.failures or history.node:
                compared.problems.append(f"explain says kube-scheduler does not queue the pod ({outcome['message']}), "
                                         f"but it tried: {history.failures or history.node}")
            elif outcome["status"] != "Gated":
                compared.problems.append(f"kube-scheduler never tried the pod; explain: {outcome['message']}")
            return compared
        if not history.failures:
            compared = Compared(seed, "bound" if history.node else "bound-after-prebind")
            self.bound_as_explained(compared, outcome, history.node or history.nominated, ours, simulated)
            self.scores_as_logged(compared, ours, log, offset, f"{loaded.namespace}/{loaded.pod_name}")
            return compared
        reason, message = history.failures[0]
        compared = Compared(seed, "scheduler-error" if reason == "SchedulerError" else "unschedulable")
        compared.details["message"] = message
        check(compared, "status", "SchedulerError" if reason == "SchedulerError" else "Unschedulable",
              outcome["status"])
        # Any node's Error may end upstream's parallel Filter step; explain names the first in node order.
        if not (reason == "SchedulerError" and message in cycle_errors(ours)):
            check(compared, "PodScheduled message", message, outcome.get("message"))
        retry = outcome.get("retry")
        if retry is None or compared.problems:
            return compared
        actions = [a["action"] for a in (outcome.get("postFilter") or {}).get("actions", [])]
        compared.kind = ("preempted" if "preempt" in actions else "deallocated") + "-then-" + (
            "bound" if retry["status"] == "Schedulable" else "failing")
        if retry["status"] == "Schedulable":
            wait_for(history, lambda h: h.node, AFTER_PREEMPTION_SECONDS if "preempt" in actions else DECIDE_SECONDS)
            self.bound_as_explained(compared, retry, history.node, ours, simulated)
            self.victims_gone(compared, outcome)
        else:
            wait_for(history, lambda h: len(h.failures) > 1, DECIDE_SECONDS)
            later = history.failures[1][1] if len(history.failures) > 1 else message
            check(compared, "PodScheduled message after the PostFilter's writes", later, retry.get("message"))
        return compared

    @staticmethod
    def bound_as_explained(compared: Compared, outcome: Mapping[str, Any], node: str, ours: Mapping[str, Any],
                           simulated: str) -> None:
        compared.details["node"] = node
        if not node:
            compared.problems.append(f"kube-scheduler neither bound nor failed the pod; explain: {outcome}")
            return
        top = outcome.get("tiedAtTop") or outcome.get("feasibleNodes") or []
        if outcome.get("status") != "Schedulable" or node not in top:
            compared.problems.append(f"bound to {node}; explain's best: {top} ({outcome.get('status')})")
        if simulated not in top:
            compared.problems.append(f"simulate placed it on {simulated!r}, not one of {top}")

    def victims_gone(self, compared: Compared, outcome: Mapping[str, Any]) -> None:
        for action in (outcome.get("postFilter") or {}).get("actions", []):
            if action["action"] != "preempt" or action["node"] != compared.details.get("node"):
                continue
            for victim in action["victims"]:
                namespace, name = victim["pod"].split("/", 1)
                try:
                    pod = self.kube.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
                except ApiError:
                    continue  # deleted
                if not pod["metadata"].get("deletionTimestamp"):
                    compared.problems.append(f"victim {victim['pod']} was not preempted")

    def scores_as_logged(self, compared: Compared, ours: Mapping[str, Any], log: Path, offset: int,
                         pod: str) -> None:
        """Every plugin's weighted score and every total of kube-scheduler's V(10) lines, against explain's."""
        logged, totals = read_scores(log, offset, pod)
        compared.details["scored nodes"] = len(totals)
        if not totals:
            return  # one feasible node: kube-scheduler does not score
        feasible = {n for n, e in ours["nodes"].items() if e["feasible"]}
        check(compared, "scored nodes", sorted(totals), sorted(feasible))
        for node, plugins in logged.items():
            entry = ours["nodes"].get(node) or {}
            mine = {p: s["weighted"] for p, s in (entry.get("scores") or {}).items() if not s.get("skipped")}
            check(compared, f"plugin scores on {node}", plugins, mine)
            check(compared, f"total on {node}", totals.get(node), entry.get("total"))


def read_scores(log: Path, offset: int, pod: str) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """The scores kube-scheduler logged for the pod after ``offset``: per node, plugin -> weighted score,
    and the totals."""
    text = read_log(log, offset)
    logged: dict[str, dict[str, int]] = {}
    totals: dict[str, int] = {}
    for match in SCORE_LINE.finditer(text):
        if match["pod"] == pod:
            logged.setdefault(match["node"], {})[match["plugin"]] = int(match["score"])
    for match in TOTAL_LINE.finditer(text):
        if match["pod"] == pod:
            totals[match["node"]] = int(match["score"])
    return logged, totals


def read_log(log: Path, offset: int) -> str:
    """kube-scheduler's log from ``offset`` on."""
    with log.open("rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace")


def check(compared: Compared, what: str, theirs: Any, ours: Any) -> None:
    """Record a disagreement (kube-scheduler's value first)."""
    if theirs != ours:
        compared.problems.append(f"{what}: kube-scheduler {theirs!r}, explain {ours!r}")


def select(seeds: Iterator[int], wanted: Mapping[str, int], feats: Features,
           predicates: Mapping[str, Callable[[Mapping[str, Any]], bool]]) -> list[int]:
    """The first seeds filling each category (a seed counts for the first category whose predicate holds)."""
    counts = dict.fromkeys(wanted, 0)
    chosen: list[int] = []
    for seed in seeds:
        if all(counts[c] >= n for c, n in wanted.items()):
            break
        scenario = generate(seed, feats)
        if scenario["pod"]["spec"].get("nodeName"):
            continue
        for category, predicate in predicates.items():
            if counts[category] < wanted[category] and predicate(scenario):
                counts[category] += 1
                chosen.append(seed)
                break
    return chosen


def has_kind(kind: str) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate: the scenario has an object of that kind."""
    return lambda sc: any(o["kind"] == kind for o in sc["objects"])


def deallocatable(scenario: Mapping[str, Any]) -> bool:
    """The incoming pod names a claim allocated on a node and reserved for no pod."""
    names = {c.get("resourceClaimName") for c in scenario["pod"]["spec"].get("resourceClaims", [])}
    return any(o["kind"] == "ResourceClaim" and o["metadata"]["name"] in names and "allocation" in o.get("status", {})
               and not o["status"].get("reservedFor") for o in scenario["objects"])


PREDICATES: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "deallocatable": deallocatable,
    "priorities": has_kind("PriorityClass"),
    "dra": has_kind("ResourceSlice"),
    "any": lambda sc: True,
}
