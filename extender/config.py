"""The service's configuration file: profiles in KubeSchedulerConfiguration shape, plugin imports, and
cache settings, validated at start-up with messages that name the key at fault.

Example (see config/extender.yaml)::

    imports: [my_company.scheduling]        # modules (or .py files) that register user plugins
    assumedPodTTLSeconds: 30                # expiry of assumed pods after binding finished (0 = never)
    logLevel: info                          # debug, info, warning, error (--log-level and env win)
    kubernetesVersion: auto                 # "1.36", "1.37", or auto: the cluster's (--kubernetes-version wins)
    featureGates: {StorageCapacityScoring: false}   # upstream's gates, as kube-scheduler's --feature-gates
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
from extender.kube.gates import GateError
from extender.kube.release import SUPPORTED, Release, VersionChoice, VersionError, parse_setting, release

KNOWN_KEYS = {"apiVersion", "kind", "imports", "profiles", "assumedPodTTLSeconds", "logLevel", "kubernetesVersion",
              "featureGates"}
LOG_LEVELS = ("debug", "info", "warning", "error")
# Without a profiles list: upstream's default profile, and the 0-10 era beside it at /profiles/legacy/<verb>
# so that it can be tried without writing a file. The first stays the one served at /<verb>.
DEFAULT_PROFILES: tuple[dict[str, Any], ...] = ({}, {"schedulerName": "legacy", "preset": "legacy"})


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the file and key."""


@dataclass
class Config:
    """The validated configuration.

    Profiles depend on the kube-scheduler release they follow (its default plugins, their order, its feature
    gates), which with ``kubernetesVersion: auto`` is only known once the cluster's version is: ``profiles``
    are built for the release the configuration names (the newest supported one for auto), and
    :meth:`profiles_for` builds them again for the release finally chosen.
    """

    profiles: list[Profile] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    assumed_pod_ttl_seconds: float = 30.0
    log_level: str | None = None
    kubernetes_version: int | None = None  # the configured minor; None: auto
    feature_gates: dict[str, bool] = field(default_factory=dict)
    profile_specs: list[Any] = field(default_factory=list)
    source: str = "config"

    def with_settings(self, kubernetes_version: int | None = None,
                      feature_gates: Mapping[str, bool] | None = None) -> Config:
        """This configuration with the version and gates given on the command line or in the environment
        (each wins over the file's when given), validated again."""
        minor = self.kubernetes_version if kubernetes_version is None else kubernetes_version
        gates = dict(self.feature_gates) if feature_gates is None else {**self.feature_gates, **feature_gates}
        valid_for = _check_release_settings(minor, gates, self.profile_specs, self.source)
        profiles = _build_profiles(self.profile_specs, self.source, _release(valid_for, gates, self.source))
        return Config(profiles=profiles, imports=self.imports, assumed_pod_ttl_seconds=self.assumed_pod_ttl_seconds,
                      log_level=self.log_level, kubernetes_version=minor, feature_gates=gates,
                      profile_specs=self.profile_specs, source=self.source)

    def release_for(self, choice: VersionChoice) -> Release:
        """The release (with the configured feature gates) of a version choice; ConfigError when the gates
        are not valid for it."""
        return _release(choice.minor, self.feature_gates, self.source, choice)

    def profiles_for(self, chosen: Release) -> list[Profile]:
        """The profiles built for a release; ConfigError when a profile is not valid in it."""
        return _build_profiles(self.profile_specs, self.source, chosen)


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
    try:
        minor = parse_setting(data.get("kubernetesVersion", "auto"))
    except VersionError as err:
        raise ConfigError(f"{source}: {err}") from err
    gates = data.get("featureGates") or {}
    if not isinstance(gates, Mapping) or not all(isinstance(k, str) for k in gates):
        raise ConfigError(f"{source}: featureGates: expected a map of gate names to true or false")
    gates = dict(gates)
    valid_for = _check_release_settings(minor, gates, specs, source)
    profiles = _build_profiles(specs, source, _release(valid_for, gates, source))
    return Config(profiles=profiles, imports=list(imports), assumed_pod_ttl_seconds=float(ttl),
                  log_level=log_level.lower() if isinstance(log_level, str) else None, kubernetes_version=minor,
                  feature_gates=gates, profile_specs=list(specs), source=source)


def _release(minor: int, gates: Mapping[str, Any], source: str, choice: VersionChoice | None = None) -> Release:
    try:
        return release(minor, dict(gates), choice)
    except (GateError, VersionError) as err:
        raise ConfigError(f"{source}: featureGates (kube-scheduler {SUPPORTED[minor]}): {err}") from err


def _build_profiles(specs: list[Any], source: str, chosen: Release) -> list[Profile]:
    profiles: list[Profile] = []
    for i, spec in enumerate(specs):
        try:
            profile = build_profile(spec, path=f"profiles[{i}]", release=chosen)
        except (ProfileError, RegistryError) as err:
            raise ConfigError(f"{source}: {err}") from err
        if any(p.name == profile.name for p in profiles):
            raise ConfigError(f"{source}: profiles[{i}].schedulerName: duplicate profile {profile.name!r}")
        profiles.append(profile)
    return profiles


def _check_release_settings(minor: int | None, gates: Mapping[str, Any], specs: list[Any], source: str) -> int:
    """A fixed version's gates and profiles must be valid for it; with auto, for at least one supported release
    (the one finally chosen is checked again when the cluster's version is known). Returns the release the
    configuration's profiles are first built for: the fixed one, or the newest it is valid for."""
    candidates = [minor] if minor is not None else sorted(SUPPORTED, reverse=True)
    errors: list[ConfigError] = []
    for candidate in candidates:
        try:
            _build_profiles(specs, source, _release(candidate, gates, source))
            return candidate
        except ConfigError as err:
            errors.append(err)
    if len(errors) == 1:
        raise errors[0]
    raise ConfigError(f"{source}: with kubernetesVersion auto the configuration must be valid for a supported "
                      f"release, and it is valid for none: " + "; ".join(str(e) for e in errors))


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
