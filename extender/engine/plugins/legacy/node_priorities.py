"""The v1.12 priorities that read one node at a time, on the 0..10 scale: NodePreferAvoidPodsPriority,
NodeAffinityPriority, TaintTolerationPriority, ImageLocalityPriority, NodeLabelPriority, EqualPriority.

Upstream: k8s.io/kubernetes v1.12.10 pkg/scheduler/algorithm/priorities/ (node_prefer_avoid_pods.go,
node_affinity.go, taint_toleration.go, image_locality.go, node_label.go, reduce.go) and
pkg/scheduler/core/generic_scheduler.go (EqualPriorityMap).

- NodePreferAvoidPods: 0 when the pod's controller (ownerReference with ``controller: true``) is a
  ReplicationController or ReplicaSet whose Kind and UID the node's annotation
  ``scheduler.alpha.kubernetes.io/preferAvoidPods`` lists; 10 otherwise, including when the annotation is
  not valid JSON for v1.AvoidPods. Weight 10000 in the DefaultProvider, so it outweighs everything else.
- NodeAffinity: the sum of the weights of the preferred terms whose ``matchExpressions`` the node's labels
  satisfy (v1.12 ignored ``matchFields`` here, and a term without expressions matches nothing; terms of
  weight 0 are skipped before being parsed; an invalid term fails the priority), normalised with
  ``NormalizeReduce(10, false)``: ``10 * score / max`` (all 0 when the max is 0).
- TaintToleration: the number of PreferNoSchedule taints not tolerated by the pod's tolerations with an
  empty or PreferNoSchedule effect, normalised with ``NormalizeReduce(10, true)``.
- ImageLocality: per regular container whose image (":latest" added when untagged) is on the node,
  ``int64(float64(size) * numNodesWithImage / totalNodes)``; the sum clamped to [23Mi, 1000Mi] maps to
  ``10 * (sum - 23Mi) / (1000Mi - 23Mi)``. ``totalNodes`` counts every node of the cluster, not only the
  candidates. The size is the node's own for that image name (v1.12's cache kept the size reported by the
  first node it saw with the image, which depends on informer order).
- NodeLabelPriority (args ``label``, ``presence``): 10 when the label's presence on the node is as wanted.
- EqualPriority: 1 for every node (v1.12 also used it when a profile had no priority at all).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import NodeRecord, PodRecord
from extender.engine.framework import CycleState, ScorePlugin, Status, default_normalize
from extender.engine.plugins.legacy.common import MAX_PRIORITY, as_mapping, error, label_arg, legacy_pod, node_of
from extender.engine.profile import ProfileError
from extender.engine.registry import register
from extender.kube.selectors import NodeSelector, SelectorError, compile_node_selector
from extender.kube.taints import EFFECT_PREFER_NO_SCHEDULE, Toleration, tolerations_tolerate_taint

PREFER_AVOID_PODS_ANNOTATION: Final = "scheduler.alpha.kubernetes.io/preferAvoidPods"
_AVOID_MEMO: Final = "legacy/NodePreferAvoidPods"
_IMAGES_MEMO: Final = "legacy/ImageLocality"
_NODE_AFFINITY_KEY: Final = "legacy/NodeAffinityPriority"
_TAINT_KEY: Final = "legacy/TaintTolerationPriority"
_IMAGE_KEY: Final = "legacy/ImageLocalityPriority"

_MB: Final = 1024 * 1024
MIN_IMAGE_THRESHOLD: Final = 23 * _MB
MAX_IMAGE_THRESHOLD: Final = 1000 * _MB


def _go_json_field(obj: Mapping[str, Any], name: str) -> Any:
    """A JSON object's field as encoding/json finds it: the exact key, else a case-insensitive match."""
    if name in obj:
        return obj[name]
    folded = name.casefold()
    for key, val in obj.items():
        if isinstance(key, str) and key.casefold() == folded:
            return val
    return None


def _avoided_controllers(record: NodeRecord) -> frozenset[tuple[str, str]] | None:
    """(kind, uid) of the controllers the node's preferAvoidPods annotation lists; None when it cannot be
    decoded (v1helper.GetAvoidPodsFromNodeAnnotations returns an error, and the priority then gives 10)."""
    if _AVOID_MEMO in record.memo:
        cached: frozenset[tuple[str, str]] | None = record.memo[_AVOID_MEMO]
        return cached
    annotations = as_mapping(as_mapping(record.raw.get("metadata")).get("annotations"))
    raw = annotations.get(PREFER_AVOID_PODS_ANNOTATION)
    result: frozenset[tuple[str, str]] | None = frozenset()
    if isinstance(raw, str) and raw:
        try:
            result = _decode_avoid_pods(json.loads(raw))
        except ValueError:
            result = None
    record.memo[_AVOID_MEMO] = result
    return result


def _decode_avoid_pods(doc: Any) -> frozenset[tuple[str, str]]:
    """Decode a v1.AvoidPods document; any type mismatch is an error, as json.Unmarshal reports."""

    def obj(value: Any) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError("expected an object")
        return value

    def text(value: Any) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            raise ValueError("expected a string")
        return value

    entries = _go_json_field(obj(doc), "preferAvoidPods")
    if entries is None:
        return frozenset()
    if not isinstance(entries, list):
        raise ValueError("preferAvoidPods: expected a list")
    found: set[tuple[str, str]] = set()
    for entry in entries:
        signature = obj(_go_json_field(obj(entry), "podSignature"))
        controller = obj(_go_json_field(signature, "podController"))
        found.add((text(_go_json_field(controller, "kind")), text(_go_json_field(controller, "uid"))))
        # Type errors elsewhere in the entry (reason, message, evictionTime...) also fail the decode.
        for key in ("reason", "message"):
            text(_go_json_field(obj(entry), key))
    return frozenset(found)


