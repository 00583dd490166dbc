"""A real Kubernetes control plane for end-to-end tests.

Starts etcd, kube-apiserver and kube-scheduler built by ``tests/k8s/build`` (one of
the pinned releases, ``K8S_VERSIONS``), plus our extender service, each as a child process on loopback
with free ports and its output kept in a log file. Also a small apiserver client
(httpx with a static admin token) with the helpers the tests need: nodes with
status, pods, waiting for placement, events.

Nothing here is pytest-specific; ``tests/e2e/conftest.py`` wraps it in fixtures
and ``tests/e2e/record_wire.py`` uses it as a script.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NoReturn

import httpx
import pytest
import yaml

_TESTS = Path(__file__).resolve().parents[1]  # tests/: release_env (also when run as a script)
if str(_TESTS) not in sys.path:
    sys.path.append(str(_TESTS))
from release_env import versions_from_env  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "tests" / "k8s" / "build"
# The releases the e2e tests run against, by the engine's kubernetesVersion; EXTENDER_E2E_VERSIONS narrows them.
K8S_VERSIONS = {"1.36": "v1.36.3", "1.37": "v1.37.2"}
K8S_VERSION = K8S_VERSIONS["1.36"]
HOW_TO_ENABLE = (
    "install Go >= 1.26 (https://go.dev/dl/) and run tests/k8s/build --version <v> "
    "(builds etcd, kube-apiserver and kube-scheduler " + " and ".join(K8S_VERSIONS.values()) + " from Go modules)"
)


def e2e_versions() -> list[str]:
    """The releases to run against: EXTENDER_E2E_VERSIONS (e.g. "1.37"), else every pinned one."""
    return versions_from_env("EXTENDER_E2E_VERSIONS", K8S_VERSIONS)


def version_document(version: str) -> Obj:
    """The apiserver's /version answer for a pinned release (what a dump records, see extender.cluster.dump)."""
    tag = K8S_VERSIONS[version]
    return {"major": "1", "minor": version.split(".")[1], "gitVersion": tag, "gitTreeState": "clean",
            "platform": "linux/amd64"}

Obj = dict[str, Any]


ON_CI = os.environ.get("CI", "").lower() == "true"


def unavailable(reason: str) -> NoReturn:
    """Skip the test, or fail it on CI, where end-to-end tests must run."""
    if ON_CI:
        pytest.fail(f"e2e prerequisites missing on CI: {reason}", pytrace=False)
    pytest.skip(reason)


class ControlPlaneUnavailable(RuntimeError):
    """The binaries cannot be had here (no Go toolchain): tests should skip, or fail on CI."""


class ControlPlaneError(RuntimeError):
    """A control-plane process failed to start or to become ready."""


# --------------------------------------------------------------------------- build


def build_binaries(log_path: Path, version: str = "1.36") -> Path:
    """Run tests/k8s/build for a release (a no-op when up to date) and return the bin directory.

    The script's whole output goes to ``log_path``. Raises ControlPlaneUnavailable
    when Go is missing and ControlPlaneError when the build fails.
    """
    if shutil.which("go") is None:
        raise ControlPlaneUnavailable("go not found on PATH: " + HOW_TO_ENABLE)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        log.write(f"\n==== {time.strftime('%Y-%m-%d %H:%M:%S')} {BUILD_SCRIPT} --version {version}\n".encode())
        log.flush()
        proc = subprocess.run(
            [str(BUILD_SCRIPT), "--version", K8S_VERSIONS[version]], stdout=subprocess.PIPE, stderr=log,
            stdin=subprocess.DEVNULL, check=False
        )
        log.write(proc.stdout)
    if proc.returncode != 0:
        raise ControlPlaneError(
            f"tests/k8s/build failed (exit {proc.returncode}); last lines of {log_path}:\n{tail(log_path, 40)}"
        )
    lines = proc.stdout.decode().strip().splitlines()
    bin_dir = Path(lines[-1])
    for name in ("etcd", "kube-apiserver", "kube-scheduler", "wirecheck", "nullextender"):
        if not (bin_dir / name).is_file():
            raise ControlPlaneError(f"tests/k8s/build did not produce {bin_dir / name}")
    return bin_dir


