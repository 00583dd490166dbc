"""ImageLocality: favours nodes that already hold the pod's container images (upstream plugins/imagelocality).

Each image the pod uses (init containers, containers and image volumes, every occurrence counted) that the
node holds contributes its size scaled by the fraction of all nodes holding it, so that an image present
everywhere does not pull every pod to the same nodes. The sum is clamped to [23MiB, 1000MiB × images] and
mapped linearly onto 0..100. There is no normalisation step. "Images" is the number of init containers and
containers in v1.36; v1.37 (imagelocality/image_locality.go sumImageScores) counts image volumes too.

Image sizes are the node's own (``status.images``; when a name is listed twice on one node the last entry
wins), as upstream's snapshot builder (backend/cache/snapshot.go getNodeImageStates) reads them. The node
counts come from :meth:`Snapshot.image_node_counts` and the total is every node of the snapshot, not only the
feasible ones (image_locality.go Score lists all NodeInfos).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from extender.cluster.columns import Int64Array, NodeBatch, trunc_div
from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.engine.framework import MAX_NODE_SCORE, CycleState, ScorePlugin, Status
from extender.engine.registry import register

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB

_STATE_KEY = "PreScoreImageLocality"


def normalized_image_name(name: str) -> str:
    """normalizedImageName: add ":latest" when the reference has no tag after its last "/"."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def _pod_images(pod: PodRecord, count_volumes: bool) -> tuple[tuple[str, ...], int]:
    """The normalised image names the pod uses, in upstream's order, and how many images the threshold counts:
    its containers, and (``count_volumes``, v1.37) its image volumes."""
    spec = pod.spec
    init = [c for c in spec.get("initContainers") or [] if isinstance(c, Mapping)]
    containers = [c for c in spec.get("containers") or [] if isinstance(c, Mapping)]
    images = [normalized_image_name(str(c.get("image") or "")) for c in init]
    images += [normalized_image_name(str(c.get("image") or "")) for c in containers]
    volumes = 0
    for volume in spec.get("volumes") or []:
        image = volume.get("image") if isinstance(volume, Mapping) else None
        if image is not None:
            images.append(normalized_image_name(str((image or {}).get("reference") or "")))
            volumes += 1
    return tuple(images), len(init) + len(containers) + (volumes if count_volumes else 0)


def calculate_priority(sum_scores: Int64Array, num_containers: int) -> Int64Array:
    """calculatePriority: clamp the summed image scores and map them onto 0..MAX_NODE_SCORE."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    clamped = np.where(sum_scores < MIN_THRESHOLD, MIN_THRESHOLD,
                       np.where(sum_scores > max_threshold, max_threshold, sum_scores))
    return trunc_div(MAX_NODE_SCORE * (clamped - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


@register
class ImageLocality(ScorePlugin):
    """Score nodes by the (spread-scaled) size of the pod's images they already hold."""

    name = "ImageLocality"
    columnar = True

    def pre_score(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        # Upstream has no PreScore: this only parses the pod once for all nodes (it never skips).
        images, num_containers = _pod_images(pod, count_volumes=self.release.at_least(37))
        counts = state.snapshot.image_node_counts()
        state.data[_STATE_KEY] = (images, num_containers, counts, len(state.snapshot.node_list))
        return None

    def score_batch(self, state: CycleState, pod: PodRecord, batch: NodeBatch) -> Int64Array:
        pre: tuple[tuple[str, ...], int, Mapping[str, int], int] | None = state.data.get(_STATE_KEY)
        if pre is None:
            self.pre_score(state, pod, batch.nodes)
            pre = state.data[_STATE_KEY]
        images, num_containers, counts, total = pre
        sum_scores = np.zeros(len(batch), np.int64)
        for image in images:
            # scaledImageScore: int64(float64(size) * (float64(numNodes) / float64(totalNumNodes)))
            spread = counts.get(image, 0) / total if total else 0.0
            sum_scores += (batch.image_sizes(image).astype(np.float64) * spread).astype(np.int64)
        return calculate_priority(sum_scores, num_containers)
