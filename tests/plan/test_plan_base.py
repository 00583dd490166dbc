"""The base cluster: read once, shipped compactly, rebuilt by each worker into the same cache."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from builders import make_node, make_pod
from plan_helpers import DEMO, write

from extender.cluster.dump import DumpError
from extender.cluster.records import SlimPod
from extender.kube.release import release
from extender.plan.base import _RecordingCache, base_from_dump


def test_a_pickled_base_rebuilds_the_same_cache() -> None:
    base = base_from_dump(str(DEMO))
    again = pickle.loads(pickle.dumps(base))
    assert again.source == base.source and len(again.objects) == len(base.objects)
    assert all(type(o) is SlimPod for o in again.objects if o.get("kind") == "Pod")
    assert again.cache().counts() == base.cache().counts()
    assert [n.name for n in again.cache().snapshot().node_list] == [n.name for n in base.cache().snapshot().node_list]


def test_a_bad_object_is_reported_once_with_its_name(tmp_path: Path) -> None:
    dump = write(tmp_path, "c.yaml", {"kind": "List", "items": [
        make_node("n1"), {"kind": "Node", "metadata": {"name": "n2"}, "status": {"allocatable": {"cpu": "lots"}}}]})
    with pytest.raises(DumpError, match="Node 'n2'"):
        base_from_dump(str(dump))


def test_the_live_recorder_keeps_what_each_list_applied() -> None:
    recorder = _RecordingCache()
    failures = recorder.apply_many("Node", [make_node("n1"), {"kind": "Node", "metadata": {}}], set())
    recorder.apply_many("Pod", [make_pod("p", node="n1")], set())
    assert len(failures) == 1  # the nameless node is skipped, as the live source skips it
    assert [o["kind"] for o in recorder.recorded] == ["Node", "Pod"]
    assert type(recorder.recorded[1]) is SlimPod


def test_a_live_cluster_is_listed_once_into_a_base() -> None:
    from fake_apiserver import FakeApiserver

    from extender.kubeapi.client import KubeClient
    from extender.kubeapi.config import ClusterConfig, StaticToken
    from extender.plan.base import base_from_live

    server = FakeApiserver()
    server.git_version = "v1.36.3"
    server.put("Node", make_node("a"))
    server.put("Pod", make_pod("running", "shop", node="a", requests=[{"cpu": "1"}], uid="u1"))
    server.put("Service", {"metadata": {"name": "web", "namespace": "shop"}, "spec": {"selector": {"app": "web"}}})
    config = ClusterConfig("http://fake", tokens=StaticToken("good"))
    base = base_from_live(config, KubeClient(config, transport=server.transport()))
    assert sorted(str(o["kind"]) for o in base.objects) == ["Node", "Pod", "Service"]
    assert base.source == "http://fake"
    # The apiserver's /version is kept: kubernetesVersion auto follows it in every variant.
    choice = base.version_choice(None)
    assert (choice.name, choice.source, choice.reported) == ("1.36", "apiserver", "v1.36.3")
    assert [p.name for p in base.cache().snapshot().get("a").pods] == ["running"]  # type: ignore[union-attr]
    assert not [r for r in server.requests if "watch=true" in r]  # listed, never watched, nothing written
    assert all(r.startswith("GET ") for r in server.requests)


def test_the_base_keeps_the_version_its_dump_records_through_pickling(tmp_path: Path) -> None:
    folder = tmp_path / "dump"
    folder.mkdir()
    write(folder, "nodes.yaml", {"kind": "List", "items": [make_node("a")]})
    (folder / "version.json").write_text('{"major": "1", "minor": "36", "gitVersion": "v1.36.3"}')
    base = pickle.loads(pickle.dumps(base_from_dump(str(folder))))
    choice = base.version_choice(None)
    assert (choice.name, choice.source, choice.reported) == ("1.36", "dump", "v1.36.3")
    assert base.version_choice(37).name == "1.37"  # a fixed setting wins
    assert base.cache(release(36)).release.minor == 36
    plain = base_from_dump(str(DEMO))
    assert plain.version is None and plain.version_choice(None).source == "default"
