"""The namespace a command defaults to: the kubeconfig context's, or the service account's, as kubectl."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from extender.kubeapi import config


def kubeconfig(path: Path, namespace: str | None) -> Path:
    context = {"cluster": "c", "user": "u", **({"namespace": namespace} if namespace else {})}
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "ctx", "context": context}, {"name": "other", "context": {"cluster": "c"}}]}))
    return path


def test_the_contexts_namespace_else_default(tmp_path: Path) -> None:
    assert config.from_kubeconfig(kubeconfig(tmp_path / "a", "shop")).namespace == "shop"
    assert config.from_kubeconfig(kubeconfig(tmp_path / "b", "shop"), "other").namespace == "default"
    assert config.from_kubeconfig(kubeconfig(tmp_path / "c", None)).namespace == "default"


def test_in_cluster_the_service_accounts_namespace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    assert config.in_cluster(tmp_path).namespace == "default"
    (tmp_path / "namespace").write_text("kube-system\n")
    assert config.in_cluster(tmp_path).namespace == "kube-system"
