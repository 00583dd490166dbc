"""What the 0-10 era (kube-scheduler v1.12) predicates and priorities share: that release's failure
reasons, its pod arithmetic, its per-node sums, and lookups of the cluster's other objects.

Upstream (k8s.io/kubernetes v1.12.10):

* ``pkg/scheduler/algorithm/predicates/error.go``: the failure reasons (``ERR_*`` here);
* ``pkg/scheduler/algorithm/predicates/predicates.go`` ``GetResourceRequest``: the incoming pod's request is
  the containers' sum, raised per resource to any single init container's request (``SetMaxResource``);
  no sidecars, no pod overhead (PodOverhead came in v1.16), no pod-level resources, no resize status;
* ``pkg/scheduler/cache/node_info.go`` ``calculateResource``: a pod already on a node counts with its
  regular containers ONLY (init containers are ignored on the node side), and its non-zero request is
  the per-container ``GetNonzeroRequests`` sum (100m CPU / 200Mi memory for a container that does not
  name the resource; an explicit 0 stays 0); ``updateUsedPorts``: regular containers' host ports;
* ``pkg/scheduler/algorithm/priorities/resource_allocation.go`` ``getNonZeroRequests``: the incoming pod's
  non-zero request, regular containers only;
* ``pkg/scheduler/cache/node_info.go`` ``Resource.Add`` / ``SetMaxResource``: each container's quantities
  are converted (MilliValue for CPU, Value otherwise, both rounding up) *before* being summed, so
  rounding happens per container, unlike the current release which sums exact quantities;
* ``pkg/apis/core/v1/defaults.go`` ``SetDefaults_Pod``: a container's limit stands in for a missing
  request (regular and init containers) - applied here as the apiserver would have;
* ``pkg/apis/core/v1/helper/qos/qos.go`` ``GetPodQOS``: BestEffort = no regular container with a positive
  cpu or memory request or limit;
* ``pkg/util/node/node.go`` ``GetZoneKey``: a node's zone is its ``failure-domain.beta.kubernetes.io``
  region and zone labels (the GA ``topology.kubernetes.io`` labels did not exist yet).

Derived data is cached with the records: per pod in ``PodRecord.memo`` (records are immutable), per node
in a small table keyed by node name and NodeInfo generation (a NodeInfo takes a new process-wide
generation on every change, and a clone keeps it, so equal generations mean equal contents).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any, Final

from extender.cluster.nodeinfo import BIND_ALL_HOST_IP, NodeInfo, ports_conflict
from extender.cluster.records import NodeRecord, PodRecord
from extender.cluster.resource import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resource, is_scalar_resource_name
from extender.cluster.snapshot import Snapshot
from extender.engine.framework import Code, Status
from extender.engine.profile import ProfileError
from extender.kube.quantity import QuantityError, decode_quantity, milli_value, value

#: schedulerapi.MaxPriority: the top of every 0-10 era priority.
MAX_PRIORITY: Final = 10

# ---- failure reasons (predicates/error.go) -------------------------------------------------------
ERR_DISK_CONFLICT: Final = "node(s) had no available disk"
ERR_VOLUME_ZONE_CONFLICT: Final = "node(s) had no available volume zone"
ERR_NODE_SELECTOR_NOT_MATCH: Final = "node(s) didn't match node selector"
ERR_POD_AFFINITY_NOT_MATCH: Final = "node(s) didn't match pod affinity/anti-affinity"
ERR_POD_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod affinity rules"
ERR_POD_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't match pod anti-affinity rules"
ERR_EXISTING_PODS_ANTI_AFFINITY_RULES_NOT_MATCH: Final = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_TAINTS_TOLERATIONS_NOT_MATCH: Final = "node(s) had taints that the pod didn't tolerate"
ERR_POD_NOT_MATCH_HOST_NAME: Final = "node(s) didn't match the requested hostname"
ERR_POD_NOT_FITS_HOST_PORTS: Final = "node(s) didn't have free ports for the requested pod ports"
ERR_NODE_LABEL_PRESENCE_VIOLATED: Final = "node(s) didn't have the requested labels"
ERR_SERVICE_AFFINITY_VIOLATED: Final = "node(s) didn't match service affinity"
ERR_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"
ERR_NODE_UNDER_MEMORY_PRESSURE: Final = "node(s) had memory pressure"
ERR_NODE_UNDER_DISK_PRESSURE: Final = "node(s) had disk pressure"
ERR_NODE_UNDER_PID_PRESSURE: Final = "node(s) had pid pressure"
ERR_NODE_OUT_OF_DISK: Final = "node(s) were out of disk space"
ERR_NODE_NOT_READY: Final = "node(s) were not ready"
ERR_NODE_NETWORK_UNAVAILABLE: Final = "node(s) had unavailable network"
ERR_NODE_UNSCHEDULABLE: Final = "node(s) were unschedulable"
ERR_NODE_UNKNOWN_CONDITION: Final = "node(s) had unknown conditions"
ERR_VOLUME_NODE_CONFLICT: Final = "node(s) had volume node affinity conflict"
ERR_VOLUME_BIND_CONFLICT: Final = "node(s) didn't find available persistent volumes to bind"

# ---- well-known labels of that release (pkg/kubelet/apis/well_known_labels.go) ------------------------
LABEL_ZONE_FAILURE_DOMAIN: Final = "failure-domain.beta.kubernetes.io/zone"
LABEL_ZONE_REGION: Final = "failure-domain.beta.kubernetes.io/region"
LABEL_INSTANCE_TYPE: Final = "beta.kubernetes.io/instance-type"

# priorities/util/non_zero.go
DEFAULT_MILLI_CPU_REQUEST: Final = 100
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024

_POD_MEMO: Final = "legacy/pod"


def unschedulable(*reasons: str) -> Status:
    """A v1.12 predicate failure: that release had no "unresolvable" code, so always Unschedulable."""
    return Status(Code.UNSCHEDULABLE, *reasons)


def error(message: str) -> Status:
    """A predicate or priority error: v1.12 failed the whole scheduling attempt on it."""
    return Status(Code.ERROR, message)


def zone_key(labels: Mapping[str, str]) -> str:
    """utilnode.GetZoneKey: region and zone joined with a NUL guard, "" when the node has neither."""
    region = labels.get(LABEL_ZONE_REGION, "")
    zone = labels.get(LABEL_ZONE_FAILURE_DOMAIN, "")
    if not region and not zone:
        return ""
    return region + ":\x00:" + zone


def as_mapping(obj: Any) -> Mapping[str, Any]:
    """obj if it is a mapping, else an empty one (raw objects are read defensively)."""
    if type(obj) is dict:  # the common case, without the slower ABC check
        return obj
    return obj if isinstance(obj, Mapping) else {}


def as_list(obj: Any) -> list[Any]:
    """obj if it is a list, else an empty one."""
    return obj if isinstance(obj, list) else []


# ---- the pod, as v1.12 read it -------------------------------------------------------------------------


class LegacyPod:
    """What the 0-10 era reads of a pod, derived once from its raw object (kept in ``PodRecord.memo``)."""

    __slots__ = ("best_effort", "controller_ref", "error", "images", "limit_cpu", "limit_mem", "node_request",
                 "non0_cpu", "non0_mem", "ports", "request", "volumes")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.error: str | None = None
        self.request = Resource()  # GetResourceRequest: what the incoming pod needs
        self.node_request = Resource()  # calculateResource: what it counts for once on a node
        self.non0_cpu = 0
        self.non0_mem = 0
        self.limit_cpu = 0
        self.limit_mem = 0
        self.best_effort = True
        self.ports: tuple[tuple[str, str, int], ...] = ()
        self.images: tuple[str, ...] = ()
        spec = as_mapping(raw.get("spec"))
        self.volumes: list[Any] = as_list(spec.get("volumes"))
        self.controller_ref = _controller_ref(as_mapping(raw.get("metadata")))
        try:
            self._read(spec)
        except (QuantityError, ValueError, TypeError) as err:
            self.error = str(err)

    def _read(self, spec: Mapping[str, Any]) -> None:
        containers = as_list(spec.get("containers"))
        ports: list[tuple[str, str, int]] = []
        images: list[str] = []
        qos_quantities = False
        for i, container in enumerate(containers):
            container = as_mapping(container)
            requests, limits = _container_resources(container, f"spec.containers[{i}]")
            converted = Resource.from_list(requests)
            self.request.add(converted)
            self.node_request.add(converted)
            # GetNonzeroRequests: the default stands in only for a resource the container does not name.
            self.non0_cpu += milli_value(requests[CPU]) if CPU in requests else DEFAULT_MILLI_CPU_REQUEST
            self.non0_mem += value(requests[MEMORY]) if MEMORY in requests else DEFAULT_MEMORY_REQUEST
            limit = Resource.from_list(limits)
            self.limit_cpu += limit.milli_cpu
            self.limit_mem += limit.memory
            for name in (CPU, MEMORY):
                if requests.get(name, 0) > 0 or limits.get(name, 0) > 0:
                    qos_quantities = True
            images.append(str(container.get("image") or ""))
            for j, port in enumerate(as_list(container.get("ports"))):
                port = as_mapping(port)
                host_port = port.get("hostPort") or 0
                if not isinstance(host_port, int):
                    raise ValueError(f"spec.containers[{i}].ports[{j}].hostPort: expected an integer")
                if host_port > 0:
                    ports.append((str(port.get("hostIP") or BIND_ALL_HOST_IP), str(port.get("protocol") or "TCP"),
                                  host_port))
        for i, container in enumerate(as_list(spec.get("initContainers"))):
            requests, limits = _container_resources(as_mapping(container), f"spec.initContainers[{i}]")
            _set_max(self.request, requests)
            limit = Resource()
            _set_max(limit, limits)
            self.limit_cpu = max(self.limit_cpu, limit.milli_cpu)
            self.limit_mem = max(self.limit_mem, limit.memory)
        # SetMaxResource ignores the pod count; Add counted a "pods" request, which no predicate reads.
        self.request.allowed_pods = 0
        self.node_request.allowed_pods = 0
        self.best_effort = not qos_quantities
        self.ports = tuple(ports)
        self.images = tuple(images)


def _container_resources(container: Mapping[str, Any], path: str) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    """A container's requests (limits standing in for missing ones, as SetDefaults_Pod does) and limits."""
    resources = as_mapping(container.get("resources"))
    limits = {str(k): _quantity(v, f"{path}.resources.limits.{k}")
              for k, v in as_mapping(resources.get("limits")).items()}
    requests = {str(k): _quantity(v, f"{path}.resources.requests.{k}")
                for k, v in as_mapping(resources.get("requests")).items()}
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    return requests, limits


