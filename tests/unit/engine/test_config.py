"""The configuration file: profiles in KubeSchedulerConfiguration shape, user plugins, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from builders import make_node, make_pod

from extender.cluster.cache import ClusterCache
from extender.config import ConfigError, load_config, parse_config
from extender.engine.explain import explain
from extender.engine.profile import ProfileError
from extender.engine.runtime import Framework

ROOT = Path(__file__).resolve().parents[3]


def test_example_configuration_loads() -> None:
    config = load_config(ROOT / "config" / "extender.yaml")
    assert config.log_level == "info" and config.assumed_pod_ttl_seconds == 30
    default, binpack = config.profiles
    assert default.name == "default-scheduler" and binpack.name == "binpack"
    assert ("TaintToleration", 3) in default.scores and ("InterPodAffinity", 2) in default.scores
    assert "NodeResourcesBalancedAllocation" not in dict(binpack.scores)
    assert binpack.args["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"
    assert binpack.score_mapping == "minmax"


def test_user_plugin_from_a_file_is_loaded_and_runs() -> None:
    config = load_config(ROOT / "config" / "with-user-plugin.yaml")
    default, ssd_only = (Framework(p) for p in config.profiles)
    assert ("PreferLabel", 5) in default.profile.scores
    cache = ClusterCache()
    cache.upsert_node(make_node("fast", labels={"disktype": "ssd"}))
    cache.upsert_node(make_node("slow", labels={"disktype": "hdd"}))
    pod = make_pod("p", requests=[{"cpu": "100m"}])
    scored = explain(default, cache.snapshot(), pod)
    assert scored["nodes"]["fast"]["scores"]["PreferLabel"] == {"raw": 100, "normalized": 100, "weighted": 500}
    assert scored["nodes"]["fast"]["total"] > scored["nodes"]["slow"]["total"]
    filtered = explain(ssd_only, cache.snapshot(), pod)
    assert filtered["nodes"]["slow"]["filters"]["PreferLabel"] == {
        "code": "UnschedulableAndUnresolvable", "reasons": ["node(s) didn't have label disktype=ssd"]}


@pytest.mark.parametrize(("document", "message"), [
    ({"profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "Nope"}]}}}]}, "unknown plugin 'Nope'"),
    ({"profiles": [{"plugins": {"score": {"enabled": [{"name": "NodeName"}]}}}]}, "does not implement score"),
    ({"profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": -1}]}}}]},
     "weight: expected an integer in 0..2147483647"),
    ({"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]}, "duplicate profile 'a'"),
    ({"profiles": [{"scoreMapping": "loud"}]}, "scoreMapping"),
    ({"profiles": [{"preset": "v0"}]}, "unknown preset 'v0'"),
    ({"profile": []}, "unknown key(s) ['profile']"),
    ({"imports": ["no_such_module_here"]}, "cannot import plugin module"),
    ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "Fancy"}}}]}]}, "scoring strategy Fancy is not supported"),
    ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "resources": [{"name": "cpu", "weight": 101}]}}}]}]}, "must be in the range [1, 100]"),
    ({"assumedPodTTLSeconds": -1}, "assumedPodTTLSeconds"),
    ({"logLevel": "loud"}, "logLevel: expected one of debug, info, warning, error"),
])
def test_bad_configuration_names_the_key(document: object, message: str) -> None:
    with pytest.raises((ConfigError, ProfileError)) as err:
        config = parse_config(document, "test.yaml")
        for profile in config.profiles:
            Framework(profile)  # plugin args are validated when plugins are built
    assert message in str(err.value)


def test_config_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("profiles: [\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="No such file"):
        load_config(tmp_path / "missing.yaml")
    legacy = tmp_path / "legacy.yaml"
    legacy.write_text(yaml.safe_dump({"profiles": [{"schedulerName": "old", "preset": "legacy"}]}))
    [profile] = load_config(legacy).profiles
    assert profile.max_score == 10 and ("NodePreferAvoidPodsPriority", 10000) in profile.scores
