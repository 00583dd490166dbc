"""The framework runtime: runs a profile's plugins over nodes, as kube-scheduler's runtime does.

It owns the loops, the Skip bookkeeping, score validation and weighting, timing and error handling;
plugins stay pure. Two ways of running filters:

- :meth:`Framework.filter` stops at a node's first rejection (what serving needs), and
- :meth:`Framework.explain` runs every plugin on every node (what explain and the oracle compare).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from extender.cluster.columns import BoolArray, Int64Array, IntpArray, NodeBatch, distinct
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.pod_groups import PodGroups
from extender.cluster.records import PodRecord
from extender.cluster.snapshot import Snapshot
from extender.engine.equivalence import FILTER_SLOT, SCORES_SLOT, EquivalenceCache
from extender.engine.framework import (
    MIN_NODE_SCORE,
    SKIP,
    Code,
    CycleState,
    FilterPlugin,
    NodeToStatus,
    PostFilterAction,
    PostFilterPlugin,
    ScorePlugin,
    Status,
    Verdicts,
)
from extender.engine.profile import Profile
from extender.engine.registry import lookup
from extender.kube.resources import resize_deferred

# (plugin, extension point, seconds) -> None; the service wires this to its metrics.
PluginTimer = Callable[[str, str, float], None]

# kube-scheduler times its plugins in one scheduling cycle in ten (pluginMetricsSamplePercent in
# pkg/scheduler/schedule_one.go): observing a histogram around every plugin call of every request costs, on
# a few hundred nodes, a good share of what the plugins themselves cost.
PLUGIN_METRICS_SAMPLE_PERCENT = 10


def _narrowed_to_nothing(state: CycleState) -> Status | None:
    """RunPreFilterPlugins merging PreFilterResults: when the node sets the plugins so far narrowed the cycle to
    have nothing in common, the pod is UnschedulableAndUnresolvable everywhere (the plugins named in sorted
    order: upstream's sets.List)."""
    names: frozenset[str] | None = None
    for narrowed in state.prefilter_nodes.values():
        names = narrowed if names is None else names & narrowed
    if names is None or names:
        return None
    plugins = sorted(state.prefilter_nodes)
    if len(plugins) == 1:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) didn't satisfy plugin {plugins[0]}")
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                  f"node(s) didn't satisfy plugin(s) [{' '.join(plugins)}] simultaneously")


class FilterResult:
    """Each candidate's verdict, as arrays over the candidates' batch: ``codes[i]`` is 0 where candidate i
    passed, else k where ``statuses[k - 1]`` (attributed to its plugin) rejected it. ``feasible`` and
    ``failed`` are the same verdicts as a node list and a name -> status map, built when asked for."""

    __slots__ = ("batch", "codes", "error", "prefilter_rejection", "statuses")

    def __init__(self, batch: NodeBatch) -> None:
        self.batch = batch
        self.codes: Int64Array = np.zeros(len(batch), np.int64)
        self.statuses: list[Status] = []
        self.error: Status | None = None
        self.prefilter_rejection: Status | None = None  # set when a PreFilter rejected the pod on every node

    def reject(self, positions: IntpArray, status: Status) -> None:
        """Candidates at these positions are rejected by ``status``."""
        self.statuses.append(status)
        self.codes[positions] = len(self.statuses)

    @property
    def feasible(self) -> list[NodeInfo]:
        """The candidates that passed, in order."""
        nodes = self.batch.nodes
        return [nodes[i] for i in (self.codes == 0).nonzero()[0].tolist()]

    @property
    def failed(self) -> dict[str, Status]:
        """Each rejected candidate's name and the status that rejected it, in candidate order."""
        nodes, statuses = self.batch.nodes, self.statuses
        codes = self.codes.tolist()
        return {nodes[i].name: statuses[codes[i] - 1] for i in self.codes.nonzero()[0].tolist()}


@dataclass
class PostFilterRun:
    """What RunPostFilterPlugins concludes: the merged status (its message ends the pod's PodScheduled
    message), the nomination (None: left as it is, "": cleared), every write the plugins made, in order,
    and each plugin's own status."""

    status: Status
    nominated_node: str | None = None
    actions: list[PostFilterAction] = field(default_factory=list)
    plugins: list[tuple[str, Status]] = field(default_factory=list)


