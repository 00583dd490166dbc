"""The scheduler's resource vector, in the integer units kube-scheduler keeps (framework.Resource).

CPU is held in millicores, memory and ephemeral storage in bytes, the pod count as a number, and every
other schedulable ("scalar") resource (extended resources, hugepages, attachable volumes, prefixed native
resources) by its integer value. Quantities are converted with rounding up, exactly once, when an object
enters the cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from extender.kube.quantity import milli_value, value

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"


def is_extended_resource_name(name: str) -> bool:
    """True for a resource outside the kubernetes.io domain, e.g. ``example.com/gpu`` (v1helper)."""
    if "/" not in name or "kubernetes.io/" in name:
        return False
    return not name.startswith("requests.")


def is_scalar_resource_name(name: str) -> bool:
    """True for the resources the scheduler tracks in ScalarResources (schedutil.IsScalarResourceName)."""
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


class Resource:
    """A mutable resource vector; ``scalars`` maps every other schedulable resource to its value."""

    __slots__ = ("allowed_pods", "ephemeral_storage", "memory", "milli_cpu", "scalars")

    def __init__(
        self,
        milli_cpu: int = 0,
        memory: int = 0,
        ephemeral_storage: int = 0,
        allowed_pods: int = 0,
        scalars: dict[str, int] | None = None,
    ) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pods = allowed_pods
        self.scalars: dict[str, int] = scalars if scalars is not None else {}

    @classmethod
    def from_list(cls, resources: Mapping[str, Fraction]) -> Resource:
        """Sum a ResourceList the way Resource.Add does (the pod count included, unknown names ignored)."""
        res = cls()
        for name, quantity in resources.items():
            if name == CPU:
                res.milli_cpu += milli_value(quantity)
            elif name == MEMORY:
                res.memory += value(quantity)
            elif name == PODS:
                res.allowed_pods += value(quantity)
            elif name == EPHEMERAL_STORAGE:
                res.ephemeral_storage += value(quantity)
            elif is_scalar_resource_name(name):
                res.scalars[name] = res.scalars.get(name, 0) + value(quantity)
        return res

    @classmethod
    def from_requests(cls, resources: Mapping[str, Fraction]) -> Resource:
        """A pod's request vector as NodeResourcesFit's PreFilter builds it (SetMaxResource: no pod count)."""
        res = cls.from_list(resources)
        res.allowed_pods = 0
        return res

    def copy(self) -> Resource:
        """An independent copy."""
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pods, dict(self.scalars))

    def add(self, other: Resource, sign: int = 1) -> None:
        """Add (sign=1) or subtract (sign=-1) another vector in place; the pod count is not touched."""
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        if other.scalars:
            scalars = self.scalars
            for name, amount in other.scalars.items():
                scalars[name] = scalars.get(name, 0) + sign * amount

    def is_zero(self) -> bool:
        """True when no resource is requested (the pod count aside)."""
        return not (self.milli_cpu or self.memory or self.ephemeral_storage or self.scalars)

    def get(self, name: str) -> int:
        """The amount of one resource by its Kubernetes name."""
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pods
        return self.scalars.get(name, 0)

    def as_dict(self) -> dict[str, int]:
        """A plain mapping for reports (explain, simulate)."""
        out = {CPU: self.milli_cpu, MEMORY: self.memory, EPHEMERAL_STORAGE: self.ephemeral_storage}
        if self.allowed_pods:
            out[PODS] = self.allowed_pods
        out.update(self.scalars)
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resource):
            return NotImplemented
        own = {k: v for k, v in self.scalars.items() if v}
        theirs = {k: v for k, v in other.scalars.items() if v}
        return (
            self.milli_cpu == other.milli_cpu
            and self.memory == other.memory
            and self.ephemeral_storage == other.ephemeral_storage
            and self.allowed_pods == other.allowed_pods
            and own == theirs
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Resource({self.as_dict()})"