def _quantity(raw: Any, path: str) -> Fraction:
    try:
        return decode_quantity(raw)
    except QuantityError as err:
        raise ValueError(f"{path}: {err}") from err


def _set_max(target: Resource, resources: Mapping[str, Fraction]) -> None:
    """Resource.SetMaxResource: per resource, the larger of the two (the pod count is not touched)."""
    for name, amount in resources.items():
        if name == CPU:
            target.milli_cpu = max(target.milli_cpu, milli_value(amount))
        elif name == MEMORY:
            target.memory = max(target.memory, value(amount))
        elif name == EPHEMERAL_STORAGE:
            target.ephemeral_storage = max(target.ephemeral_storage, value(amount))
        elif name != PODS and is_scalar_resource_name(name):
            amount_value = value(amount)
            if amount_value > target.scalars.get(name, 0):
                target.scalars[name] = amount_value


def _controller_ref(meta: Mapping[str, Any]) -> tuple[str, str] | None:
    """metav1.GetControllerOf: (kind, uid) of the owner reference marked controller, if any."""
    for ref in as_list(meta.get("ownerReferences")):
        ref = as_mapping(ref)
        if ref.get("controller") is True:
            return str(ref.get("kind") or ""), str(ref.get("uid") or "")
    return None


def legacy_pod(pod: PodRecord) -> LegacyPod:
    """The v1.12 view of a pod, computed once per record."""
    cached = pod.memo.get(_POD_MEMO)
    if cached is None:
        cached = LegacyPod(pod.raw)
        pod.memo[_POD_MEMO] = cached
    assert isinstance(cached, LegacyPod)
    return cached


