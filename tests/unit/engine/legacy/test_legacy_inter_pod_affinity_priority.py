"""v1.12 InterPodAffinityPriority against upstream's tables, converted to data from k8s.io/kubernetes v1.12.10
pkg/scheduler/algorithm/priorities/interpod_affinity_test.go (TestInterPodAffinityPriority,
TestHardPodAffinitySymmetricWeight)."""

from __future__ import annotations

from typing import Any

import pytest
from test_legacy_harness import as_node, expected, priority

INTER_POD_AFFINITY_PRIORITY = [
  {
    'expectedList': [
      {'host': 'machine1', 'score': 0},
      {'host': 'machine2', 'score': 0},
      {'host': 'machine3', 'score': 0}],
    'name': 'all machines are same priority as Affinity is nil',
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine3'}}],
    'pod': {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': ''}}},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 0},
      {'host': 'machine3', 'score': 0}],
    'name': ('Affinity: pod that matches topology key & pods in nodes will get high score comparing '
             "to otherswhich doesn't match either pods in nodes or in topology key"),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine3'}}],
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S1']}]},
                  'topologyKey': 'region'},
                'weight': 5}]}},
        'nodeName': ''}},
    'pods': [
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'security': 'S2'}}, 'spec': {'nodeName': 'machine2'}},
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine3'}}]},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 10},
      {'host': 'machine3', 'score': 0}],
    'name': ('All the nodes that have the same topology key & label value with one of them has an '
             'existing pod that match the affinity rules, have the same score'),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'az': 'az1', 'region': 'China'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine3'}}],
    'pod': {
      'spec': {
        'affinity': {
          'podAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S1']}]},
                  'topologyKey': 'region'},
                'weight': 5}]}},
        'nodeName': ''}},
    'pods': [{'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine1'}}]},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 5},
      {'host': 'machine3', 'score': 10},
      {'host': 'machine4', 'score': 10},
      {'host': 'machine5', 'score': 5}],
    'name': ('Affinity: nodes in one region has more matching pods comparing to other reqion, so '
             'the region which has more macthes will get high score'),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine3'}},
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine4'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine5'}}],
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S2']}]},
                  'topologyKey': 'region'},
                'weight': 6}]}},
        'nodeName': ''}},
    'pods': [
      {'metadata': {'labels': {'security': 'S2'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'security': 'S2'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'security': 'S2'}}, 'spec': {'nodeName': 'machine2'}},
      {'metadata': {'labels': {'security': 'S2'}}, 'spec': {'nodeName': 'machine3'}},
      {'metadata': {'labels': {'security': 'S2'}}, 'spec': {'nodeName': 'machine4'}},
      {'metadata': {'labels': {'security': 'S2'}}, 'spec': {'nodeName': 'machine5'}}]},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 2},
      {'host': 'machine2', 'score': 10},
      {'host': 'machine3', 'score': 0}],
    'name': ('Affinity: different Label operators and values for pod affinity scheduling '
             'preference, including some match failures '),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine3'}}],
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [
                      {'key': 'security', 'operator': 'NotIn', 'values': ['S1']},
                      {'key': 'security', 'operator': 'In', 'values': ['S2']}]},
                  'topologyKey': 'region'},
                'weight': 8},
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [
                      {'key': 'security', 'operator': 'Exists'},
                      {'key': 'wrongkey', 'operator': 'DoesNotExist'}]},
                  'topologyKey': 'region'},
                'weight': 2}]}},
        'nodeName': ''}},
    'pods': [
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'security': 'S2'}}, 'spec': {'nodeName': 'machine2'}},
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine3'}}]},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 0},
      {'host': 'machine2', 'score': 10},
      {'host': 'machine3', 'score': 0}],
    'name': ('Affinity symmetry: considred only the preferredDuringSchedulingIgnoredDuringExecution '
             'in pod affinity symmetry'),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine3'}}],
    'pod': {'metadata': {'labels': {'security': 'S2'}}, 'spec': {'nodeName': ''}},
    'pods': [
      {
        'metadata': {'labels': {'security': 'S1'}},
        'spec': {
          'affinity': {
            'podAffinity': {
              'preferredDuringSchedulingIgnoredDuringExecution': [
                {
                  'podAffinityTerm': {
                    'labelSelector': {
                      'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S1']}]},
                    'topologyKey': 'region'},
                  'weight': 5}]}},
          'nodeName': 'machine1'}},
      {
        'metadata': {'labels': {'security': 'S2'}},
        'spec': {
          'affinity': {
            'podAffinity': {
              'preferredDuringSchedulingIgnoredDuringExecution': [
                {
                  'podAffinityTerm': {
                    'labelSelector': {
                      'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S2']}]},
                    'topologyKey': 'region'},
                  'weight': 6}]}},
          'nodeName': 'machine2'}}]},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 10},
      {'host': 'machine3', 'score': 0}],
    'name': ('Affinity symmetry: considred RequiredDuringSchedulingIgnoredDuringExecution in pod '
             'affinity symmetry'),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine3'}}],
    'pod': {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': ''}},
    'pods': [
      {
        'metadata': {'labels': {'security': 'S1'}},
        'spec': {
          'affinity': {
            'podAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {
                    'matchExpressions': [
                      {'key': 'security', 'operator': 'In', 'values': ['S1', 'value2']}]},
                  'topologyKey': 'region'},
                {
                  'labelSelector': {
                    'matchExpressions': [
                      {'key': 'security', 'operator': 'Exists'},
                      {'key': 'wrongkey', 'operator': 'DoesNotExist'}]},
                  'topologyKey': 'region'}]}},
          'nodeName': 'machine1'}},
      {
        'metadata': {'labels': {'security': 'S2'}},
        'spec': {
          'affinity': {
            'podAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {
                    'matchExpressions': [
                      {'key': 'security', 'operator': 'In', 'values': ['S1', 'value2']}]},
                  'topologyKey': 'region'},
                {
                  'labelSelector': {
                    'matchExpressions': [
                      {'key': 'security', 'operator': 'Exists'},
                      {'key': 'wrongkey', 'operator': 'DoesNotExist'}]},
                  'topologyKey': 'region'}]}},
          'nodeName': 'machine2'}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 10}],
    'name': 'Anti Affinity: pod that doesnot match existing pods in node will get high score ',
    'nodes': [
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine2'}}],
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S1']}]},
                  'topologyKey': 'az'},
                'weight': 5}]}},
        'nodeName': ''}},
    'pods': [
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'security': 'S2'}}, 'spec': {'nodeName': 'machine2'}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 10}],
    'name': ('Anti Affinity: pod that does not matches topology key & matches the pods in nodes '
             'will get higher score comparing to others '),
    'nodes': [
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine2'}}],
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S1']}]},
                  'topologyKey': 'az'},
                'weight': 5}]}},
        'nodeName': ''}},
    'pods': [
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine2'}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 10}],
    'name': ('Anti Affinity: one node has more matching pods comparing to other node, so the node '
             'which has more unmacthes will get high score'),
    'nodes': [
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine2'}}],
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAntiAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S1']}]},
                  'topologyKey': 'az'},
                'weight': 5}]}},
        'nodeName': ''}},
    'pods': [
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'security': 'S2'}}, 'spec': {'nodeName': 'machine2'}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 0}, {'host': 'machine2', 'score': 10}],
    'name': ('Anti Affinity symmetry: the existing pods in node which has anti affinity match will '
             'get high score'),
    'nodes': [
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'az': 'az2'}, 'name': 'machine2'}}],
    'pod': {'metadata': {'labels': {'security': 'S2'}}, 'spec': {'nodeName': ''}},
    'pods': [
      {
        'metadata': {'labels': {'security': 'S1'}},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'preferredDuringSchedulingIgnoredDuringExecution': [
                {
                  'podAffinityTerm': {
                    'labelSelector': {
                      'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S2']}]},
                    'topologyKey': 'az'},
                  'weight': 5}]}},
          'nodeName': 'machine1'}},
      {
        'metadata': {'labels': {'security': 'S2'}},
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'preferredDuringSchedulingIgnoredDuringExecution': [
                {
                  'podAffinityTerm': {
                    'labelSelector': {
                      'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S1']}]},
                    'topologyKey': 'az'},
                  'weight': 5}]}},
          'nodeName': 'machine2'}}]},
  {
    'expectedList': [{'host': 'machine1', 'score': 10}, {'host': 'machine2', 'score': 0}],
    'name': ('Affinity and Anti Affinity: considered only '
             'preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity'),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine2'}}],
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S1']}]},
                  'topologyKey': 'region'},
                'weight': 8}]},
          'podAntiAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S2']}]},
                  'topologyKey': 'az'},
                'weight': 5}]}},
        'nodeName': ''}},
    'pods': [
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine2'}}]},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 4},
      {'host': 'machine3', 'score': 10},
      {'host': 'machine4', 'score': 10},
      {'host': 'machine5', 'score': 4}],
    'name': ('Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to '
             'schedule and existing pods have the same labels'),
    'nodes': [
      {'metadata': {'labels': {'az': 'az1', 'region': 'China'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine3'}},
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine4'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine5'}}],
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S1']}]},
                  'topologyKey': 'region'},
                'weight': 8}]},
          'podAntiAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S2']}]},
                  'topologyKey': 'az'},
                'weight': 5}]}},
        'nodeName': ''}},
    'pods': [
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine2'}},
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine3'}},
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine3'}},
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine4'}},
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine5'}}]},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 0},
      {'host': 'machine3', 'score': 10},
      {'host': 'machine4', 'score': 0}],
    'name': ('Affinity and Anti Affinity and symmetry: considered only '
             'preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity '
             '& symmetry'),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine3'}},
      {'metadata': {'labels': {'az': 'az2'}, 'name': 'machine4'}}],
    'pod': {
      'metadata': {'labels': {'security': 'S1'}},
      'spec': {
        'affinity': {
          'podAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S1']}]},
                  'topologyKey': 'region'},
                'weight': 8}]},
          'podAntiAffinity': {
            'preferredDuringSchedulingIgnoredDuringExecution': [
              {
                'podAffinityTerm': {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S2']}]},
                  'topologyKey': 'az'},
                'weight': 5}]}},
        'nodeName': ''}},
    'pods': [
      {'metadata': {'labels': {'security': 'S1'}}, 'spec': {'nodeName': 'machine1'}},
      {'metadata': {'labels': {'security': 'S2'}}, 'spec': {'nodeName': 'machine2'}},
      {
        'spec': {
          'affinity': {
            'podAffinity': {
              'preferredDuringSchedulingIgnoredDuringExecution': [
                {
                  'podAffinityTerm': {
                    'labelSelector': {
                      'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S1']}]},
                    'topologyKey': 'region'},
                  'weight': 8}]},
            'podAntiAffinity': {
              'preferredDuringSchedulingIgnoredDuringExecution': [
                {
                  'podAffinityTerm': {
                    'labelSelector': {
                      'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S2']}]},
                    'topologyKey': 'az'},
                  'weight': 5}]}},
          'nodeName': 'machine3'}},
      {
        'spec': {
          'affinity': {
            'podAntiAffinity': {
              'preferredDuringSchedulingIgnoredDuringExecution': [
                {
                  'podAffinityTerm': {
                    'labelSelector': {
                      'matchExpressions': [{'key': 'security', 'operator': 'In', 'values': ['S1']}]},
                    'topologyKey': 'az'},
                  'weight': 5}]}},
          'nodeName': 'machine4'}}]}]

