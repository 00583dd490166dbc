"""Connection settings for the apiserver: from a kubeconfig file or the in-cluster service account.

Supported credentials: bearer tokens (inline, ``tokenFile``, and the service-account token, re-read
when it rotates), client certificates (files or inline data), and ``exec`` credential plugins
(client.authentication.k8s.io ExecCredential, token re-fetched on expiry or on a 401).
"""

from __future__ import annotations

import base64
import os
import ssl
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import yaml

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


class KubeConfigError(ValueError):
    """Settings that cannot be used to reach an apiserver; the message says which."""


class TokenSource:
    """Where a bearer token comes from; ``token()`` is cheap, ``refresh()`` forces a re-read."""

    def token(self) -> str | None:
        """The current token, or None for no bearer token."""
        return None

    def refresh(self) -> None:
        """Drop any cached token (called after a 401)."""


@dataclass
class StaticToken(TokenSource):
    """A token written in the kubeconfig."""

    value: str

    def token(self) -> str | None:
        return self.value


@dataclass
class FileToken(TokenSource):
    """A token read from a file and re-read periodically and after a 401 (rotated service-account tokens)."""

    path: Path
    max_age_seconds: float = 60.0
    _value: str | None = None
    _read_at: float = 0.0

    def token(self) -> str | None:
        if self._value is None or time.monotonic() - self._read_at > self.max_age_seconds:
            try:
                self._value = self.path.read_text().strip()
            except OSError as err:
                raise KubeConfigError(f"cannot read token file {self.path}: {err.strerror or err}") from err
            self._read_at = time.monotonic()
        return self._value

    def refresh(self) -> None:
        self._value = None


@dataclass
class ExecToken(TokenSource):
    """A token from an exec credential plugin (e.g. a cloud provider's get-token command)."""

    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    _value: str | None = None
    _expires: float | None = None

    def token(self) -> str | None:
        if self._value is None or (self._expires is not None and time.time() > self._expires - 30):
            self._run()
        return self._value

    def refresh(self) -> None:
        self._value = None

    def _run(self) -> None:
        try:
            done = subprocess.run([self.command, *self.args], capture_output=True, timeout=30, check=True,
                                  env={**os.environ, **self.env})
        except (OSError, subprocess.SubprocessError) as err:
            raise KubeConfigError(f"exec credential plugin {self.command!r} failed: {err}") from err
        try:
            status = orjson.loads(done.stdout).get("status") or {}
        except orjson.JSONDecodeError as err:
            raise KubeConfigError(f"exec credential plugin {self.command!r} printed invalid JSON") from err
        token = status.get("token")
        if not token:
            raise KubeConfigError(f"exec credential plugin {self.command!r} returned no token")
        self._value = str(token)
        expiry = status.get("expirationTimestamp")
        self._expires = datetime.fromisoformat(expiry.replace("Z", "+00:00")).timestamp() if expiry else None


@dataclass
class ClusterConfig:
    """Everything needed to open a connection to one apiserver."""

    server: str
    tokens: TokenSource = field(default_factory=TokenSource)
    ca_file: str | None = None
    client_cert_file: str | None = None
    client_key_file: str | None = None
    insecure: bool = False
    tls_server_name: str | None = None
    namespace: str = "default"  # the context's namespace (kubectl's default for -n)

    def ssl_context(self) -> ssl.SSLContext | bool:
        """The TLS settings for httpx (False only when insecure-skip-tls-verify is set)."""
        if not self.server.startswith("https"):
            return True
        if self.insecure:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        else:
            ctx = ssl.create_default_context(cafile=self.ca_file) if self.ca_file else ssl.create_default_context()
        if self.client_cert_file:
            ctx.load_cert_chain(self.client_cert_file, self.client_key_file)
        return ctx


def _data_file(data: str, suffix: str) -> str:
    """Write base64 data to a private temp file (ssl wants paths) and return its path."""
    raw = base64.b64decode(data)
    handle, path = tempfile.mkstemp(prefix="extender-kube-", suffix=suffix)
    with os.fdopen(handle, "wb") as out:
        out.write(raw)
    return path