# --------------------------------------------------------------------------- processes


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a text file ('' when it does not exist)."""
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return "\n".join(data.decode(errors="replace").splitlines()[-lines:])


def _die_with_parent() -> None:
    """In the child, before exec: get SIGKILL when the test process dies (Linux), so nothing leaks."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class ManagedProcess:
    """A child process in its own process group, its output in one log file."""

    registry: ClassVar[list[ManagedProcess]] = []  # every process started, for failure reports and atexit

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self.started_at = 0.0
        self.stopped = False  # set when we stopped it (as opposed to a crash)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as log:
            log.write(f"==== {time.strftime('%H:%M:%S')} {' '.join(self.argv)}\n".encode())
            log.flush()
            self.popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(env) if env is not None else None,
                cwd=str(cwd) if cwd else None,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        self.started_at = time.monotonic()
        ManagedProcess.registry.append(self)

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self.popen.pid

    def alive(self) -> bool:
        """True while the process runs."""
        return self.popen.poll() is None

    def tail(self, lines: int = 40) -> str:
        """The end of the process's log."""
        return tail(self.log_path, lines)

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM the process group, then SIGKILL it after ``timeout`` seconds."""
        self.stopped = True
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(5)
        else:
            # The leader is gone; make sure nothing it started is left.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGKILL)

    def check_alive(self) -> None:
        """Raise ControlPlaneError with the log's tail if the process has exited."""
        if self.popen.poll() is not None:
            raise ControlPlaneError(
                f"{self.name} exited with code {self.popen.returncode}; last lines of {self.log_path}:\n"
                + self.tail(60)
            )


@atexit.register
def _kill_leftovers() -> None:
    for p in ManagedProcess.registry:
        with contextlib.suppress(Exception):
            p.stop(timeout=3)


def wait_until(
    what: str,
    check: Callable[[], bool],
    timeout: float,
    interval: float = 0.2,
    procs: Iterable[ManagedProcess] = (),
) -> None:
    """Poll ``check`` until true; fail early if one of ``procs`` dies."""
    deadline = time.monotonic() + timeout
    last_exc: Exception | None = None
    while True:
        for p in procs:
            p.check_alive()
        try:
            if check():
                return
        except (httpx.HTTPError, OSError) as exc:
            last_exc = exc
        if time.monotonic() > deadline:
            hint = f" (last error: {last_exc})" if last_exc else ""
            logs = "".join(f"\n--- {p.name} ({p.log_path}):\n{p.tail(30)}" for p in procs)
            raise ControlPlaneError(f"timed out after {timeout:.0f}s waiting for {what}{hint}{logs}")
        time.sleep(interval)


# --------------------------------------------------------------------------- etcd + apiserver


def _write_rsa_key(path: Path) -> None:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
    except ImportError:
        subprocess.run(["openssl", "genrsa", "-out", str(path), "2048"], check=True, capture_output=True)
        return
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )


