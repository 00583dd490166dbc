"""Explain: for one pod, every node's verdict from each filter plugin and each score plugin's raw,
normalised and weighted score, the total and the 0..10 answer; and the outcome kube-scheduler's
scheduling cycle would reach with that profile.

The per-node JSON shape is shared with the differential oracle (tests/oracle), which prints the same for
upstream's plugins, so that the two can be compared field by field. ``outcome`` adds what an operator asks
("why is my pod Pending?"), worded as upstream words it:

- ``Unschedulable``: no node passes; ``message`` is FitError's "0/N nodes are available: ..." (the
  PreFilter rejection, or the sorted histogram of each node's first rejecting plugin's reasons);
- ``SchedulerError``: the cycle fails with an Error status (a PreFilter, Filter or Score plugin failing on
  the pod), ``message`` being the status upstream's runtime returns, which kube-scheduler writes into the
  pod's PodScheduled condition with reason SchedulerError. With a single feasible node upstream never
  scores, so a score failure then does not stop scheduling (it is still reported as ``scoreError``);
- ``Schedulable``: the feasible nodes, the best ones with their score breakdown, and the nodes tied at
  the top total (kube-scheduler picks one of them at random).

A pod already bound is explained as it was when scheduled: without spec.nodeName and with its own usage
taken off its node (``bound`` says so).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from extender.cluster.cache import ClusterCache
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord, RecordError
from extender.cluster.snapshot import Snapshot
from extender.engine.cycle import (
    GATED,
    MAX_ATTEMPTS,
    SCHEDULABLE,
    SCHEDULER_ERROR,
    UNSCHEDULABLE,
    CycleResult,
    WhatIf,
    nominated_node_name,
    schedule,
    with_nomination,
)
from extender.engine.framework import CycleState
from extender.engine.mapping import map_scores
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.kube.priority import PriorityError, admitted
from extender.kube.release import Release

BEST_NODES = 3
DEFAULT_SCHEDULER_NAME = "default-scheduler"
PASSING_CODES = ("Success", "Skip")


def scheduler_name(raw_pod: Mapping[str, Any]) -> str:
    """spec.schedulerName, defaulted as the apiserver does."""
    spec = raw_pod.get("spec")
    name = spec.get("schedulerName") if isinstance(spec, Mapping) else None
    return name if isinstance(name, str) and name else DEFAULT_SCHEDULER_NAME


def choose_framework(frameworks: Mapping[str, Framework], default: str, raw_pod: Mapping[str, Any],
                     profile: str | None = None) -> tuple[Framework, str | None]:
    """The profile that would run the pod, and a note when that is not the pod's own scheduler.

    An explicit ``profile`` wins (KeyError if there is none of that name). Otherwise, as kube-scheduler
    picks a profile by spec.schedulerName, the profile of that name; if this extender has none, the
    default profile, with a note saying so.
    """
    if profile is not None:
        return frameworks[profile], None
    wanted = scheduler_name(raw_pod)
    if wanted in frameworks:
        return frameworks[wanted], None
    return frameworks[default], (f"no profile here is named after the pod's schedulerName {wanted!r}; "
                                 f"explained with the default profile {default!r}")


def explain(framework: Framework, snapshot: Snapshot, raw_pod: Mapping[str, Any],
            node_names: Sequence[str] | None = None, *, nodes: Sequence[NodeInfo] | None = None) -> dict[str, Any]:
    """Explain a pod against a snapshot: all nodes, the named ones in that order, or ``nodes`` as given."""
    try:
        # A pod written by hand gets the priority admission would give it; an admitted one has its own.
        pod = PodRecord(admitted(raw_pod, snapshot.objects.get("PriorityClass", {})), minor=framework.release.minor)
    except (RecordError, PriorityError) as err:
        return {"error": f"Pod: {err}", "prefilter": {}, "nodes": {}, "kubernetes": framework.release.describe()}
    unknown: list[str] = []
    if nodes is not None:
        candidates = list(nodes)
    elif node_names is None:
        candidates = list(snapshot.node_list)
    else:
        candidates = [snapshot.node_infos[n] for n in node_names if n in snapshot.node_infos]
        unknown = [n for n in node_names if n not in snapshot.node_infos]
    state = CycleState(snapshot)
    out = framework.explain(state, pod, candidates)
    score_error: str | None = out.pop("error", None)
    out["error"] = None
    out["pod"] = pod.key
    out["profile"] = framework.name
    out["kubernetes"] = framework.release.describe()  # the kube-scheduler release whose rules gave these verdicts
    out["schedulerName"] = scheduler_name(raw_pod)
    out["unknown_nodes"] = unknown
    feasible = [name for name, entry in out["nodes"].items() if entry["feasible"]]
    if score_error is None:
        totals = [out["nodes"][name]["total"] for name in feasible]
        mapped = map_scores(totals, state.score_weight, framework.profile.score_mapping,
                            framework.profile.max_score)
        for name, score in zip(feasible, mapped, strict=True):
            out["nodes"][name]["extender_score"] = score
    gated = framework.pre_enqueue(snapshot, pod)
    if gated is not None:
        out["outcome"] = {"status": GATED, "feasibleNodes": feasible, "plugin": gated.plugin,
                          "message": f"{gated.plugin}: {gated.message}"}
    elif not feasible and first_error(out) is None:
        # kube-scheduler's own cycle (each node filtered up to its first rejection, then PostFilter).
        whole = nodes is None and node_names is None
        out["outcome"] = unschedulable_cycle(framework, snapshot, pod, None if whole else candidates)
    else:
        out["outcome"] = outcome(out, len(candidates), score_error, nominated_node_name(pod))
    return out


def cycle_errors(result: Mapping[str, Any]) -> Iterator[str]:
    """Each Error that can end the cycle: a PreFilter's, or a node's first rejecting Filter's, in node order.

    Upstream stops at a node's first rejecting plugin: an Error behind a rejection is never reached. It runs
    PreFilter first (its first Error is the only one), then filters nodes on parallel workers, and the first
    Error any of them meets ends the cycle: where several nodes fail with different words, which one the
    pod's condition carries is a race."""
    for entry in (result.get("prefilter") or {}).values():
        if entry["code"] == "Error":  # PreFilter runs before any node is filtered, its plugins in turn
            yield ", ".join(entry["reasons"])
            return
    for entry in (result.get("nodes") or {}).values():
        rejection = next((v for v in entry["filters"].values() if v["code"] not in PASSING_CODES), None)
        if rejection is not None and rejection["code"] == "Error":
            yield ", ".join(rejection["reasons"])


