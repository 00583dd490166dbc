"""Prometheus metrics of the service, in a registry of its own (one per app instance)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


# A quoted name inside a reason (`persistentvolumeclaim "data-0" not found`): request text, never a label. A
# quote only opens and closes at a word's edge: the apostrophes of "didn't match Pod's" quote nothing.
_QUOTED = re.compile(r'(?<!\w)(?:"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')(?!\w)')
MAX_REASON_LABEL_CHARS = 160
MAX_REASON_LABELS = 128
OTHER_REASON = "other"


class ReasonLabels:
    """Turns a filter rejection reason into a label value from a bounded set.

    Reasons are upstream's templates filled in with names from the request (claim names, resource names,
    selector operators): the names inside quotes become ``*``, a detail after ``: `` is dropped (the template
    is what precedes it), and past ``MAX_REASON_LABELS`` distinct values, or for a value longer than
    ``MAX_REASON_LABEL_CHARS``, the label is ``other``. The full reason is still in the answer and the log.
    """

    def __init__(self, limit: int = MAX_REASON_LABELS) -> None:
        self.limit = limit
        self._known: dict[str, str] = {}
        self._labels: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, reason: str) -> str:
        known = self._known.get(reason)
        if known is not None:
            return known
        label = _QUOTED.sub('"*"', reason).split(": ", 1)[0]
        if len(label) > MAX_REASON_LABEL_CHARS:
            label = OTHER_REASON
        with self._lock:
            if label not in self._labels:
                if len(self._labels) >= self.limit:
                    label = OTHER_REASON
                else:
                    self._labels.add(label)
            if len(self._known) < 4 * self.limit and len(reason) <= MAX_REASON_LABEL_CHARS:
                self._known[reason] = label  # memo of frequent exact reasons, bounded too
        return label


class _CacheCollector(Collector):
    """Reads object counts from the cache at scrape time."""

    def __init__(self, counts: Callable[[], dict[str, int]]) -> None:
        self._counts = counts

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("extender_cache_objects", "Objects held by the scheduler cache", labels=["kind"])
        for kind, count in sorted(self._counts().items()):
            family.add_metric([kind], count)
        yield family


class _ReadinessCollector(Collector):
    """Whether /readyz would answer 200 right now, read at scrape time (alerts on a replica that stays unready)."""

    def __init__(self, ready: Callable[[], bool]) -> None:
        self.ready = ready

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily("extender_ready", "1 when /readyz answers 200 (the cache is synced), else 0",
                                value=1.0 if self.ready() else 0.0)


class _ReleaseCollector(Collector):
    """``extender_kubernetes_version``: the kube-scheduler release the profiles follow, read at scrape time.

    One series at a time; every label value comes from the configuration or the apiserver's /version, never
    from a request (``supported`` is "false" while an unsupported cluster minor is followed with the nearest
    supported release's rules).
    """

    def __init__(self, describe: Callable[[], dict[str, Any]]) -> None:
        self.release_info = describe  # not ``describe``: the registry calls a collector's describe()

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily("extender_kubernetes_version",
                                   "1 for the kube-scheduler release whose rules the extender follows",
                                   labels=["kubernetes_version", "upstream", "setting", "source", "supported"])
        info = self.release_info()
        family.add_metric([str(info.get("version")), str(info.get("upstream")), str(info.get("setting")),
                           str(info.get("source")), "false" if info.get("warning") else "true"], 1.0)
        yield family


class Metrics:
    """Every metric the service exports."""

    def __init__(self, cache_counts: Callable[[], dict[str, int]] | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter("extender_requests", "Extender requests by verb, profile and HTTP code",
                                ["verb", "profile", "code"], registry=r)
        self.latency = Histogram("extender_request_duration_seconds", "Time to answer a verb",
                                 ["verb", "profile"], buckets=LATENCY_BUCKETS, registry=r)
        self.plugin_latency = Histogram("extender_plugin_duration_seconds",
                                        "Time spent in one plugin's extension point for one request",
                                        ["plugin", "extension_point"], buckets=LATENCY_BUCKETS, registry=r)
        self.filter_rejections = Counter("extender_filter_rejections", "Nodes rejected by filter, by reason",
                                         ["profile", "reason"], registry=r)
        self.prioritize_failures = Counter(
            "extender_prioritize_failures",
            "Prioritize calls answered with an error (kube-scheduler drops these silently)", ["profile"], registry=r)
        # Per score value rather than a histogram: a prioritize answer scores thousands of nodes, and one
        # increment per distinct value (at most 11) costs far less than one observation per node.
        self.prioritize_scores = Counter("extender_prioritize_answers", "Prioritize answers per 0..10 score value",
                                         ["profile", "score"], registry=r)
        self.reason_label = ReasonLabels()
        self.binds = Counter("extender_binds", "Bind outcomes", ["outcome"], registry=r)
        self.rejected_requests = Counter("extender_rejected_requests",
                                         "Requests refused before reaching the engine", ["reason"], registry=r)
        self.watch_restarts = Counter("extender_watch_restarts", "Watches that ended abnormally, by kind and reason",
                                      ["kind", "reason"], registry=r)
        self.watch_events = Counter("extender_watch_events", "Watch events applied to the cache, by kind and type",
                                    ["kind", "type"], registry=r)
        self.multicluster_requests = Counter("extender_multicluster_schedules", "Multi-cluster placements by outcome",
                                             ["outcome"], registry=r)
        self.multicluster_latency = Histogram("extender_multicluster_schedule_duration_seconds",
                                              "Time to answer a multi-cluster placement", buckets=LATENCY_BUCKETS,
                                              registry=r)
        # Labelled children of the per-request metrics, looked up once per (verb, known profile, code).
        self._answered: dict[tuple[str, str, int], tuple[Any, Any]] = {}
        self._scores: dict[tuple[str, int], Any] = {}  # (profile, score) -> prioritize_scores child
        if cache_counts is not None:
            r.register(_CacheCollector(cache_counts))
        self._readiness: _ReadinessCollector | None = None
        self._release: _ReleaseCollector | None = None

    def track_release(self, describe: Callable[[], dict[str, Any]]) -> None:
        """Export ``extender_kubernetes_version`` from this description of the followed release (a later call
        replaces it)."""
        if self._release is None:
            self._release = _ReleaseCollector(describe)
            self.registry.register(self._release)
        else:
            self._release.release_info = describe

    def track_readiness(self, ready: Callable[[], bool]) -> None:
        """Export ``extender_ready`` from this check (a later call replaces the check)."""
        if self._readiness is None:
            self._readiness = _ReadinessCollector(ready)
            self.registry.register(self._readiness)
        else:
            self._readiness.ready = ready

    def answered(self, verb: str, profile: str, code: int, seconds: float) -> None:
        """Count one verb request and its duration (``profile`` is a configured profile's name)."""
        key = (verb, profile, code)
        children = self._answered.get(key)
        if children is None:
            children = self._answered[key] = (self.requests.labels(verb, profile, str(code)),
                                              self.latency.labels(verb, profile))
        children[0].inc()
        children[1].observe(seconds)

    def scores_answered(self, profile: str, per_score: list[int]) -> None:
        """Count one prioritize answer: ``per_score[s]`` hosts scored ``s``."""
        for score, count in enumerate(per_score):
            if count:
                key = (profile, score)
                child = self._scores.get(key)
                if child is None:
                    child = self._scores[key] = self.prioritize_scores.labels(profile, str(score))
                child.inc(count)

    def watch_restarted(self, kind: str, reason: str) -> None:
        """ReflectorObserver: a watch restarted."""
        self.watch_restarts.labels(kind, reason).inc()

    def event_applied(self, kind: str, event_type: str) -> None:
        """ReflectorObserver: an event reached the cache."""
        self.watch_events.labels(kind, event_type).inc()

    def plugin_timer(self, plugin: str, point: str, seconds: float) -> None:
        """Record one plugin extension point's time (the runtime calls this)."""
        self.plugin_latency.labels(plugin, point).observe(seconds)