HARD_POD_AFFINITY = [
  {
    'expectedList': [
      {'host': 'machine1', 'score': 10},
      {'host': 'machine2', 'score': 10},
      {'host': 'machine3', 'score': 0}],
    'hardPodAffinityWeight': 1,
    'name': ('Hard Pod Affinity symmetry: hard pod affinity symmetry weights 1 by default, then '
             'nodes that match the hard pod affinity symmetry rules, get a high score'),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine3'}}],
    'pod': {'metadata': {'labels': {'service': 'S1'}}, 'spec': {'nodeName': ''}},
    'pods': [
      {
        'spec': {
          'affinity': {
            'podAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'service', 'operator': 'In', 'values': ['S1']}]},
                  'topologyKey': 'region'}]}},
          'nodeName': 'machine1'}},
      {
        'spec': {
          'affinity': {
            'podAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'service', 'operator': 'In', 'values': ['S1']}]},
                  'topologyKey': 'region'}]}},
          'nodeName': 'machine2'}}]},
  {
    'expectedList': [
      {'host': 'machine1', 'score': 0},
      {'host': 'machine2', 'score': 0},
      {'host': 'machine3', 'score': 0}],
    'hardPodAffinityWeight': 0,
    'name': ('Hard Pod Affinity symmetry: hard pod affinity symmetry is closed(weights 0), then '
             'nodes that match the hard pod affinity symmetry rules, get same score with those not '
             'match'),
    'nodes': [
      {'metadata': {'labels': {'region': 'China'}, 'name': 'machine1'}},
      {'metadata': {'labels': {'region': 'India'}, 'name': 'machine2'}},
      {'metadata': {'labels': {'az': 'az1'}, 'name': 'machine3'}}],
    'pod': {'metadata': {'labels': {'service': 'S1'}}, 'spec': {'nodeName': ''}},
    'pods': [
      {
        'spec': {
          'affinity': {
            'podAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'service', 'operator': 'In', 'values': ['S1']}]},
                  'topologyKey': 'region'}]}},
          'nodeName': 'machine1'}},
      {
        'spec': {
          'affinity': {
            'podAffinity': {
              'requiredDuringSchedulingIgnoredDuringExecution': [
                {
                  'labelSelector': {
                    'matchExpressions': [{'key': 'service', 'operator': 'In', 'values': ['S1']}]},
                  'topologyKey': 'region'}]}},
          'nodeName': 'machine2'}}]}]


