"""Reading kubectl dumps: Lists, typed lists, multi-document YAML, JSON, directories, and bad input."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import yaml
from builders import make_node, make_pod

from extender.cli import DEMO_CLUSTER
from extender.cluster.dump import DumpError, load_cache, read_dump


def test_kubectl_list_yaml(tmp_path: Path) -> None:
    dump = {"apiVersion": "v1", "kind": "List",
            "items": [make_node("n1"), make_pod("p", node="n1"), {"kind": "Deployment", "metadata": {"name": "d"}}]}
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(dump))
    contents = read_dump(path)
    assert [o["kind"] for o in contents.objects] == ["Node", "Pod"]
    assert contents.skipped == {"Deployment": 1}


def test_typed_list_items_without_kind_and_json(tmp_path: Path) -> None:
    node = make_node("n1")
    del node["kind"]
    path = tmp_path / "nodes.json"
    path.write_bytes(orjson.dumps({"kind": "NodeList", "apiVersion": "v1", "items": [node]}))
    cache, _ = load_cache(path)
    assert cache.node_names() == ["n1"]


def test_multi_document_yaml_and_directory(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(yaml.safe_dump_all([make_node("n1"), make_node("n2")]))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.yml").write_text(yaml.safe_dump(make_pod("p", node="n2")))
    (tmp_path / "notes.txt").write_text("ignored")
    cache, _ = load_cache(tmp_path)
    assert sorted(cache.node_names()) == ["n1", "n2"]
    assert cache.counts()["assigned_pods"] == 1


@pytest.mark.parametrize(("content", "message"), [
    ("kind: [", "invalid YAML"),
    ("{not json", "invalid JSON"),
    ("- 1\n- 2\n", "expected Kubernetes objects"),
    ("metadata: {name: x}\n", "without a kind"),
])
def test_bad_files_name_the_problem(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(DumpError, match=message):
        read_dump(path)


def test_bad_object_names_kind_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(make_node("n1", cpu="two")))
    with pytest.raises(DumpError, match=r"Node 'n1'.*allocatable"):
        load_cache(path)


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(DumpError, match="no such file"):
        read_dump(tmp_path / "nope.yaml")


def test_demo_cluster_is_worth_explaining() -> None:
    cache, contents = load_cache(DEMO_CLUSTER)
    snapshot = cache.snapshot()
    nodes = [info.node for info in snapshot.node_list if info.node is not None]
    assert len(nodes) >= 30
    assert len({n.labels["topology.kubernetes.io/zone"] for n in nodes}) == 3
    effects = {t.effect for n in nodes for t in n.taints}
    assert {"NoSchedule", "PreferNoSchedule"} <= effects
    assert any(n.unschedulable for n in nodes)
    assert all(n.images for n in nodes)
    assert len({(n.allocatable.milli_cpu, n.allocatable.memory) for n in nodes}) >= 3
    pods = [p for info in snapshot.node_list for p in info.pods]
    assert any(p.host_ports for p in pods)
    assert any(p.has_required_anti_affinity for p in pods)
    assert all(not p.requests.is_zero() for p in pods)
    assert not contents.skipped


def test_json_list_fast_path_matches_general_reading(tmp_path: Path) -> None:
    """A JSON List is read item by item (pods trimmed on the way); the cache ends up the same."""
    pod = make_pod("p", node="n1", requests=[{"cpu": "1"}])
    pod["metadata"]["managedFields"] = [{"manager": "x"}]
    objects = [make_node("n1"), pod, {"kind": "Deployment", "metadata": {"name": "d"}}]
    fast = tmp_path / "list.json"
    fast.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    slow = tmp_path / "list.yaml"
    slow.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    assert read_dump(fast).skipped == read_dump(slow).skipped == {"Deployment": 1}
    fast_cache, _ = load_cache(fast)
    slow_cache, _ = load_cache(slow)
    assert fast_cache.get_pod("uid-p").raw == slow_cache.get_pod("uid-p").raw  # type: ignore[union-attr]
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps({"kind": "List", "items": [{"metadata": {"name": "x"}}]}))
    with pytest.raises(DumpError, match=r"items\[0\] has no kind"):
        read_dump(bad)
    bad.write_bytes(orjson.dumps({"kind": "List", "items": [3]}))
    with pytest.raises(DumpError, match=r"items\[0\] is not an object"):
        read_dump(bad)


def test_disruption_budgets_and_priority_classes_are_read_for_preemption(tmp_path: Path) -> None:
    budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
              "metadata": {"name": "web", "namespace": "shop"},
              "spec": {"selector": {"matchLabels": {"app": "web"}}}, "status": {"disruptionsAllowed": 0}}
    klass = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"},
             "value": 1000}
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump_all([make_node("n1"), budget, klass]))
    cache, _ = load_cache(path)
    objects = cache.snapshot().objects
    assert list(objects["PodDisruptionBudget"]) == ["shop/web"]
    assert list(objects["PriorityClass"]) == ["urgent"]  # cluster-scoped: keyed by name
