"""The plan file: a valid plan reads as written; every mistake is an error naming the file and the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from plan_helpers import WEB, write

from extender.plan.planfile import NodeSelector, PlanError, load_plan, parse_plan

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}


def _plan(**doc: Any) -> dict[str, Any]:
    return {"workload": [{"object": POD}], **doc}


def test_a_plan_reads_as_written(tmp_path: Path) -> None:
    path = write(tmp_path, "plan.yaml", {
        "seed": 7, "kubernetesVersion": "v1.36.3", "percentageOfNodesToScore": 30, "zoneLabel": "zone",
        "workload": [{"file": str(WEB), "replicas": 3}],
        "pools": {"web": {"like": "zone-a-07", "labels": {"tier": "web"}, "pricePerHour": 0.2}},
        "prices": [{"matchLabels": {"size": "s"}, "perHour": 1}, {"names": ["a", "b"], "perHour": 2}],
        "variants": [{"name": "base"}, {"name": "gone", "zonesLost": ["z1"], "cordon": ["n1"],
                                        "weights": {"TaintToleration": 5}}],
        "search": {"pool": "web", "max": 30}})
    plan = load_plan(path)
    assert (plan.seed, plan.kubernetes_version, plan.percentage_of_nodes_to_score, plan.zone_label) == \
        (7, "1.36", 30, "zone")
    assert plan.workload[0].replicas == 3 and plan.workload[0].objects[0]["kind"] == "Deployment"
    assert plan.pools["web"].labels == (("tier", "web"),) and plan.pools["web"].name_prefix == "web-"
    assert plan.prices[1].selector == NodeSelector(names=("a", "b"))
    gone = plan.variants[1]
    assert gone.zones_lost == ("z1",) and gone.cordon == NodeSelector(names=("n1",))
    assert gone.weights == (("TaintToleration", 5),)
    assert plan.search is not None and (plan.search.pool, plan.search.max, plan.search.points_per_round) == \
        ("web", 30, 4)


def test_relative_paths_are_read_from_the_plan_files_folder(tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(WEB.read_text())
    plan = load_plan(write(tmp_path, "plan.yaml", {"workload": [{"file": "w.yaml"}]}))
    assert plan.workload[0].source == str(tmp_path / "w.yaml")
    assert [v.name for v in plan.variants] == ["baseline"]  # no variants: the cluster as it is


def test_node_counts_sweep_into_one_variant_each() -> None:
    plan = parse_plan(_plan(pools={"a": {"like": "x"}, "b": {"like": "y"}},
                            variants=[{"name": "grow", "addNodes": {"a": [0, 5], "b": {"from": 1, "to": 5, "step": 2}}},
                                      {"name": "one", "addNodes": {"a": 2}}]))
    assert [v.name for v in plan.variants] == [
        "grow (a +0, b +1)", "grow (a +0, b +3)", "grow (a +0, b +5)",
        "grow (a +5, b +1)", "grow (a +5, b +3)", "grow (a +5, b +5)", "one"]
    assert plan.variants[4].add_nodes == (("a", 5), ("b", 3))


@pytest.mark.parametrize(("doc", "message"), [
    ({"workload": []}, "workload: nothing to place"),
    (_plan(colour="blue"), "plan: unknown key(s) ['colour']"),
    (_plan(seed=-1), "seed: expected an integer 0..9223372036854775807, got -1"),
    (_plan(seed=True), "seed: expected an integer"),
    (_plan(kubernetesVersion="1.29"), "kubernetesVersion: expected one of 1.36, 1.37, auto, got '1.29'"),
    (_plan(percentageOfNodesToScore=101), "percentageOfNodesToScore: expected an integer 0..100, got 101"),
    ({"workload": [{"file": "missing.yaml"}]}, "workload[0].file: no such file or directory"),
    ({"workload": [{"object": POD, "file": "x"}]}, "workload[0]: give either file: PATH or object: {...}"),
    (_plan(pools={"Web": {"like": "n"}}), "pools.Web: a pool's name is a DNS label"),
    (_plan(pools={"web": {}}), "pools.web: give either like:"),
    (_plan(pools={"web": {"like": "n", "pricePerHour": "cheap"}}), "pools.web.pricePerHour: expected a non-negative"),
    (_plan(pools={"web": {"like": "n", "labels": {"gpu": True}}}), "pools.web.labels.gpu: labels are strings"),
    (_plan(variants=[{"addNodes": {"gpu": 2}}]), "variants[0].addNodes.gpu: no pool named 'gpu'"),
    (_plan(pools={"a": {"like": "n"}}, variants=[{"addNodes": {"a": "many"}}]), "variants[0].addNodes.a: expected"),
    (_plan(variants=[{"cordon": []}]), None),  # an empty cordon list is no cordon
    (_plan(variants=[{"cordon": {"matchLabels": {}}}]), "variants[0].cordon: expected a list of node names"),
    (_plan(variants=[{"name": "x"}, {"name": "x"}]), "variants: two variants are named 'x'"),
    (_plan(variants=[{"zonesLost": "zone-b"}]), "variants[0].zonesLost: expected a list, got str"),
    (_plan(variants=[{"weights": {"TaintToleration": 2**31}}]), "variants[0].weights.TaintToleration: expected"),
    (_plan(search={"pool": "web"}), "search.pool: no pool named 'web'"),
    (_plan(pools={"w": {"like": "n"}}, search={"pool": "w", "variants": ["nope"]}),
     "search.variants: no variant named 'nope'"),
    (_plan(kind="Deployment"), "kind: expected Plan"),
])
def test_mistakes_name_the_key(doc: dict[str, Any], message: str | None) -> None:
    if message is None:
        parse_plan(doc, "plan.yaml")
        return
    with pytest.raises(PlanError) as caught:
        parse_plan(doc, "plan.yaml")
    assert str(caught.value).startswith("plan.yaml: ") and message in str(caught.value)


def test_a_file_that_is_not_one_yaml_document_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plan.yaml"
    path.write_text("a: 1\n---\nb: 2\n")
    with pytest.raises(PlanError, match="expected one YAML document, found 2"):
        load_plan(path)
    path.write_text("a: [1\n")
    with pytest.raises(PlanError, match="invalid YAML"):
        load_plan(path)
    with pytest.raises(PlanError, match="No such file"):
        load_plan(tmp_path / "none.yaml")
