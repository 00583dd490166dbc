"""Feature gates per kube-scheduler release, set the way kube-scheduler's ``--feature-gates`` sets them.

Each supported release has a table of every gate its kube-scheduler knows (``extender/data/feature-gates-
v1.<minor>.json``: default, stage, whether it is locked to its default, and the gates each one depends on),
written by the differential oracle built from that release (``oracle -list-feature-gates``; a test keeps the
tables equal to it). A configuration's ``featureGates`` map is validated as upstream's
``featureGate.SetFromMap`` (``k8s.io/component-base/featuregate/feature_gate.go``) validates it:

* a gate the release does not know: ``unrecognized feature gate: <name>``;
* a gate locked to its default (GA or deprecated with LockToDefault) set to the other value:
  ``cannot set feature gate <name> to <value>, feature is locked to <default>``;
* ``AllAlpha`` / ``AllBeta`` set every alpha (beta) gate not named explicitly;
* once set, every enabled gate's dependencies must be enabled:
  ``<name> is enabled, but depends on features that are disabled: [<deps>]``.

Gates that no plugin of the extender reads are accepted as kube-scheduler accepts them; they change nothing
here (``ENGINE_GATES`` lists those the engine reads).
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any

import orjson

#: The gates the engine reads (a test checks each is known to at least one supported release).
ENGINE_GATES = frozenset({
    "DynamicResourceAllocation", "DRAExtendedResource", "DRAPrioritizedList", "DRAAdminAccess",
    "DRAPartitionableDevices", "DRADeviceTaints", "DRADeviceTaintRules", "DRADeviceBindingConditions",
    "DRAResourceClaimDeviceStatus", "DRAConsumableCapacity", "DRASchedulerFilterTimeout",
    "DRAListTypeAttributes", "DRANodeAllocatableResources", "NodeDeclaredFeatures",
    "InPlacePodVerticalScaling", "InPlacePodVerticalScalingSchedulerPreemption",
    "InterPodAffinityHostnameFastPath", "PodLevelResources", "StorageCapacityScoring", "VolumeLimitScaling",
    "TaintTolerationComparisonOperators", "MatchLabelKeysInPodTopologySpread",
    "NodeInclusionPolicyInPodTopologySpread",
})

_SPECIAL = {"AllAlpha": "ALPHA", "AllBeta": "BETA"}


class GateError(ValueError):
    """A ``featureGates`` map kube-scheduler would refuse; the message is upstream's."""


@dataclass(frozen=True)
class GateSpec:
    """One gate as a release's kube-scheduler sees it at its own version."""

    default: bool
    stage: str  # ALPHA, BETA, GA, DEPRECATED, "" (AllAlpha/AllBeta)
    locked: bool


@dataclass(frozen=True)
class GateTable:
    """Every gate a release's kube-scheduler accepts, and what each one depends on."""

    version: str
    gates: Mapping[str, GateSpec]
    dependencies: Mapping[str, tuple[str, ...]]


@cache
def gate_table(minor: int) -> GateTable:
    """The gate table of a supported release (read once from the package data)."""
    name = f"feature-gates-v1.{minor}.json"
    try:
        data: Any = orjson.loads(importlib.resources.files("extender.data").joinpath(name).read_bytes())
    except FileNotFoundError:
        raise GateError(f"no feature gate table for Kubernetes 1.{minor}") from None
    gates = {gate: GateSpec(bool(spec["default"]), str(spec["preRelease"]), bool(spec["lockToDefault"]))
             for gate, spec in data["gates"].items()}
    deps = {gate: tuple(needs) for gate, needs in data.get("dependencies", {}).items()}
    return GateTable(str(data["version"]), MappingProxyType(gates), MappingProxyType(deps))


@dataclass(frozen=True)
class FeatureGates:
    """The gates in effect for one release: upstream's defaults, changed by ``overrides``."""

    minor: int
    overrides: Mapping[str, bool]  # as configured (validated)
    effective: Mapping[str, bool]  # every gate set explicitly or through AllAlpha/AllBeta

    def enabled(self, name: str) -> bool:
        """Whether a gate is on. A gate this release does not have is off (it did not exist yet, or it
        graduated and was removed: callers name gates that exist in the release they branch on)."""
        value = self.effective.get(name)
        if value is not None:
            return value
        spec = gate_table(self.minor).gates.get(name)
        return spec.default if spec is not None else False


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def gates_for(minor: int, overrides: Mapping[str, Any]) -> FeatureGates:
    """Validate ``overrides`` against a release's gates as kube-scheduler does, and return the gates in
    effect. Raises GateError with upstream's messages (several joined by ``; ``)."""
    table = gate_table(minor)
    errors: list[str] = []
    explicit: dict[str, bool] = {}
    for name in sorted(overrides):
        value = overrides[name]
        if not isinstance(value, bool):
            errors.append(f"invalid value of {name}={value}, err: expected true or false")
            continue
        spec = table.gates.get(name)
        if spec is None:
            errors.append(f"unrecognized feature gate: {name}")
            continue
        if spec.locked and spec.default != value:
            errors.append(f"cannot set feature gate {name} to {_go_bool(value)}, feature is locked to "
                          f"{_go_bool(spec.default)}")
            continue
        explicit[name] = value
    if errors:
        raise GateError("; ".join(errors))
    effective = dict(explicit)
    for special, stage in _SPECIAL.items():
        if special in explicit:
            for name, spec in table.gates.items():
                if name not in _SPECIAL and spec.stage == stage and name not in explicit:
                    effective[name] = explicit[special]

    def on(name: str) -> bool:
        if name in effective:
            return effective[name]
        spec = table.gates.get(name)
        return spec.default if spec is not None else False

    for name in sorted(table.dependencies):
        if not on(name):
            continue
        disabled = [dep for dep in table.dependencies[name] if not on(dep)]
        if disabled:
            errors.append(f"{name} is enabled, but depends on features that are disabled: [{' '.join(disabled)}]")
    if errors:
        raise GateError("; ".join(errors))
    return FeatureGates(minor, MappingProxyType(dict(overrides)), MappingProxyType(effective))


def parse_gate_list(text: str) -> dict[str, bool]:
    """A ``--feature-gates`` value (``A=true,B=false``) as a map; GateError for a malformed item (upstream's
    messages: ``missing bool value for <name>``, ``invalid value of <name>=<value>, ...``)."""
    out: dict[str, bool] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep:
            raise GateError(f"missing bool value for {name}")
        value = raw.strip().lower()
        if value not in ("true", "false", "1", "0", "t", "f"):
            raise GateError(f"invalid value of {name}={raw.strip()}, err: strconv.ParseBool: parsing "
                            f"{raw.strip()!r}: invalid syntax".replace("'", '"'))
        out[name] = value in ("true", "1", "t")
    return out
