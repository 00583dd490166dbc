"""Profiles: which plugins run, in which order, with which weights and args.

A profile is written in the shape of a KubeSchedulerConfiguration profile (``schedulerName``,
``plugins`` with ``multiPoint`` / ``preFilter`` / ``filter`` / ``preScore`` / ``score`` enabled and
disabled lists, ``pluginConfig``), so that people can paste theirs. Merging follows upstream: the
default multi-point set, minus what is disabled (``"*"`` disables all defaults), plus what is enabled;
a plugin joins every extension point it implements; a weight set under ``score`` wins over one set under
``multiPoint``; a weight of 0 or none means 1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from extender.engine.framework import MAX_NODE_SCORE, FilterPlugin, PostFilterPlugin, ScorePlugin
from extender.engine.registry import lookup, registered
from extender.kube.release import Release, default_release

# kube-scheduler's default multi-point plugins and weights (apis/config/v1/default_plugins.go
# getDefaultPlugins and applyFeatureGates), less the ones that take no part in filtering, scoring or PostFilter
# (queue sort, scheduling gates, binding, and the pod-group extension points of GangScheduling,
# TopologyPlacementGenerator and PodGroupPodsCount, which the extender protocol never reaches).
_DEFAULT_FRONT_V136: tuple[tuple[str, int], ...] = (("NodeUnschedulable", 0), ("NodeName", 0))
# v1.37 default_plugins.go: NodeName runs before NodeUnschedulable, so a cordoned node that is not the
# pod's spec.nodeName is rejected by NodeName.
_DEFAULT_FRONT_V137: tuple[tuple[str, int], ...] = (("NodeName", 0), ("NodeUnschedulable", 0))
_DEFAULT_REST: tuple[tuple[str, int], ...] = (
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", 0),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0),
    ("NodeVolumeLimits", 0),
    ("VolumeBinding", 0),
    ("VolumeZone", 0),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    # applyDynamicResources puts DynamicResources here, just before DefaultPreemption (when its gate is on).
    ("DefaultPreemption", 0),  # PostFilter only: after DynamicResources, whose deallocation is tried first
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
)


def upstream_default_plugins(release: Release) -> tuple[tuple[str, int], ...]:
    """The release's default multi-point plugins (with the ones its feature gates add) and weights."""
    plugins = list((_DEFAULT_FRONT_V137 if release.at_least(37) else _DEFAULT_FRONT_V136) + _DEFAULT_REST)
    if release.gate("NodeDeclaredFeatures"):
        plugins.append(("NodeDeclaredFeatures", 0))  # applyFeatureGates appends it
    if release.gate("InPlacePodVerticalScalingSchedulerPreemption"):
        # v1.37 applyDeferredPodScheduling: just before NodeResourcesFit.
        fit = next(i for i, (name, _) in enumerate(plugins) if name == "NodeResourcesFit")
        plugins.insert(fit, ("DeferredPodScheduling", 0))
    if release.gate("DynamicResourceAllocation"):
        # applyDynamicResources: just before DefaultPreemption.
        before = next(i for i, (name, _) in enumerate(plugins) if name == "DefaultPreemption")
        plugins.insert(before, ("DynamicResources", 2))
    return tuple(plugins)


SCORE_MAPPINGS = ("absolute", "minmax")

# Named default plugin sets a profile can start from (``preset``): a fixed list, or a function of the release
# ("default" is upstream's default profile of the release the profile is built for).
Preset = tuple[tuple[str, int], ...] | Callable[[Release], tuple[tuple[str, int], ...]]
PRESETS: dict[str, Preset] = {"default": upstream_default_plugins}


def register_preset(name: str, plugins: Preset) -> None:
    """Make a default plugin set available as ``preset: <name>`` (e.g. the 0-10 era's DefaultProvider)."""
    PRESETS[name] = plugins


def preset_plugins(name: str, release: Release) -> tuple[tuple[str, int], ...]:
    """A preset's plugins for a release."""
    preset = PRESETS[name]
    return preset(release) if callable(preset) else preset


class ProfileError(ValueError):
    """A profile that cannot be built; the message names the key."""


@dataclass
class Profile:
    """A resolved profile: filter plugins in order, score plugins with weights, PostFilter plugins in order,
    args and score mapping."""

    name: str
    filters: list[str] = field(default_factory=list)
    scores: list[tuple[str, int]] = field(default_factory=list)
    post_filters: list[str] = field(default_factory=list)
    args: dict[str, dict[str, Any]] = field(default_factory=dict)
    score_mapping: str = "absolute"
    max_score: int = MAX_NODE_SCORE  # the score plugins' common scale (10 for the 0-10 era profile)
    release: Release = field(default_factory=default_release)  # the kube-scheduler release it follows

    def summary(self) -> dict[str, Any]:
        """The plugins this profile runs: ``{"filter": [...], "score": {name: weight}, "postFilter": [...]}``."""
        return {"filter": list(self.filters), "score": dict(self.scores), "postFilter": list(self.post_filters)}


MAX_PLUGIN_WEIGHT = 2**31 - 1


