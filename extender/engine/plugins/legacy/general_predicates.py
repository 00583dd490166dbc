"""GeneralPredicates and its parts, as kube-scheduler v1.12 ran them.

Upstream: k8s.io/kubernetes v1.12.10 pkg/scheduler/algorithm/predicates/predicates.go (``PodFitsResources``,
``PodFitsHost``, ``PodFitsHostPorts``, ``PodMatchNodeSelector``, ``GeneralPredicates``,
``noncriticalPredicates``, ``EssentialPredicates``) and metadata.go (the per-pod request and ports).

- PodFitsResources: "Insufficient pods" when the node already holds ``allocatable pods`` pods (checked
  first, and even for a pod requesting nothing); then, unless the pod requests no cpu, memory,
  ephemeral-storage or scalar resource at all, "Insufficient cpu", "Insufficient memory", "Insufficient
  ephemeral-storage" and "Insufficient <name>" for each scalar resource (extended, hugepages,
  attachable volumes) whose allocatable is below the node's requested plus the pod's. Every shortage is
  reported. Scalars are reported in name order (upstream walks a Go map). The pod's request is v1.12's:
  containers summed, raised to any init container (see common.py); the node's requested counts its pods'
  regular containers only. ``ignoredExtendedResources`` (what extenders marked ignoredByScheduler) are
  skipped.
- HostName: ``spec.nodeName`` set and different from the node.
- PodFitsHostPorts (also registered as PodFitsPorts, its 1.0 name): a regular container's hostPort in use
  on the node, 0.0.0.0 colliding with every IP.
- MatchNodeSelector: ``spec.nodeSelector`` and required node affinity terms (ORed; invalid or empty terms
  match nothing; matchFields against ``metadata.name``).
- GeneralPredicates runs PodFitsResources, then HostName, PodFitsHostPorts and MatchNodeSelector, and
  reports every failure of all four, in that order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from extender.cluster.nodeinfo import NodeInfo
from extender.cluster.records import PodRecord
from extender.cluster.resource import is_extended_resource_name
from extender.engine.framework import CycleState, FilterPlugin, Status
from extender.engine.plugins.legacy.common import (
    ERR_NODE_SELECTOR_NOT_MATCH,
    ERR_POD_NOT_FITS_HOST_PORTS,
    ERR_POD_NOT_MATCH_HOST_NAME,
    LegacyPod,
    error,
    legacy_pod,
    node_of,
    node_totals,
    unschedulable,
)
from extender.engine.plugins.node_affinity import required_node_affinity
from extender.engine.profile import ProfileError
from extender.engine.registry import register
from extender.kube.selectors import RequiredNodeAffinity, SelectorError

_HOST_NAME: Final = unschedulable(ERR_POD_NOT_MATCH_HOST_NAME)
_HOST_PORTS: Final = unschedulable(ERR_POD_NOT_FITS_HOST_PORTS)
_NODE_SELECTOR: Final = unschedulable(ERR_NODE_SELECTOR_NOT_MATCH)


def _ignored_resources(args: dict[str, Any], plugin: str) -> frozenset[str]:
    ignored = args.get("ignoredExtendedResources") or []
    if not isinstance(ignored, list) or not all(isinstance(n, str) for n in ignored):
        raise ProfileError(f"{plugin} args.ignoredExtendedResources: expected a list of resource names")
    return frozenset(ignored)


def _pod_or_error(pod: PodRecord) -> tuple[LegacyPod, Status | None]:
    legacy = legacy_pod(pod)
    return legacy, (error(legacy.error) if legacy.error else None)


def fits_resources(pod: LegacyPod, node: NodeInfo, ignored: frozenset[str]) -> list[str]:
    """PodFitsResources' failure reasons (empty when the pod fits)."""
    reasons: list[str] = []
    allocatable = node_of(node).allocatable
    if len(node.pods) + 1 > allocatable.allowed_pods:
        reasons.append("Insufficient pods")
    request = pod.request
    if not (request.milli_cpu or request.memory or request.ephemeral_storage or request.scalars):
        return reasons
    used = node_totals(node).requested
    if allocatable.milli_cpu < request.milli_cpu + used.milli_cpu:
        reasons.append("Insufficient cpu")
    if allocatable.memory < request.memory + used.memory:
        reasons.append("Insufficient memory")
    if allocatable.ephemeral_storage < request.ephemeral_storage + used.ephemeral_storage:
        reasons.append("Insufficient ephemeral-storage")
    for name in sorted(request.scalars):
        if name in ignored and is_extended_resource_name(name):
            continue
        if allocatable.scalars.get(name, 0) < request.scalars[name] + used.scalars.get(name, 0):
            reasons.append(f"Insufficient {name}")
    return reasons


