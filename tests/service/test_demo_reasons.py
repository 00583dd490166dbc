"""Every filter reason upstream can give has an example pod on the demo cluster (examples/pods/reasons/).

Each example declares the plugin and reason it shows in the annotation example.extender.io/expect; explain
must report that reason, on some node or from PreFilter.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from extender.cli import DEMO_CLUSTER
from extender.cluster.dump import load_cache
from extender.cluster.snapshot import Snapshot
from extender.engine.explain import explain
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework

REASONS = Path(__file__).resolve().parents[2] / "examples" / "pods" / "reasons"
EXAMPLES = sorted(REASONS.glob("*.yaml"))


@pytest.fixture(scope="module")
def demo() -> Snapshot:
    cache, _ = load_cache(DEMO_CLUSTER)
    return cache.snapshot()


def test_every_filter_plugin_has_examples() -> None:
    plugins = {yaml.safe_load(p.read_text())["metadata"]["annotations"]["example.extender.io/expect"].split(":")[0]
               for p in EXAMPLES}
    assert set(build_profile(None).filters) <= plugins


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_pod_shows_its_reason(demo: Snapshot, path: Path) -> None:
    pod = yaml.safe_load(path.read_text())
    plugin, reason = pod["metadata"]["annotations"]["example.extender.io/expect"].split(": ", 1)
    result = explain(Framework(build_profile(None)), demo, pod)
    on_nodes = [n for n, e in result["nodes"].items() if reason in e["filters"].get(plugin, {}).get("reasons", [])]
    assert on_nodes or reason in result["prefilter"].get(plugin, {}).get("reasons", []), result["prefilter"]


DRA_EXAMPLES = sorted((REASONS.parent / "dra").glob("*.yaml"))


@pytest.mark.parametrize("path", DRA_EXAMPLES, ids=[p.stem for p in DRA_EXAMPLES])
def test_dra_example_pod_fits_where_it_says(demo: Snapshot, path: Path) -> None:
    """examples/pods/dra/: each pod fits exactly the nodes its annotation example.extender.io/fits lists."""
    pod = yaml.safe_load(path.read_text())
    expected = set(pod["metadata"]["annotations"]["example.extender.io/fits"].split(","))
    result = explain(Framework(build_profile(None)), demo, pod)
    assert {n for n, e in result["nodes"].items() if e["feasible"]} == expected


def test_prioritized_list_example_scores_the_first_alternative_highest(demo: Snapshot) -> None:
    pod = yaml.safe_load((REASONS.parent / "dra" / "first-available.yaml").read_text())
    result = explain(Framework(build_profile(None)), demo, pod)
    raw = {n: e["scores"]["DynamicResources"]["raw"] for n, e in result["nodes"].items() if e["feasible"]}
    assert raw == {"zone-b-06": 8, "zone-a-06": 7, "zone-c-06": 6}  # two H100s > one large GPU > any GPU


def test_gpu_jobs_simulation_runs_out_of_gpus() -> None:
    """examples/simulate/gpu-jobs.yaml: each placement takes a GPU; the demo's free ones fit six of eight jobs."""
    from extender.cluster.dump import read_dump_objects
    from extender.engine.simulate import Simulator

    cache, _ = load_cache(DEMO_CLUSTER)
    pods = read_dump_objects(REASONS.parents[1] / "simulate" / "gpu-jobs.yaml")
    result = Simulator(Framework(build_profile(None)), cache, seed=1).run(pods)
    placed = [p.node for p in result.placements]
    assert placed[:6] and all(n.endswith("-06") for n in placed[:6])
    assert placed[6:] == ["", ""]
    assert all("cannot allocate all claims" in p.message for p in result.placements[6:])
