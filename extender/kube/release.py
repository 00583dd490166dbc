"""Which kube-scheduler release the engine follows, and how it is chosen.

The engine is exact for two releases of kube-scheduler, v1.36.3 and v1.37.2. Which one a service, an
explanation or a simulation follows is the ``kubernetesVersion`` setting:

* ``"1.36"`` or ``"1.37"``: that release, whatever the cluster runs;
* ``"auto"`` (the default): the minor the cluster reports. Live (``serve --kubeconfig``, ``explain`` and
  ``simulate`` against an apiserver) that is the apiserver's ``/version``; offline (a dump, the demo
  cluster) it is the version the dump records (see :mod:`extender.cluster.dump`), else the newest supported
  release.

A reported minor outside the supported range is followed with the nearest supported release's semantics
(older than 1.36: 1.36; newer than 1.37: 1.37), and :class:`VersionChoice` carries a one-line warning that
the service logs and shows in ``/readyz``.

A :class:`Release` is what a profile is built for and what each plugin reads: its minor, the pinned tag and
the feature gates in effect (upstream's defaults for that release, changed by the ``featureGates``
setting). The places where the two releases differ are small branches in the plugin or module that owns
them, each citing the upstream file (``docs/versions.md`` lists them all).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from extender.kube.gates import FeatureGates, gates_for

#: The releases the engine is exact for: minor -> the pinned upstream tag.
SUPPORTED: dict[int, str] = {36: "v1.36.3", 37: "v1.37.2"}
OLDEST = min(SUPPORTED)
NEWEST = max(SUPPORTED)
AUTO = "auto"

Source = Literal["configuration", "apiserver", "dump", "default"]

_SETTING = re.compile(r"^v?1\.(\d+)(?:\.\d+)?$")
# gitVersion as apiservers report it: v1.37.2, v1.37.2-gke.1200, v1.38.0-alpha.1+abcdef
_REPORTED = re.compile(r"^v?(\d+)\.(\d+)(?:[.+-].*)?$")


class VersionError(ValueError):
    """A kubernetesVersion setting or feature gate that cannot be used; the message says why."""


def parse_setting(value: object) -> int | None:
    """The minor a ``kubernetesVersion`` setting names, or None for ``auto``.

    Accepted: ``"auto"``, ``"1.36"``, ``"1.37"`` (a patch level or a leading ``v`` is allowed and ignored).
    """
    if not isinstance(value, str) or not value.strip():
        raise VersionError(f"kubernetesVersion: expected \"auto\" or one of {supported_names()}, got {value!r}")
    text = value.strip()
    if text.lower() == AUTO:
        return None
    match = _SETTING.match(text)
    if match is None or int(match.group(1)) not in SUPPORTED:
        raise VersionError(f"kubernetesVersion: expected \"auto\" or one of {supported_names()}, got {value!r}")
    return int(match.group(1))


def supported_names() -> str:
    """``"1.36", "1.37"`` for messages."""
    return ", ".join(f'"1.{minor}"' for minor in sorted(SUPPORTED))


def reported_minor(git_version: str, minor_field: str | None = None) -> int | None:
    """The minor of a version an apiserver reports (its ``gitVersion``, or the ``minor`` field such as
    ``"37+"`` when gitVersion does not parse); None when neither is a 1.x version."""
    match = _REPORTED.match(git_version.strip()) if git_version else None
    if match is not None and match.group(1) == "1":
        return int(match.group(2))
    digits = re.match(r"^(\d+)", minor_field or "")
    return int(digits.group(1)) if digits else None


class _Named:
    """The name and upstream tag of a release, from its ``minor``."""

    minor: int

    @property
    def name(self) -> str:
        """``"1.37"``."""
        return f"1.{self.minor}"

    @property
    def tag(self) -> str:
        """The upstream tag followed, ``"v1.37.2"``."""
        return SUPPORTED[self.minor]


@dataclass(frozen=True)
class VersionChoice(_Named):
    """The release chosen for a setting and what the cluster reported, with the reason and any warning."""

    minor: int
    setting: str  # "auto", "1.36" or "1.37"
    source: Source  # where the minor came from
    reported: str | None = None  # the cluster's own version string, when known
    warning: str | None = None  # set when the cluster's minor is not supported

    def describe(self) -> dict[str, str | None]:
        """What /readyz, explain and simulate report about it."""
        return {"kubernetesVersion": self.name, "upstream": self.tag, "setting": self.setting,
                "source": self.source, "reported": self.reported, "warning": self.warning}


def choose(setting: int | None, reported: str | None = None, *, source: Source = "default",
           reported_minor_field: str | None = None) -> VersionChoice:
    """Choose the release to follow.

    ``setting`` is the configured minor (None: auto); ``reported`` the cluster's version string (None when
    there is none: offline without a recorded version). A fixed setting wins; auto takes the reported minor,
    the nearest supported one when it is out of range (with a warning), or the newest without a report.
    """
    setting_name = AUTO if setting is None else f"1.{setting}"
    if setting is not None:
        return VersionChoice(setting, setting_name, "configuration", reported)
    if reported is None:
        return VersionChoice(NEWEST, setting_name, "default")
    minor = reported_minor(reported, reported_minor_field)
    if minor is None:
        return VersionChoice(NEWEST, setting_name, source, reported,
                             f"the cluster reports version {reported!r}, which is not a Kubernetes 1.x version; "
                             f"following kube-scheduler {SUPPORTED[NEWEST]}")
    if minor in SUPPORTED:
        return VersionChoice(minor, setting_name, source, reported)
    nearest = OLDEST if minor < OLDEST else NEWEST
    return VersionChoice(nearest, setting_name, source, reported,
                         f"the cluster runs Kubernetes 1.{minor} ({reported}), which this extender does not support "
                         f"(supported: 1.{OLDEST}..1.{NEWEST}); following kube-scheduler {SUPPORTED[nearest]}")


@dataclass(frozen=True)
class Release(_Named):
    """The kube-scheduler release a profile is built for: its minor, tag and feature gates in effect, and how
    it was chosen (``choice``: None when it was not chosen from a setting, e.g. in tests)."""

    minor: int
    gates: FeatureGates = field(compare=False)
    choice: VersionChoice | None = field(default=None, compare=False)

    def gate(self, name: str) -> bool:
        """Whether a feature gate is on for this release (upstream's default unless configured)."""
        return self.gates.enabled(name)

    def at_least(self, minor: int) -> bool:
        """Whether this release is 1.<minor> or newer."""
        return self.minor >= minor

    @property
    def warning(self) -> str | None:
        """The warning of an unsupported cluster version, if that is how this release was chosen."""
        return self.choice.warning if self.choice is not None else None

    def describe(self) -> dict[str, object]:
        """What answers report about the release they followed."""
        choice = self.choice
        return {"version": self.name, "upstream": self.tag,
                "setting": choice.setting if choice else f"1.{self.minor}",
                "source": choice.source if choice else "configuration",
                "reported": choice.reported if choice else None,
                "warning": choice.warning if choice else None,
                "featureGates": dict(sorted(self.gates.overrides.items()))}

    def summary(self) -> str:
        """One line for logs and tables: which kube-scheduler this follows and why."""
        choice = self.choice
        text = f"kube-scheduler {self.tag} semantics"
        if choice is not None and choice.setting == AUTO:
            where = "the apiserver reports" if choice.source == "apiserver" else "the dump records"
            text += f" (kubernetesVersion auto: {where} {choice.reported})" if choice.reported else \
                " (kubernetesVersion auto: newest supported)"
        elif choice is not None:
            text += f" (kubernetesVersion {choice.setting})"
        if self.gates.overrides:
            text += "; feature gates " + ",".join(f"{k}={str(v).lower()}"
                                                  for k, v in sorted(self.gates.overrides.items()))
        return text

    def __repr__(self) -> str:
        changed = ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self.gates.overrides.items()))
        return f"Release({self.name}{'; ' + changed if changed else ''})"


def release(minor: int, feature_gates: dict[str, bool] | None = None, choice: VersionChoice | None = None) -> Release:
    """The release for a supported minor with upstream's default gates, changed by ``feature_gates``
    (validated as kube-scheduler's ``--feature-gates`` is: GateError names the gate at fault)."""
    if minor not in SUPPORTED:
        raise VersionError(f"kubernetesVersion 1.{minor} is not supported ({supported_names()})")
    return Release(minor, gates_for(minor, feature_gates or {}), choice)


def default_release() -> Release:
    """The newest supported release with its default gates: what a profile or plugin built without a release
    follows."""
    return _DEFAULT_RELEASE or _set_default()


_DEFAULT_RELEASE: Release | None = None


def _set_default() -> Release:
    global _DEFAULT_RELEASE
    _DEFAULT_RELEASE = release(NEWEST)
    return _DEFAULT_RELEASE