class ControlPlane:
    """etcd plus kube-apiserver on loopback, with a static system:masters token."""

    def __init__(self, bin_dir: Path, workdir: Path, version: str = "1.36") -> None:
        self.bin_dir = bin_dir
        self.workdir = workdir
        self.version = version  # the release its binaries are ("1.36", "1.37")
        self.token = secrets.token_hex(16)
        self.etcd: ManagedProcess | None = None
        self.apiserver: ManagedProcess | None = None
        self.api_port = 0
        self.kubeconfig = workdir / "admin.kubeconfig"
        self.ca_file = workdir / "certs" / "apiserver.crt"

    @property
    def url(self) -> str:
        """The apiserver's base URL."""
        return f"https://127.0.0.1:{self.api_port}"

    @property
    def processes(self) -> list[ManagedProcess]:
        """The processes started so far."""
        return [p for p in (self.etcd, self.apiserver) if p is not None]

    def start(self, timeout: float = 90.0) -> None:
        """Start etcd, then kube-apiserver, and wait until /readyz answers ok."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        logs = self.workdir / "logs"
        client_port, peer_port = free_port(), free_port()
        etcd_url = f"http://127.0.0.1:{client_port}"
        self.etcd = ManagedProcess(
            "etcd",
            [
                str(self.bin_dir / "etcd"),
                "--name=e2e",
                f"--data-dir={self.workdir / 'etcd-data'}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-cluster=e2e=http://127.0.0.1:{peer_port}",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
            logs / "etcd.log",
        )
        wait_until(
            "etcd /health",
            lambda: httpx.get(f"{etcd_url}/health", timeout=2).json().get("health") == "true",
            timeout=30,
            procs=[self.etcd],
        )

        certs = self.workdir / "certs"
        certs.mkdir(exist_ok=True)
        sa_key = self.workdir / "sa.key"
        _write_rsa_key(sa_key)
        tokens = self.workdir / "tokens.csv"
        tokens.write_text(f'{self.token},e2e-admin,e2e-admin-uid,"system:masters"\n')
        self.api_port = free_port()
        self.apiserver = ManagedProcess(
            "kube-apiserver",
            [
                str(self.bin_dir / "kube-apiserver"),
                f"--etcd-servers={etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.api_port}",
                f"--cert-dir={certs}",
                f"--token-auth-file={tokens}",
                "--authorization-mode=Node,RBAC",
                f"--service-account-key-file={sa_key}",
                f"--service-account-signing-key-file={sa_key}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--endpoint-reconciler-type=none",
                "--profiling=false",
                "--v=1",
            ],
            logs / "kube-apiserver.log",
        )

        def ready() -> bool:
            r = httpx.get(f"{self.url}/readyz", headers=self.headers, verify=False, timeout=5)
            return r.status_code == 200

        wait_until("kube-apiserver /readyz", ready, timeout=timeout, interval=0.5, procs=self.processes)
        self._write_kubeconfig()

    @property
    def headers(self) -> dict[str, str]:
        """Authorization header with the admin token."""
        return {"Authorization": f"Bearer {self.token}"}

    def _write_kubeconfig(self) -> None:
        cfg = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "e2e", "cluster": {"server": self.url, "certificate-authority": str(self.ca_file)}}],
            "users": [{"name": "e2e-admin", "user": {"token": self.token}}],
            "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "e2e-admin"}}],
            "current-context": "e2e",
        }
        self.kubeconfig.write_text(yaml.safe_dump(cfg))

    def client(self) -> KubeClient:
        """A new apiserver client authenticated as the admin."""
        return KubeClient(self.url, self.token, self.ca_file)

    def stop(self) -> None:
        """Stop the apiserver, then etcd."""
        for p in (self.apiserver, self.etcd):
            if p is not None:
                p.stop(timeout=15)


# --------------------------------------------------------------------------- API client


class ApiError(RuntimeError):
    """A non-2xx answer from the apiserver."""

    def __init__(self, method: str, path: str, response: httpx.Response) -> None:
        super().__init__(f"{method} {path}: {response.status_code} {response.text[:500]}")
        self.status_code = response.status_code


class KubeClient:
    """A minimal JSON client for the apiserver (httpx, bearer token)."""

    def __init__(self, url: str, token: str, ca_file: Path | None = None) -> None:
        verify: ssl.SSLContext | bool = False
        if ca_file is not None and ca_file.is_file():
            verify = ssl.create_default_context(cafile=str(ca_file))
        self.http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, verify=verify, timeout=30)

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        params: Mapping[str, str] | None = None,
        ok: Iterable[int] = (),
    ) -> Obj:
        """Send one request; return the decoded JSON, raise ApiError on failure."""
        content = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": content_type} if content is not None else {}
        r = self.http.request(method, path, content=content, headers=headers, params=params)
        if r.status_code >= 300 and r.status_code not in set(ok):
            raise ApiError(method, path, r)
        return r.json() if r.content else {}

    def get(self, path: str, **params: str) -> Obj:
        """GET a path."""
        return self.request("GET", path, params=params or None)

    def post(self, path: str, body: Obj) -> Obj:
        """POST (create) an object."""
        return self.request("POST", path, body)

    def merge_patch(self, path: str, body: Obj) -> Obj:
        """PATCH with a JSON merge patch."""
        return self.request("PATCH", path, body, content_type="application/merge-patch+json")

    def delete(self, path: str, **params: str) -> Obj:
        """DELETE a path (404 is fine)."""
        return self.request("DELETE", path, params=params or None, ok=(404,))

    # -- namespaces and cluster objects

    def ensure_namespace(self, name: str) -> None:
        """Create a namespace and its default ServiceAccount (no controller-manager runs here)."""
        self.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}}, ok=(409,))
        self.request(
            "POST",
            f"/api/v1/namespaces/{name}/serviceaccounts",
            {"metadata": {"name": "default"}},
            ok=(409,),
        )

    def ensure_priority_class(self, name: str, value: int) -> None:
        """Create a PriorityClass if it does not exist."""
        self.request(
            "POST",
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            },
            ok=(409,),
        )

    def create_node(
        self,
        name: str,
        cpu: str = "4",
        memory: str = "8Gi",
        pods: int = 110,
        extended: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        taints: Sequence[Obj] = (),
    ) -> Obj:
        """Create a Ready node with the given capacity (= allocatable); return it as stored."""
        meta_labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", **(labels or {})}
        node: Obj = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": meta_labels},
            "spec": {"taints": list(taints)} if taints else {},
        }
        self.post("/api/v1/nodes", node)
        capacity = {
            "cpu": cpu,
            "memory": memory,
            "pods": str(pods),
            "ephemeral-storage": "100Gi",
            **(extended or {}),
        }
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        status = {
            "capacity": capacity,
            "allocatable": capacity,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "e2e fake node",
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                },
            ],
            "addresses": [{"type": "Hostname", "address": name}],
        }
        self.merge_patch(f"/api/v1/nodes/{name}/status", {"status": status})
        # The TaintNodesByCondition admission plugin adds node.kubernetes.io/not-ready
        # at creation, and no node lifecycle controller runs here to take it off.
        return self.merge_patch(f"/api/v1/nodes/{name}", {"spec": {"taints": list(taints) or None}})

    def create_pod(
        self,
        namespace: str,
        name: str,
        cpu: str | None = None,
        memory: str | None = None,
        extended: Mapping[str, str] | None = None,
        node_name: str | None = None,
        priority_class: str | None = None,
        tolerations: Sequence[Obj] = (),
        labels: Mapping[str, str] | None = None,
    ) -> Obj:
        """Create a one-container pod (pause image; nothing runs it) and return it."""
        requests: dict[str, str] = {}
        if cpu:
            requests["cpu"] = cpu
        if memory:
            requests["memory"] = memory
        limits: dict[str, str] = dict(extended or {})
        requests.update(limits)
        resources: Obj = {}
        if requests:
            resources["requests"] = requests
        if limits:
            resources["limits"] = limits
        spec: Obj = {
            "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10", "resources": resources}],
            "terminationGracePeriodSeconds": 0,
        }
        if node_name:
            spec["nodeName"] = node_name
        if priority_class:
            spec["priorityClassName"] = priority_class
        if tolerations:
            spec["tolerations"] = list(tolerations)
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {"app": name})},
            "spec": spec,
        }
        return self.post(f"/api/v1/namespaces/{namespace}/pods", pod)

    def get_pod(self, namespace: str, name: str) -> Obj:
        """Read a pod."""
        return self.get(f"/api/v1/namespaces/{namespace}/pods/{name}")

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """Create a Binding for a pod, as an extender's bind verb does."""
        self.post(
            f"/api/v1/namespaces/{namespace}/pods/{name}/binding",
            {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": name, "namespace": namespace, "uid": uid},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node},
            },
        )

    def wait_scheduled(self, namespace: str, name: str, timeout: float = 30.0) -> str:
        """Wait until the pod has spec.nodeName; return it."""
        deadline = time.monotonic() + timeout
        pod: Obj = {}
        while time.monotonic() < deadline:
            pod = self.get_pod(namespace, name)
            node = pod.get("spec", {}).get("nodeName")
            if node:
                return str(node)
            time.sleep(0.2)
        raise AssertionError(
            f"pod {namespace}/{name} not scheduled after {timeout:.0f}s; "
            f"conditions={pod.get('status', {}).get('conditions')}; "
            f"events={self.event_messages(namespace, name)}"
        )

    def wait_unschedulable(self, namespace: str, name: str, timeout: float = 30.0) -> str:
        """Wait until the pod's PodScheduled condition is False; return its message.

        Fails if the pod gets a node instead.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pod = self.get_pod(namespace, name)
            if pod.get("spec", {}).get("nodeName"):
                raise AssertionError(f"pod {namespace}/{name} was scheduled to {pod['spec']['nodeName']}")
            for c in pod.get("status", {}).get("conditions") or []:
                if c.get("type") == "PodScheduled" and c.get("status") == "False":
                    return str(c.get("message", ""))
            time.sleep(0.2)
        raise AssertionError(f"pod {namespace}/{name} has no PodScheduled=False condition after {timeout:.0f}s")

    def event_messages(self, namespace: str, name: str, reason: str | None = None) -> list[str]:
        """Messages of the core/v1 events about a pod (optionally of one reason)."""
        events = self.get(f"/api/v1/namespaces/{namespace}/events", fieldSelector=f"involvedObject.name={name}")
        return [
            str(e.get("message", "")) for e in events.get("items", []) if reason is None or e.get("reason") == reason
        ]

    def wait_event(self, namespace: str, name: str, reason: str, contains: str, timeout: float = 30.0) -> str:
        """Wait for an event of ``reason`` about the pod whose message contains ``contains``."""
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while time.monotonic() < deadline:
            seen = self.event_messages(namespace, name, reason)
            for m in seen:
                if contains in m:
                    return m
            time.sleep(0.3)
        raise AssertionError(f"no {reason} event for {namespace}/{name} containing {contains!r}; saw {seen}")

    def delete_pods(self, namespace: str) -> None:
        """Force-delete every pod of a namespace (no kubelet will ever confirm)."""
        self.request(
            "DELETE",
            f"/api/v1/namespaces/{namespace}/pods",
            {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
            ok=(404,),
        )

    def delete_pod(self, namespace: str, name: str) -> None:
        """Force-delete one pod."""
        self.request(
            "DELETE",
            f"/api/v1/namespaces/{namespace}/pods/{name}",
            {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0},
            ok=(404,),
        )

    def delete_all_nodes(self) -> None:
        """Delete every node."""
        self.request("DELETE", "/api/v1/nodes", ok=(404,))


# --------------------------------------------------------------------------- kube-scheduler


@dataclass
class ExtenderConfig:
    """One ``extenders[]`` entry of a KubeSchedulerConfiguration."""

    url_prefix: str
    filter_verb: str = "filter"
    prioritize_verb: str = ""
    bind_verb: str = ""
    preempt_verb: str = ""
    weight: int = 1
    node_cache_capable: bool = False
    managed_resources: Sequence[str | Obj] = ()
    ignorable: bool = False
    http_timeout: str = "5s"

    def to_dict(self) -> Obj:
        """The camelCase form kube-scheduler reads."""
        out: Obj = {
            "urlPrefix": self.url_prefix,
            "filterVerb": self.filter_verb,
            "prioritizeVerb": self.prioritize_verb,
            "bindVerb": self.bind_verb,
            "preemptVerb": self.preempt_verb,
            "weight": self.weight,
            "nodeCacheCapable": self.node_cache_capable,
            "ignorable": self.ignorable,
            "httpTimeout": self.http_timeout,
            "enableHTTPS": False,
        }
        if self.managed_resources:
            out["managedResources"] = [
                {"name": r, "ignoredByScheduler": False} if isinstance(r, str) else dict(r)
                for r in self.managed_resources
            ]
        return out


def scheduler_configuration(
    kubeconfig: Path,
    extenders: Sequence[ExtenderConfig],
    profile: Obj | None = None,
) -> Obj:
    """A KubeSchedulerConfiguration (v1) with our extenders and leader election off."""
    prof: Obj = {"schedulerName": "default-scheduler"}
    if profile:
        prof.update(profile)
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": 100, "burst": 200},
        "leaderElection": {"leaderElect": False},
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 2,
        "profiles": [prof],
        "extenders": [e.to_dict() for e in extenders],
    }


class Scheduler:
    """A kube-scheduler process with a written configuration file."""

    def __init__(self, cp: ControlPlane, workdir: Path, config: Obj, verbosity: int = 3,
                 extra_args: Sequence[str] = ()) -> None:
        self.config = config
        workdir.mkdir(parents=True, exist_ok=True)
        self.config_path = workdir / "scheduler-config.yaml"
        self.config_path.write_text(yaml.safe_dump(config, sort_keys=False))
        self.port = free_port()
        self.process = ManagedProcess(
            "kube-scheduler",
            [
                str(cp.bin_dir / "kube-scheduler"),
                f"--config={self.config_path}",
                "--bind-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--authentication-kubeconfig={cp.kubeconfig}",
                f"--authorization-kubeconfig={cp.kubeconfig}",
                # No client CA or request-header CA is configured on this apiserver.
                "--authentication-skip-lookup",
                f"--v={verbosity}",
                *extra_args,
            ],
            workdir / "kube-scheduler.log",
        )

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait for the scheduler's /readyz (its informers have synced)."""

        def ready() -> bool:
            r = httpx.get(f"https://127.0.0.1:{self.port}/readyz", verify=False, timeout=3)
            return r.status_code == 200

        wait_until("kube-scheduler /readyz", ready, timeout=timeout, interval=0.3, procs=[self.process])

    def stop(self) -> None:
        """Stop the scheduler."""
        self.process.stop(timeout=10)