def pod_error(pod: PodRecord) -> Status | None:
    """An Error status when v1.12's reading of the pod failed (reported from PreFilter/PreScore), else None."""
    legacy = legacy_pod(pod)
    return error(legacy.error) if legacy.error else None


def label_arg(args: Mapping[str, Any], plugin: str) -> str:
    """The required ``label`` arg of NodeLabelPriority and ServiceAntiAffinity."""
    label = args.get("label")
    if not isinstance(label, str) or not label:
        raise ProfileError(f"{plugin} args.label: a node label key is required")
    return label


# ---- per-node sums, as v1.12's NodeInfo kept them ------------------------------------------------------


class NodeTotals:
    """A node's requested resources, non-zero requests and used host ports, counted the v1.12 way."""

    __slots__ = ("non0_cpu", "non0_mem", "requested", "used_ports")

    def __init__(self, pods: Sequence[PodRecord]) -> None:
        self.requested = Resource()
        self.non0_cpu = 0
        self.non0_mem = 0
        self.used_ports: dict[str, set[tuple[str, int]]] = {}
        for pod in pods:
            legacy = legacy_pod(pod)
            self.requested.add(legacy.node_request)
            self.non0_cpu += legacy.non0_cpu
            self.non0_mem += legacy.non0_mem
            for ip, protocol, port in legacy.ports:
                self.used_ports.setdefault(ip, set()).add((protocol, port))

    def port_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """HostPortInfo.CheckConflict: 0.0.0.0 collides with any IP, another IP with itself and 0.0.0.0."""
        return ports_conflict(self.used_ports, ip, protocol, port)


