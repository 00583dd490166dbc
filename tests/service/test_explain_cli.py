"""``extender explain`` and ``simulate`` from the command line: pods by name, plugin failures, clear errors.

The live cluster side (``--kubeconfig`` against a real kube-apiserver) is in tests/e2e/test_explain_live.py.
"""

from __future__ import annotations

import json
import os
import socket
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

BAD_WEIGHT_POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "odd", "namespace": "shop", "uid": "uid-odd"},
    "spec": {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": -5, "preference": {"matchExpressions": [{"key": "topology.kubernetes.io/zone",
                                                              "operator": "Exists"}]}}]}},
             "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]},
}


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "extender", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, env=env)


def test_a_bound_pod_of_a_dump_is_explained_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "-n", "data", "db-001", "--cluster", str(DEMO), "-o", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["pod"] == "data/db-001"
    assert result["bound"]["node"] == "zone-a-00"
    assert result["nodes"]["zone-a-00"]["filters"]["NodeName"]["code"] == "Success"
    assert result["outcome"]["status"] == "Schedulable"
    assert main(["explain", "-n", "data", "db-001", "--cluster", str(DEMO)]) == 0
    table = capsys.readouterr().out
    assert "already bound to zone-a-00: explained as when it was scheduled" in table
    feasible = len(result["outcome"]["feasibleNodes"])
    assert table.rstrip().splitlines()[-1].startswith(f"{feasible}/33 nodes are feasible")


def test_a_score_plugin_failing_on_the_pod_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    pod = tmp_path / "odd.yaml"
    pod.write_text(yaml.safe_dump(BAD_WEIGHT_POD))
    done = run("explain", "--pod", str(pod))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert done.stdout.rstrip().splitlines()[-1] == (
        'the scheduling cycle fails (SchedulerError): running Normalize on Score plugins: plugin "NodeAffinity" '
        "returns an invalid score -5, it should in the range of [0, 100] after normalizing")
    as_json = json.loads(run("explain", "--pod", str(pod), "-o", "json").stdout)
    assert as_json["outcome"]["status"] == "SchedulerError"


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(("args", "message"), [
    (["explain", "web", "--pod", "x.yaml"], "name a pod (NAME, with -n NAMESPACE) or give one in a file"),
    (["explain"], "name a pod (NAME, with -n NAMESPACE) or give one in a file"),
    (["explain", "-n", "shop", "nope", "--cluster", str(DEMO)], "pod shop/nope not found in"),
    (["explain", "-n", "data", "db-001", "--cluster", str(DEMO), "--profile", "nope"], "no profile named 'nope'"),
    (["explain", "web", "--cluster", str(DEMO), "--kubeconfig", "k"], "exclude each other"),
    (["simulate", "--pods", "p.yaml", "--cluster", str(DEMO), "--in-cluster"], "exclude each other"),
    (["explain", "web", "--kubeconfig", "/nonexistent/kubeconfig"], "apiserver: /nonexistent/kubeconfig"),
])
def test_usage_errors_exit_2_with_one_line(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_without_a_kubeconfig_a_named_pod_says_where_it_looked(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    env["HOME"] = str(tmp_path)
    done = run("explain", "-n", "shop", "web", env=env)
    assert done.returncode == 2
    assert done.stderr == ("extender: apiserver: no kubeconfig given, KUBECONFIG unset, not in a cluster, "
                           "and no ~/.kube/config\n")


def test_an_unreachable_apiserver_is_one_line(tmp_path: Path) -> None:
    port = unused_port()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": "shop"}}]}))
    for args in (["explain", "web", "--kubeconfig", str(kubeconfig)],
                 ["simulate", "--pods", str(ROOT / "examples" / "simulate" / "pods.yaml"),
                  "--kubeconfig", str(kubeconfig)]):
        done = run(*args)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"extender: apiserver: cannot reach http://127.0.0.1:{port}: ")
        assert done.stderr.count("\n") == 1


def test_the_served_explain_answers_plugin_failures_on_a_kept_connection() -> None:
    port = unused_port()
    proc = subprocess.Popen([sys.executable, "-m", "extender", "serve", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, timeout=10) as client:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if client.get("/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert proc.poll() is None and time.monotonic() < deadline, "extender serve did not start"
                time.sleep(0.2)
            for _ in range(2):
                resp = client.post("/explain", json={"pod": BAD_WEIGHT_POD})
                assert resp.status_code == 200 and resp.headers.get("connection") != "close"
                assert resp.json()["outcome"]["status"] == "SchedulerError"
            pending = client.get("/explain/shop/web-pending").json()
            assert pending["pod"] == "shop/web-pending" and pending["outcome"]["status"] == "Schedulable"
            assert client.get("/profiles/legacy/explain/shop/web-pending").json()["profile"] == "legacy"
            # The service explains on a frozen copy of its snapshot: the copy keeps the DRA objects.
            dra_pod = yaml.safe_load((ROOT / "examples" / "pods" / "dra" / "first-available.yaml").read_text())
            dra = client.post("/explain", json={"pod": dra_pod}).json()["outcome"]
            assert dra["status"] == "Schedulable" and dra["best"][0]["node"] == "zone-b-06", dra
            legacy = client.post("/profiles/legacy/filter", json={"Pod": BAD_WEIGHT_POD, "NodeNames": ["zone-a-10"]})
            assert legacy.json()["FailedNodes"] == {"zone-a-10": "node(s) had taints that the pod didn't tolerate"}
    finally:
        proc.terminate()
        proc.wait(timeout=20)