# --------------------------------------------------------------------------- our service


def extender_cli_present() -> bool:
    """True once our service's CLI exists in the tree."""
    return (REPO / "extender" / "cli.py").is_file() or (REPO / "extender" / "cli").is_dir()


def write_dump(path: Path, items: Iterable[Obj], version: str | None = None) -> Path:
    """Write a v1 List of objects (Nodes, Pods, ...) as our service's ``--cluster`` dump.

    With ``version`` ("1.36", "1.37") the dump records its cluster's version as the README says to: a directory
    holding the List and the apiserver's /version answer (``version.json``); the directory is returned."""
    listing = json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": list(items)}, indent=1)
    if version is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(listing)
        return path
    folder = path.with_suffix("")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cluster.json").write_text(listing)
    (folder / "version.json").write_text(json.dumps(version_document(version)))
    return folder


@dataclass
class ExtenderService:
    """Our service (``python -m extender serve``) on a free loopback port."""

    workdir: Path
    dump: Path
    config: Obj | None = None
    port: int = field(default_factory=free_port)
    process: ManagedProcess | None = None

    @property
    def url(self) -> str:
        """Base URL, usable as the extender's urlPrefix."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> ExtenderService:
        """Start the service and wait for GET /readyz == 200."""
        argv = [
            sys.executable,
            "-m",
            "extender",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--cluster",
            str(self.dump),
        ]
        if self.config is not None:
            cfg = self.workdir / f"extender-config-{self.port}.yaml"
            cfg.write_text(yaml.safe_dump(self.config, sort_keys=False))
            argv += ["--config", str(cfg)]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
        self.process = ManagedProcess("extender", argv, self.workdir / f"extender-{self.port}.log", env=env, cwd=REPO)

        def ready() -> bool:
            return httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200

        wait_until("extender /readyz", ready, timeout=timeout, interval=0.2, procs=[self.process])
        return self

    def stop(self) -> None:
        """Stop the service."""
        if self.process is not None:
            self.process.stop(timeout=10)


# --------------------------------------------------------------------------- what the fixtures hand to tests


class TestCluster:
    """The apiserver as one test sees it: its own namespace; nodes are removed afterwards."""

    __test__ = False  # not a test class

    def __init__(self, kube: KubeClient, namespace: str, workdir: Path) -> None:
        self.kube = kube
        self.ns = namespace
        self.workdir = workdir
        kube.ensure_namespace(namespace)

    def node(self, name: str, **kw: Any) -> Obj:
        """Create a Ready node (see KubeClient.create_node); return it as stored."""
        return self.kube.create_node(name, **kw)

    def pod(self, name: str, **kw: Any) -> Obj:
        """Create a pod in the test's namespace; return it as stored."""
        return self.kube.create_pod(self.ns, name, **kw)

    def wait_scheduled(self, name: str, timeout: float = 30.0) -> str:
        """Wait for the pod's node."""
        return self.kube.wait_scheduled(self.ns, name, timeout)

    def wait_unschedulable(self, name: str, timeout: float = 30.0) -> str:
        """Wait for PodScheduled=False; return its message."""
        return self.kube.wait_unschedulable(self.ns, name, timeout)

    def wait_event(self, name: str, reason: str, contains: str, timeout: float = 30.0) -> str:
        """Wait for an event about the pod; return its message."""
        return self.kube.wait_event(self.ns, name, reason, contains, timeout)

    def dump(self, items: Iterable[Obj], name: str = "cluster.json") -> Path:
        """Write a v1 List for our service's --cluster."""
        return write_dump(self.workdir / name, items)

    def cleanup(self) -> None:
        """Remove the test's pods and every node."""
        self.kube.delete_pods(self.ns)
        self.kube.delete_all_nodes()


StartScheduler = Callable[..., Scheduler]
"""``start_scheduler(extenders, profile=None, verbosity=4) -> Scheduler`` (a fixture)."""

StartExtender = Callable[..., ExtenderService]
"""``start_extender(items, config=None) -> ExtenderService`` (a fixture)."""


@contextlib.contextmanager
def running_control_plane(workdir: Path, version: str = "1.36") -> Iterator[ControlPlane]:
    """Build (if needed) and run etcd + kube-apiserver of a release for the duration of the block."""
    bin_dir = build_binaries(workdir / "build.log", version)
    cp = ControlPlane(bin_dir, workdir, version)
    try:
        cp.start()
        yield cp
    finally:
        cp.stop()
