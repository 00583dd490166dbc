"""The service's configuration file: profiles in KubeSchedulerConfiguration shape, plugin imports, and
cache settings, validated at start-up with messages that name the key at fault.

Example (see config/extender.yaml)::

    imports: [my_company.scheduling]        # modules (or .py files) that register user plugins
    assumedPodTTLSeconds: 30                # expiry of assumed pods after binding finished (0 = never)
    logLevel: info                          # debug, info, warning, error (--log-level and env win)
    profiles:
      - schedulerName: default-scheduler    # the first profile is also served at /<verb>
        scoreMapping: absolute              # or minmax: how weighted totals map to 0..10
        plugins:
          multiPoint:
            disabled: [{name: ImageLocality}]
        pluginConfig:
          - name: NodeResourcesFit
            args: {scoringStrategy: {type: MostAllocated}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extender.cluster.dump import DumpError, load_yaml_file
from extender.engine.profile import Profile, ProfileError, build_profile
from extender.engine.registry import RegistryError, import_plugin_module

KNOWN_KEYS = {"apiVersion", "kind", "imports", "profiles", "assumedPodTTLSeconds", "logLevel"}
LOG_LEVELS = ("debug", "info", "warning", "error")
# Without a profiles list: upstream's default profile, and the 0-10 era beside it at /profiles/legacy/<verb>
# so that it can be tried without writing a file. The first stays the one served at /<verb>.
DEFAULT_PROFILES: tuple[dict[str, Any], ...] = ({}, {"schedulerName": "legacy", "preset": "legacy"})


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the file and key."""


@dataclass
class Config:
    """The validated configuration."""

    profiles: list[Profile] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    assumed_pod_ttl_seconds: float = 30.0
    log_level: str | None = None


def parse_config(data: Any, source: str = "config", base: Path | None = None) -> Config:
    """Validate a decoded configuration document."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: expected a mapping at the top level")
    unknown = set(data) - KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {sorted(unknown)}; known keys: {sorted(KNOWN_KEYS)}")
    imports = data.get("imports") or []
    if not isinstance(imports, list) or not all(isinstance(m, str) for m in imports):
        raise ConfigError(f"{source}: imports: expected a list of module names")
    for module in imports:
        try:
            import_plugin_module(module, base)
        except RegistryError as err:
            raise ConfigError(f"{source}: imports: {err}") from err
    ttl = data.get("assumedPodTTLSeconds", 30)
    if not isinstance(ttl, int | float) or isinstance(ttl, bool) or ttl < 0:
        raise ConfigError(f"{source}: assumedPodTTLSeconds: expected a non-negative number")
    log_level = data.get("logLevel")
    if log_level is not None and (not isinstance(log_level, str) or log_level.lower() not in LOG_LEVELS):
        raise ConfigError(f"{source}: logLevel: expected one of {', '.join(LOG_LEVELS)}")
    specs = data.get("profiles")
    if specs is None:
        specs = [dict(spec) for spec in DEFAULT_PROFILES]
    if not isinstance(specs, list) or not specs:
        raise ConfigError(f"{source}: profiles: expected a non-empty list")
    profiles: list[Profile] = []
    for i, spec in enumerate(specs):
        try:
            profile = build_profile(spec, path=f"profiles[{i}]")
        except (ProfileError, RegistryError) as err:
            raise ConfigError(f"{source}: {err}") from err
        if any(p.name == profile.name for p in profiles):
            raise ConfigError(f"{source}: profiles[{i}].schedulerName: duplicate profile {profile.name!r}")
        profiles.append(profile)
    return Config(profiles=profiles, imports=list(imports), assumed_pod_ttl_seconds=float(ttl),
                  log_level=log_level.lower() if isinstance(log_level, str) else None)


def load_config(path: str | Path | None) -> Config:
    """Read and validate a configuration file; None gives the defaults (DEFAULT_PROFILES)."""
    if path is None:
        return parse_config({}, "defaults")
    file = Path(path)
    try:
        doc = load_yaml_file(file)
    except DumpError as err:
        raise ConfigError(str(err)) from err
    return parse_config(doc, str(file), file.parent)
