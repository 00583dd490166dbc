"""Per-node aggregates: a node, the pods on it, and the sums the plugins read (framework.NodeInfo)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping

from extender.cluster.records import NodeRecord, PodRecord
from extender.cluster.resource import Resource

BIND_ALL_HOST_IP = "0.0.0.0"

_generations = itertools.count(1)


def next_generation() -> int:
    """A process-wide increasing counter; a NodeInfo takes a new value on every change."""
    return next(_generations)


def ports_conflict(used_ports: dict[str, set[tuple[str, int]]], ip: str, protocol: str, port: int) -> bool:
    """HostPortInfo.CheckConflict over hostIP -> {(protocol, port)}: 0.0.0.0 collides with any address,
    another address with itself and with 0.0.0.0."""
    want = (protocol, port)
    if ip == BIND_ALL_HOST_IP:
        return any(want in entries for entries in used_ports.values())
    for key in (BIND_ALL_HOST_IP, ip):
        entries = used_ports.get(key)
        if entries is not None and want in entries:
            return True
    return False


#: A pod's labels as sorted (key, value) pairs (the second half of records.PodSignature).
LabelPairs = tuple[tuple[str, str], ...]
#: namespace -> sorted label pairs -> (those labels, pods carrying them not being deleted, all of them).
LabelGroups = dict[str, dict[LabelPairs, tuple[Mapping[str, str], int, int]]]


class NodeInfo:
    """A node and the pods assigned (or assumed) to it, with incrementally maintained sums.

    ``node`` is None for a placeholder: a node deleted while pods are still bound to it. Snapshots never
    show placeholders.
    """

    __slots__ = (
        "generation",
        "label_groups",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "pvc_ref_counts",
        "requested",
        "row",
        "used_ports",
    )

    def __init__(self, name: str, node: NodeRecord | None = None) -> None:
        self.name = name
        self.node = node
        self.pods: list[PodRecord] = []
        self.pods_with_affinity: list[PodRecord] = []
        self.pods_with_required_anti_affinity: list[PodRecord] = []
        self.requested = Resource()
        self.non_zero_requested = Resource()
        # hostIP -> {(protocol, port)}: a set, as upstream's HostPortInfo is.
        self.used_ports: dict[str, set[tuple[str, int]]] = {}
        self.pvc_ref_counts: dict[str, int] = {}
        # The pods by namespace and label set, counted with and without those being deleted: what the
        # pod-counting plugins read (InterPodAffinity counts every pod, the spreading plugins leave terminating
        # ones out). Pods of one template share their labels, so a selector is checked once per label set on
        # the node, not once per pod (and once per label set of the cluster through pod_groups.PodGroups).
        self.label_groups: LabelGroups = {}
        self.generation = next_generation()
        # Set by the snapshot's NodeColumns that hold this NodeInfo as a row (owner tag and row); -1 otherwise.
        self.row = -1

    @property
    def allocatable(self) -> Resource:
        """The node's allocatable resources (zero for a placeholder)."""
        return self.node.allocatable if self.node is not None else Resource()

    def set_node(self, node: NodeRecord) -> None:
        """Replace the node object, keeping the pods."""
        self.node = node
        self.generation = next_generation()

    def remove_node(self) -> None:
        """Turn this entry into a placeholder (the node is gone, pods may remain)."""
        self.node = None
        self.generation = next_generation()

    def add_pod(self, pod: PodRecord) -> None:
        """Account for one more pod on this node."""
        self.pods.append(pod)
        if pod.has_affinity:
            self.pods_with_affinity.append(pod)
        if pod.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(pod)
        self._update(pod, 1)

    def remove_pod(self, pod: PodRecord) -> bool:
        """Stop accounting for a pod (matched by its cache key, the UID); False if it is not here."""
        key = pod.cache_key
        pods = self.pods
        # The record itself first, from the end: the one held here is usually the object given (the cache
        # removes what it holds), and a pod leaving soon after it came (the assumed pod its bound version
        # replaces) is among the last added. Comparing references reads none of the other records, which on a
        # node of thirty pods are thirty objects scattered over memory; only when that fails are keys compared.
        for i in range(len(pods) - 1, -1, -1):
            if pods[i] is pod:
                removed = pods.pop(i)
                break
        else:
            for i, existing in enumerate(pods):
                if existing.cache_key == key:
                    removed = pods.pop(i)
                    break
            else:
                return False
        if removed.has_affinity:
            self.pods_with_affinity = [p for p in self.pods_with_affinity if p.cache_key != key]
        if removed.has_required_anti_affinity:
            self.pods_with_required_anti_affinity = [
                p for p in self.pods_with_required_anti_affinity if p.cache_key != key
            ]
        self._update(removed, -1)
        return True

    def _update(self, pod: PodRecord, sign: int) -> None:
        self.requested.add(pod.requests, sign)
        self.non_zero_requested.milli_cpu += sign * pod.non0_cpu
        self.non_zero_requested.memory += sign * pod.non0_mem
        for ip, protocol, port in pod.host_ports:
            if sign > 0:
                self.used_ports.setdefault(ip, set()).add((protocol, port))
            else:
                entries = self.used_ports.get(ip)
                if entries is not None:
                    entries.discard((protocol, port))
                    if not entries:
                        del self.used_ports[ip]
        namespace, pairs = pod.signature
        groups = self.label_groups.get(namespace)
        if groups is None:
            groups = self.label_groups[namespace] = {}
        group = groups.get(pairs)
        if group is None:
            group = (pod.labels, 0, 0)
        every = group[2] + sign
        if every > 0:
            groups[pairs] = (group[0], group[1] + (0 if pod.terminating else sign), every)
        else:
            del groups[pairs]
            if not groups:
                del self.label_groups[namespace]
        for key in pod.pvc_keys:
            count = self.pvc_ref_counts.get(key, 0) + sign
            if count > 0:
                self.pvc_ref_counts[key] = count
            else:
                self.pvc_ref_counts.pop(key, None)
        self.generation = next_generation()

    def count_matching(self, namespace: str, match: Callable[[Mapping[str, str]], bool],
                       seen: dict[LabelPairs, bool]) -> int:
        """Pods here in the namespace, not being deleted, whose labels ``match`` accepts (upstream's
        countPodsMatchSelector, and the legacy spreading count). ``seen`` holds ``match``'s answer per label
        set: the caller passes one dict for every node of one count, so each label set is checked once."""
        groups = self.label_groups.get(namespace)
        if not groups:
            return 0
        count = 0
        for pairs, (labels, live, _) in groups.items():
            if not live:
                continue  # only pods being deleted carry these labels
            hit = seen.get(pairs)
            if hit is None:
                hit = seen[pairs] = match(labels)
            if hit:
                count += live
        return count

    def port_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """Whether a wanted host port collides with one in use (HostPortInfo.CheckConflict)."""
        return ports_conflict(self.used_ports, ip, protocol, port)

    def clone(self) -> NodeInfo:
        """A copy whose later changes do not affect this one (records are shared: they are immutable)."""
        other = NodeInfo.__new__(NodeInfo)
        other.name = self.name
        other.node = self.node
        other.pods = list(self.pods)
        other.pods_with_affinity = list(self.pods_with_affinity)
        other.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        other.requested = self.requested.copy()
        other.non_zero_requested = self.non_zero_requested.copy()
        other.used_ports = {ip: set(entries) for ip, entries in self.used_ports.items()}
        other.pvc_ref_counts = dict(self.pvc_ref_counts)
        other.label_groups = {namespace: dict(groups) for namespace, groups in self.label_groups.items()}
        other.generation = self.generation
        other.row = -1  # a copy is nobody's row: its changes must not be read from the original's columns
        return other

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)}, gen={self.generation})"
