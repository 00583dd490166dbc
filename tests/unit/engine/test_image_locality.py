"""ImageLocality against upstream's test table (kubernetes v1.36.3
pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go), ported as data."""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_node, make_pod
from plugin_harness import scores

from extender.cluster.cache import ClusterCache
from extender.cluster.records import PodRecord
from extender.engine.framework import CycleState
from extender.engine.plugins.image_locality import ImageLocality, calculate_priority, normalized_image_name
from extender.kube.release import release

MB = 1024 * 1024

NODE_40_300_2000 = [(["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
                    (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
                    (["gcr.io/2000:latest"], 2000 * MB)]
NODE_250_10 = [(["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)]
NODE_600_40_900 = [(["gcr.io/600:latest"], 600 * MB), (["gcr.io/40:latest"], 40 * MB),
                   (["gcr.io/900:latest"], 900 * MB)]
NODE_300_600_900 = [(["gcr.io/300:latest"], 300 * MB), (["gcr.io/600:latest"], 600 * MB),
                    (["gcr.io/900:latest"], 900 * MB)]
NODE_4000_30 = [(["gcr.io/4000:latest"], 4000 * MB), (["gcr.io/30:latest"], 30 * MB)]
NODE_20_30_40 = [(["gcr.io/20:latest"], 20 * MB), (["gcr.io/30:latest"], 30 * MB), (["gcr.io/40:latest"], 40 * MB)]
NO_IMAGES: list[tuple[list[str], int]] = []


def image_pod(containers: list[str], init: list[str] | None = None, image_volumes: list[str] | None = None
              ) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(containers)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]
    if image_volumes:
        spec["volumes"] = [{"name": f"v{i}", "image": {"reference": ref}} for i, ref in enumerate(image_volumes)]
    return make_pod("p", spec=spec)


CASES = [
    # (name, pod, node images in order, expected scores in node order)
    ("two images spread on two nodes, prefer the larger image one",
     image_pod(["gcr.io/40", "gcr.io/250"]), [NODE_40_300_2000, NODE_250_10], [0, 5]),
    ("two images on one node, prefer this node",
     image_pod(["gcr.io/40", "gcr.io/300"]), [NODE_40_300_2000, NODE_250_10], [7, 0]),
    ("if exceed limit, use limit",
     image_pod(["gcr.io/10", "gcr.io/4000"]), [NODE_4000_30, NODE_250_10], [100, 0]),
    ("if exceed limit, use limit (with node which has no images present)",
     image_pod(["gcr.io/10", "gcr.io/4000"]), [NODE_4000_30, NODE_250_10, NO_IMAGES], [66, 0, 0]),
    ("pod with multiple large images, node2 is preferred",
     image_pod(["gcr.io/300", "gcr.io/600", "gcr.io/900"]), [NODE_600_40_900, NODE_300_600_900, NO_IMAGES],
     [32, 36, 0]),
    ("pod with multiple small images",
     image_pod(["gcr.io/30", "gcr.io/40"]), [NODE_20_30_40, NODE_4000_30], [1, 0]),
    # v1.37 counts an image volume in the threshold (v1.36: 12, see test_v1_36_leaves_image_volumes_out).
    ("pod with ImageVolume",
     image_pod(["gcr.io/30"], image_volumes=["gcr.io/300"]), [NODE_300_600_900, NODE_4000_30], [6, 0]),
    ("same images as ImageVolume pod but as regular container images",
     image_pod(["gcr.io/30", "gcr.io/300"]), [NODE_300_600_900, NODE_4000_30], [6, 0]),
    ("include InitContainers: two images spread on two nodes, prefer the larger image one",
     image_pod(["gcr.io/30"], init=["gcr.io/300"]), [NODE_40_300_2000, NODE_20_30_40], [6, 0]),
]


@pytest.mark.parametrize(("name", "pod", "node_images", "expected"), CASES, ids=[c[0] for c in CASES])
def test_image_locality_priority(name: str, pod: dict[str, Any], node_images: list[list[tuple[list[str], int]]],
                                 expected: list[int]) -> None:
    """TestImageLocalityPriority (no NormalizeScore: raw and normalised scores are equal)."""
    nodes = [make_node(f"node{i + 1}", images=images) for i, images in enumerate(node_images)]
    raw = scores("ImageLocality", pod, nodes, normalized=False)
    normalized = scores("ImageLocality", pod, nodes)
    want = {f"node{i + 1}": score for i, score in enumerate(expected)}
    assert raw == want
    assert normalized == want


def test_v1_36_leaves_image_volumes_out_of_the_threshold() -> None:
    """v1.36.3's TestImageLocalityPriority "pod with ImageVolume": 100 * (300M * 1/2 - 23M) / (1000M - 23M)."""
    nodes = [make_node(f"node{i + 1}", images=images) for i, images in enumerate([NODE_300_600_900, NODE_4000_30])]
    pod = image_pod(["gcr.io/30"], image_volumes=["gcr.io/300"])
    assert scores("ImageLocality", pod, nodes, release=release(36)) == {"node1": 12, "node2": 0}


@pytest.mark.parametrize(("image", "normalized"), [
    ("root", "root:latest"),  # add :latest postfix 1
    ("gcr.io:5000/root", "gcr.io:5000/root:latest"),  # add :latest postfix 2
    ("root:tag", "root:tag"),  # keep it as is 1
    ("root@sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2",
     "root@sha256:4813494d137e1631bba301d5acab6e7bb7aa74ce1185d456565ef51d737677b2"),  # keep it as is 2
    ("", ":latest"),
])
def test_normalized_image_name(image: str, normalized: str) -> None:
    """TestNormalizedImageName: no registry is added, only a missing tag."""
    assert normalized_image_name(image) == normalized


def test_calculate_priority_thresholds() -> None:
    """23MiB and 1000MiB per container bound the score; integer division truncates."""
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(23 * MB, 1) == 0
    assert calculate_priority(1000 * MB, 1) == 100
    assert calculate_priority(5000 * MB, 2) == 100
    assert calculate_priority(500 * MB, 1) == 100 * (500 - 23) // (1000 - 23)
    # No container (only image volumes): the max threshold is 0, below the min one; upstream's arithmetic gives
    # 0 for nothing present and 100 for anything above 23MiB.
    assert calculate_priority(0, 0) == 0
    assert calculate_priority(24 * MB, 0) == 100


def test_every_occurrence_counts_and_spread_scales() -> None:
    """Each container using an image adds it again; an image on every node counts fully, on half of them half."""
    nodes = [make_node("a", images=[(["img:1"], 600 * MB)]), make_node("b", images=[(["img:1"], 600 * MB)])]
    assert scores("ImageLocality", image_pod(["img:1", "img:1"]), nodes) == {"a": 59, "b": 59}
    nodes.append(make_node("c"))
    # 600MiB × 2/3 = 400MiB, twice: (800 - 23) / (2000 - 23)
    assert scores("ImageLocality", image_pod(["img:1", "img:1"]), nodes) == {"a": 39, "b": 39, "c": 0}


def test_node_sizes_are_per_node() -> None:
    """getNodeImageStates: a node's own size for an image name (the last entry when listed twice)."""
    nodes = [make_node("a", images=[(["img:1"], 100 * MB), (["img:1"], 900 * MB)]),
             make_node("b", images=[(["img:1"], 300 * MB)])]
    assert scores("ImageLocality", image_pod(["img:1"]), nodes, normalized=False) == {
        "a": calculate_priority(900 * MB, 1), "b": calculate_priority(300 * MB, 1)}


def test_total_counts_every_node_of_the_snapshot() -> None:
    """The spread divides by all nodes of the snapshot, not only the ones being scored."""
    cache = ClusterCache()
    cache.load([make_node("a", images=[(["img:1"], 900 * MB)]), make_node("b"), make_node("c"), make_node("d")])
    snapshot = cache.snapshot()
    plugin = ImageLocality()
    state = CycleState(snapshot)
    pod = PodRecord(image_pod(["img:1"]))
    node_a = snapshot.node_infos["a"]
    assert plugin.pre_score(state, pod, [node_a]) is None
    assert plugin.score(state, pod, node_a) == calculate_priority(900 * MB // 4, 1)
