"""The v1.12 spreading priorities, on the 0..10 scale: SelectorSpreadPriority, ServiceSpreadingPriority
and ServiceAntiAffinity.

Upstream: k8s.io/kubernetes v1.12.10 pkg/scheduler/algorithm/priorities/selector_spreading.go and
metadata.go (``getSelectors``, ``getFirstServiceSelector``), with the client-go listers of that release
(``GetPodServices``, ``GetPodControllers``, ``GetPodReplicaSets``, ``GetPodStatefulSets``).

SelectorSpreadPriority:

- The pod's selectors: every Service of its namespace whose selector matches it (a Service without a
  selector matches nothing), every ReplicationController, ReplicaSet and StatefulSet of its namespace whose
  non-empty selector matches it (none at all for a pod without labels; an invalid ReplicaSet or
  StatefulSet selector makes that whole lister fail, so none of that kind counts).
- Map: per candidate node, the pods of the same namespace, not being deleted, matching ANY selector
  (0 for every node when the pod has no selector).
- Reduce, in float64: ``f = 10 * (maxNode - count) / maxNode`` (10 when maxNode is 0); when any candidate
  node has a zone (``failure-domain.beta.kubernetes.io`` region/zone labels), a zoned node's score becomes
  ``f * (1 - 2/3) + 2/3 * 10 * (maxZone - zoneCount) / maxZone`` (zone part 10 when maxZone is 0), where
  zone counts sum the candidate nodes' counts. The result is truncated to an integer.

ServiceSpreadingPriority is the same over Services only (kept by v1.12 for 1.0 compatibility).

ServiceAntiAffinity (args ``label``): counts, per candidate node, the pods matching the pod's FIRST
Service (Services in name order: v1.12 took the lister's first, in map order); then every node carrying
the label scores ``10 * (total - countOnNodesWithTheSameLabelValue) / total`` (10 when the total is 0)
and a node without the label scores 0.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Final

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.cluster.snapshot import Snapshot
from extender.engine.framework import CycleState, ScorePlugin, Status
from extender.engine.plugins.legacy.common import (
    MAX_PRIORITY,
    as_mapping,
    label_arg,
    node_of,
    objects_in_namespace,
    zone_key,
)
from extender.engine.registry import register
from extender.kube.selectors import (
    EVERYTHING,
    LabelSelector,
    SelectorError,
    compile_label_selector,
    label_key_errors,
    label_value_errors,
)

Labels = Mapping[str, str]
Matcher = Callable[[Labels], bool]

ZONE_WEIGHTING: Final = 2.0 / 3.0
_SPREAD_KEY: Final = "legacy/SelectorSpreadPriority"
_ANTI_KEY: Final = "legacy/ServiceAntiAffinity"


def _set_matcher(selector: Mapping[str, Any]) -> Matcher:
    """labels.Set(m).AsSelectorPreValidated(): every pair must be present (empty matches everything)."""
    pairs = tuple((str(k), str(v)) for k, v in selector.items())
    return lambda labels: all(labels.get(k) == v for k, v in pairs)


def selector_from_set(selector: Mapping[str, Any]) -> LabelSelector:
    """labels.SelectorFromSet: every pair must be present, except that an invalid key or value makes the
    whole selector match everything (v1.12 returned an empty selector on the first invalid requirement)."""
    pairs = {str(k): str(v) for k, v in selector.items()}
    for key, val in pairs.items():
        if label_key_errors(key) or label_value_errors(val):
            return EVERYTHING
    # Validated above, so compiling cannot fail; the compiled form is fast and hashable.
    return compile_label_selector({"matchLabels": pairs}) if pairs else EVERYTHING


def _spec_selector(obj: Mapping[str, Any]) -> Any:
    return as_mapping(obj.get("spec")).get("selector")


def pod_services(snapshot: Snapshot, pod: PodRecord) -> list[Mapping[str, Any]]:
    """GetPodServices: Services of the pod's namespace whose (non-nil) selector matches the pod."""
    found = []
    for service in objects_in_namespace(snapshot, "Service", pod.namespace):
        selector = _spec_selector(service)
        if isinstance(selector, Mapping) and _set_matcher(selector)(pod.labels):
            found.append(service)
    return found


def pod_selectors(snapshot: Snapshot, pod: PodRecord, services_only: bool = False) -> list[LabelSelector]:
    """getSelectors: the selectors of the pod's Services, RCs, ReplicaSets and StatefulSets."""
    selectors = [selector_from_set(as_mapping(_spec_selector(s))) for s in pod_services(snapshot, pod)]
    if services_only or not pod.labels:
        # The controller listers return an error (hence nothing) for a pod without labels.
        return selectors
    for rc in objects_in_namespace(snapshot, "ReplicationController", pod.namespace):
        raw = as_mapping(_spec_selector(rc))
        if raw and _set_matcher(raw)(pod.labels):
            selectors.append(selector_from_set(raw))
    for kind in ("ReplicaSet", "StatefulSet"):
        matched: list[LabelSelector] = []
        try:
            for obj in objects_in_namespace(snapshot, kind, pod.namespace):
                raw_selector = _spec_selector(obj)
                compiled = compile_label_selector(raw_selector if isinstance(raw_selector, Mapping) else None)
                if not compiled.empty and compiled.matches(pod.labels):
                    matched.append(compiled)
        except SelectorError:
            continue  # "invalid selector": the lister fails, no object of this kind counts
        selectors.extend(matched)
    return selectors