# node name -> (generation, totals). One entry per node name: a fork (simulate) of the same node replaces it.
_node_totals: dict[str, tuple[int, NodeTotals]] = {}


def node_totals(info: NodeInfo) -> NodeTotals:
    """The v1.12 sums of a node, recomputed only when the NodeInfo changed."""
    entry = _node_totals.get(info.name)
    if entry is not None and entry[0] == info.generation:
        return entry[1]
    totals = NodeTotals(info.pods)
    _node_totals[info.name] = (info.generation, totals)
    return totals


def node_of(info: NodeInfo) -> NodeRecord:
    """The node record of a NodeInfo in a snapshot (snapshots never hold placeholders)."""
    node = info.node
    assert node is not None
    return node


# ---- the cluster's other objects, by namespace ----------------------------------------------------------

# id(kind mapping) -> (the mapping itself, namespace -> objects sorted by name). The cache replaces a kind's
# mapping on every change and never mutates it, so identity tells whether the index is current; holding the
# mapping keeps its id from being reused.
_by_namespace: dict[str, tuple[Mapping[str, Mapping[str, Any]], dict[str, list[Mapping[str, Any]]]]] = {}


def objects_in_namespace(snapshot: Snapshot, kind: str, namespace: str) -> list[Mapping[str, Any]]:
    """The objects of a namespaced kind in one namespace, sorted by name (Go listers return them in map order;
    sorting makes "the first Service" deterministic)."""
    objects = snapshot.kind(kind)
    entry = _by_namespace.get(kind)
    if entry is None or entry[0] is not objects:
        index: dict[str, list[Mapping[str, Any]]] = {}
        for key in sorted(objects):
            ns = key.split("/", 1)[0] if "/" in key else "default"
            index.setdefault(ns, []).append(objects[key])
        entry = (objects, index)
        _by_namespace[kind] = entry
    return entry[1].get(namespace, [])