@register
class NodePreferAvoidPodsPriority(ScorePlugin):
    """0 on nodes that ask to avoid the pod's ReplicationController or ReplicaSet, 10 elsewhere."""

    name = "NodePreferAvoidPodsPriority"
    max_score = MAX_PRIORITY

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        ref = legacy_pod(pod).controller_ref
        if ref is None or ref[0] not in ("ReplicationController", "ReplicaSet"):
            return MAX_PRIORITY
        avoided = _avoided_controllers(node_of(node))
        if avoided is not None and ref in avoided:
            return 0
        return MAX_PRIORITY


@register
class NodeAffinityPriority(ScorePlugin):
    """Preferred node affinity weights, scaled to 0..10 by the highest."""

    name = "NodeAffinityPriority"
    max_score = MAX_PRIORITY

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        affinity = as_mapping(as_mapping(pod.spec.get("affinity")).get("nodeAffinity"))
        preferred = affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
        terms: list[tuple[int, NodeSelector]] = []
        for i, term in enumerate(preferred if isinstance(preferred, list) else []):
            term = as_mapping(term)
            weight = term.get("weight") or 0
            if not isinstance(weight, int) or weight == 0:
                continue
            expressions = as_mapping(term.get("preference")).get("matchExpressions")
            try:
                # NodeSelectorRequirementsAsSelector: the expressions only; none at all selects nothing.
                selector = compile_node_selector([{"matchExpressions": expressions}])
            except SelectorError as err:
                return error(f"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]: "
                             f"{err}")
            if selector.errors:
                return error("; ".join(selector.errors))
            terms.append((weight, selector))
        state.data[_NODE_AFFINITY_KEY] = terms
        return None

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        terms: list[tuple[int, NodeSelector]] = state.data[_NODE_AFFINITY_KEY]
        if not terms:
            return 0
        labels = node_of(node).labels
        return sum(weight for weight, selector in terms if selector.matches(labels, ""))

    def normalize(self, state: CycleState, pod: PodRecord, scores: list[int]) -> None:
        default_normalize(scores, False, MAX_PRIORITY)


@register
class TaintTolerationPriority(ScorePlugin):
    """Intolerable PreferNoSchedule taints, fewest scoring 10."""

    name = "TaintTolerationPriority"
    max_score = MAX_PRIORITY

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        state.data[_TAINT_KEY] = tuple(t for t in pod.tolerations
                                       if not t.effect or t.effect == EFFECT_PREFER_NO_SCHEDULE)
        return None

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        tolerations: tuple[Toleration, ...] = state.data[_TAINT_KEY]
        return sum(1 for taint in node_of(node).taints
                   if taint.effect == EFFECT_PREFER_NO_SCHEDULE
                   and not tolerations_tolerate_taint(tolerations, taint))

    def normalize(self, state: CycleState, pod: PodRecord, scores: list[int]) -> None:
        default_normalize(scores, True, MAX_PRIORITY)


def normalized_image_name(name: str) -> str:
    """normalizedImageName: add ":latest" when there is no tag after the last "/"."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def _node_image_sizes(record: NodeRecord) -> dict[str, int]:
    """image name -> size on this node (the first entry naming it, as addNodeImageStates keeps)."""
    sizes: dict[str, int] | None = record.memo.get(_IMAGES_MEMO)
    if sizes is None:
        sizes = {}
        for names, size in record.images:
            for image in names:
                sizes.setdefault(image, size)
        record.memo[_IMAGES_MEMO] = sizes
    return sizes


def image_priority(sum_scores: int) -> int:
    """calculatePriority: clamp to [23Mi, 1000Mi] and scale to 0..10."""
    sum_scores = min(max(sum_scores, MIN_IMAGE_THRESHOLD), MAX_IMAGE_THRESHOLD)
    return MAX_PRIORITY * (sum_scores - MIN_IMAGE_THRESHOLD) // (MAX_IMAGE_THRESHOLD - MIN_IMAGE_THRESHOLD)


@register
class ImageLocalityPriority(ScorePlugin):
    """Favours nodes that already have the pod's images, scaled by how widely each image is spread."""

    name = "ImageLocalityPriority"
    max_score = MAX_PRIORITY

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        images = tuple(normalized_image_name(image) for image in legacy_pod(pod).images)
        state.data[_IMAGE_KEY] = (images, state.snapshot.image_node_counts(), len(state.snapshot.node_list))
        return None

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        images, counts, total = state.data[_IMAGE_KEY]
        sizes = _node_image_sizes(node_of(node))
        total_score = 0
        for image in images:
            size = sizes.get(image)
            if size is not None:
                spread = float(counts.get(image, 0)) / float(total)
                total_score += int(float(size) * spread)
        return image_priority(total_score)


@register
class NodeLabelPriority(ScorePlugin):
    """10 when a label is present (``presence: true``) or absent (``presence: false``) on the node."""

    name = "NodeLabelPriority"
    max_score = MAX_PRIORITY

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        label = label_arg(self.args, self.name)
        presence = self.args.get("presence", False)
        if not isinstance(presence, bool):
            raise ProfileError(f"{self.name} args.presence: expected a boolean")
        self.label = label
        self.presence = presence

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        exists = self.label in node_of(node).labels
        return MAX_PRIORITY if exists == self.presence else 0


@register
class EqualPriority(ScorePlugin):
    """Every node scores 1."""

    name = "EqualPriority"
    max_score = MAX_PRIORITY

    def score(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> int:
        return 1
