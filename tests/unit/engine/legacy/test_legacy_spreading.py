"""v1.12 spreading priorities against upstream's tables, converted to data from k8s.io/kubernetes v1.12.10
pkg/scheduler/algorithm/priorities/selector_spreading_test.go (TestSelectorSpreadPriority,
TestZoneSelectorSpreadPriority, TestZoneSpreadPriority).

Go's empty namespace is a namespace of its own there (distinct from "default"); ours defaults to "default",
so objects without one are put in "nsempty" to keep upstream's meaning."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from test_legacy_harness import Obj, as_node, expected, node, obj, priority

ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
NO_NAMESPACE = "nsempty"


def build_node_labels(failure_domain: str) -> dict[str, str]:
    return {ZONE_LABEL: failure_domain}


def build_pod(node_name: str, labels: Mapping[str, str] | None, _owner_refs: Any) -> dict[str, Any]:
    """buildPod (controllerRef returns nil in v1.12's tests)."""
    return {"metadata": {"labels": dict(labels or {})}, "spec": {"nodeName": node_name}}


def controller_ref(_kind: str, _name: str, _uid: str) -> None:
    return None


def in_namespace(raw: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(raw)
    meta = dict(out.get("metadata") or {})
    meta["namespace"] = meta.get("namespace") or NO_NAMESPACE
    out["metadata"] = meta
    return out


def controllers(case: Mapping[str, Any]) -> list[Obj]:
    objects = []
    for field, kind in (("services", "Service"), ("rcs", "ReplicationController"), ("rss", "ReplicaSet"),
                        ("sss", "StatefulSet")):
        for i, raw in enumerate(case.get(field) or []):
            meta = raw.get("metadata") or {}
            objects.append(obj(kind, f"{field}-{i}", meta.get("namespace") or NO_NAMESPACE, spec=raw.get("spec")))
    return objects


SELECTOR_SPREAD = [
  {
    'expectedList': [{'host': 'machine1', 'score': 10}, {'host': 'machine2', 'score': 10}],
    'name': 'nothing scheduled',
    'nodes': ['machine1', 'machine2'],
    'pod': {}},
  {
    'expectedList': [{'host': 'machine1', 'score': 10}, {'host': 'machine2', 'score': 10}],
    'name': 'no services',
    'nodes': ['machine1', 'machine2'],
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [{'spec': {'nodeName': 'machine1'}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 10}, {'host': 'machine2', 'score': 10}],
    'name': 'different services',
    'nodes': ['machine1', 'machine2'],
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [{'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}}],
    'services': [{'spec': {'selector': {'key': 'value'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 10}, {'host': 'machine2', 'score': 0}],
    'name': 'two pods, one service pod',
    'nodes': ['machine1', 'machine2'],
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine2'}}],
    'services': [{'spec': {'selector': {'baz': 'blah', 'foo': 'bar'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 10}, {'host': 'machine2', 'score': 0}],
    'name': 'five pods, one service pod in no namespace',
    'nodes': ['machine1', 'machine2'],
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}, 'namespace': 'default'},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}, 'namespace': 'ns1'},
        'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine2'}},
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine2'}}],
    'services': [{'spec': {'selector': {'baz': 'blah', 'foo': 'bar'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 10}, {'host': 'machine2', 'score': 0}],
    'name': 'four pods, one service pod in default namespace',
    'nodes': ['machine1', 'machine2'],
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}, 'namespace': 'default'}},
    'pods': [
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}, 'namespace': 'ns1'},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}, 'namespace': 'default'},
        'spec': {'nodeName': 'machine2'}},
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine2'}}],
    'services': [
      {'metadata': {'namespace': 'default'}, 'spec': {'selector': {'baz': 'blah', 'foo': 'bar'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 10}, {'host': 'machine2', 'score': 0}],
    'name': 'five pods, one service pod in specific namespace',
    'nodes': ['machine1', 'machine2'],
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}, 'namespace': 'ns1'}},
    'pods': [
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}, 'namespace': 'default'},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}, 'namespace': 'ns2'},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}, 'namespace': 'ns1'},
        'spec': {'nodeName': 'machine2'}},
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine2'}}],
    'services': [
      {'metadata': {'namespace': 'ns1'}, 'spec': {'selector': {'baz': 'blah', 'foo': 'bar'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 0}],
    'name': 'three pods, two service pods on different machines',
    'nodes': ['machine1', 'machine2'],
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine2'}}],
    'services': [{'spec': {'selector': {'baz': 'blah', 'foo': 'bar'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 5}, {'host': 'machine2', 'score': 0}],
    'name': 'four pods, three service pods',
    'nodes': ['machine1', 'machine2'],
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine2'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine2'}}],
    'services': [{'spec': {'selector': {'baz': 'blah', 'foo': 'bar'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 5}],
    'name': 'service with partial pod label matches',
    'nodes': ['machine1', 'machine2'],
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine2'}}],
    'services': [{'spec': {'selector': {'baz': 'blah'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 5}],
    'name': 'service with partial pod label matches with service and replication controller',
    'nodes': ['machine1', 'machine2'],
    'pod': {
      'metadata': {
        'labels': {'baz': 'blah', 'foo': 'bar'},
        'ownerReferences': controller_ref('ReplicationController', 'name', 'abc123')}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicationController', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicationController', 'name', 'abc123')},
        'spec': {'nodeName': 'machine2'}}],
    'rcs': [{'spec': {'selector': {'foo': 'bar'}}}],
    'services': [{'spec': {'selector': {'baz': 'blah'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 5}],
    'name': 'service with partial pod label matches with service and replica set',
    'nodes': ['machine1', 'machine2'],
    'pod': {
      'metadata': {
        'labels': {'baz': 'blah', 'foo': 'bar'},
        'ownerReferences': controller_ref('ReplicaSet', 'name', 'abc123')}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicaSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicaSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine2'}}],
    'rss': [{'spec': {'selector': {'matchLabels': {'foo': 'bar'}}}}],
    'services': [{'spec': {'selector': {'baz': 'blah'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 5}],
    'name': 'service with partial pod label matches with service and replica set',
    'nodes': ['machine1', 'machine2'],
    'pod': {
      'metadata': {
        'labels': {'baz': 'blah', 'foo': 'bar'},
        'ownerReferences': controller_ref('StatefulSet', 'name', 'abc123')}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('StatefulSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('StatefulSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine2'}}],
    'services': [{'spec': {'selector': {'baz': 'blah'}}}],
    'sss': [{'spec': {'selector': {'matchLabels': {'foo': 'bar'}}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 5}],
    'name': 'disjoined service and replication controller should be treated equally',
    'nodes': ['machine1', 'machine2'],
    'pod': {
      'metadata': {
        'labels': {'bar': 'foo', 'foo': 'bar'},
        'ownerReferences': controller_ref('ReplicationController', 'name', 'abc123')}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicationController', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicationController', 'name', 'abc123')},
        'spec': {'nodeName': 'machine2'}}],
    'rcs': [{'spec': {'selector': {'foo': 'bar'}}}],
    'services': [{'spec': {'selector': {'bar': 'foo'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 5}],
    'name': 'disjoined service and replica set should be treated equally',
    'nodes': ['machine1', 'machine2'],
    'pod': {
      'metadata': {
        'labels': {'bar': 'foo', 'foo': 'bar'},
        'ownerReferences': controller_ref('ReplicaSet', 'name', 'abc123')}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicaSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicaSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine2'}}],
    'rss': [{'spec': {'selector': {'matchLabels': {'foo': 'bar'}}}}],
    'services': [{'spec': {'selector': {'bar': 'foo'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 5}],
    'name': 'disjoined service and replica set should be treated equally',
    'nodes': ['machine1', 'machine2'],
    'pod': {
      'metadata': {
        'labels': {'bar': 'foo', 'foo': 'bar'},
        'ownerReferences': controller_ref('StatefulSet', 'name', 'abc123')}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('StatefulSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('StatefulSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine2'}}],
    'services': [{'spec': {'selector': {'bar': 'foo'}}}],
    'sss': [{'spec': {'selector': {'matchLabels': {'foo': 'bar'}}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 0}],
    'name': 'Replication controller with partial pod label matches',
    'nodes': ['machine1', 'machine2'],
    'pod': {
      'metadata': {
        'labels': {'baz': 'blah', 'foo': 'bar'},
        'ownerReferences': controller_ref('ReplicationController', 'name', 'abc123')}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicationController', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicationController', 'name', 'abc123')},
        'spec': {'nodeName': 'machine2'}}],
    'rcs': [{'spec': {'selector': {'foo': 'bar'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 0}],
    'name': 'Replica set with partial pod label matches',
    'nodes': ['machine1', 'machine2'],
    'pod': {
      'metadata': {
        'labels': {'baz': 'blah', 'foo': 'bar'},
        'ownerReferences': controller_ref('ReplicaSet', 'name', 'abc123')}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicaSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicaSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine2'}}],
    'rss': [{'spec': {'selector': {'matchLabels': {'foo': 'bar'}}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 0}],
    'name': 'StatefulSet with partial pod label matches',
    'nodes': ['machine1', 'machine2'],
    'pod': {
      'metadata': {
        'labels': {'baz': 'blah', 'foo': 'bar'},
        'ownerReferences': controller_ref('StatefulSet', 'name', 'abc123')}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('StatefulSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('StatefulSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine2'}}],
    'sss': [{'spec': {'selector': {'matchLabels': {'foo': 'bar'}}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 5}],
    'name': 'Another replication controller with partial pod label matches',
    'nodes': ['machine1', 'machine2'],
    'pod': {
      'metadata': {
        'labels': {'baz': 'blah', 'foo': 'bar'},
        'ownerReferences': controller_ref('ReplicationController', 'name', 'abc123')}},
    'pods': [
      {
        'metadata': {
          'labels': {'bar': 'foo', 'baz': 'blah'},
          'ownerReferences': controller_ref('ReplicationController', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicationController', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicationController', 'name', 'abc123')},
        'spec': {'nodeName': 'machine2'}}],
    'rcs': [{'spec': {'selector': {'baz': 'blah'}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 5}],
    'name': 'Another replication set with partial pod label matches',
    'nodes': ['machine1', 'machine2'],
    'pod': {
      'metadata': {
        'labels': {'baz': 'blah', 'foo': 'bar'},
        'ownerReferences': controller_ref('ReplicaSet', 'name', 'abc123')}},
    'pods': [
      {
        'metadata': {
          'labels': {'bar': 'foo', 'baz': 'blah'},
          'ownerReferences': controller_ref('ReplicaSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicaSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('ReplicaSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine2'}}],
    'rss': [{'spec': {'selector': {'matchLabels': {'baz': 'blah'}}}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 5}],
    'name': 'Another stateful set with partial pod label matches',
    'nodes': ['machine1', 'machine2'],
    'pod': {
      'metadata': {
        'labels': {'baz': 'blah', 'foo': 'bar'},
        'ownerReferences': controller_ref('StatefulSet', 'name', 'abc123')}},
    'pods': [
      {
        'metadata': {
          'labels': {'bar': 'foo', 'baz': 'blah'},
          'ownerReferences': controller_ref('StatefulSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('StatefulSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine1'}},
      {
        'metadata': {
          'labels': {'baz': 'blah', 'foo': 'bar'},
          'ownerReferences': controller_ref('StatefulSet', 'name', 'abc123')},
        'spec': {'nodeName': 'machine2'}}],
    'sss': [{'spec': {'selector': {'matchLabels': {'baz': 'blah'}}}}]}]

ZONE_LABELED_NODES = {
  'machine1.zone1': build_node_labels('zone1'),
  'machine1.zone2': build_node_labels('zone2'),
  'machine1.zone3': build_node_labels('zone3'),
  'machine2.zone2': build_node_labels('zone2'),
  'machine2.zone3': build_node_labels('zone3'),
  'machine3.zone3': build_node_labels('zone3')}

ZONE_SELECTOR_SPREAD = [
  {
    'expectedList': [
      {'host': 'machine1.zone1', 'score': 10},
      {'host': 'machine1.zone2', 'score': 10},
      {'host': 'machine2.zone2', 'score': 10},
      {'host': 'machine1.zone3', 'score': 10},
      {'host': 'machine2.zone3', 'score': 10},
      {'host': 'machine3.zone3', 'score': 10}],
    'name': 'nothing scheduled',
    'pod': {}},
  {
    'expectedList': [
      {'host': 'machine1.zone1', 'score': 10},
      {'host': 'machine1.zone2', 'score': 10},
      {'host': 'machine2.zone2', 'score': 10},
      {'host': 'machine1.zone3', 'score': 10},
      {'host': 'machine2.zone3', 'score': 10},
      {'host': 'machine3.zone3', 'score': 10}],
    'name': 'no services',
    'pod': build_pod('', {'baz': 'blah', 'label1': 'l1'}, None),
    'pods': [build_pod('machine1.zone1', None, None)]},
  {
    'expectedList': [
      {'host': 'machine1.zone1', 'score': 10},
      {'host': 'machine1.zone2', 'score': 10},
      {'host': 'machine2.zone2', 'score': 10},
      {'host': 'machine1.zone3', 'score': 10},
      {'host': 'machine2.zone3', 'score': 10},
      {'host': 'machine3.zone3', 'score': 10}],
    'name': 'different services',
    'pod': build_pod('', {'baz': 'blah', 'label1': 'l1'}, None),
    'pods': [build_pod('machine1.zone1', {'baz': 'blah', 'label2': 'l2'}, None)],
    'services': [{'spec': {'selector': {'key': 'value'}}}]},
  {
    'expectedList': [
      {'host': 'machine1.zone1', 'score': 10},
      {'host': 'machine1.zone2', 'score': 10},
      {'host': 'machine2.zone2', 'score': 10},
      {'host': 'machine1.zone3', 'score': 10},
      {'host': 'machine2.zone3', 'score': 10},
      {'host': 'machine3.zone3', 'score': 10}],
    'name': 'two pods, 0 matching',
    'pod': build_pod('', {'baz': 'blah', 'label1': 'l1'}, None),
    'pods': [
      build_pod('machine1.zone1', {'baz': 'blah', 'label2': 'l2'}, None),
      build_pod('machine1.zone2', {'baz': 'blah', 'label2': 'l2'}, None)],
    'services': [{'spec': {'selector': {'baz': 'blah', 'label1': 'l1'}}}]},
  {
    'expectedList': [
      {'host': 'machine1.zone1', 'score': 10},
      {'host': 'machine1.zone2', 'score': 0},
      {'host': 'machine2.zone2', 'score': 3},
      {'host': 'machine1.zone3', 'score': 10},
      {'host': 'machine2.zone3', 'score': 10},
      {'host': 'machine3.zone3', 'score': 10}],
    'name': 'two pods, 1 matching (in z2)',
    'pod': build_pod('', {'baz': 'blah', 'label1': 'l1'}, None),
    'pods': [
      build_pod('machine1.zone1', {'baz': 'blah', 'label2': 'l2'}, None),
      build_pod('machine1.zone2', {'baz': 'blah', 'label1': 'l1'}, None)],
    'services': [{'spec': {'selector': {'baz': 'blah', 'label1': 'l1'}}}]},
  {
    'expectedList': [
      {'host': 'machine1.zone1', 'score': 10},
      {'host': 'machine1.zone2', 'score': 0},
      {'host': 'machine2.zone2', 'score': 0},
      {'host': 'machine1.zone3', 'score': 6},
      {'host': 'machine2.zone3', 'score': 3},
      {'host': 'machine3.zone3', 'score': 6}],
    'name': 'five pods, 3 matching (z2=2, z3=1)',
    'pod': build_pod('', {'baz': 'blah', 'label1': 'l1'}, None),
    'pods': [
      build_pod('machine1.zone1', {'baz': 'blah', 'label2': 'l2'}, None),
      build_pod('machine1.zone2', {'baz': 'blah', 'label1': 'l1'}, None),
      build_pod('machine2.zone2', {'baz': 'blah', 'label1': 'l1'}, None),
      build_pod('machine1.zone3', {'baz': 'blah', 'label2': 'l2'}, None),
      build_pod('machine2.zone3', {'baz': 'blah', 'label1': 'l1'}, None)],
    'services': [{'spec': {'selector': {'baz': 'blah', 'label1': 'l1'}}}]},
  {
    'expectedList': [
      {'host': 'machine1.zone1', 'score': 0},
      {'host': 'machine1.zone2', 'score': 0},
      {'host': 'machine2.zone2', 'score': 3},
      {'host': 'machine1.zone3', 'score': 0},
      {'host': 'machine2.zone3', 'score': 3},
      {'host': 'machine3.zone3', 'score': 3}],
    'name': 'four pods, 3 matching (z1=1, z2=1, z3=1)',
    'pod': build_pod('', {'baz': 'blah', 'label1': 'l1'}, None),
    'pods': [
      build_pod('machine1.zone1', {'baz': 'blah', 'label1': 'l1'}, None),
      build_pod('machine1.zone2', {'baz': 'blah', 'label1': 'l1'}, None),
      build_pod('machine2.zone2', {'baz': 'blah', 'label2': 'l2'}, None),
      build_pod('machine1.zone3', {'baz': 'blah', 'label1': 'l1'}, None)],
    'services': [{'spec': {'selector': {'baz': 'blah', 'label1': 'l1'}}}]},
  {
    'expectedList': [
      {'host': 'machine1.zone1', 'score': 0},
      {'host': 'machine1.zone2', 'score': 0},
      {'host': 'machine2.zone2', 'score': 3},
      {'host': 'machine1.zone3', 'score': 0},
      {'host': 'machine2.zone3', 'score': 3},
      {'host': 'machine3.zone3', 'score': 3}],
    'name': 'four pods, 3 matching (z1=1, z2=1, z3=1)',
    'pod': build_pod('', {'baz': 'blah', 'label1': 'l1'}, None),
    'pods': [
      build_pod('machine1.zone1', {'baz': 'blah', 'label1': 'l1'}, None),
      build_pod('machine1.zone2', {'baz': 'blah', 'label1': 'l1'}, None),
      build_pod('machine1.zone3', {'baz': 'blah', 'label1': 'l1'}, None),
      build_pod('machine2.zone2', {'baz': 'blah', 'label2': 'l2'}, None)],
    'services': [{'spec': {'selector': {'baz': 'blah', 'label1': 'l1'}}}]},
  {
    'expectedList': [
      {'host': 'machine1.zone1', 'score': 10},
      {'host': 'machine1.zone2', 'score': 5},
      {'host': 'machine2.zone2', 'score': 6},
      {'host': 'machine1.zone3', 'score': 0},
      {'host': 'machine2.zone3', 'score': 3},
      {'host': 'machine3.zone3', 'score': 3}],
    'name': 'Replication controller spreading (z1=0, z2=1, z3=2)',
    'pod': build_pod(
      '',
      {'baz': 'blah', 'label1': 'l1'},
      controller_ref('ReplicationController', 'name', 'abc123')),
    'pods': [
      build_pod(
        'machine1.zone3',
        {'baz': 'blah', 'label1': 'l1'},
        controller_ref('ReplicationController', 'name', 'abc123')),
      build_pod(
        'machine1.zone2',
        {'baz': 'blah', 'label1': 'l1'},
        controller_ref('ReplicationController', 'name', 'abc123')),
      build_pod(
        'machine1.zone3',
        {'baz': 'blah', 'label1': 'l1'},
        controller_ref('ReplicationController', 'name', 'abc123'))],
    'rcs': [{'spec': {'selector': {'baz': 'blah', 'label1': 'l1'}}}]}]

ZONE_SPREAD = [
  {
    'expectedList': [
      {'host': 'machine11', 'score': 10},
      {'host': 'machine12', 'score': 10},
      {'host': 'machine21', 'score': 10},
      {'host': 'machine22', 'score': 10},
      {'host': 'machine01', 'score': 0},
      {'host': 'machine02', 'score': 0}],
    'name': 'nothing scheduled',
    'nodes': {
      'machine01': {'name': 'value'},
      'machine02': {'name': 'value'},
      'machine11': {'zone': 'zone1'},
      'machine12': {'zone': 'zone1'},
      'machine21': {'zone': 'zone2'},
      'machine22': {'zone': 'zone2'}},
    'pod': {}},
  {
    'expectedList': [
      {'host': 'machine11', 'score': 10},
      {'host': 'machine12', 'score': 10},
      {'host': 'machine21', 'score': 10},
      {'host': 'machine22', 'score': 10},
      {'host': 'machine01', 'score': 0},
      {'host': 'machine02', 'score': 0}],
    'name': 'no services',
    'nodes': {
      'machine01': {'name': 'value'},
      'machine02': {'name': 'value'},
      'machine11': {'zone': 'zone1'},
      'machine12': {'zone': 'zone1'},
      'machine21': {'zone': 'zone2'},
      'machine22': {'zone': 'zone2'}},
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [{'spec': {'nodeName': 'machine11'}}]},
  {
    'expectedList': [
      {'host': 'machine11', 'score': 10},
      {'host': 'machine12', 'score': 10},
      {'host': 'machine21', 'score': 10},
      {'host': 'machine22', 'score': 10},
      {'host': 'machine01', 'score': 0},
      {'host': 'machine02', 'score': 0}],
    'name': 'different services',
    'nodes': {
      'machine01': {'name': 'value'},
      'machine02': {'name': 'value'},
      'machine11': {'zone': 'zone1'},
      'machine12': {'zone': 'zone1'},
      'machine21': {'zone': 'zone2'},
      'machine22': {'zone': 'zone2'}},
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [{'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine11'}}],
    'services': [{'spec': {'selector': {'key': 'value'}}}]},
  {
    'expectedList': [
      {'host': 'machine11', 'score': 10},
      {'host': 'machine12', 'score': 10},
      {'host': 'machine21', 'score': 0},
      {'host': 'machine22', 'score': 0},
      {'host': 'machine01', 'score': 0},
      {'host': 'machine02', 'score': 0}],
    'name': 'three pods, one service pod',
    'nodes': {
      'machine01': {'name': 'value'},
      'machine02': {'name': 'value'},
      'machine11': {'zone': 'zone1'},
      'machine12': {'zone': 'zone1'},
      'machine21': {'zone': 'zone2'},
      'machine22': {'zone': 'zone2'}},
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine01'}},
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine11'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine21'}}],
    'services': [{'spec': {'selector': {'baz': 'blah', 'foo': 'bar'}}}]},
  {
    'expectedList': [
      {'host': 'machine11', 'score': 5},
      {'host': 'machine12', 'score': 5},
      {'host': 'machine21', 'score': 5},
      {'host': 'machine22', 'score': 5},
      {'host': 'machine01', 'score': 0},
      {'host': 'machine02', 'score': 0}],
    'name': 'three pods, two service pods on different machines',
    'nodes': {
      'machine01': {'name': 'value'},
      'machine02': {'name': 'value'},
      'machine11': {'zone': 'zone1'},
      'machine12': {'zone': 'zone1'},
      'machine21': {'zone': 'zone2'},
      'machine22': {'zone': 'zone2'}},
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine11'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine11'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine21'}}],
    'services': [{'spec': {'selector': {'baz': 'blah', 'foo': 'bar'}}}]},
  {
    'expectedList': [
      {'host': 'machine11', 'score': 0},
      {'host': 'machine12', 'score': 0},
      {'host': 'machine21', 'score': 10},
      {'host': 'machine22', 'score': 10},
      {'host': 'machine01', 'score': 0},
      {'host': 'machine02', 'score': 0}],
    'name': 'three service label match pods in different namespaces',
    'nodes': {
      'machine01': {'name': 'value'},
      'machine02': {'name': 'value'},
      'machine11': {'zone': 'zone1'},
      'machine12': {'zone': 'zone1'},
      'machine21': {'zone': 'zone2'},
      'machine22': {'zone': 'zone2'}},
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}, 'namespace': 'default'}},
    'pods': [
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine11'}},
      {
        'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}, 'namespace': 'default'},
        'spec': {'nodeName': 'machine11'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine21'}},
      {
        'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}, 'namespace': 'ns1'},
        'spec': {'nodeName': 'machine21'}}],
    'services': [
      {'metadata': {'namespace': 'default'}, 'spec': {'selector': {'baz': 'blah', 'foo': 'bar'}}}]},
  {
    'expectedList': [
      {'host': 'machine11', 'score': 6},
      {'host': 'machine12', 'score': 6},
      {'host': 'machine21', 'score': 3},
      {'host': 'machine22', 'score': 3},
      {'host': 'machine01', 'score': 0},
      {'host': 'machine02', 'score': 0}],
    'name': 'four pods, three service pods',
    'nodes': {
      'machine01': {'name': 'value'},
      'machine02': {'name': 'value'},
      'machine11': {'zone': 'zone1'},
      'machine12': {'zone': 'zone1'},
      'machine21': {'zone': 'zone2'},
      'machine22': {'zone': 'zone2'}},
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine11'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine11'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine21'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine21'}}],
    'services': [{'spec': {'selector': {'baz': 'blah', 'foo': 'bar'}}}]},
  {
    'expectedList': [
      {'host': 'machine11', 'score': 3},
      {'host': 'machine12', 'score': 3},
      {'host': 'machine21', 'score': 6},
      {'host': 'machine22', 'score': 6},
      {'host': 'machine01', 'score': 0},
      {'host': 'machine02', 'score': 0}],
    'name': 'service with partial pod label matches',
    'nodes': {
      'machine01': {'name': 'value'},
      'machine02': {'name': 'value'},
      'machine11': {'zone': 'zone1'},
      'machine12': {'zone': 'zone1'},
      'machine21': {'zone': 'zone2'},
      'machine22': {'zone': 'zone2'}},
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [
      {'metadata': {'labels': {'bar': 'foo', 'baz': 'blah'}}, 'spec': {'nodeName': 'machine11'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine11'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine21'}}],
    'services': [{'spec': {'selector': {'baz': 'blah'}}}]},
  {
    'expectedList': [
      {'host': 'machine11', 'score': 7},
      {'host': 'machine12', 'score': 7},
      {'host': 'machine21', 'score': 5},
      {'host': 'machine22', 'score': 5},
      {'host': 'machine01', 'score': 0},
      {'host': 'machine02', 'score': 0}],
    'name': 'service pod on non-zoned node',
    'nodes': {
      'machine01': {'name': 'value'},
      'machine02': {'name': 'value'},
      'machine11': {'zone': 'zone1'},
      'machine12': {'zone': 'zone1'},
      'machine21': {'zone': 'zone2'},
      'machine22': {'zone': 'zone2'}},
    'pod': {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}},
    'pods': [
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine01'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine11'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine21'}},
      {'metadata': {'labels': {'baz': 'blah', 'foo': 'bar'}}, 'spec': {'nodeName': 'machine21'}}],
    'services': [{'spec': {'selector': {'baz': 'blah', 'foo': 'bar'}}}]}]


@pytest.mark.parametrize("case", SELECTOR_SPREAD, ids=[c["name"] for c in SELECTOR_SPREAD])
def test_selector_spread(case: dict[str, Any]) -> None:
    nodes = [node(n) for n in case["nodes"]]
    pods = [in_namespace(p) for p in case.get("pods") or []]
    result = priority("SelectorSpreadPriority", in_namespace(case["pod"]), nodes, pods, others=controllers(case))
    assert result == expected(case["expectedList"])


@pytest.mark.parametrize("case", ZONE_SELECTOR_SPREAD, ids=[c["name"] for c in ZONE_SELECTOR_SPREAD])
def test_zone_selector_spread(case: dict[str, Any]) -> None:
    nodes = [node(n, labels=labels) for n, labels in ZONE_LABELED_NODES.items()]
    pods = [in_namespace(p) for p in case.get("pods") or []]
    result = priority("SelectorSpreadPriority", in_namespace(case["pod"]), nodes, pods, others=controllers(case))
    assert result == expected(case["expectedList"])


@pytest.mark.parametrize("case", ZONE_SPREAD, ids=[c["name"] for c in ZONE_SPREAD])
def test_zone_spread_service_anti_affinity(case: dict[str, Any]) -> None:
    nodes = [as_node({"metadata": {"name": n, "labels": labels}}) for n, labels in case["nodes"].items()]
    pods = [in_namespace(p) for p in case.get("pods") or []]
    result = priority("ServiceAntiAffinity", in_namespace(case["pod"]), nodes, pods, {"label": "zone"},
                      others=controllers(case))
    assert result == expected(case["expectedList"])


def test_service_spreading_counts_services_only() -> None:
    nodes = [node("a"), node("b")]
    pods = [{"metadata": {"labels": {"app": "x"}}, "spec": {"nodeName": "a"}}]
    rs = obj("ReplicaSet", "rs", "default", spec={"selector": {"matchLabels": {"app": "x"}}})
    incoming = {"metadata": {"labels": {"app": "x"}}}
    assert priority("SelectorSpreadPriority", incoming, nodes, pods, others=[rs]) == {"a": 0, "b": 10}
    assert priority("ServiceSpreadingPriority", incoming, nodes, pods, others=[rs]) == {"a": 10, "b": 10}


def test_listers_skip_empty_selectors_and_terminating_pods() -> None:
    # The real listers (not upstream's test fakes): a Service without a selector and a ReplicaSet with an
    # empty one select nothing; a pod being deleted is not counted.
    nodes = [node("a"), node("b")]
    pods = [{"metadata": {"labels": {"app": "x"}}, "spec": {"nodeName": "a"}},
            {"metadata": {"labels": {"app": "x"}, "deletionTimestamp": "2020-01-01T00:00:00Z"},
             "spec": {"nodeName": "b"}}]
    others = [obj("Service", "svc", "default", spec={}),
              obj("ReplicaSet", "rs", "default", spec={"selector": {}})]
    incoming = {"metadata": {"labels": {"app": "x"}}}
    assert priority("SelectorSpreadPriority", incoming, nodes, pods, others=others) == {"a": 10, "b": 10}
    others.append(obj("StatefulSet", "ss", "default", spec={"selector": {"matchLabels": {"app": "x"}}}))
    assert priority("SelectorSpreadPriority", incoming, nodes, pods, others=others) == {"a": 0, "b": 10}