def first_error(result: Mapping[str, Any]) -> str | None:
    """The Error explain reports as ending the cycle (None: no Error): the first of :func:`cycle_errors`."""
    return next(cycle_errors(result), None)


def outcome(result: Mapping[str, Any], num_nodes: int, score_error: str | None,
            nominated: str = "") -> dict[str, Any]:
    """What the scheduling cycle concludes from an explanation with a feasible node or an Error.

    A PreFilter or Filter Error, or a scoring failure with several feasible nodes, ends the cycle
    (SchedulerError); feasible nodes are ranked by their totals, and a pod nominated to a feasible node
    takes it without scoring, as kube-scheduler tries that node first. (A pod no node fits is concluded by
    its own cycle: :func:`unschedulable_cycle`.)
    """
    error = first_error(result)
    if error is not None:
        return {"status": SCHEDULER_ERROR, "message": error, "feasibleNodes": []}
    nodes: Mapping[str, Any] = result.get("nodes") or {}
    feasible = [name for name, entry in nodes.items() if entry["feasible"]]
    base: dict[str, Any] = {"feasibleNodes": feasible, "reasons": {}}
    if nominated in feasible:
        entry = nodes[nominated]
        best = [{"node": nominated, "total": entry["total"], "score": entry.get("extender_score"),
                 "scores": entry["scores"]}]
        return {"status": SCHEDULABLE, **base, "message": f"{len(feasible)}/{num_nodes} nodes are feasible",
                "best": best, "tiedAtTop": [nominated], "nominatedNode": nominated}
    if score_error is not None:
        base["scoreError"] = score_error
        if len(feasible) > 1:
            return {"status": SCHEDULER_ERROR, **base, "message": score_error}
    ranked = sorted(feasible, key=lambda name: (-nodes[name]["total"], name))
    top = nodes[ranked[0]]["total"]
    best = [{"node": name, "total": nodes[name]["total"], "score": nodes[name].get("extender_score"),
             "scores": nodes[name]["scores"]} for name in ranked[:BEST_NODES]]
    message = f"{len(feasible)}/{num_nodes} nodes are feasible"
    return {"status": SCHEDULABLE, **base, "message": message, "best": best,
            "tiedAtTop": [name for name in ranked if nodes[name]["total"] == top]}


