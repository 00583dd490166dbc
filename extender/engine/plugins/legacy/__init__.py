"""The 0-10 era: kube-scheduler v1.12's predicates and priorities as plugins, and its DefaultProvider as
the ``legacy`` preset.

Upstream: k8s.io/kubernetes v1.12.10, pkg/scheduler/algorithm/{predicates,priorities},
pkg/scheduler/algorithmprovider/defaults/defaults.go and pkg/scheduler/core/generic_scheduler.go. Each
predicate is a filter plugin under its v1.12 name, each priority a score plugin on the 0..10 scale
(``max_score = 10``, schedulerapi.MaxPriority), with that release's reasons, integer and float64
arithmetic and reduce steps. A v1.12 predicate returned a list of reasons and there was no "unresolvable"
code, so every rejection is Unschedulable; a predicate or priority *error* failed the whole scheduling
attempt, which is an Error status here.

Presets (``profiles: [{schedulerName: legacy, preset: legacy}]``):

- ``legacy``: the DefaultProvider as a v1.12.10 kube-scheduler ran it with its default feature gates.
  TaintNodesByCondition was beta and ON in v1.12, and ``ApplyFeatureGates`` (cmd/kube-scheduler) then
  removed CheckNodeCondition, CheckNodeMemoryPressure, CheckNodeDiskPressure and CheckNodePIDPressure
  (conditions reach the scheduler as taints) and added CheckNodeUnschedulable (PodToleratesNodeTaints was
  already there). ResourceLimitsPriority sat behind an alpha gate and is not included.
- ``legacy-node-conditions``: the DefaultProvider as registered in defaults.go, i.e. with
  TaintNodesByCondition off: CheckNodeCondition and the three pressure predicates instead of
  CheckNodeUnschedulable.

Predicates are listed in v1.12's evaluation order (``predicates.Ordering()``): podFitsOnNode ran them in
that order and, alwaysCheckAllPredicates being false by default, stopped at a node's first failing
predicate, which is what the runtime does with a profile's filters. A profile adding more v1.12
predicates should list them in that order too: CheckNodeCondition, CheckNodeUnschedulable,
GeneralPredicates, HostName, PodFitsHostPorts, MatchNodeSelector, PodFitsResources, NoDiskConflict,
PodToleratesNodeTaints, PodToleratesNodeNoExecuteTaints, CheckNodeLabelPresence, CheckServiceAffinity,
MaxEBSVolumeCount, MaxGCEPDVolumeCount, MaxCSIVolumeCountPred, MaxAzureDiskVolumeCount,
CheckVolumeBinding, NoVolumeZoneConflict, CheckNodeMemoryPressure, CheckNodePIDPressure,
CheckNodeDiskPressure, MatchInterPodAffinity.

Priorities and weights (defaults.go ``defaultPriorities``): SelectorSpreadPriority 1,
InterPodAffinityPriority 1, LeastRequestedPriority 1, BalancedResourceAllocation 1,
NodePreferAvoidPodsPriority 10000, NodeAffinityPriority 1, TaintTolerationPriority 1,
ImageLocalityPriority 1. v1.12's PrioritizeNodes summed ``score * weight`` over the priorities (and added
each extender's ``score * weight``, without the later x10). Other plugins a profile can enable:
MostRequestedPriority (the ClusterAutoscalerProvider's replacement for LeastRequestedPriority),
RequestedToCapacityRatioPriority, ResourceLimitsPriority, EqualPriority, ServiceSpreadingPriority,
ServiceAntiAffinity (args ``label``), NodeLabelPriority (args ``label``, ``presence``), and the
predicates PodFitsResources, HostName, PodFitsHostPorts / PodFitsPorts, MatchNodeSelector,
PodToleratesNodeNoExecuteTaints, CheckNodeLabelPresence (args ``labels``, ``presence``),
CheckServiceAffinity (args ``labels``).

How v1.12 chose the host (for whoever simulates scheduling with this preset; not done here):

1. ``Schedule`` filtered nodes (``findNodesThatFit``) taking them from the cache's NodeTree (zones
   round-robin, each zone's nodes in insertion order; the cursor persists from one scheduling cycle to the
   next and wraps around) and stopping once ``numFeasibleNodesToFind`` feasible nodes were found: all
   nodes below 100, else ``max(100, nodes * percentageOfNodesToScore / 100)`` with
   percentageOfNodesToScore defaulting to 50. Nodes were checked 16 at a time, so the feasible list was in
   completion order, close to but not exactly NodeTree order.
2. With exactly one feasible node it returned that node without prioritizing.
3. Otherwise ``PrioritizeNodes`` summed ``score * weight`` per node (plus extenders), and ``selectHost``
   took the nodes with the maximum total, in the order of the feasible list, and returned
   ``maxScores[lastNodeIndex % len(maxScores)]``, then incremented ``lastNodeIndex``: a round robin over
   ties whose counter is shared by every scheduling decision of the scheduler (it starts at 0 and is never
   reset), not a random pick (random tie-breaking came with v1.14's reservoir sampling).
"""

from __future__ import annotations

import importlib
import pkgutil

from extender.engine.profile import register_preset

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

#: v1.12 DefaultProvider priorities and weights (algorithmprovider/defaults/defaults.go).
LEGACY_PRIORITIES: tuple[tuple[str, int], ...] = (
    ("SelectorSpreadPriority", 1),
    ("InterPodAffinityPriority", 1),
    ("LeastRequestedPriority", 1),
    ("BalancedResourceAllocation", 1),
    ("NodePreferAvoidPodsPriority", 10000),
    ("NodeAffinityPriority", 1),
    ("TaintTolerationPriority", 1),
    ("ImageLocalityPriority", 1),
)

#: The DefaultProvider's predicates under v1.12's default feature gates, in predicates.Ordering() order.
LEGACY_PREDICATES: tuple[str, ...] = (
    "CheckNodeUnschedulable",
    "GeneralPredicates",
    "NoDiskConflict",
    "PodToleratesNodeTaints",
    "MaxEBSVolumeCount",
    "MaxGCEPDVolumeCount",
    "MaxCSIVolumeCountPred",
    "MaxAzureDiskVolumeCount",
    "CheckVolumeBinding",
    "NoVolumeZoneConflict",
    "MatchInterPodAffinity",
)

#: The DefaultProvider's predicates with TaintNodesByCondition off, in predicates.Ordering() order.
LEGACY_NODE_CONDITIONS_PREDICATES: tuple[str, ...] = (
    "CheckNodeCondition",
    "GeneralPredicates",
    "NoDiskConflict",
    "PodToleratesNodeTaints",
    "MaxEBSVolumeCount",
    "MaxGCEPDVolumeCount",
    "MaxCSIVolumeCountPred",
    "MaxAzureDiskVolumeCount",
    "CheckVolumeBinding",
    "NoVolumeZoneConflict",
    "CheckNodeMemoryPressure",
    "CheckNodePIDPressure",
    "CheckNodeDiskPressure",
    "MatchInterPodAffinity",
)

register_preset("legacy", tuple((name, 0) for name in LEGACY_PREDICATES) + LEGACY_PRIORITIES)
register_preset("legacy-node-conditions",
                tuple((name, 0) for name in LEGACY_NODE_CONDITIONS_PREDICATES) + LEGACY_PRIORITIES)