# node name -> (NodeInfo generation, (namespace, selectors), count): pods of one controller are usually
# scheduled one after the other, and only the chosen node changes in between.
_counts: dict[str, tuple[int, Hashable, int]] = {}


def count_matching(namespace: str, node: NodeInfo, selectors: Sequence[LabelSelector]) -> int:
    """Pods on the node in the namespace, not being deleted, matching any of the selectors."""
    signature = (namespace, frozenset(selectors))
    cached = _counts.get(node.name)
    if cached is not None and cached[0] == node.generation and cached[1] == signature:
        return cached[2]
    checks = [selector.matches for selector in selectors]

    def matches_any(labels: Labels) -> bool:
        return any(check(labels) for check in checks)

    count = node.count_matching(namespace, matches_any, {})
    _counts[node.name] = (node.generation, signature, count)
    return count


@register
class SelectorSpreadPriority(ScorePlugin):
    """Spreads the pods of the same Services and controllers over nodes and zones."""

    name = "SelectorSpreadPriority"
    max_score = MAX_PRIORITY
    services_only = False

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        state.data[self._key] = (pod_selectors(state.snapshot, pod, self.services_only), list(nodes))
        return None

    @property
    def _key(self) -> str:
        return f"{_SPREAD_KEY}/{self.name}"

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        selectors: list[LabelSelector] = state.data[self._key][0]
        if not selectors:
            return 0
        return count_matching(pod.namespace, node, selectors)

    def normalize(self, state: CycleState, pod: PodRecord, scores: list[int]) -> None:
        nodes: list[NodeInfo] = state.data[self._key][1]
        zones = [zone_key(node_of(node).labels) for node in nodes]
        counts_by_zone: dict[str, int] = {}
        max_by_node = 0
        for score, zone in zip(scores, zones, strict=True):
            max_by_node = max(max_by_node, score)
            if zone:
                counts_by_zone[zone] = counts_by_zone.get(zone, 0) + score
        max_by_zone = max([0, *counts_by_zone.values()])
        have_zones = bool(counts_by_zone)
        top = float(MAX_PRIORITY)
        for i, (score, zone) in enumerate(zip(scores, zones, strict=True)):
            f_score = top
            if max_by_node > 0:
                f_score = top * (float(max_by_node - score) / float(max_by_node))
            if have_zones and zone:
                zone_score = top
                if max_by_zone > 0:
                    zone_score = top * (float(max_by_zone - counts_by_zone[zone]) / float(max_by_zone))
                f_score = (f_score * (1.0 - ZONE_WEIGHTING)) + (ZONE_WEIGHTING * zone_score)
            scores[i] = int(f_score)


@register
class ServiceSpreadingPriority(SelectorSpreadPriority):
    """SelectorSpreadPriority over Services only (v1.12 kept it for 1.0 compatibility)."""

    name = "ServiceSpreadingPriority"
    services_only = True


@register
class ServiceAntiAffinity(ScorePlugin):
    """Spreads the pods of the pod's first Service over the values of a node label."""

    name = "ServiceAntiAffinity"
    max_score = MAX_PRIORITY

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        label = label_arg(self.args, self.name)
        self.label = label

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        services = pod_services(state.snapshot, pod)
        first = selector_from_set(as_mapping(_spec_selector(services[0]))) if services else None
        state.data[_ANTI_KEY] = (first, list(nodes))
        return None

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        selector: LabelSelector | None = state.data[_ANTI_KEY][0]
        if selector is None:
            return 0
        return count_matching(pod.namespace, node, (selector,))

    def normalize(self, state: CycleState, pod: PodRecord, scores: list[int]) -> None:
        nodes: list[NodeInfo] = state.data[_ANTI_KEY][1]
        total = sum(scores)
        values: list[str | None] = []
        pod_counts: dict[str, int] = {}
        for score, node in zip(scores, nodes, strict=True):
            value = node_of(node).labels.get(self.label)
            values.append(value)
            if value is not None:
                pod_counts[value] = pod_counts.get(value, 0) + score
        top = float(MAX_PRIORITY)
        for i, value in enumerate(values):
            if value is None:
                scores[i] = 0
                continue
            f_score = top
            if total > 0:
                f_score = top * (float(total - pod_counts[value]) / float(total))
            scores[i] = int(f_score)