def _names(entries: Any, path: str) -> list[tuple[str, int | None]]:
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ProfileError(f"{path}: expected a list of {{name, weight}}")
    out: list[tuple[str, int | None]] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise ProfileError(f"{path}[{i}]: expected {{name: <plugin>, weight: <int>}}")
        weight = entry.get("weight")
        # KubeSchedulerConfiguration's Plugin.Weight is an int32: larger numbers do not decode there.
        if weight is not None and (not isinstance(weight, int) or isinstance(weight, bool)
                                   or not 0 <= weight <= MAX_PLUGIN_WEIGHT):
            raise ProfileError(f"{path}[{i}].weight: expected an integer in 0..{MAX_PLUGIN_WEIGHT}")
        out.append((entry["name"], weight))
    return out


def _point(plugins: Mapping[str, Any], point: str, path: str) -> tuple[list[tuple[str, int | None]], set[str]]:
    cfg = plugins.get(point) or {}
    if not isinstance(cfg, Mapping):
        raise ProfileError(f"{path}.{point}: expected {{enabled: [...], disabled: [...]}}")
    enabled = _names(cfg.get("enabled"), f"{path}.{point}.enabled")
    disabled = {name for name, _ in _names(cfg.get("disabled"), f"{path}.{point}.disabled")}
    return enabled, disabled


def build_profile(spec: Mapping[str, Any] | None, *, default_name: str = "default-scheduler",
                  path: str = "profile", release: Release | None = None) -> Profile:
    """Resolve a KubeSchedulerConfiguration-shaped profile against the registry, for a kube-scheduler release
    (default: the newest supported one with its default gates): the release decides the default plugins, their
    order, and which plugins exist."""
    release = release or default_release()
    spec = spec or {}
    if not isinstance(spec, Mapping):
        raise ProfileError(f"{path}: expected an object")
    name = spec.get("schedulerName", default_name)
    if not isinstance(name, str) or not name or "/" in name:
        raise ProfileError(f"{path}.schedulerName: expected a non-empty name without '/'")
    plugins = spec.get("plugins") or {}
    if not isinstance(plugins, Mapping):
        raise ProfileError(f"{path}.plugins: expected an object")
    known = set(plugins) - {"multiPoint", "preFilter", "filter", "preScore", "score", "queueSort", "postFilter",
                            "reserve", "permit", "preBind", "bind", "postBind", "preEnqueue"}
    if known:
        raise ProfileError(f"{path}.plugins: unknown extension point(s) {sorted(known)}")

    available = registered(release)
    preset = spec.get("preset", "default")
    if preset not in PRESETS:
        raise ProfileError(f"{path}.preset: unknown preset {preset!r}; presets: {', '.join(sorted(PRESETS))}")
    mp_enabled, mp_disabled = _point(plugins, "multiPoint", f"{path}.plugins")
    multipoint: list[tuple[str, int | None]] = []
    if "*" not in mp_disabled:
        # Upstream defaults this build does not implement yet are left out of the default set.
        multipoint = [(n, w or None) for n, w in preset_plugins(preset, release)
                      if n not in mp_disabled and n in available]
    for plugin_name, weight in mp_enabled:
        lookup(plugin_name, release)  # a clear error for an unknown name
        for i, (existing, _) in enumerate(multipoint):
            if existing == plugin_name:
                multipoint[i] = (plugin_name, weight)
                break
        else:
            multipoint.append((plugin_name, weight))

    def resolve(point: str, base: type) -> list[tuple[str, int | None]]:
        enabled, disabled = _point(plugins, point, f"{path}.plugins")
        chosen: list[tuple[str, int | None]] = []
        for plugin_name, weight in enabled:
            cls = lookup(plugin_name, release)
            if not issubclass(cls, base):
                raise ProfileError(f"{path}.plugins.{point}: {plugin_name} does not implement {point}")
            chosen.append((plugin_name, weight))
        names = {n for n, _ in chosen}
        if "*" not in disabled:
            for plugin_name, weight in multipoint:
                if plugin_name not in names and plugin_name not in disabled and issubclass(
                        lookup(plugin_name, release), base):
                    chosen.append((plugin_name, weight))
        return chosen

    filters = [n for n, _ in resolve("filter", FilterPlugin)]
    scores = [(n, w or 1) for n, w in resolve("score", ScorePlugin)]
    post_filters = [n for n, _ in resolve("postFilter", PostFilterPlugin)]

    args: dict[str, dict[str, Any]] = {}
    config = spec.get("pluginConfig") or []
    if not isinstance(config, list):
        raise ProfileError(f"{path}.pluginConfig: expected a list of {{name, args}}")
    for i, entry in enumerate(config):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise ProfileError(f"{path}.pluginConfig[{i}]: expected {{name: <plugin>, args: {{...}}}}")
        plugin_args = entry.get("args") or {}
        if not isinstance(plugin_args, Mapping):
            raise ProfileError(f"{path}.pluginConfig[{i}].args: expected an object")
        lookup(entry["name"], release)
        args[entry["name"]] = dict(plugin_args)

    mapping = spec.get("scoreMapping", "absolute")
    if mapping not in SCORE_MAPPINGS:
        raise ProfileError(f"{path}.scoreMapping: expected one of {', '.join(SCORE_MAPPINGS)}, got {mapping!r}")
    scales = {lookup(n, release).max_score for n, _ in scores}  # type: ignore[attr-defined]
    if len(scales) > 1:
        raise ProfileError(f"{path}.plugins: score plugins on different scales ({sorted(scales)}) cannot be mixed")
    return Profile(name=name, filters=filters, scores=scores, post_filters=post_filters, args=args,
                   score_mapping=mapping, max_score=scales.pop() if scales else MAX_NODE_SCORE, release=release)