def _named(items: Any, name: str, what: str) -> Mapping[str, Any]:
    for item in items or []:
        if isinstance(item, Mapping) and item.get("name") == name:
            body = item.get(what)
            return body if isinstance(body, Mapping) else {}
    raise KubeConfigError(f"kubeconfig: no {what} named {name!r}")


def from_kubeconfig(path: str | Path, context: str | None = None) -> ClusterConfig:
    """Settings from a kubeconfig file (its current context unless one is named)."""
    file = Path(path).expanduser()
    try:
        doc = yaml.safe_load(file.read_text())
    except OSError as err:
        raise KubeConfigError(f"{file}: {err.strerror or err}") from err
    except yaml.YAMLError as err:
        raise KubeConfigError(f"{file}: invalid YAML: {err}") from err
    if not isinstance(doc, Mapping):
        raise KubeConfigError(f"{file}: not a kubeconfig")
    name = context or doc.get("current-context")
    if not name:
        raise KubeConfigError(f"{file}: no current-context and no --context given")
    ctx = _named(doc.get("contexts"), name, "context")
    cluster = _named(doc.get("clusters"), str(ctx.get("cluster")), "cluster")
    user = _named(doc.get("users"), str(ctx.get("user")), "user") if ctx.get("user") else {}
    base = file.parent

    def rel(value: Any) -> str | None:
        return str((base / str(value)).resolve()) if value else None

    server = cluster.get("server")
    if not server:
        raise KubeConfigError(f"{file}: cluster {ctx.get('cluster')!r} has no server")
    cfg = ClusterConfig(server=str(server).rstrip("/"), insecure=bool(cluster.get("insecure-skip-tls-verify")),
                        tls_server_name=cluster.get("tls-server-name"),
                        namespace=str(ctx.get("namespace") or "default"))
    cfg.ca_file = (_data_file(cluster["certificate-authority-data"], ".crt")
                   if cluster.get("certificate-authority-data") else rel(cluster.get("certificate-authority")))
    cfg.client_cert_file = (_data_file(user["client-certificate-data"], ".crt")
                            if user.get("client-certificate-data") else rel(user.get("client-certificate")))
    cfg.client_key_file = (_data_file(user["client-key-data"], ".key")
                           if user.get("client-key-data") else rel(user.get("client-key")))
    if user.get("token"):
        cfg.tokens = StaticToken(str(user["token"]))
    elif user.get("tokenFile"):
        cfg.tokens = FileToken(Path(rel(user["tokenFile"]) or ""))
    elif isinstance(user.get("exec"), Mapping):
        spec = user["exec"]
        env = {str(e.get("name")): str(e.get("value")) for e in spec.get("env") or [] if isinstance(e, Mapping)}
        cfg.tokens = ExecToken(str(spec.get("command")), [str(a) for a in spec.get("args") or []], env)
    return cfg


def in_cluster(directory: Path = SERVICE_ACCOUNT_DIR) -> ClusterConfig:
    """Settings from the pod's service account (KUBERNETES_SERVICE_HOST/PORT and the mounted token)."""
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise KubeConfigError("not running in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set")
    if ":" in host:
        host = f"[{host}]"
    try:
        namespace = (directory / "namespace").read_text().strip() or "default"
    except OSError:
        namespace = "default"
    return ClusterConfig(server=f"https://{host}:{port}", tokens=FileToken(directory / "token"),
                         ca_file=str(directory / "ca.crt"), namespace=namespace)


def load(kubeconfig: str | None = None, context: str | None = None) -> ClusterConfig:
    """An explicit kubeconfig, else $KUBECONFIG, else the in-cluster service account, else ~/.kube/config."""
    path = kubeconfig or os.environ.get("KUBECONFIG")
    if path:
        return from_kubeconfig(path.split(os.pathsep)[0], context)
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return in_cluster()
    default = Path.home() / ".kube" / "config"
    if default.exists():
        return from_kubeconfig(default, context)
    raise KubeConfigError("no kubeconfig given, KUBECONFIG unset, not in a cluster, and no ~/.kube/config")
