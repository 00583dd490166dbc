"""The ``kubernetesVersion`` and ``featureGates`` settings from the command line, the environment and the file, what
explain and simulate say about the release they followed, and the one warning of an unsupported cluster version.

Live discovery (the apiserver's /version) is in tests/unit/cluster/test_live_version.py and, against real
apiservers of both releases, tests/e2e/test_versions_live.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from extender.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "extender" / "data" / "demo-cluster.yaml"
POD = ROOT / "examples" / "pods" / "reasons" / "node-unschedulable.yaml"


def explain(*args: str, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["explain", "--pod", str(POD), "-o", "json", *args]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


def test_offline_auto_follows_the_newest_release(capsys: pytest.CaptureFixture[str]) -> None:
    assert explain(capsys=capsys)["kubernetes"] == {
        "version": "1.37", "upstream": "v1.37.2", "setting": "auto", "source": "default", "reported": None,
        "warning": None, "featureGates": {}}


def test_the_flag_the_environment_and_the_file_choose_the_release(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert explain("--kubernetes-version", "1.36", capsys=capsys)["kubernetes"]["version"] == "1.36"  # type: ignore
    config = tmp_path / "c.yaml"
    config.write_text("kubernetesVersion: '1.36'\nfeatureGates: {StorageCapacityScoring: true}\n")
    from_file = explain("--config", str(config), capsys=capsys)["kubernetes"]
    assert from_file["version"] == "1.36" and from_file["featureGates"] == {"StorageCapacityScoring": True}  # type: ignore
    monkeypatch.setenv("EXTENDER_KUBERNETES_VERSION", "1.37")
    monkeypatch.setenv("EXTENDER_FEATURE_GATES", "InterPodAffinityHostnameFastPath=true")
    both = explain("--config", str(config), capsys=capsys)["kubernetes"]
    assert both["version"] == "1.37"  # type: ignore[index]
    assert both["featureGates"] == {"StorageCapacityScoring": True,  # type: ignore[index]
                                    "InterPodAffinityHostnameFastPath": True}
    # The flag wins over the environment; the gates are checked against the release chosen.
    assert main(["explain", "--pod", str(POD), "--kubernetes-version", "1.36"]) == 2
    assert "(kube-scheduler v1.36.3): unrecognized feature gate: InterPodAffinityHostnameFastPath" in \
        capsys.readouterr().err
    monkeypatch.delenv("EXTENDER_FEATURE_GATES")
    assert explain("--kubernetes-version", "1.36", capsys=capsys)["kubernetes"]["version"] == "1.36"  # type: ignore


def test_bad_settings_are_one_line_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--pod", str(POD), "--kubernetes-version", "1.35"]) == 2
    assert capsys.readouterr().err == ('extender: configuration: kubernetesVersion: expected "auto" or one of '
                                       '"1.36", "1.37", got \'1.35\'\n')
    assert main(["explain", "--pod", str(POD), "--kubernetes-version", "1.37", "--feature-gates",
                 "SidecarContainers=true"]) == 2
    assert capsys.readouterr().err == ("extender: configuration: defaults: featureGates (kube-scheduler v1.37.2): "
                                       "unrecognized feature gate: SidecarContainers\n")
    assert main(["simulate", "--pods", str(POD), "--feature-gates", "DRAExtendedResource=false"]) == 2
    assert "cannot set feature gate DRAExtendedResource to false, feature is locked to true" in capsys.readouterr().err


def _dump_with_version(tmp_path: Path, git_version: str) -> Path:
    dump = tmp_path / "dump"
    dump.mkdir()
    shutil.copy(DEMO, dump / "cluster.yaml")
    (dump / "version.json").write_text(json.dumps({"major": "1", "minor": git_version.split(".")[1],
                                                   "gitVersion": git_version}))
    return dump


def test_a_dump_that_records_its_version_is_explained_with_that_release(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dump = _dump_with_version(tmp_path, "v1.36.3")
    assert explain("--cluster", str(dump), capsys=capsys)["kubernetes"] == {
        "version": "1.36", "upstream": "v1.36.3", "setting": "auto", "source": "dump", "reported": "v1.36.3",
        "warning": None, "featureGates": {}}
    assert main(["explain", "--pod", str(POD), "--cluster", str(dump)]) == 0
    assert "kube-scheduler v1.36.3 rules (auto: dump reports v1.36.3)" in capsys.readouterr().out
    assert main(["simulate", "--pods", str(ROOT / "examples" / "simulate" / "pods.yaml"), "--cluster", str(dump),
                 "-o", "json", "--seed", "1"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["kubernetes"]["version"] == "1.36"


def test_an_unsupported_cluster_version_is_followed_with_the_nearest_release_and_one_warning(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dump = _dump_with_version(tmp_path, "v1.39.1")
    result = explain("--cluster", str(dump), capsys=capsys)
    kubernetes = result["kubernetes"]
    assert kubernetes["version"] == "1.37"  # type: ignore[index]
    warning = ("the cluster runs Kubernetes 1.39 (v1.39.1), which this extender does not support "
               "(supported: 1.36..1.37); following kube-scheduler v1.37.2")
    assert kubernetes["warning"] == warning  # type: ignore[index]
    assert main(["explain", "--pod", str(POD), "--cluster", str(dump)]) == 0
    captured = capsys.readouterr()
    assert f"warning: {warning}" in captured.out
    assert captured.err.count(warning) == 1


def test_serve_reports_the_release_and_the_warning_in_readyz_and_metrics(tmp_path: Path) -> None:
    dump = _dump_with_version(tmp_path, "v1.35.4")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"featureGates": {"DRADeviceTaintRules": True}}))
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "extender", "serve", "--port", str(port), "--cluster", str(dump),
                             "--config", str(config)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        ready = _wait_ready(port)
        warning = ("the cluster runs Kubernetes 1.35 (v1.35.4), which this extender does not support "
                   "(supported: 1.36..1.37); following kube-scheduler v1.36.3")
        assert ready["kubernetesVersion"]["version"] == "1.36" and ready["warnings"] == [warning]
        assert ready["kubernetesVersion"]["featureGates"] == {"DRADeviceTaintRules": True}
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        assert ('extender_kubernetes_version{kubernetes_version="1.36",setting="auto",source="dump",'
                'supported="false",upstream="v1.36.3"} 1.0') in metrics
    finally:
        proc.terminate()
        _out, err = proc.communicate(timeout=30)
    # One warning line (the start-up line also describes the release, warning included, at info level).
    warnings = [line for line in err.splitlines() if '"level":"warning"' in line.replace(" ", "")]
    assert len(warnings) == 1 and warning in warnings[0], err


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_ready(port: int) -> dict[str, object]:
    deadline = time.monotonic() + 60
    while True:
        try:
            response = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2)
            if response.status_code == 200:
                body: dict[str, object] = response.json()
                return body
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("extender serve did not become ready")
        time.sleep(0.2)