def cycle_outcome(cycle: CycleResult, retry: dict[str, Any] | None = None) -> dict[str, Any]:
    """A cycle's conclusion in explain's terms; for an unschedulable pod, the PostFilter's part and
    (``retry``) what the next cycle concludes once its writes are made."""
    if cycle.status in (SCHEDULER_ERROR, GATED):
        return {"status": cycle.status, "message": cycle.message, "feasibleNodes": []}
    if cycle.status == SCHEDULABLE:
        names = [n.name for n in cycle.feasible]
        out: dict[str, Any] = {"status": SCHEDULABLE, "feasibleNodes": names,
                               "message": f"{len(names)}/{len(cycle.state.snapshot.node_list)} nodes are feasible"}
        if cycle.nominated:
            out["nominatedNode"] = names[0]
        if cycle.totals is None:
            out["tiedAtTop"] = names
        else:
            top = max(cycle.totals)
            ranked = sorted(zip(names, cycle.totals, strict=True), key=lambda nt: (-nt[1], nt[0]))
            out["best"] = [{"node": n, "total": t} for n, t in ranked[:BEST_NODES]]
            out["tiedAtTop"] = [n for n, t in ranked if t == top]
        return out
    out = {"status": UNSCHEDULABLE, "message": cycle.message, "fitError": cycle.fit_error, "feasibleNodes": [],
           "reasons": cycle.reasons}
    run = cycle.post_filter
    if run is not None:
        report: dict[str, Any] = {
            "code": run.status.code.label, "message": run.status.message,
            "plugins": [{"plugin": name, "code": status.code.label, "message": status.message}
                        for name, status in run.plugins],
            "actions": [action.describe() for action in run.actions]}
        if run.nominated_node is not None:
            report["nominatedNode"] = run.nominated_node
        out["postFilter"] = report
    if retry is not None:
        out["retry"] = retry
    return out


def unschedulable_cycle(framework: Framework, snapshot: Snapshot, pod: PodRecord,
                        nodes: Sequence[NodeInfo] | None) -> dict[str, Any]:
    """The cycle of a pod no node fits, as kube-scheduler runs it: FitError and (over the whole cluster)
    the PostFilter plugins. When they would change the cluster (deallocate a claim, evict pods), the pod is
    tried again on a what-if copy of the snapshot, as kube-scheduler retries it, and so on while each
    retry's PostFilter changes something (at most MAX_ATTEMPTS cycles)."""
    cycle = schedule(framework, snapshot, pod, nodes, score=False, post_filter=nodes is None)
    cycles = [cycle]
    current, retried = snapshot, pod
    while cycles[-1].actions and len(cycles) < MAX_ATTEMPTS:
        last = cycles[-1]
        what_if = WhatIf(current)
        for action in last.actions:
            action.apply(what_if)
        current = what_if.snapshot()
        nominated = last.post_filter.nominated_node if last.post_filter is not None else None
        if nominated is not None:
            retried = PodRecord(with_nomination(retried.raw, nominated), minor=framework.release.minor)
        cycles.append(schedule(framework, current, retried))
    retry: dict[str, Any] | None = None
    for later in reversed(cycles[1:]):
        retry = cycle_outcome(later, retry)
    return cycle_outcome(cycles[0], retry)


def explain_existing(framework: Framework, snapshot: Snapshot, raw_pod: Mapping[str, Any],
                     node_names: Sequence[str] | None = None) -> dict[str, Any]:
    """Explain a pod that exists in the cluster; a bound pod as it was when it was scheduled."""
    spec = raw_pod.get("spec")
    node = spec.get("nodeName") if isinstance(spec, Mapping) else None
    if not isinstance(node, str) or not node:
        return explain(framework, snapshot, raw_pod, node_names)
    assert isinstance(spec, Mapping)
    pending = {**raw_pod, "spec": {k: v for k, v in spec.items() if k != "nodeName"}}
    result = explain(framework, _without_pod(snapshot, node, raw_pod), pending, node_names)
    result["bound"] = {"node": node, "message": f"already bound to {node}: explained as when it was scheduled, "
                                                f"without its own usage of {node}"}
    return result


def _without_pod(snapshot: Snapshot, node: str, raw_pod: Mapping[str, Any]) -> Snapshot:
    """A snapshot in which ``node`` no longer holds the pod (the shared snapshot is left as it is)."""
    info = snapshot.get(node)
    if info is None:
        return snapshot
    try:
        key = PodRecord(raw_pod).cache_key
    except RecordError:
        return snapshot
    placed = [p for p in info.pods if p.cache_key == key]
    if not placed:
        return snapshot
    trial = info.clone()
    for pod in placed:
        trial.remove_pod(pod)
    return Snapshot.from_node_infos((trial if n.name == node else n for n in snapshot.node_list), snapshot.objects,
                                    snapshot.dra)