@pytest.mark.parametrize("case", INTER_POD_AFFINITY_PRIORITY, ids=[c["name"] for c in INTER_POD_AFFINITY_PRIORITY])
def test_inter_pod_affinity_priority(case: dict[str, Any]) -> None:
    nodes = [as_node(n) for n in case["nodes"]]
    result = priority("InterPodAffinityPriority", case["pod"], nodes, case.get("pods") or [])
    assert result == expected(case["expectedList"])


@pytest.mark.parametrize("case", HARD_POD_AFFINITY, ids=[c["name"] for c in HARD_POD_AFFINITY])
def test_hard_pod_affinity_symmetric_weight(case: dict[str, Any]) -> None:
    nodes = [as_node(n) for n in case["nodes"]]
    args = {"hardPodAffinitySymmetricWeight": case["hardPodAffinityWeight"]}
    result = priority("InterPodAffinityPriority", case["pod"], nodes, case.get("pods") or [], args)
    assert result == expected(case["expectedList"])


def test_counts_only_candidates_but_reads_every_pod() -> None:
    # min and max start at 0 and cover the scored nodes; existing pods count wherever they run.
    term = {"weight": 5, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "db"}},
                                             "topologyKey": "zone"}}
    incoming = {"spec": {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}}}
    nodes = [as_node({"metadata": {"name": n, "labels": {"zone": z}}}) for n, z in
             (("a", "z1"), ("b", "z1"), ("c", "z2"))]
    pods = [{"metadata": {"labels": {"app": "db"}}, "spec": {"nodeName": "a"}}]
    assert priority("InterPodAffinityPriority", incoming, nodes, pods) == {"a": 0, "b": 0, "c": 10}