def fits_host(pod: PodRecord, node: NodeInfo) -> bool:
    """PodFitsHost: no nodeName, or this node's."""
    return not pod.node_name or pod.node_name == node.name


def fits_host_ports(pod: LegacyPod, node: NodeInfo) -> bool:
    """PodFitsHostPorts: none of the pod's host ports is taken on the node."""
    if not pod.ports:
        return True
    totals = node_totals(node)
    return not any(totals.port_conflict(ip, protocol, port) for ip, protocol, port in pod.ports)


def required_affinity(pod: PodRecord) -> RequiredNodeAffinity | str:
    """The pod's nodeSelector and required node affinity, compiled once per template as NodeAffinity compiles
    it (or the error message)."""
    try:
        return required_node_affinity(pod)
    except SelectorError as err:
        return str(err)


def matches_node_selector(affinity: RequiredNodeAffinity, node: NodeInfo) -> bool:
    """PodMatchNodeSelector: nodeSelector and required node affinity both satisfied."""
    record = node_of(node)
    return affinity.matches(record.labels, record.name)


@register
class PodFitsResources(FilterPlugin):
    """Pod count, cpu, memory, ephemeral storage and scalar resources against the node's allocatable."""

    name = "PodFitsResources"
    node_local = True

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        self.ignored = _ignored_resources(self.args, self.name)

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        return _pod_or_error(pod)[1]

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        reasons = fits_resources(legacy_pod(pod), node, self.ignored)
        return unschedulable(*reasons) if reasons else None


@register
class HostName(FilterPlugin):
    """spec.nodeName, when set, must be this node."""

    name = "HostName"
    node_local = True

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        return None if fits_host(pod, node) else _HOST_NAME


@register
class PodFitsHostPorts(FilterPlugin):
    """The pod's host ports must be free on the node."""

    name = "PodFitsHostPorts"
    node_local = True

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        return _pod_or_error(pod)[1]

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        return None if fits_host_ports(legacy_pod(pod), node) else _HOST_PORTS


@register
class PodFitsPorts(PodFitsHostPorts):
    """PodFitsHostPorts under its v1.0 name, which v1.12 still registered."""

    name = "PodFitsPorts"


@register
class MatchNodeSelector(FilterPlugin):
    """nodeSelector and required node affinity."""

    name = "MatchNodeSelector"
    node_local = True

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        affinity = required_affinity(pod)
        return error(affinity) if isinstance(affinity, str) else None

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        affinity = required_affinity(pod)
        assert not isinstance(affinity, str)
        return None if matches_node_selector(affinity, node) else _NODE_SELECTOR


@register
class GeneralPredicates(FilterPlugin):
    """PodFitsResources, HostName, PodFitsHostPorts and MatchNodeSelector, every failure reported."""

    name = "GeneralPredicates"
    node_local = True

    def __init__(self, args: dict[str, Any] | None = None) -> None:
        super().__init__(args)
        self.ignored = _ignored_resources(self.args, self.name)

    def pre_filter(self, state: CycleState, pod: PodRecord, nodes: Sequence[NodeInfo]) -> Status | None:
        failed = _pod_or_error(pod)[1]
        if failed is not None:
            return failed
        affinity = required_affinity(pod)
        return error(affinity) if isinstance(affinity, str) else None

    def filter(self, state: CycleState, pod: PodRecord, node: NodeInfo) -> Status | None:
        legacy = legacy_pod(pod)
        reasons = fits_resources(legacy, node, self.ignored)
        if not fits_host(pod, node):
            reasons.append(ERR_POD_NOT_MATCH_HOST_NAME)
        if not fits_host_ports(legacy, node):
            reasons.append(ERR_POD_NOT_FITS_HOST_PORTS)
        affinity = required_affinity(pod)
        assert not isinstance(affinity, str)
        if not matches_node_selector(affinity, node):
            reasons.append(ERR_NODE_SELECTOR_NOT_MATCH)
        return unschedulable(*reasons) if reasons else None