class PodNotFound(LookupError):
    """The pod to explain is not in the cache; the message says which and why that may be."""


def find_cached(cache: ClusterCache, namespace: str, name: str) -> tuple[Mapping[str, Any], bool]:
    """A pod the cache holds (pending, assumed or bound) as its kept fields, and whether it is only assumed."""
    pod = cache.find_pod(namespace, name)
    if pod is None:
        raise PodNotFound(f"pod {namespace}/{name} is not in the extender's cache "
                          "(unknown, deleted, or terminated: Succeeded and Failed pods are not kept)")
    return pod.raw, bool(pod.node_name) and cache.is_assumed(pod.cache_key)


def explain_found(frameworks: Mapping[str, Framework], default: str, snapshot: Snapshot, raw_pod: Mapping[str, Any],
                  assumed: bool = False, profile: str | None = None,
                  node_names: Sequence[str] | None = None) -> dict[str, Any]:
    """Explain a pod found in the cluster with the profile that would run it (see choose_framework)."""
    framework, note = choose_framework(frameworks, default, raw_pod, profile)
    result = explain_existing(framework, snapshot, raw_pod, node_names)
    if note and not result.get("error"):
        result["note"] = note
    if assumed and "bound" in result:
        result["bound"]["message"] += " (assumed by this extender's bind, not yet confirmed by the apiserver)"
    return result


def explain_cached(frameworks: Mapping[str, Framework], default: str, cache: ClusterCache, namespace: str,
                   name: str, profile: str | None = None) -> dict[str, Any]:
    """Explain a pod the cache holds (pending, assumed or bound), by namespace and name."""
    raw, assumed = find_cached(cache, namespace, name)
    return explain_found(frameworks, default, cache.snapshot(), raw, assumed, profile)


def frozen(snapshot: Snapshot) -> Snapshot:
    """The same nodes, objects and DRA view in a snapshot of its own, which later refreshes of the cache's
    snapshot leave as it is (they replace entries of the shared one in place): for explaining off the cache's
    thread. The NodeInfos are shared: the cache never changes one once it is in a snapshot."""
    return Snapshot.from_node_infos(snapshot.node_list, snapshot.objects, snapshot.dra)


def explain_objects(objects: Iterable[Mapping[str, Any]], pod: Mapping[str, Any],
                    profile: Mapping[str, Any] | None = None, release: Release | None = None) -> dict[str, Any]:
    """Explain a pod against a list of raw objects, with a KubeSchedulerConfiguration-shaped profile, following
    ``release`` (default: the newest supported one with its default gates)."""
    cache = ClusterCache(release=release)
    cache.load(objects)
    framework = Framework(build_profile(profile, release=release))
    return explain(framework, cache.snapshot(), pod)


def enabled_plugins(profile: Mapping[str, Any] | None = None, release: Release | None = None) -> dict[str, Any]:
    """The plugins a profile runs: ``{"filter": [names], "score": {name: weight}}``."""
    return build_profile(profile, release=release).summary()


def render_table(result: Mapping[str, Any]) -> str:
    """An aligned, human-readable table of an explanation, then its outcome (last, where a terminal shows it)."""
    if result.get("error"):
        return f"error: {result['error']}\n"
    lines: list[str] = []
    rejected = {name: entry for name, entry in (result.get("prefilter") or {}).items()
                if entry["code"] not in PASSING_CODES}
    if rejected:
        for name, entry in rejected.items():
            lines.append(f"PreFilter {name}: {entry['code']}: {', '.join(entry['reasons'])}")
        lines.append("")
        return "\n".join([*lines, *render_outcome(result)]) + "\n"
    nodes: Mapping[str, Any] = result.get("nodes") or {}
    score_plugins: list[str] = []
    for entry in nodes.values():
        for plugin in entry.get("scores", {}):
            if plugin not in score_plugins:
                score_plugins.append(plugin)
    header = ["NODE", "FITS", *[p for p in score_plugins], "TOTAL", "0..10", "REASONS"]
    rows: list[list[str]] = []
    for name, entry in sorted(nodes.items(), key=lambda kv: (not kv[1]["feasible"], -kv[1]["total"], kv[0])):
        reasons = [f"{plugin}: {', '.join(v['reasons'])}" for plugin, v in entry["filters"].items()
                   if v["code"] not in PASSING_CODES]
        cells = [name, "yes" if entry["feasible"] else "no"]
        for plugin in score_plugins:
            s = entry["scores"].get(plugin)
            cells.append("-" if s is None else ("skip" if s.get("skipped") else f"{s['raw']}/{s['normalized']}/"
                                                                                  f"{s['weighted']}"))
        cells += [str(entry["total"]) if entry["feasible"] and entry["scores"] else "-",
                  str(entry.get("extender_score", "-")), "; ".join(reasons)]
        rows.append(cells)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    for row in [header, *rows]:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])) + "  " + row[-1])
    lines.append("")
    lines.append("scores are raw/normalized/weighted; TOTAL is the weighted sum; 0..10 is the prioritize answer")
    lines.append("")
    lines.extend(render_outcome(result))
    return "\n".join(lines).rstrip() + "\n"


