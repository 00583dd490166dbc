"""The Dynamic Resource Allocation objects the scheduler reads, held as records.

ResourceSlices, ResourceClaims, DeviceClasses and DeviceTaintRules (``resource.k8s.io/v1``) enter the cache
through :class:`DRAObjects`, which builds each object's record once (``extender.dra.records``) and keeps the
raw object beside it. With the DRADeviceTaintRules gate (GA in 1.37, off by default in 1.36), the view's slices
carry the taints the rules add, as the scheduler's ResourceSlice tracker patches them
(dynamic-resource-allocation/resourceslice/tracker ``applyPatches``); without it rules are held and ignored.

Claims whose allocation the extender assumed at bind time (kube-scheduler writes the real allocation in PreBind;
our watch sees it a little later) are overlaid on the API's copy until the source reports a newer version of the
claim or the pod is forgotten, as upstream's assume cache does for its in-flight allocations.

:meth:`DRAObjects.view` returns an immutable :class:`DRAView` for a snapshot: rebuilt only after a
change, with the allocated-device state computed once per view, on first use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from extender.cluster.keys import object_key
from extender.dra.allocator import AllocatedState, allocated_state
from extender.dra.records import (
    ClaimRecord,
    DeviceClassRecord,
    DRAObjectError,
    SliceRecord,
    TaintRuleRecord,
    claim_record,
    device_class_record,
    slice_record,
    taint_rule_record,
    with_taint_rules,
)
from extender.kube.release import Release, default_release

DRA_KINDS = ("ResourceSlice", "ResourceClaim", "DeviceClass", "DeviceTaintRule")
IMPLICIT_EXTENDED_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"  # resourceapi.ResourceDeviceClassPrefix


@dataclass(frozen=True, slots=True)
class ClaimEntry:
    """A claim as the plugins see it: the raw object and its record."""

    raw: Mapping[str, Any]
    record: ClaimRecord


@dataclass(slots=True)
class _Assumed:
    pod_key: str
    base_version: str  # the API's resourceVersion the assumption was made on
    entry: ClaimEntry


@dataclass
class DRAView:
    """A read-only view of the DRA objects for one snapshot."""

    slices: tuple[SliceRecord, ...] = ()
    claims: Mapping[str, ClaimEntry] = field(default_factory=dict)
    classes: Mapping[str, DeviceClassRecord] = field(default_factory=dict)
    raw_classes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    _allocated: AllocatedState | None = None
    _extended: dict[str, str] | None = None

    def claim(self, namespace: str, name: str) -> ClaimEntry | None:
        """A claim by namespace and name (the assumed copy if the extender assumed one)."""
        return self.claims.get(f"{namespace}/{name}")

    def allocated(self) -> AllocatedState:
        """Devices (and capacity) already allocated by any claim, in-flight assumptions included."""
        if self._allocated is None:
            self._allocated = allocated_state([entry.record for entry in self.claims.values()])
        return self._allocated

    def extended_resource_classes(self) -> Mapping[str, str]:
        """Extended resource name -> the DeviceClass that provides it (upstream's ExtendedResourceCache).

        Every class provides ``deviceclass.resource.kubernetes.io/<class>``; a class naming an
        ``extendedResourceName`` provides that too, and when several name the same resource the most
        recently created one wins (the smallest name on a tie).
        """
        if self._extended is None:
            mapping: dict[str, str] = {}
            chosen: dict[str, tuple[str, str]] = {}  # resource -> (creationTimestamp, class name)
            for name, record in self.classes.items():
                mapping[IMPLICIT_EXTENDED_RESOURCE_PREFIX + name] = name
                explicit = record.extended_resource_name
                if explicit:
                    created = str((self.raw_classes[name].get("metadata") or {}).get("creationTimestamp") or "")
                    best = chosen.get(explicit)
                    if best is None or created > best[0] or (created == best[0] and name < best[1]):
                        chosen[explicit] = (created, name)
            for resource, (_created, name) in chosen.items():
                mapping.setdefault(resource, name)
            self._extended = mapping
        return self._extended

    @property
    def empty(self) -> bool:
        """No DRA object at all (the plugin has nothing to allocate from)."""
        return not (self.slices or self.claims or self.classes)


EMPTY_VIEW = DRAView()


def _version(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class DRAObjects:
    """The cache's DRA objects; single writer, read through :meth:`view`.

    ``release`` decides what the view is made of the objects, as the release's DRA manager does.
    """

    def __init__(self, release: Release | None = None) -> None:
        self.release = release or default_release()
        self._slices: dict[str, SliceRecord] = {}
        self._claims: dict[str, ClaimEntry] = {}
        self._classes: dict[str, tuple[Mapping[str, Any], DeviceClassRecord]] = {}
        self._taint_rules: dict[str, TaintRuleRecord] = {}
        self._assumed: dict[str, _Assumed] = {}
        self._view: DRAView | None = EMPTY_VIEW

    @classmethod
    def of_view(cls, view: DRAView, release: Release | None = None) -> DRAObjects:
        """Objects holding what a view shows (assumed allocations as plain claims): a private copy of the
        DRA state for a what-if whose placements must not reach the cache the view came from. The view's slices
        already carry the taints of its DeviceTaintRules, so the copy holds no rules of its own."""
        objects = cls(release)
        objects._slices = {str(i): record for i, record in enumerate(view.slices)}
        objects._claims = dict(view.claims)
        objects._classes = {name: (view.raw_classes[name], record) for name, record in view.classes.items()}
        objects._view = None
        return objects

    # ---- source events -------------------------------------------------------------------------
    def copy(self) -> DRAObjects:
        """An independent copy (records shared: they are immutable)."""
        other = DRAObjects(self.release)
        other._slices = dict(self._slices)
        other._claims = dict(self._claims)
        other._classes = dict(self._classes)
        other._taint_rules = dict(self._taint_rules)
        other._assumed = dict(self._assumed)
        other._view = self._view
        return other

    def upsert(self, kind: str, raw: Mapping[str, Any]) -> None:
        """Add or replace an object; a malformed one raises DRAObjectError (a ValueError) and changes nothing."""
        key = object_key(raw, kind)
        if kind == "ResourceSlice":
            self._slices[key] = slice_record(raw)
        elif kind == "DeviceClass":
            self._classes[key] = (raw, device_class_record(raw))
        elif kind == "DeviceTaintRule":
            self._taint_rules[key] = taint_rule_record(raw)
        elif kind == "ResourceClaim":
            self._claims[key] = ClaimEntry(raw, claim_record(raw))
            assumed = self._assumed.get(key)
            if assumed is not None and _version(raw) != assumed.base_version:
                # The source caught up (the allocation written by PreBind, or a deallocation): it wins.
                del self._assumed[key]
        else:
            raise DRAObjectError(f"unsupported kind {kind!r}")
        self._view = None

    def remove(self, kind: str, key: str) -> None:
        """Delete an object by key; unknown keys are ignored."""
        store: dict[str, Any] = self._store(kind)
        if store.pop(key, None) is not None:
            self._view = None
        if kind == "ResourceClaim" and self._assumed.pop(key, None) is not None:
            self._view = None

    def keys(self, kind: str) -> set[str]:
        """The keys held for a kind, as the source reported them."""
        return set(self._store(kind))

    def _store(self, kind: str) -> dict[str, Any]:
        if kind == "ResourceSlice":
            return self._slices
        if kind == "DeviceClass":
            return self._classes
        if kind == "DeviceTaintRule":
            return self._taint_rules
        return self._claims

    @property
    def empty(self) -> bool:
        """Nothing held at all."""
        return not (self._slices or self._claims or self._classes or self._taint_rules or self._assumed)

    def counts(self) -> dict[str, int]:
        """Object counts per kind, and how many claim allocations are assumed."""
        return {"ResourceSlice": len(self._slices), "ResourceClaim": len(self._claims),
                "DeviceClass": len(self._classes), "DeviceTaintRule": len(self._taint_rules),
                "assumed_claims": len(self._assumed)}

    # ---- assumptions ---------------------------------------------------------------------------
    def assume(self, pod_key: str, claims: Iterable[Mapping[str, Any]]) -> None:
        """Overlay claims as the extender expects them after binding (allocated, reserved for the pod).

        Each raw claim must be a copy of a claim the cache holds, with its status updated. A claim that
        cannot be read raises DRAObjectError and nothing is assumed.
        """
        staged: dict[str, _Assumed] = {}
        for raw in claims:
            key = object_key(raw, "ResourceClaim")
            current = self._claims.get(key)
            base = _version(current.raw) if current is not None else ""
            staged[key] = _Assumed(pod_key, base, ClaimEntry(raw, claim_record(raw)))
        if staged:
            self._assumed.update(staged)
            self._view = None

    def forget(self, pod_key: str) -> None:
        """Drop the claim allocations assumed for a pod (its binding failed or expired)."""
        keys = [key for key, assumed in self._assumed.items() if assumed.pod_key == pod_key]
        for key in keys:
            del self._assumed[key]
        if keys:
            self._view = None

    def assumed_for(self, pod_key: str) -> list[str]:
        """Keys of the claims assumed for a pod."""
        return sorted(key for key, assumed in self._assumed.items() if assumed.pod_key == pod_key)

    # ---- reading -------------------------------------------------------------------------------
    def view(self) -> DRAView:
        """The current view; the same object until something changes."""
        if self._view is None:
            claims = dict(self._claims)
            for key, assumed in self._assumed.items():
                claims[key] = assumed.entry
            slices = tuple(self._slices.values())
            if self._taint_rules and self.release.gate("DRADeviceTaintRules"):
                rules = tuple(self._taint_rules.values())
                slices = tuple(with_taint_rules(s, rules) for s in slices)
            self._view = DRAView(
                slices=slices,
                claims=claims,
                classes={name: record for name, (_raw, record) in self._classes.items()},
                raw_classes={name: raw for name, (raw, _record) in self._classes.items()},
            )
        return self._view


__all__ = ["DRA_KINDS", "EMPTY_VIEW", "ClaimEntry", "DRAObjectError", "DRAObjects", "DRAView"]
