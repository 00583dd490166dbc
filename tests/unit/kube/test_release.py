"""Which kube-scheduler release the engine follows (kubernetesVersion), and the release's feature gates."""

from __future__ import annotations

import pytest

from extender.kube.gates import ENGINE_GATES, GateError, gate_table, gates_for, parse_gate_list
from extender.kube.release import (
    NEWEST,
    OLDEST,
    SUPPORTED,
    VersionError,
    choose,
    parse_setting,
    release,
    reported_minor,
)


@pytest.mark.parametrize(("text", "minor"), [("auto", None), ("AUTO", None), (" 1.36 ", 36), ("1.37", 37),
                                             ("v1.37", 37), ("1.36.3", 36), ("v1.37.2", 37)])
def test_settings(text: str, minor: int | None) -> None:
    assert parse_setting(text) == minor


@pytest.mark.parametrize("text", ["", "1.35", "1.38", "2.0", "latest", "1", "1.x"])
def test_unsupported_settings_are_refused_with_the_choices(text: str) -> None:
    with pytest.raises(VersionError, match=r'expected "auto" or one of "1.36", "1.37"'):
        parse_setting(text)


@pytest.mark.parametrize(("git", "minor_field", "minor"), [
    ("v1.37.2", "37", 37), ("v1.36.0-gke.1200", "36+", 36), ("v1.38.0-alpha.1+abc", "38", 38),
    ("1.36.3", "", 36), ("weird", "37+", 37), ("v2.0.0", "", None), ("", "", None)])
def test_reported_versions(git: str, minor_field: str, minor: int | None) -> None:
    assert reported_minor(git, minor_field) == minor


def test_a_configured_version_wins_over_the_cluster() -> None:
    choice = choose(36, "v1.37.2", source="apiserver")
    assert (choice.minor, choice.source, choice.reported, choice.warning) == (36, "configuration", "v1.37.2", None)


def test_auto_follows_the_cluster_else_the_newest() -> None:
    assert choose(None, "v1.36.3", source="apiserver").minor == 36
    assert choose(None, "v1.37.0-eks-1", source="dump").minor == 37
    offline = choose(None)
    assert (offline.minor, offline.source, offline.warning) == (NEWEST, "default", None)


@pytest.mark.parametrize(("reported", "nearest"), [("v1.35.4", OLDEST), ("v1.29.0", OLDEST), ("v1.38.1", NEWEST),
                                                    ("v1.40.0-rc.0", NEWEST)])
def test_unsupported_cluster_minors_take_the_nearest_release_with_one_warning(reported: str, nearest: int) -> None:
    choice = choose(None, reported, source="apiserver")
    assert choice.minor == nearest
    assert choice.warning is not None and "\n" not in choice.warning
    assert reported in choice.warning and f"following kube-scheduler {SUPPORTED[nearest]}" in choice.warning


def test_a_release_describes_how_it_was_chosen() -> None:
    chosen = release(37, {"InterPodAffinityHostnameFastPath": True}, choose(None, "v1.37.2", source="apiserver"))
    assert chosen.describe() == {"version": "1.37", "upstream": "v1.37.2", "setting": "auto", "source": "apiserver",
                                 "reported": "v1.37.2", "warning": None,
                                 "featureGates": {"InterPodAffinityHostnameFastPath": True}}
    assert chosen.summary() == ("kube-scheduler v1.37.2 semantics (kubernetesVersion auto: the apiserver reports "
                                "v1.37.2); feature gates InterPodAffinityHostnameFastPath=true")
    with pytest.raises(VersionError):
        release(35)


# ---- feature gates ----------------------------------------------------------------------------------


def test_defaults_per_release() -> None:
    v136, v137 = gates_for(36, {}), gates_for(37, {})
    # What changes a default-profile plugin between the releases.
    for gate, before, after in (("StorageCapacityScoring", False, True), ("VolumeLimitScaling", False, True),
                                ("DRADeviceTaintRules", False, True), ("NodeDeclaredFeatures", True, True),
                                ("InPlacePodVerticalScalingSchedulerPreemption", False, False)):
        assert (v136.enabled(gate), v137.enabled(gate)) == (before, after), gate
    assert gate_table(37).gates["NodeDeclaredFeatures"].locked  # GA in 1.37
    assert not gate_table(36).gates["NodeDeclaredFeatures"].locked  # beta in 1.36


def test_a_gate_a_release_does_not_have_is_off() -> None:
    assert not gates_for(36, {}).enabled("InPlacePodVerticalScalingSchedulerPreemption")


def test_every_gate_the_engine_reads_exists_in_a_release() -> None:
    known = set(gate_table(36).gates) | set(gate_table(37).gates)
    assert known >= ENGINE_GATES, sorted(ENGINE_GATES - known)


@pytest.mark.parametrize(("minor", "gates", "message"), [
    (37, {"NoSuchGate": True}, "unrecognized feature gate: NoSuchGate"),
    (37, {"SidecarContainers": True}, "unrecognized feature gate: SidecarContainers"),  # removed after GA
    (36, {"SidecarContainers": False}, "cannot set feature gate SidecarContainers to false, feature is locked to true"),
    (37, {"DRAExtendedResource": False},
     "cannot set feature gate DRAExtendedResource to false, feature is locked to true"),
    (37, {"NodeDeclaredFeatures": False},
     "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true"),
    (37, {"InPlacePodVerticalScalingSchedulerPreemption": True, "InPlacePodVerticalScaling": False},
     "cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true"),
    (37, {"StorageCapacityScoring": "yes"}, "invalid value of StorageCapacityScoring=yes"),
])
def test_gates_are_validated_as_kube_scheduler_validates_them(minor: int, gates: dict[str, object],
                                                              message: str) -> None:
    with pytest.raises(GateError, match=message):
        gates_for(minor, gates)


def test_a_locked_gate_may_be_set_to_its_value() -> None:
    assert gates_for(37, {"DRAExtendedResource": True}).enabled("DRAExtendedResource")


def test_dependencies_must_be_enabled() -> None:
    table = gate_table(37)
    feature, needs = next((f, d) for f, d in sorted(table.dependencies.items())
                          if any(not table.gates[n].locked for n in d) and not table.gates[f].locked)
    dep = next(n for n in needs if not table.gates[n].locked)
    with pytest.raises(GateError, match=rf"{feature} is enabled, but depends on features that are disabled: \[.*{dep}"):
        gates_for(37, {feature: True, dep: False})


def test_all_alpha_turns_on_every_alpha_gate_not_named() -> None:
    gates = gates_for(37, {"AllAlpha": True, "InterPodAffinityHostnameFastPath": False,
                           "AllBeta": True})
    assert gates.enabled("InPlacePodVerticalScalingSchedulerPreemption")
    assert not gates.enabled("InterPodAffinityHostnameFastPath")


def test_gate_lists_as_the_flag_takes_them() -> None:
    assert parse_gate_list("A=true, B=false,C=1,") == {"A": True, "B": False, "C": True}
    with pytest.raises(GateError, match="missing bool value for A"):
        parse_gate_list("A")
    with pytest.raises(GateError, match="invalid value of A=maybe"):
        parse_gate_list("A=maybe")
