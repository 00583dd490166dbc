"""Node declared features (``k8s.io/component-helpers/nodedeclaredfeatures`` v0.36.3 and v0.37.2).

A node publishes, in ``status.declaredFeatures``, the features its kubelet has turned on; a pod that
relies on one of them may only go to such a node. The registries below are upstream's ``AllFeatures`` of each
release; each feature says which pods need it for scheduling. Only registered names count on the node side,
read as upstream's ``TryMap`` does (a merge walk over the node's list, which the kubelet publishes
sorted: unknown names are skipped). v0.37.2 registers four more features (features/registry.go), of which
VolumeBindMountOptions constrains scheduling: a container, init or ephemeral container mounting a volume
with ``bindMountOptions``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

PodSpec = Mapping[str, Any]


def _containers(spec: PodSpec, key: str) -> list[Mapping[str, Any]]:
    items = spec.get(key)
    return [c for c in items if isinstance(c, Mapping)] if isinstance(items, list) else []


def _restarts_all_containers(spec: PodSpec) -> bool:
    """A container or init container has a restart rule with action RestartAllContainers."""
    for key in ("containers", "initContainers"):
        for container in _containers(spec, key):
            rules = container.get("restartPolicyRules")
            for rule in rules if isinstance(rules, list) else []:
                if isinstance(rule, Mapping) and rule.get("action") == "RestartAllContainers":
                    return True
    return False


def _user_namespace_with_host_network(spec: PodSpec) -> bool:
    """hostNetwork with hostUsers explicitly false."""
    return spec.get("hostNetwork") is True and spec.get("hostUsers") is False


def _mounts_with_bind_options(spec: PodSpec) -> bool:
    """A container, init container or ephemeral container mounts a volume with bindMountOptions."""
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for container in _containers(spec, key):
            mounts = container.get("volumeMounts")
            for mount in mounts if isinstance(mounts, list) else []:
                if isinstance(mount, Mapping) and mount.get("bindMountOptions"):
                    return True
    return False


def _never(_spec: PodSpec) -> bool:
    return False


# Upstream's registries: name -> what makes a pod need the feature to be scheduled (InferForScheduling).
# Features only inferred for pod updates (in-place resize) never constrain scheduling. None has a
# MaxVersion in either release, so none is dropped for the scheduler's version.
_FEATURES_V136: dict[str, Callable[[PodSpec], bool]] = {
    "ExtendWebSocketsToKubelet": _never,
    "InPlacePodLevelResourcesVerticalScaling": _never,
    "InPlacePodVerticalScalingInitContainers": _never,
    "RestartAllContainersOnContainerExits": _restarts_all_containers,
    "UserNamespacesHostNetworkSupport": _user_namespace_with_host_network,
}
FEATURES_BY_MINOR: dict[int, dict[str, Callable[[PodSpec], bool]]] = {
    36: _FEATURES_V136,
    37: {**_FEATURES_V136,
         "InPlacePodVerticalScalingMemoryBackedVolumes": _never,
         "DRANodeAllocatableResources": _never,
         "VolumeBindMountOptions": _mounts_with_bind_options,
         "DRAOptionalNodeOperations": _never},
}
_REGISTERED: dict[int, tuple[str, ...]] = {minor: tuple(sorted(f)) for minor, f in FEATURES_BY_MINOR.items()}


def required_features(spec: PodSpec, minor: int = 37) -> frozenset[str]:
    """The registered features a pod needs on its node (InferForPodScheduling) in release 1.<minor>."""
    features = FEATURES_BY_MINOR[minor]
    return frozenset(name for name in _REGISTERED[minor] if features[name](spec))


def node_features(declared: Sequence[Any] | None, minor: int = 37) -> frozenset[str]:
    """The registered features among a node's ``status.declaredFeatures`` (TryMap: a sorted merge)."""
    if not isinstance(declared, list | tuple):
        return frozenset()
    registered = _REGISTERED[minor]
    found: set[str] = set()
    i = j = 0
    while i < len(declared) and j < len(registered):
        name = str(declared[i])
        if name == registered[j]:
            found.add(name)
            i += 1
            j += 1
        elif name < registered[j]:
            i += 1
        else:
            j += 1
    return frozenset(found)