def release_line(kubernetes: Any) -> str:
    """``kube-scheduler v1.37.2 rules (...)``: the release an answer followed and why, with any warning."""
    if not isinstance(kubernetes, Mapping):
        return "kube-scheduler release unknown"
    text = f"kube-scheduler {kubernetes.get('upstream')} rules"
    if kubernetes.get("setting") == "auto":
        reported = kubernetes.get("reported")
        text += f" (auto: {kubernetes.get('source')} reports {reported})" if reported else " (auto: newest supported)"
    gates = kubernetes.get("featureGates") or {}
    if gates:
        text += "; feature gates " + ",".join(f"{k}={str(v).lower()}" for k, v in gates.items())
    if kubernetes.get("warning"):
        text += f"\nwarning: {kubernetes['warning']}"
    return text


def render_outcome(result: Mapping[str, Any]) -> list[str]:
    """The explanation's conclusion in a few lines: pod and profile, binding, and the cycle's outcome."""
    lines: list[str] = []
    if result.get("pod"):
        lines.append(f"pod {result['pod']}: profile {result.get('profile')} "
                     f"(spec.schedulerName {result.get('schedulerName')}), {release_line(result.get('kubernetes'))}")
    if result.get("note"):
        lines.append(f"note: {result['note']}")
    if result.get("bound"):
        lines.append(result["bound"]["message"])
    found = result.get("outcome")
    if not found:
        return lines
    lines.extend(_outcome_lines(found))
    return lines


def _outcome_lines(found: Mapping[str, Any], retried: bool = False) -> list[str]:
    """A cycle's conclusion; for an unschedulable pod, what its PostFilter would write and what the next
    cycle would then conclude."""
    lead = "tried again: " if retried else ""
    if found["status"] == GATED:
        return [f"{lead}kube-scheduler does not queue the pod, so tries no cycle and leaves its PodScheduled "
                f"condition as it is: {found['message']}"]
    if found["status"] == SCHEDULER_ERROR:
        return [f"{lead}the scheduling cycle fails ({SCHEDULER_ERROR}): {found['message']}"]
    if found["status"] == SCHEDULABLE:
        if found.get("nominatedNode"):
            return [f"{lead}it fits its nominated node {found['nominatedNode']}, which kube-scheduler tries first"]
        if "best" not in found:
            return [f"{lead}{found['message']}: {', '.join(found['feasibleNodes'])}"]
        best = ", ".join(f"{b['node']} (total {b['total']})" for b in found["best"])
        lines = [f"{lead}{found['message']}; best: {best}"]
        if len(found["tiedAtTop"]) > 1:
            lines.append(f"kube-scheduler picks at random among the {len(found['tiedAtTop'])} nodes tied at the top")
        if found.get("scoreError"):
            lines.append(f"scoring fails ({found['scoreError']}), but with one feasible node upstream does not score")
        return lines
    lines = [f"{lead}{found['message']}"]
    for action in (found.get("postFilter") or {}).get("actions", []):
        lines.append(f"kube-scheduler would {describe_action(action)} (nothing is written here)")
    if found.get("retry"):
        lines.extend(_outcome_lines(found["retry"], retried=True))
    return lines


def describe_action(action: Mapping[str, Any]) -> str:
    """A PostFilter write in words."""
    others = f" (or one of {', '.join(action['orOneOf'])}, chosen at random)" if action.get("orOneOf") else ""
    if action["action"] == "deallocate":
        where = f", allocated for {', '.join(action['allocatedFor'])}" if action.get("allocatedFor") else ""
        return f"deallocate ResourceClaim {action['claim']}{where}{others}"
    if action["action"] == "delete":
        return f"delete ResourceClaim {action['claim']}"
    victims = ", ".join(f"{v['pod']} (priority {v['priority']})" for v in action["victims"])
    return f"preempt {victims} on node {action['node']}{others} and nominate it"
