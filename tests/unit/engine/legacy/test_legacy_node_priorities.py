"""v1.12 node priorities against upstream's tables, converted to data from k8s.io/kubernetes v1.12.10
pkg/scheduler/algorithm/priorities/ (node_affinity_test.go, taint_toleration_test.go,
node_prefer_avoid_pods_test.go, image_locality_test.go, node_label_test.go)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from test_legacy_harness import Obj, as_node, as_pod, expected, node, priority, scores

from extender.engine.plugins.legacy.node_priorities import normalized_image_name


def node_with_taints(name: str, taints: list[dict[str, Any]]) -> Obj:
    return as_node({"metadata": {"name": name}, "spec": {"taints": taints}})


def pod_with_tolerations(tolerations: list[dict[str, Any]]) -> dict[str, Any]:
    return {"spec": {"tolerations": tolerations}}


def make_image_node(name: str, status: dict[str, Any]) -> Obj:
    return as_node({"metadata": {"name": name}, "status": status})


NODE_AFFINITY = [
  {
    'expectedList': [
      {'host': 'machine1', 'score': 0},
      {'host': 'machine2', 'score': 0},
      {'host': 'machine3', 'score': 0}],
    'name': 'all machines are same priority as NodeAffinity is nil',
    'nodes': [
      {'metadata': {'labels': {'foo': 'bar'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'key': 'value'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine3'}}],
    'pod': {'metadata': {'annotations': {}}}},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 0},
      {'host': 'machine2', 'score': 0},
      {'host': 'machine3', 'score': 0}],
    'name': ('no machine macthes preferred scheduling requirements in NodeAffinity of pod so all '
             "machines' priority is zero"),
    'nodes': [
      {'metadata': {'labels': {'abc': 'az11', 'def': 'az22'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'key': 'value'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine3'}}],
    'pod': {
      'spec': {
        'affinity': {
          'nodeAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'preference': {
                  'matchExpressions': [{'key': 'foo', 'operator': 'In', 'values': ['bar']}]},
                'weight': 2}]}}}}},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 0},
      {'host': 'machine3', 'score': 0}],
    'name': 'only machine1 matches the preferred scheduling requirements of pod',
    'nodes': [
      {'metadata': {'labels': {'foo': 'bar'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'key': 'value'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine3'}}],
    'pod': {
      'spec': {
        'affinity': {
          'nodeAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'preference': {
                  'matchExpressions': [{'key': 'foo', 'operator': 'In', 'values': ['bar']}]},
                'weight': 2}]}}}}},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 1},
      {'host': 'machine5', 'score': 10},
      {'host': 'machine2', 'score': 3}],
    'name': ('all machines matches the preferred scheduling requirements of pod but with different '
             'priorities '),
    'nodes': [
      {'metadata': {'labels': {'foo': 'bar'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'az': 'az1', 'foo': 'bar', 'key': 'value'}, 'name': 'machine5'}},
      {'metadata': {'labels': {'key': 'value'}, 'name': 'machine2'}}],
    'pod': {
      'spec': {
        'affinity': {
          'nodeAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'preference': {
                  'matchExpressions': [{'key': 'foo', 'operator': 'In', 'values': ['bar']}]},
                'weight': 2},
              {
                'preference': {
                  'matchExpressions': [{'key': 'key', 'operator': 'In', 'values': ['value']}]},
                'weight': 4},
              {
                'preference': {
                  'matchExpressions': [
                    {'key': 'foo', 'operator': 'In', 'values': ['bar']},
                    {'key': 'key', 'operator': 'In', 'values': ['value']},
                    {'key': 'az', 'operator': 'In', 'values': ['az1']}]},
                'weight': 5}]}}}}}]

TAINT_TOLERATION = [
  {
    'expectedList': [{'host': 'nodeA', 'score': 10}, {'host': 'nodeB', 'score': 0}],
    'name': ('node with taints tolerated by the pod, gets a higher score than those node with '
             'intolerable taints'),
    'nodes': [
      node_with_taints('nodeA', [{'effect': 'PreferNoSchedule', 'key': 'foo', 'value': 'bar'}]),
      node_with_taints('nodeB', [{'effect': 'PreferNoSchedule', 'key': 'foo', 'value': 'blah'}])],
    'pod': pod_with_tolerations(
      [{'effect': 'PreferNoSchedule', 'key': 'foo', 'operator': 'Equal', 'value': 'bar'}])},
  {
    'expectedList': [
      {'host': 'nodeA', 'score': 10},
      {'host': 'nodeB', 'score': 10},
      {'host': 'nodeC', 'score': 10}],
    'name': ('the nodes that all of their taints are tolerated by the pod, get the same score, no '
             'matter how many tolerable taints a node has'),
    'nodes': [
      node_with_taints('nodeA', []),
      node_with_taints('nodeB', [{'effect': 'PreferNoSchedule', 'key': 'cpu-type', 'value': 'arm64'}]),
      node_with_taints(
        'nodeC',
        [
          {'effect': 'PreferNoSchedule', 'key': 'cpu-type', 'value': 'arm64'},
          {'effect': 'PreferNoSchedule', 'key': 'disk-type', 'value': 'ssd'}])],
    'pod': pod_with_tolerations(
      [
        {'effect': 'PreferNoSchedule', 'key': 'cpu-type', 'operator': 'Equal', 'value': 'arm64'},
        {'effect': 'PreferNoSchedule', 'key': 'disk-type', 'operator': 'Equal', 'value': 'ssd'}])},
  {
    'expectedList': [
      {'host': 'nodeA', 'score': 10},
      {'host': 'nodeB', 'score': 5},
      {'host': 'nodeC', 'score': 0}],
    'name': 'the more intolerable taints a node has, the lower score it gets.',
    'nodes': [
      node_with_taints('nodeA', []),
      node_with_taints('nodeB', [{'effect': 'PreferNoSchedule', 'key': 'cpu-type', 'value': 'arm64'}]),
      node_with_taints(
        'nodeC',
        [
          {'effect': 'PreferNoSchedule', 'key': 'cpu-type', 'value': 'arm64'},
          {'effect': 'PreferNoSchedule', 'key': 'disk-type', 'value': 'ssd'}])],
    'pod': pod_with_tolerations(
      [{'effect': 'PreferNoSchedule', 'key': 'foo', 'operator': 'Equal', 'value': 'bar'}])},
  {
    'expectedList': [
      {'host': 'nodeA', 'score': 10},
      {'host': 'nodeB', 'score': 10},
      {'host': 'nodeC', 'score': 0}],
    'name': ('only taints and tolerations that have effect PreferNoSchedule are checked by '
             'taints-tolerations priority function'),
    'nodes': [
      node_with_taints('nodeA', []),
      node_with_taints('nodeB', [{'effect': 'NoSchedule', 'key': 'cpu-type', 'value': 'arm64'}]),
      node_with_taints(
        'nodeC',
        [
          {'effect': 'PreferNoSchedule', 'key': 'cpu-type', 'value': 'arm64'},
          {'effect': 'PreferNoSchedule', 'key': 'disk-type', 'value': 'ssd'}])],
    'pod': pod_with_tolerations(
      [
        {'effect': 'NoSchedule', 'key': 'cpu-type', 'operator': 'Equal', 'value': 'arm64'},
        {'effect': 'NoSchedule', 'key': 'disk-type', 'operator': 'Equal', 'value': 'ssd'}])},
  {
    'expectedList': [{'host': 'nodeA', 'score': 10}, {'host': 'nodeB', 'score': 0}],
    'name': 'Default behaviour No taints and tolerations, lands on node with no taints',
    'nodes': [
      node_with_taints('nodeA', []),
      node_with_taints('nodeB', [{'effect': 'PreferNoSchedule', 'key': 'cpu-type', 'value': 'arm64'}])],
    'pod': pod_with_tolerations([])}]

PREFER_AVOID = [
  {
    'expectedList': [
      {'host': 'machine1', 'score': 0},
      {'host': 'machine2', 'score': 10},
      {'host': 'machine3', 'score': 10}],
    'name': ('pod managed by ReplicationController should avoid a node, this node get lowest '
             'priority score'),
    'nodes': [
      {
        'metadata': {
          'annotations': {
            'scheduler.alpha.kubernetes.io/preferAvoidPods': ('{"preferAvoidPods":[{"podSigna'
                                                              'ture":{"podController":{"apiVe'
                                                              'rsion":"v1","kind":"Replicatio'
                                                              'nController","name":"foo","uid'
                                                              '":"abcdef123456","controller":'
                                                              'true}},"reason":"some '
                                                              'reason","message":"some message"}]}')},
          'name': 'machine1'}},
      {
        'metadata': {
          'annotations': {
            'scheduler.alpha.kubernetes.io/preferAvoidPods': ('{"preferAvoidPods":[{"podSigna'
                                                              'ture":{"podController":{"apiVe'
                                                              'rsion":"v1","kind":"ReplicaSet'
                                                              '","name":"foo","uid":"qwert123'
                                                              '45","controller":true}},"reaso'
                                                              'n":"some '
                                                              'reason","message":"some message"}]}')},
          'name': 'machine2'}},
      {'metadata': {'name': 'machine3'}}],
    'pod': {
      'metadata': {
        'namespace': 'default',
        'ownerReferences': [
          {'controller': True, 'kind': 'ReplicationController', 'name': 'foo', 'uid': 'abcdef123456'}]}}},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 10},
      {'host': 'machine3', 'score': 10}],
    'name': 'ownership by random controller should be ignored',
    'nodes': [
      {
        'metadata': {
          'annotations': {
            'scheduler.alpha.kubernetes.io/preferAvoidPods': ('{"preferAvoidPods":[{"podSigna'
                                                              'ture":{"podController":{"apiVe'
                                                              'rsion":"v1","kind":"Replicatio'
                                                              'nController","name":"foo","uid'
                                                              '":"abcdef123456","controller":'
                                                              'true}},"reason":"some '
                                                              'reason","message":"some message"}]}')},
          'name': 'machine1'}},
      {
        'metadata': {
          'annotations': {
            'scheduler.alpha.kubernetes.io/preferAvoidPods': ('{"preferAvoidPods":[{"podSigna'
                                                              'ture":{"podController":{"apiVe'
                                                              'rsion":"v1","kind":"ReplicaSet'
                                                              '","name":"foo","uid":"qwert123'
                                                              '45","controller":true}},"reaso'
                                                              'n":"some '
                                                              'reason","message":"some message"}]}')},
          'name': 'machine2'}},
      {'metadata': {'name': 'machine3'}}],
    'pod': {
      'metadata': {
        'namespace': 'default',
        'ownerReferences': [
          {'controller': True, 'kind': 'RandomController', 'name': 'foo', 'uid': 'abcdef123456'}]}}},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 10},
      {'host': 'machine3', 'score': 10}],
    'name': 'owner without Controller field set should be ignored',
    'nodes': [
      {
        'metadata': {
          'annotations': {
            'scheduler.alpha.kubernetes.io/preferAvoidPods': ('{"preferAvoidPods":[{"podSigna'
                                                              'ture":{"podController":{"apiVe'
                                                              'rsion":"v1","kind":"Replicatio'
                                                              'nController","name":"foo","uid'
                                                              '":"abcdef123456","controller":'
                                                              'true}},"reason":"some '
                                                              'reason","message":"some message"}]}')},
          'name': 'machine1'}},
      {
        'metadata': {
          'annotations': {
            'scheduler.alpha.kubernetes.io/preferAvoidPods': ('{"preferAvoidPods":[{"podSigna'
                                                              'ture":{"podController":{"apiVe'
                                                              'rsion":"v1","kind":"ReplicaSet'
                                                              '","name":"foo","uid":"qwert123'
                                                              '45","controller":true}},"reaso'
                                                              'n":"some '
                                                              'reason","message":"some message"}]}')},
          'name': 'machine2'}},
      {'metadata': {'name': 'machine3'}}],
    'pod': {
      'metadata': {
        'namespace': 'default',
        'ownerReferences': [{'kind': 'ReplicationController', 'name': 'foo', 'uid': 'abcdef123456'}]}}},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 0},
      {'host': 'machine3', 'score': 10}],
    'name': 'pod managed by ReplicaSet should avoid a node, this node get lowest priority score',
    'nodes': [
      {
        'metadata': {
          'annotations': {
            'scheduler.alpha.kubernetes.io/preferAvoidPods': ('{"preferAvoidPods":[{"podSigna'
                                                              'ture":{"podController":{"apiVe'
                                                              'rsion":"v1","kind":"Replicatio'
                                                              'nController","name":"foo","uid'
                                                              '":"abcdef123456","controller":'
                                                              'true}},"reason":"some '
                                                              'reason","message":"some message"}]}')},
          'name': 'machine1'}},
      {
        'metadata': {
          'annotations': {
            'scheduler.alpha.kubernetes.io/preferAvoidPods': ('{"preferAvoidPods":[{"podSigna'
                                                              'ture":{"podController":{"apiVe'
                                                              'rsion":"v1","kind":"ReplicaSet'
                                                              '","name":"foo","uid":"qwert123'
                                                              '45","controller":true}},"reaso'
                                                              'n":"some '
                                                              'reason","message":"some message"}]}')},
          'name': 'machine2'}},
      {'metadata': {'name': 'machine3'}}],
    'pod': {
      'metadata': {
        'namespace': 'default',
        'ownerReferences': [
          {'controller': True, 'kind': 'ReplicaSet', 'name': 'foo', 'uid': 'qwert12345'}]}}}]

IMAGE_LOCALITY = [
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 1}],
    'name': 'two images spread on two nodes, prefer the larger image one',
    'nodes': [
      make_image_node(
        'machine1',
        {
          'images': [
            {'names': ['gcr.io/40:latest', 'gcr.io/40:v1', 'gcr.io/40:v1'], 'sizeBytes': 41943040},
            {'names': ['gcr.io/300:latest', 'gcr.io/300:v1'], 'sizeBytes': 314572800},
            {'names': ['gcr.io/2000:latest'], 'sizeBytes': 2097152000}]}),
      make_image_node(
        'machine2',
        {
          'images': [
            {'names': ['gcr.io/250:latest'], 'sizeBytes': 262144000},
            {'names': ['gcr.io/10:latest', 'gcr.io/10:v1'], 'sizeBytes': 10485760}]})],
    'pod': {'spec': {'containers': [{'image': 'gcr.io/40'}, {'image': 'gcr.io/250'}]}}},
  {
    'expectedList': [{'host': 'machine1', 'score': 1}, {'host': 'machine2', 'score': 0}],
    'name': 'two images on one node, prefer this node',
    'nodes': [
      make_image_node(
        'machine1',
        {
          'images': [
            {'names': ['gcr.io/40:latest', 'gcr.io/40:v1', 'gcr.io/40:v1'], 'sizeBytes': 41943040},
            {'names': ['gcr.io/300:latest', 'gcr.io/300:v1'], 'sizeBytes': 314572800},
            {'names': ['gcr.io/2000:latest'], 'sizeBytes': 2097152000}]}),
      make_image_node(
        'machine2',
        {
          'images': [
            {'names': ['gcr.io/250:latest'], 'sizeBytes': 262144000},
            {'names': ['gcr.io/10:latest', 'gcr.io/10:v1'], 'sizeBytes': 10485760}]})],
    'pod': {'spec': {'containers': [{'image': 'gcr.io/40'}, {'image': 'gcr.io/300'}]}}},
  {
    'expectedList': [{'host': 'machine1', 'score': 10}, {'host': 'machine2', 'score': 0}],
    'name': 'if exceed limit, use limit',
    'nodes': [
      make_image_node(
        'machine1',
        {
          'images': [
            {'names': ['gcr.io/40:latest', 'gcr.io/40:v1', 'gcr.io/40:v1'], 'sizeBytes': 41943040},
            {'names': ['gcr.io/300:latest', 'gcr.io/300:v1'], 'sizeBytes': 314572800},
            {'names': ['gcr.io/2000:latest'], 'sizeBytes': 2097152000}]}),
      make_image_node(
        'machine2',
        {
          'images': [
            {'names': ['gcr.io/250:latest'], 'sizeBytes': 262144000},
            {'names': ['gcr.io/10:latest', 'gcr.io/10:v1'], 'sizeBytes': 10485760}]})],
    'pod': {'spec': {'containers': [{'image': 'gcr.io/10'}, {'image': 'gcr.io/2000'}]}}}]

NODE_LABEL = [
  {
    'expectedList': [
      {'host': 'machine1', 'score': 0},
      {'host': 'machine2', 'score': 0},
      {'host': 'machine3', 'score': 0}],
    'label': 'baz',
    'name': 'no match found, presence true',
    'nodes': [
      {'metadata': {'labels': {'foo': 'bar'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'bar': 'foo'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'bar': 'baz'}, 'name': 'machine3'}}],
    'presence': True},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 10},
      {'host': 'machine3', 'score': 10}],
    'label': 'baz',
    'name': 'no match found, presence false',
    'nodes': [
      {'metadata': {'labels': {'foo': 'bar'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'bar': 'foo'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'bar': 'baz'}, 'name': 'machine3'}}],
    'presence': False},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 0},
      {'host': 'machine3', 'score': 0}],
    'label': 'foo',
    'name': 'one match found, presence true',
    'nodes': [
      {'metadata': {'labels': {'foo': 'bar'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'bar': 'foo'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'bar': 'baz'}, 'name': 'machine3'}}],
    'presence': True},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 0},
      {'host': 'machine2', 'score': 10},
      {'host': 'machine3', 'score': 10}],
    'label': 'foo',
    'name': 'one match found, presence false',
    'nodes': [
      {'metadata': {'labels': {'foo': 'bar'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'bar': 'foo'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'bar': 'baz'}, 'name': 'machine3'}}],
    'presence': False},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 0},
      {'host': 'machine2', 'score': 10},
      {'host': 'machine3', 'score': 10}],
    'label': 'bar',
    'name': 'two matches found, presence true',
    'nodes': [
      {'metadata': {'labels': {'foo': 'bar'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'bar': 'foo'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'bar': 'baz'}, 'name': 'machine3'}}],
    'presence': True},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 0},
      {'host': 'machine3', 'score': 0}],
    'label': 'bar',
    'name': 'two matches found, presence false',
    'nodes': [
      {'metadata': {'labels': {'foo': 'bar'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'bar': 'foo'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'bar': 'baz'}, 'name': 'machine3'}}],
    'presence': False}]



@pytest.mark.parametrize("case", NODE_AFFINITY, ids=[c["name"] for c in NODE_AFFINITY])
def test_node_affinity(case: dict[str, Any]) -> None:
    nodes = [as_node(n) for n in case["nodes"]]
    assert priority("NodeAffinityPriority", case["pod"], nodes) == expected(case["expectedList"])


def test_node_affinity_ignores_match_fields_and_fails_on_invalid_terms() -> None:
    # v1.12 read only matchExpressions of a preferred term (NodeSelectorRequirementsAsSelector).
    term = {"weight": 5, "preference": {"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["a"]}]}}
    incoming = {"spec": {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}}}
    assert priority("NodeAffinityPriority", incoming, [node("a"), node("b")]) == {"a": 0, "b": 0}
    bad = {"weight": 1, "preference": {"matchExpressions": [{"key": "k", "operator": "Bogus"}]}}
    incoming = {"spec": {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [bad]}}}}
    with pytest.raises(Exception, match="NodeAffinityPriority"):
        scores("NodeAffinityPriority", as_pod(incoming), [node("a")])


@pytest.mark.parametrize("case", TAINT_TOLERATION, ids=[c["name"] for c in TAINT_TOLERATION])
def test_taint_and_toleration(case: dict[str, Any]) -> None:
    assert priority("TaintTolerationPriority", case["pod"], case["nodes"]) == expected(case["expectedList"])


@pytest.mark.parametrize("case", PREFER_AVOID, ids=[c["name"] for c in PREFER_AVOID])
def test_node_prefer_avoid_pods(case: dict[str, Any]) -> None:
    nodes = [as_node(n) for n in case["nodes"]]
    assert priority("NodePreferAvoidPodsPriority", case["pod"], nodes) == expected(case["expectedList"])


def test_node_prefer_avoid_pods_bad_annotation_scores_max() -> None:
    annotation = {"scheduler.alpha.kubernetes.io/preferAvoidPods": '{"preferAvoidPods": [{"podSignature": '
                  '{"podController": {"kind": "ReplicaSet", "uid": 7}}}]}'}
    incoming = {"metadata": {"ownerReferences": [{"controller": True, "kind": "ReplicaSet", "name": "r",
                                                  "uid": "7"}]}}
    assert priority("NodePreferAvoidPodsPriority", incoming, [node("a", annotations=annotation)]) == {"a": 10}


@pytest.mark.parametrize("case", IMAGE_LOCALITY, ids=[c["name"] for c in IMAGE_LOCALITY])
def test_image_locality(case: dict[str, Any]) -> None:
    result = priority("ImageLocalityPriority", case["pod"], case["nodes"], case.get("pods") or [])
    assert result == expected(case["expectedList"])


def image_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(("image", "want"), [
    ("root", "root:latest"), ("root:tag", "root:tag"), ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
    ("root@" + image_digest("root"), "root@" + image_digest("root")),
])
def test_normalized_image_name(image: str, want: str) -> None:
    assert normalized_image_name(image) == want


@pytest.mark.parametrize("case", NODE_LABEL, ids=[c["name"] for c in NODE_LABEL])
def test_node_label(case: dict[str, Any]) -> None:
    nodes = [as_node(n) for n in case["nodes"]]
    args = {"label": case["label"], "presence": case["presence"]}
    assert priority("NodeLabelPriority", {}, nodes, (), args) == expected(case["expectedList"])


def test_equal_priority() -> None:
    assert priority("EqualPriority", {}, [node("a"), node("b")]) == {"a": 1, "b": 1}
