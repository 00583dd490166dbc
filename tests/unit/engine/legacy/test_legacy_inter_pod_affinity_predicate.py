"""v1.12 MatchInterPodAffinity against upstream's tables, converted to data from k8s.io/kubernetes v1.12.10
pkg/scheduler/algorithm/predicates/predicates_test.go (TestInterPodAffinity,
TestInterPodAffinityWithMultipleNodes): the Go literals as their JSON form, reasons by upstream's names."""

from __future__ import annotations

from typing import Any

import pytest
from test_legacy_harness import as_node, as_pod, pod, verdicts

REASONS = {
    "ErrPodAffinityNotMatch": "node(s) didn't match pod affinity/anti-affinity",
    "ErrPodAffinityRulesNotMatch": "node(s) didn't match pod affinity rules",
    "ErrPodAntiAffinityRulesNotMatch": "node(s) didn't match pod anti-affinity rules",
    "ErrExistingPodsAntiAffinityRulesNotMatch": "node(s) didn't satisfy existing pods anti-affinity rules",
}


INTER_POD_AFFINITY = [
  {
    'fits': True,
    'name': ('A pod that has no required pod affinity scheduling rules can schedule onto a node '
             'with no existing pods'),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {}},
  {
    'fits': True,
    'name': ('satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In '
             'operator that matches the existing pod'),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'In', 'values': ['securityscan', 'value2']}]},
                'topologyKey': 'region'}]}}}},
    'pods': [{'metadata': {'labels': {'service': 'securityscan'}}, 'spec': {'nodeName': 'machine1'}}]},
  {
    'fits': True,
    'name': ('satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity '
             'using not in operator in labelSelector that matches the existing pod'),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'NotIn', 'values': ['securityscan3', 'value3']}]},
                'topologyKey': 'region'}]}}}},
    'pods': [{'metadata': {'labels': {'service': 'securityscan'}}, 'spec': {'nodeName': 'machine1'}}]},
  {
    'expectFailureReasons': ['ErrPodAffinityNotMatch', 'ErrPodAffinityRulesNotMatch'],
    'fits': False,
    'name': 'Does not satisfy the PodAffinity with labelSelector because of diff Namespace',
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'In', 'values': ['securityscan', 'value2']}]},
                'namespaces': ['DiffNameSpace']}]}}}},
    'pods': [
      {
        'metadata': {'labels': {'service': 'securityscan'}, 'namespace': 'ns'},
        'spec': {'nodeName': 'machine1'}}]},
  {
    'expectFailureReasons': ['ErrPodAffinityNotMatch', 'ErrPodAffinityRulesNotMatch'],
    'fits': False,
    'name': "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'service': 'securityscan'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'In', 'values': ['antivirusscan', 'value2']}]}}]}}}},
    'pods': [{'metadata': {'labels': {'service': 'securityscan'}}, 'spec': {'nodeName': 'machine1'}}]},
  {
    'fits': True,
    'name': ('satisfies the PodAffinity with different label Operators in multiple '
             'RequiredDuringSchedulingIgnoredDuringExecution '),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'Exists'},
                    {'key': 'wrongkey', 'operator': 'DoesNotExist'}]},
                'topologyKey': 'region'},
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'In', 'values': ['securityscan']},
                    {'key': 'service', 'operator': 'NotIn', 'values': ['WrongValue']}]},
                'topologyKey': 'region'}]}}}},
    'pods': [{'metadata': {'labels': {'service': 'securityscan'}}, 'spec': {'nodeName': 'machine1'}}]},
  {
    'expectFailureReasons': ['ErrPodAffinityNotMatch', 'ErrPodAffinityRulesNotMatch'],
    'fits': False,
    'name': ('The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot '
             "schedule onto the node because one of the matchExpression item don't match."),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'Exists'},
                    {'key': 'wrongkey', 'operator': 'DoesNotExist'}]},
                'topologyKey': 'region'},
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'In', 'values': ['securityscan2']},
                    {'key': 'service', 'operator': 'NotIn', 'values': ['WrongValue']}]},
                'topologyKey': 'region'}]}}}},
    'pods': [{'metadata': {'labels': {'service': 'securityscan'}}, 'spec': {'nodeName': 'machine1'}}]},
  {
    'fits': True,
    'name': 'satisfies the PodAffinity and PodAntiAffinity with the existing pod',
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'In', 'values': ['securityscan', 'value2']}]},
                'topologyKey': 'region'}]},
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'In', 'values': ['antivirusscan', 'value2']}]},
                'topologyKey': 'node'}]}}}},
    'pods': [{'metadata': {'labels': {'service': 'securityscan'}}, 'spec': {'nodeName': 'machine1'}}]},
  {
    'fits': True,
    'name': ('satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the '
             'existing pod'),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'In', 'values': ['securityscan', 'value2']}]},
                'topologyKey': 'region'}]},
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'In', 'values': ['antivirusscan', 'value2']}]},
                'topologyKey': 'node'}]}}}},
    'pods': [
      {
        'metadata': {'labels': {'service': 'securityscan'}},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {
                    'matchExpressions': [
                      {'key': 'service', 'operator': 'In', 'values': ['antivirusscan', 'value2']}]},
                  'topologyKey': 'node'}]}},
          'nodeName': 'machine1'}}]},
  {
    'expectFailureReasons': ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch'],
    'fits': False,
    'name': "satisfies the PodAffinity but doesn't satisfies the PodAntiAffinity with the existing pod",
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'In', 'values': ['securityscan', 'value2']}]},
                'topologyKey': 'region'}]},
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'In', 'values': ['securityscan', 'value2']}]},
                'topologyKey': 'zone'}]}}}},
    'pods': [{'metadata': {'labels': {'service': 'securityscan'}}, 'spec': {'nodeName': 'machine1'}}]},
  {
    'expectFailureReasons': ['ErrPodAffinityNotMatch', 'ErrExistingPodsAntiAffinityRulesNotMatch'],
    'fits': False,
    'name': ("satisfies the PodAffinity and PodAntiAffinity but doesn't satisfies PodAntiAffinity "
             'symmetry with the existing pod'),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'service': 'securityscan'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'In', 'values': ['securityscan', 'value2']}]},
                'topologyKey': 'region'}]},
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'In', 'values': ['antivirusscan', 'value2']}]},
                'topologyKey': 'node'}]}}}},
    'pods': [
      {
        'metadata': {'labels': {'service': 'securityscan'}},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {
                    'matchExpressions': [
                      {'key': 'service', 'operator': 'In', 'values': ['securityscan', 'value2']}]},
                  'topologyKey': 'zone'}]}},
          'nodeName': 'machine1'}}]},
  {
    'expectFailureReasons': ['ErrPodAffinityNotMatch', 'ErrPodAffinityRulesNotMatch'],
    'fits': False,
    'name': 'pod matches its own Label in PodAffinity and that matches the existing pod Labels',
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'service': 'securityscan'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [
                    {'key': 'service', 'operator': 'NotIn', 'values': ['securityscan', 'value2']}]},
                'topologyKey': 'region'}]}}}},
    'pods': [{'metadata': {'labels': {'service': 'securityscan'}}, 'spec': {'nodeName': 'machine2'}}]},
  {
    'expectFailureReasons': ['ErrPodAffinityNotMatch', 'ErrExistingPodsAntiAffinityRulesNotMatch'],
    'fits': False,
    'name': ('verify that PodAntiAffinity from existing pod is respected when pod has no '
             "AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing "
             'pod'),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {'metadata': {'labels': {'service': 'securityscan'}}},
    'pods': [
      {
        'metadata': {'labels': {'service': 'securityscan'}},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {
                    'matchExpressions': [
                      {'key': 'service', 'operator': 'In', 'values': ['securityscan', 'value2']}]},
                  'topologyKey': 'zone'}]}},
          'nodeName': 'machine1'}}]},
  {
    'fits': True,
    'name': ('verify that PodAntiAffinity from existing pod is respected when pod has no '
             'AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod'),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {'metadata': {'labels': {'service': 'securityscan'}}},
    'pods': [
      {
        'metadata': {'labels': {'service': 'securityscan'}},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {
                    'matchExpressions': [
                      {'key': 'service', 'operator': 'NotIn', 'values': ['securityscan', 'value2']}]},
                  'topologyKey': 'zone'}]}},
          'nodeName': 'machine1'}}]},
  {
    'expectFailureReasons': ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch'],
    'fits': False,
    'name': ("satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity "
             'symmetry with incoming pod'),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'service': 'securityscan'}},
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {'matchExpressions': [{'key': 'service', 'operator': 'Exists'}]},
                'topologyKey': 'region'},
              {
                'labelSelector': {'matchExpressions': [{'key': 'security', 'operator': 'Exists'}]},
                'topologyKey': 'region'}]}}}},
    'pods': [
      {
        'metadata': {'labels': {'security': 'S1'}},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {'matchExpressions': [{'key': 'security', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'}]}},
          'nodeName': 'machine1'}}]},
  {
    'expectFailureReasons': ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch'],
    'fits': False,
    'name': ('PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each '
             'other on AffinityTerms'),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'service': 'securityscan'}},
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {'matchExpressions': [{'key': 'service', 'operator': 'Exists'}]},
                'topologyKey': 'zone'},
              {
                'labelSelector': {'matchExpressions': [{'key': 'security', 'operator': 'Exists'}]},
                'topologyKey': 'zone'}]}}}},
    'pods': [
      {
        'metadata': {'labels': {'security': 'S1'}},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {'matchExpressions': [{'key': 'security', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'}]}},
          'nodeName': 'machine1'}}]},
  {
    'expectFailureReasons': ['ErrPodAffinityNotMatch', 'ErrExistingPodsAntiAffinityRulesNotMatch'],
    'fits': False,
    'name': ('PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each '
             'other on AffinityTerms'),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {'matchExpressions': [{'key': 'security', 'operator': 'Exists'}]},
                'topologyKey': 'zone'}]}}}},
    'pods': [
      {
        'metadata': {'labels': {'service': 'securityscan'}},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {'matchExpressions': [{'key': 'service', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'},
                {
                  'labelSelector': {'matchExpressions': [{'key': 'security', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'}]}},
          'nodeName': 'machine1'}}]},
  {
    'expectFailureReasons': ['ErrPodAffinityNotMatch', 'ErrExistingPodsAntiAffinityRulesNotMatch'],
    'fits': False,
    'name': ('PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each '
             'other on AffinityTerms'),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'abc': '', 'xyz': ''}},
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {'matchExpressions': [{'key': 'abc', 'operator': 'Exists'}]},
                'topologyKey': 'zone'},
              {
                'labelSelector': {'matchExpressions': [{'key': 'def', 'operator': 'Exists'}]},
                'topologyKey': 'zone'}]}}}},
    'pods': [
      {
        'metadata': {'labels': {'def': '', 'xyz': ''}},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {'matchExpressions': [{'key': 'abc', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'},
                {
                  'labelSelector': {'matchExpressions': [{'key': 'def', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'}]}},
          'nodeName': 'machine1'}}]},
  {
    'expectFailureReasons': ['ErrPodAffinityNotMatch', 'ErrExistingPodsAntiAffinityRulesNotMatch'],
    'fits': False,
    'name': ('PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each '
             'other on AffinityTerms'),
    'node': {'metadata': {'labels': {'region': 'r1', 'zone': 'z11'}, 'name': 'machine1'}},
    'pod': {
      'metadata': {'labels': {'def': '', 'xyz': ''}},
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {'matchExpressions': [{'key': 'abc', 'operator': 'Exists'}]},
                'topologyKey': 'zone'},
              {
                'labelSelector': {'matchExpressions': [{'key': 'def', 'operator': 'Exists'}]},
                'topologyKey': 'zone'}]}}}},
    'pods': [
      {
        'metadata': {'labels': {'abc': '', 'xyz': ''}},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {'matchExpressions': [{'key': 'abc', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'},
                {
                  'labelSelector': {'matchExpressions': [{'key': 'def', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'}]}},
          'nodeName': 'machine1'}}]}]


MULTIPLE_NODES = [
  {
    'fits': {'machine1': True, 'machine2': True, 'machine3': False},
    'name': ('A pod can be scheduled onto all the nodes that have the same topology key & label '
             'value with one of them has an existing pod that match the affinity rules'),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'az': 'az1', 'region': 'China'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine3'}}],
    'nodesExpectAffinityFailureReasons': [
      None,
      None,
      ['ErrPodAffinityNotMatch', 'ErrPodAffinityRulesNotMatch']],
    'pod': {
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [{'key': 'foo', 'operator': 'In', 'values': ['bar']}]},
                'topologyKey': 'region'}]}}}},
    'pods': [{'metadata': {'labels': {'foo': 'bar'}, 'name': 'p1'}, 'spec': {'nodeName': 'machine1'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': True},
    'name': ('NodeA and nodeB have same topologyKey and label value. NodeA does not satisfy node '
             'affinity rule, but has an existing pod that match the inter pod affinity rule. The '
             'pod can be scheduled onto nodeB.'),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'h1', 'region': 'r1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'h2', 'region': 'r1'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [None, None],
    'pod': {
      'spec': {
        'affinity': {
          'nodeAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': {
              'nodeSelectorTerms': [
                {'matchExpressions': [{'key': 'hostname', 'operator': 'NotIn', 'values': ['h1']}]}]}},
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [{'key': 'foo', 'operator': 'In', 'values': ['abc']}]},
                'topologyKey': 'region'}]}}}},
    'pods': [
      {'metadata': {'labels': {'foo': 'abc'}}, 'spec': {'nodeName': 'nodeA'}},
      {'metadata': {'labels': {'foo': 'def'}}, 'spec': {'nodeName': 'nodeB'}}]},
  {
    'fits': {'nodeA': True, 'nodeB': True},
    'name': ('The affinity rule is to schedule all of the pods of this collection to the same zone. '
             'The first pod of the collection should not be blocked from being scheduled onto any '
             "node, even there's no existing pod that match the rule anywhere."),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'h1', 'zone': 'az1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'h2', 'zone': 'az2'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [None, None],
    'pod': {
      'metadata': {'labels': {'foo': 'bar', 'service': 'securityscan'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [{'key': 'foo', 'operator': 'In', 'values': ['bar']}]},
                'topologyKey': 'zone'},
              {
                'labelSelector': {
                  'matchExpressions': [{'key': 'service', 'operator': 'In', 'values': ['securityscan']}]},
                'topologyKey': 'zone'}]}}}},
    'pods': [{'metadata': {'labels': {'foo': 'bar'}, 'name': 'p1'}, 'spec': {'nodeName': 'nodeA'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': False},
    'name': ('NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that '
             'match the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.'),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'nodeA', 'region': 'r1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'nodeB', 'region': 'r1'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch'],
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch']],
    'pod': {
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [{'key': 'foo', 'operator': 'In', 'values': ['abc']}]},
                'topologyKey': 'region'}]}}}},
    'pods': [{'metadata': {'labels': {'foo': 'abc'}}, 'spec': {'nodeName': 'nodeA'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': False},
    'name': ('This test ensures that anti-affinity matches a pod when any term of the anti-affinity '
             'rule matches a pod.'),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'nodeA', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'nodeB', 'region': 'r1', 'zone': 'z2'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch'],
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch']],
    'pod': {
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [{'key': 'foo', 'operator': 'In', 'values': ['abc']}]},
                'topologyKey': 'region'},
              {
                'labelSelector': {
                  'matchExpressions': [{'key': 'service', 'operator': 'In', 'values': ['securityscan']}]},
                'topologyKey': 'zone'}]}}}},
    'pods': [
      {'metadata': {'labels': {'foo': 'abc', 'service': 'securityscan'}}, 'spec': {'nodeName': 'nodeA'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': False, 'nodeC': True},
    'name': ('NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that '
             'match the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB '
             'but can be scheduled onto nodeC'),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'az': 'az1', 'region': 'China'}, 'name': 'nodeB'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'nodeC'}}],
    'nodesExpectAffinityFailureReasons': [
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch'],
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch'],
      None],
    'pod': {
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [{'key': 'foo', 'operator': 'In', 'values': ['abc']}]},
                'topologyKey': 'region'}]}}}},
    'pods': [{'metadata': {'labels': {'foo': 'abc'}}, 'spec': {'nodeName': 'nodeA'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': False, 'nodeC': False, 'nodeD': True},
    'name': ('NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that '
             'match the inter pod affinity rule. NodeC has an existing pod that match the inter pod '
             'affinity rule. The pod can not be scheduled onto nodeA, nodeB and nodeC but can be '
             'schedulerd onto nodeD'),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'az': 'az1', 'region': 'China'}, 'name': 'nodeB'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'nodeC'}},
      {'metadata': {'labels': {'region': 'US'}, 'name': 'nodeD'}}],
    'nodesExpectAffinityFailureReasons': [
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch'],
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch'],
      ['ErrPodAffinityNotMatch', 'ErrExistingPodsAntiAffinityRulesNotMatch'],
      None],
    'nometa': True,
    'pod': {
      'metadata': {'labels': {'foo': '123'}},
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [{'key': 'foo', 'operator': 'In', 'values': ['bar']}]},
                'topologyKey': 'region'}]}}}},
    'pods': [
      {'metadata': {'labels': {'foo': 'bar'}}, 'spec': {'nodeName': 'nodeA'}},
      {
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'foo', 'operator': 'In', 'values': ['123']}]},
                  'topologyKey': 'region'}]}},
          'nodeName': 'nodeC'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': False, 'nodeC': True},
    'name': ('NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that '
             'match the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, '
             'but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod '
             'affinity rule but in different namespace)'),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'az': 'az1', 'region': 'China'}, 'name': 'nodeB'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'nodeC'}}],
    'nodesExpectAffinityFailureReasons': [
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch'],
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch'],
      None],
    'pod': {
      'metadata': {'labels': {'foo': '123'}, 'namespace': 'NS1'},
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {
                  'matchExpressions': [{'key': 'foo', 'operator': 'In', 'values': ['bar']}]},
                'topologyKey': 'region'}]}}}},
    'pods': [
      {'metadata': {'labels': {'foo': 'bar'}, 'namespace': 'NS1'}, 'spec': {'nodeName': 'nodeA'}},
      {
        'metadata': {'namespace': 'NS2'},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'foo', 'operator': 'In', 'values': ['123']}]},
                  'topologyKey': 'region'}]}},
          'nodeName': 'nodeC'}}]},
  {
    'fits': {'nodeA': True, 'nodeB': True},
    'name': ("Test existing pod's anti-affinity: if an existing pod has a term with invalid "
             'topologyKey, labelSelector of the term is firstly checked, and then topologyKey of '
             'the term is also checked'),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'nodeA', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'nodeB', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [],
    'pod': {'metadata': {'labels': {'foo': ''}}},
    'pods': [
      {
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {'matchExpressions': [{'key': 'foo', 'operator': 'Exists'}]},
                  'topologyKey': 'invalid-node-label'}]}},
          'nodeName': 'nodeA'}}]},
  {
    'fits': {'nodeA': True, 'nodeB': True},
    'name': ("Test incoming pod's anti-affinity: even if lableSelector matches, we still check if "
             'topologyKey matches'),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'nodeA', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'nodeB', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [],
    'pod': {
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {'matchExpressions': [{'key': 'foo', 'operator': 'Exists'}]},
                'topologyKey': 'invalid-node-label'}]}}}},
    'pods': [{'metadata': {'labels': {'foo': ''}}, 'spec': {'nodeName': 'nodeA'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': False},
    'name': ("Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it "
             "violates each existingPod's terms on all nodes"),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'nodeA', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'nodeB', 'region': 'r1', 'zone': 'z2'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [
      ['ErrPodAffinityNotMatch', 'ErrExistingPodsAntiAffinityRulesNotMatch'],
      ['ErrPodAffinityNotMatch', 'ErrExistingPodsAntiAffinityRulesNotMatch']],
    'pod': {'metadata': {'labels': {'bar': '', 'foo': ''}}},
    'pods': [
      {
        'metadata': {'name': 'pod1'},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {'matchExpressions': [{'key': 'foo', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'}]}},
          'nodeName': 'nodeA'}},
      {
        'metadata': {'name': 'pod2'},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {'matchExpressions': [{'key': 'bar', 'operator': 'Exists'}]},
                  'topologyKey': 'region'}]}},
          'nodeName': 'nodeA'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': False},
    'name': ("Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at "
             'least violates one anti-affinity rule of existingPod'),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'nodeA', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'nodeB', 'region': 'r1', 'zone': 'z2'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch'],
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch']],
    'pod': {
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {'matchExpressions': [{'key': 'foo', 'operator': 'Exists'}]},
                'topologyKey': 'zone'},
              {
                'labelSelector': {'matchExpressions': [{'key': 'bar', 'operator': 'Exists'}]},
                'topologyKey': 'region'}]}}}},
    'pods': [
      {'metadata': {'labels': {'foo': ''}}, 'spec': {'nodeName': 'nodeA'}},
      {'metadata': {'labels': {'bar': ''}}, 'spec': {'nodeName': 'nodeB'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': True},
    'name': ("Test existing pod's anti-affinity: only when labelSelector and topologyKey both "
             "matches, it's counted as a single term match - case when one term has invalid "
             'topologyKey'),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'nodeA', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'nodeB', 'region': 'r1', 'zone': 'z2'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [
      ['ErrPodAffinityNotMatch', 'ErrExistingPodsAntiAffinityRulesNotMatch']],
    'pod': {'metadata': {'labels': {'bar': '', 'foo': ''}}},
    'pods': [
      {
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {'matchExpressions': [{'key': 'foo', 'operator': 'Exists'}]},
                  'topologyKey': 'invalid-node-label'},
                {
                  'labelSelector': {'matchExpressions': [{'key': 'bar', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'}]}},
          'nodeName': 'nodeA'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': True},
    'name': ("Test incoming pod's anti-affinity: only when labelSelector and topologyKey both "
             "matches, it's counted as a single term match - case when one term has invalid "
             'topologyKey'),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'nodeA', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'nodeB', 'region': 'r1', 'zone': 'z2'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch']],
    'pod': {
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {'matchExpressions': [{'key': 'foo', 'operator': 'Exists'}]},
                'topologyKey': 'invalid-node-label'},
              {
                'labelSelector': {'matchExpressions': [{'key': 'bar', 'operator': 'Exists'}]},
                'topologyKey': 'zone'}]}}}},
    'pods': [
      {'metadata': {'labels': {'bar': '', 'foo': ''}, 'name': 'podA'}, 'spec': {'nodeName': 'nodeA'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': False},
    'name': ("Test existing pod's anti-affinity: only when labelSelector and topologyKey both "
             "matches, it's counted as a single term match - case when all terms have valid "
             'topologyKey'),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'nodeA', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'nodeB', 'region': 'r1', 'zone': 'z2'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [
      ['ErrPodAffinityNotMatch', 'ErrExistingPodsAntiAffinityRulesNotMatch'],
      ['ErrPodAffinityNotMatch', 'ErrExistingPodsAntiAffinityRulesNotMatch']],
    'pod': {'metadata': {'labels': {'bar': '', 'foo': ''}}},
    'pods': [
      {
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {'matchExpressions': [{'key': 'foo', 'operator': 'Exists'}]},
                  'topologyKey': 'region'},
                {
                  'labelSelector': {'matchExpressions': [{'key': 'bar', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'}]}},
          'nodeName': 'nodeA'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': False},
    'name': ("Test incoming pod's anti-affinity: only when labelSelector and topologyKey both "
             "matches, it's counted as a single term match - case when all terms have valid "
             'topologyKey'),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'nodeA', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'nodeB', 'region': 'r1', 'zone': 'z2'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch'],
      ['ErrPodAffinityNotMatch', 'ErrPodAntiAffinityRulesNotMatch']],
    'pod': {
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {'matchExpressions': [{'key': 'foo', 'operator': 'Exists'}]},
                'topologyKey': 'region'},
              {
                'labelSelector': {'matchExpressions': [{'key': 'bar', 'operator': 'Exists'}]},
                'topologyKey': 'zone'}]}}}},
    'pods': [{'metadata': {'labels': {'bar': '', 'foo': ''}}, 'spec': {'nodeName': 'nodeA'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': False, 'nodeC': True},
    'name': ("Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one "
             'anti-affinity term matches incoming pod, so incoming pod can only be scheduled to '
             'nodeC'),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'nodeA', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'nodeB', 'region': 'r1', 'zone': 'z2'}, 'name': 'nodeB'}},
      {'metadata': {'labels': {'hostname': 'nodeC', 'region': 'r1', 'zone': 'z3'}, 'name': 'nodeC'}}],
    'nodesExpectAffinityFailureReasons': [
      ['ErrPodAffinityNotMatch', 'ErrExistingPodsAntiAffinityRulesNotMatch'],
      ['ErrPodAffinityNotMatch', 'ErrExistingPodsAntiAffinityRulesNotMatch']],
    'pod': {'metadata': {'labels': {'bar': '', 'foo': ''}}},
    'pods': [
      {
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {'matchExpressions': [{'key': 'foo', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'},
                {
                  'labelSelector': {'matchExpressions': [{'key': 'labelA', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'}]}},
          'nodeName': 'nodeA'}},
      {
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {'matchExpressions': [{'key': 'bar', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'},
                {
                  'labelSelector': {'matchExpressions': [{'key': 'labelB', 'operator': 'Exists'}]},
                  'topologyKey': 'zone'}]}},
          'nodeName': 'nodeB'}}]},
  {
    'fits': {'nodeA': True, 'nodeB': True},
    'name': ("Test incoming pod's affinity: firstly check if all affinityTerms matches, and then "
             'check if all topologyKeys match'),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'nodeA', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'nodeB', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [{}, ['ErrPodAffinityNotMatch', 'ErrPodAffinityRulesNotMatch']],
    'pod': {
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {'matchExpressions': [{'key': 'foo', 'operator': 'Exists'}]},
                'topologyKey': 'region'},
              {
                'labelSelector': {'matchExpressions': [{'key': 'bar', 'operator': 'Exists'}]},
                'topologyKey': 'zone'}]}}}},
    'pods': [
      {'metadata': {'labels': {'bar': '', 'foo': ''}, 'name': 'pod1'}, 'spec': {'nodeName': 'nodeA'}}]},
  {
    'fits': {'nodeA': False, 'nodeB': False},
    'name': ("Test incoming pod's affinity: firstly check if all affinityTerms matches, and then "
             'check if all topologyKeys match, and the match logic should be satified on the same '
             'pod'),
    'nodes': [
      {'metadata': {'labels': {'hostname': 'nodeA', 'region': 'r1', 'zone': 'z1'}, 'name': 'nodeA'}},
      {'metadata': {'labels': {'hostname': 'nodeB', 'region': 'r1', 'zone': 'z2'}, 'name': 'nodeB'}}],
    'nodesExpectAffinityFailureReasons': [
      ['ErrPodAffinityNotMatch', 'ErrPodAffinityRulesNotMatch'],
      ['ErrPodAffinityNotMatch', 'ErrPodAffinityRulesNotMatch']],
    'pod': {
      'spec': {
        'affinity': {
          'podAffinity': {
            'requiredDuringSchedulingIgnoredDuringExecution': [
              {
                'labelSelector': {'matchExpressions': [{'key': 'foo', 'operator': 'Exists'}]},
                'topologyKey': 'region'},
              {
                'labelSelector': {'matchExpressions': [{'key': 'bar', 'operator': 'Exists'}]},
                'topologyKey': 'zone'}]}}}},
    'pods': [
      {'metadata': {'labels': {'foo': ''}, 'name': 'pod1'}, 'spec': {'nodeName': 'nodeA'}},
      {'metadata': {'labels': {'bar': ''}, 'name': 'pod2'}, 'spec': {'nodeName': 'nodeB'}}]}]


@pytest.mark.parametrize("case", INTER_POD_AFFINITY, ids=[c["name"] for c in INTER_POD_AFFINITY])
def test_inter_pod_affinity(case: dict[str, Any]) -> None:
    # Upstream's NodeInfo map holds the one node: pods bound elsewhere are not seen (here: their node is absent).
    objects = [as_node(case["node"]), *(as_pod(p) for p in case.get("pods") or [])]
    code, reasons = verdicts("MatchInterPodAffinity", as_pod(case["pod"]), objects)["machine1"]
    if case["fits"]:
        assert (code, reasons) == ("Success", [])
    else:
        assert (code, reasons) == ("Unschedulable", [REASONS[r] for r in case["expectFailureReasons"]])


@pytest.mark.parametrize("case", MULTIPLE_NODES, ids=[c["name"] for c in MULTIPLE_NODES])
def test_inter_pod_affinity_with_multiple_nodes(case: dict[str, Any]) -> None:
    nodes = [as_node(n) for n in case["nodes"]]
    objects = [*nodes, *(as_pod(p) for p in case.get("pods") or [])]
    incoming = as_pod(case["pod"])
    affinity = verdicts("MatchInterPodAffinity", incoming, objects)
    has_node_affinity = bool(((case["pod"].get("spec") or {}).get("affinity") or {}).get("nodeAffinity"))
    selector = verdicts("MatchNodeSelector", incoming, objects) if has_node_affinity else {}
    for i, node_obj in enumerate(nodes):
        name = node_obj["metadata"]["name"]
        code, reasons = affinity[name]
        ok = code == "Success"
        if not ok:
            expected = case["nodesExpectAffinityFailureReasons"][i] or []
            assert (code, reasons) == ("Unschedulable", [REASONS[r] for r in expected]), name
        if name in selector:
            ok = ok and selector[name][0] == "Success"
        assert ok == case["fits"][name], name


def test_invalid_selector_is_an_error_when_a_node_is_checked() -> None:
    incoming = pod(spec={"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}, "topologyKey": "zone"}]}}})
    node_obj = as_node({"metadata": {"name": "n", "labels": {"zone": "z"}}})
    assert verdicts("MatchInterPodAffinity", incoming, [node_obj])["n"][0] == "Error"