@dataclass
class PluginScore:
    """One score plugin's view of one node."""

    raw: int = 0
    normalized: int = 0
    weighted: int = 0
    skipped: bool = False


class Framework:
    """A profile's instantiated plugins, ready to run."""

    def __init__(self, profile: Profile, timer: PluginTimer | None = None) -> None:
        self.profile = profile
        self.name = profile.name
        self.release = profile.release  # the kube-scheduler release (minor, feature gates) it follows
        instances: dict[str, Any] = {}

        def instance(name: str) -> Any:
            if name not in instances:
                instances[name] = lookup(name, profile.release).build(profile.args.get(name), profile.release)
            return instances[name]

        self.filter_plugins: list[FilterPlugin] = [instance(n) for n in profile.filters]
        self.score_plugins: list[tuple[ScorePlugin, int]] = [(instance(n), w) for n, w in profile.scores]
        self.post_filter_plugins: list[PostFilterPlugin] = [instance(n) for n in profile.post_filters]
        for plugin in instances.values():
            plugin.handle = self  # what a plugin that runs the others (preemption) runs them with
        # The pods per label set per node over the snapshot, which the pod-counting plugins (InterPodAffinity,
        # PodTopologySpread) read through their handle: one index for the profile, kept current across requests.
        self.pod_groups = PodGroups()
        # Whether filter or score can reuse anything through an equivalence cache: only node-local plugins
        # computed node by node (the columnar ones are recomputed for every pod, which is cheaper).
        self.reuses_equivalence = any(p.node_local and not p.columnar for p in
                                      [*self.filter_plugins, *(plugin for plugin, _ in self.score_plugins)])
        self.timer = timer
        self.plugin_metrics_percent = PLUGIN_METRICS_SAMPLE_PERCENT
        self.deferred_resize_gate = profile.release.gate("InPlacePodVerticalScalingSchedulerPreemption")

    def warm_up(self, snapshot: Snapshot) -> None:
        """Index every node's pods by label set (pod_groups), then let every plugin of the profile build its
        own cross-pod indexes over the snapshot (Plugin.warm_up)."""
        self.pod_groups.sync(snapshot.all_nodes(), complete=True)
        self.pod_groups.prepare()
        done: set[int] = set()
        for plugin in [*self.filter_plugins, *(plugin for plugin, _ in self.score_plugins), *self.post_filter_plugins]:
            if id(plugin) not in done:
                done.add(id(plugin))
                plugin.warm_up(snapshot)

    def _resize_deferred(self, pod: PodRecord) -> bool:
        """Whether the pod's in-place resize is deferred and this release treats such pods apart (v1.37 with
        InPlacePodVerticalScalingSchedulerPreemption): plugins marked ``skips_deferred_resize`` then skip it."""
        return self.deferred_resize_gate and resize_deferred(pod.raw)

    def _timer(self, state: CycleState) -> PluginTimer | None:
        """The plugin timer if this request's cycle is one of those sampled (decided once per cycle)."""
        if self.timer is None:
            return None
        if state.record_plugin_metrics is None:
            state.record_plugin_metrics = random.randrange(100) < self.plugin_metrics_percent
        return self.timer if state.record_plugin_metrics else None

    # ---- queueing ------------------------------------------------------------------------------
    def pre_enqueue(self, snapshot: Snapshot, pod: PodRecord) -> Status | None:
        """The PreEnqueue plugins, in order (SchedulingGates first, as in upstream's default set): the first
        rejection, attributed to its plugin, keeps the pod out of the queue; kube-scheduler then tries no
        cycle and leaves its PodScheduled condition as it is."""
        gates = pod.spec.get("schedulingGates")
        if isinstance(gates, list) and gates:
            names = " ".join(str(g.get("name") if isinstance(g, dict) else g) for g in gates)
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{names}]",
                          plugin="SchedulingGates")
        for plugin in self.filter_plugins:
            try:
                status = plugin.pre_enqueue(snapshot, pod)
            except Exception as err:
                status = Status(Code.ERROR, str(err))
            if status is not None and status.code != Code.SUCCESS:
                return status.with_plugin(plugin.name)
        return None

    # ---- filtering -----------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        """Run the PreFilters as RunPreFilterPlugins does; returns the rejection or error (for every node).

        An UnschedulableAndUnresolvable rejection or an Error stops at once; after an Unschedulable one the
        others still run (PostFilter reads their state), and the last such rejection is returned.
        """
        timer = self._timer(state)
        deferred = self._resize_deferred(pod)
        rejected: Status | None = None
        for plugin in self.filter_plugins:
            if deferred and plugin.skips_deferred_resize:
                state.skip_filter.add(plugin.name)
                continue
            started = time.perf_counter()
            try:
                status = plugin.pre_filter(state, pod, nodes)
            except Exception as err:  # a plugin bug must not take the service down
                return Status(Code.ERROR, f'running PreFilter plugin "{plugin.name}": {err}', plugin=plugin.name)
            finally:
                if timer is not None:
                    timer(plugin.name, "PreFilter", time.perf_counter() - started)
            if status is None:
                if plugin.name in state.prefilter_nodes and (rejection := _narrowed_to_nothing(state)) is not None:
                    return rejection.with_plugin(plugin.name)
                continue
            if status.code == Code.SKIP:
                state.skip_filter.add(plugin.name)
                continue
            if status.code == Code.ERROR:
                return Status(Code.ERROR, f'running PreFilter plugin "{plugin.name}": {status.message}',
                              plugin=plugin.name)
            if status.code == Code.UNSCHEDULABLE:
                rejected = status.with_plugin(plugin.name)
            elif status.code != Code.SUCCESS:
                return status.with_plugin(plugin.name)
        return rejected

    def filter(self, state: CycleState, pod: PodRecord, nodes: NodeBatch | Sequence[NodeInfo],
               equivalence: tuple[EquivalenceCache, str] | None = None) -> FilterResult:
        """PreFilter once, then Filter each node until its first rejection.

        ``nodes`` are the candidates, as a batch (a request's names resolved to rows) or NodeInfos. With
        ``equivalence`` (a cache and the pod's class key), the leading node-local plugins' verdicts are
        reused for nodes whose generation has not changed since an equivalent pod was filtered.
        """
        batch = nodes if isinstance(nodes, NodeBatch) else NodeBatch.of(list(nodes), state.snapshot.columns)
        result = FilterResult(batch)
        state.candidates = batch
        rejected = self.pre_filter(state, pod, batch)
        if rejected is not None:
            if rejected.code == Code.ERROR:
                result.error = rejected
            else:
                result.prefilter_rejection = rejected
                result.reject(np.arange(len(batch)), rejected)
            return result
        # Plugin-major order: each plugin sweeps the nodes still standing. A node's verdict is the first
        # plugin (in profile order) that rejects it, exactly as with node-major order, at less overhead.
        # ``standing`` holds the positions (in the candidates) of the nodes still standing.
        standing = np.arange(len(batch))
        timer = self._timer(state)
        plugins = [p for p in self.filter_plugins if p.name not in state.skip_filter]
        lead = 0
        while lead < len(plugins) and plugins[lead].node_local:
            lead += 1
        if equivalence is not None and not all(p.columnar for p in plugins[:lead]):
            # Node-local plugins computed node by node: their verdicts are worth reusing.
            started = time.perf_counter()
            keep = self._filter_equivalent(state, pod, batch, plugins[:lead], equivalence, result)
            if timer is not None:
                timer("EquivalenceCache", "Filter", time.perf_counter() - started)
            if result.error is not None:
                return result
            plugins = plugins[lead:]
            standing = standing[keep]
            batch = batch.take(keep)
        for plugin in plugins:
            if not len(batch):
                break
            started = time.perf_counter()
            try:
                verdicts = plugin.filter_batch(state, pod, batch)
            except Exception as err:
                result.error = filter_error(plugin.name, str(err))
                return result
            finally:
                if timer is not None:
                    timer(plugin.name, "Filter", time.perf_counter() - started)
            codes = verdicts.codes
            if not codes.any():
                continue
            # One status per distinct reason of this plugin, attributed to it; nodes share it.
            for code in distinct(codes).tolist():
                if not code:
                    continue
                status = verdicts.statuses[code - 1]
                if status.code == Code.ERROR:
                    result.error = filter_error(plugin.name, status.message)
                    return result
                result.reject(standing[codes == code], status.with_plugin(plugin.name))
            passed = codes == 0
            standing = standing[passed]
            batch = batch.take(passed)
        return result

    def filter_node(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        """RunFilterPlugins on one node with a state PreFilter already filled: the first rejection (or the
        Error, worded as the runtime words it), None when the pod fits."""
        batch = NodeBatch.of([node], state.snapshot.columns)
        state.candidates = batch
        for plugin in self.filter_plugins:
            if plugin.name in state.skip_filter:
                continue
            try:
                status = plugin.filter_batch(state, pod, batch).status(0)
            except Exception as err:
                return filter_error(plugin.name, str(err))
            if status is not None and status.code != Code.SUCCESS:
                if status.code == Code.ERROR:
                    return filter_error(plugin.name, status.message)
                return status.with_plugin(plugin.name)
        return None

    def refresh_pod_dependent_state(self, state: CycleState, pod: PodRecord) -> Status | None:
        """Run again, on ``state``'s snapshot, the PreFilters whose results depend on the nodes' pods (the
        plugins upstream keeps current through AddPod/RemovePod); the others' results stand."""
        for plugin in self.filter_plugins:
            if not plugin.prefilter_reads_pods or plugin.name in state.skip_filter:
                continue
            try:
                status = plugin.pre_filter(state, pod, state.snapshot.node_list)
            except Exception as err:
                return Status(Code.ERROR, f'running PreFilter plugin "{plugin.name}": {err}', plugin=plugin.name)
            if status is not None and status.code == Code.SKIP:
                state.skip_filter.add(plugin.name)  # nothing left for it to check on these pods
            elif status is not None and status.code != Code.SUCCESS:
                return status.with_plugin(plugin.name)
        return None

    @staticmethod
    def _filter_equivalent(state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo], plugins: list[FilterPlugin],
                           equivalence: tuple[EquivalenceCache, str], result: FilterResult) -> BoolArray:
        """The leading node-local plugins' verdicts through the equivalence cache: rejections are recorded
        in ``result``; returns where the nodes passed."""
        def verdict(node: NodeInfo) -> Status | None:
            for plugin in plugins:
                try:
                    status = plugin.filter(state, pod, node)
                except Exception as err:
                    raise _FilterStop(filter_error(plugin.name, str(err))) from err
                if status is not None and status.code != Code.SUCCESS:
                    if status.code == Code.ERROR:  # errors are answered, never cached
                        raise _FilterStop(filter_error(plugin.name, status.message))
                    return status.with_plugin(plugin.name)
            return None

        cache, key = equivalence
        keep = np.ones(len(nodes), np.bool_)
        try:
            for i, (_node, status) in enumerate(cache.resolve(key, nodes, FILTER_SLOT, verdict)):
                if status is not None:
                    keep[i] = False
                    result.reject(np.array([i]), status)
        except _FilterStop as stop:
            result.error = stop.status
        return keep

    # ---- PostFilter ----------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: PodRecord, statuses: NodeToStatus) -> PostFilterRun:
        """RunPostFilterPlugins: the plugins in order until one succeeds (or rejects for good, or fails).

        The statuses that only say "not this time" (Unschedulable) are merged: their reasons joined, the
        last real nomination kept. An UnschedulableAndUnresolvable status ends the run as it is; any other
        failure ends it as an Error with the plugin's message.
        """
        run = PostFilterRun(Status(Code.UNSCHEDULABLE))
        reasons: list[str] = []
        for plugin in self.post_filter_plugins:
            try:
                result, status = plugin.post_filter(state, pod, statuses)
            except Exception as err:  # a plugin bug is the plugin's Error, never a crash
                result, status = None, Status(Code.ERROR, str(err))
            status = status.with_plugin(plugin.name)
            run.plugins.append((plugin.name, status))
            if result is not None:
                run.actions.extend(result.actions)
            if status.code in (Code.SUCCESS, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
                run.status = status
                run.nominated_node = result.nominated_node if result is not None else None
                return run
            if status.code not in (Code.UNSCHEDULABLE, Code.PENDING):
                run.status = Status(Code.ERROR, status.message, plugin=plugin.name)
                run.nominated_node = None
                return run
            if result is not None and result.nominated_node is not None:
                run.nominated_node = result.nominated_node
            reasons.extend(status.reasons)
        plugin_name = run.plugins[0][0] if run.plugins else ""
        run.status = Status(Code.UNSCHEDULABLE, *reasons, plugin=plugin_name)
        return run

    # ---- scoring -------------------------------------------------------------------------------
    def score(self, state: CycleState, pod: PodRecord, candidates: NodeBatch | Sequence[NodeInfo],
              details: dict[str, dict[str, PluginScore]] | None = None,
              equivalence: tuple[EquivalenceCache, str] | None = None) -> list[int]:
        """PreScore, Score, NormalizeScore and weighting; the weighted total per node, in node order.

        With ``details`` given, each plugin's raw, normalised and weighted score per node is recorded
        into it (plugin -> node -> PluginScore). With ``equivalence``, the raw scores of node-local
        plugins are reused for nodes unchanged since an equivalent pod was scored. Raises PluginScoreError
        on a plugin failure.
        """
        batch = candidates if isinstance(candidates, NodeBatch) \
            else NodeBatch.of(list(candidates), state.snapshot.columns)
        nodes = batch
        state.candidates = batch
        active: list[tuple[ScorePlugin, int]] = []
        timer = self._timer(state)
        for plugin, weight in self.score_plugins:
            started = time.perf_counter()
            try:
                status = plugin.pre_score(state, pod, nodes)
            except Exception as err:
                raise PluginScoreError(f'running PreScore plugin "{plugin.name}": {err}') from err
            finally:
                if timer is not None:
                    timer(plugin.name, "PreScore", time.perf_counter() - started)
            if status is not None and status.code == Code.SKIP:
                state.skip_score.add(plugin.name)
                if details is not None:  # zeros where upstream scores every node 0 rather than skipping
                    details[plugin.name] = {n.name: PluginScore(skipped=not plugin.skip_scores_zero) for n in nodes}
                continue
            if status is not None and status.code != Code.SUCCESS:
                raise PluginScoreError(f'running PreScore plugin "{plugin.name}": {status.message}')
            active.append((plugin, weight))
        state.score_weight = sum(weight for _, weight in active)
        # Node-local plugins computed node by node reuse raw scores through the equivalence cache.
        local = [plugin for plugin, _ in active if plugin.node_local and not plugin.columnar] \
            if equivalence is not None else []
        local_raw = self._local_raw_scores(state, pod, nodes, local, equivalence) \
            if local and equivalence is not None else {}
        totals = np.zeros(len(nodes), np.int64)
        for plugin, weight in active:
            started = time.perf_counter()
            try:
                cached = local_raw.get(plugin.name)
                raw = np.array(cached, np.int64) if cached is not None else plugin.score_batch(state, pod, batch)
                scores = plugin.normalize_batch(state, pod, raw)
            except Exception as err:
                raise PluginScoreError(f'running Score plugins: plugin "{plugin.name}" failed with: {err}') from err
            finally:
                if timer is not None:
                    timer(plugin.name, "Score", time.perf_counter() - started)
            top = plugin.max_score
            if len(scores) and (scores.min() < MIN_NODE_SCORE or scores.max() > top):
                invalid = ((scores < MIN_NODE_SCORE) | (scores > top)).nonzero()[0]
                raise PluginScoreError(
                    f'running Normalize on Score plugins: plugin "{plugin.name}" returns an invalid score '
                    f"{int(scores[invalid[0]])}, it should in the range of [{MIN_NODE_SCORE}, {top}] after "
                    "normalizing")
            totals += scores * weight
            if details is not None:
                raw_list, score_list = raw.tolist(), scores.tolist()
                details[plugin.name] = {
                    node.name: PluginScore(raw_list[i], score_list[i], score_list[i] * weight)
                    for i, node in enumerate(nodes)
                }
        result: list[int] = totals.tolist()
        return result

    @staticmethod
    def _local_raw_scores(state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo], plugins: list[ScorePlugin],
                          equivalence: tuple[EquivalenceCache, str]) -> dict[str, list[int]]:
        """Raw scores of node-local plugins, from the equivalence cache where the node is unchanged."""
        cache, key = equivalence
        columns: list[list[int]] = [[] for _ in plugins]
        compute = lambda node: tuple(plugin.score(state, pod, node) for plugin in plugins)  # noqa: E731
        for _node, raws in cache.resolve(key, nodes, SCORES_SLOT, compute):
            for column, value in zip(columns, raws, strict=True):
                column.append(value)
        return {plugin.name: column for plugin, column in zip(plugins, columns, strict=True)}

    # ---- explaining ----------------------------------------------------------------------------
    def explain(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> dict[str, Any]:
        """Every plugin's verdict on every node, then scores of the feasible nodes (the oracle's shape)."""
        out: dict[str, Any] = {"prefilter": {}, "nodes": {}}
        prefilter: dict[str, Any] = out["prefilter"]
        deferred = self._resize_deferred(pod)
        rejected = False
        for plugin in self.filter_plugins:
            try:
                status = SKIP if deferred and plugin.skips_deferred_resize else plugin.pre_filter(state, pod, nodes)
            except Exception as err:
                status = Status(Code.ERROR, f'running PreFilter plugin "{plugin.name}": {err}')
            code = Code.SUCCESS if status is None else status.code
            if status is not None and code == Code.ERROR and not status.message.startswith("running PreFilter"):
                status = Status(Code.ERROR, f'running PreFilter plugin "{plugin.name}": {status.message}')
            prefilter[plugin.name] = {"code": code.label, "reasons": list(status.reasons) if status else []}
            if code == Code.SUCCESS and plugin.name in state.prefilter_nodes:
                rejection = _narrowed_to_nothing(state)
                if rejection is not None:  # every plugin that narrowed the cycle reports the rejection
                    for name in state.prefilter_nodes:
                        prefilter[name] = {"code": rejection.code.label, "reasons": list(rejection.reasons)}
                    code = rejection.code
            if code == Code.SKIP:
                state.skip_filter.add(plugin.name)
            elif code == Code.UNSCHEDULABLE:
                rejected = True  # the other PreFilters still run, as upstream's
            elif code != Code.SUCCESS:
                rejected = True
                break
        if rejected:
            # Rejected on every node before any Filter ran: list the nodes, none feasible.
            for node in nodes:
                out["nodes"][node.name] = {"filters": {}, "feasible": False, "scores": {}, "total": 0}
            return out
        # Plugin-major, as filter(): each plugin's verdicts over every node at once.
        batch = NodeBatch.of(list(nodes), state.snapshot.columns)
        sweeps: dict[str, Verdicts] = {}
        for plugin in self.filter_plugins:
            if plugin.name in state.skip_filter:
                continue
            try:
                sweeps[plugin.name] = plugin.filter_batch(state, pod, batch)
            except Exception as err:
                sweeps[plugin.name] = Verdicts(np.ones(len(batch), np.int64), (Status(Code.ERROR, str(err)),))
        feasible: list[NodeInfo] = []
        for i, node in enumerate(nodes):
            verdicts: dict[str, Any] = {}
            ok = True
            for plugin in self.filter_plugins:
                if plugin.name in state.skip_filter:
                    verdicts[plugin.name] = {"code": "Skip", "reasons": []}
                    continue
                status = sweeps[plugin.name].status(i)
                code = Code.SUCCESS if status is None else status.code
                if status is not None and code == Code.ERROR:
                    status = filter_error(plugin.name, status.message)
                verdicts[plugin.name] = {"code": code.label, "reasons": list(status.reasons) if status else []}
                ok = ok and code == Code.SUCCESS
            out["nodes"][node.name] = {"filters": verdicts, "feasible": ok, "scores": {}, "total": 0}
            if ok:
                feasible.append(node)
        if feasible:
            details: dict[str, dict[str, PluginScore]] = {}
            try:
                totals = self.score(state, pod, feasible, details)
            except PluginScoreError as err:
                # Upstream's cycle ends with this Error status; the filter verdicts stand (the oracle's shape).
                out["error"] = str(err)
                return out
            for i, node in enumerate(feasible):
                entry = out["nodes"][node.name]
                entry["total"] = totals[i]
                for score_plugin, _weight in self.score_plugins:  # in profile order
                    plugin_name = score_plugin.name
                    ps = details[plugin_name][node.name]
                    scored: dict[str, Any] = {"raw": ps.raw, "normalized": ps.normalized, "weighted": ps.weighted}
                    if ps.skipped:
                        scored["skipped"] = True
                    entry["scores"][plugin_name] = scored
        return out


class _FilterStop(Exception):
    """Ends a filter sweep with an Error status (raised inside the equivalence cache's computation)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def filter_error(plugin: str, message: str) -> Status:
    """An Error from a Filter plugin, worded as upstream's RunFilterPlugins wraps it."""
    return Status(Code.ERROR, f'running "{plugin}" filter plugin: {message}', plugin=plugin)


class PluginScoreError(RuntimeError):
    """A score plugin failed or returned a score out of range."""

