"""Who can reach the extender's verbs, read from a manifest the way the container will run.

A pod template's extender container runs the image's entrypoint (``extender serve --host 0.0.0.0``) with the
container's ``args`` appended (a later flag wins), and flags fall back to their ``EXTENDER_*`` variables. From
that this module works out where the verbs listen and whether a caller must present a client certificate, and
lists every way the manifest would let an unauthenticated caller from outside the pod reach a verb:

- verbs on a non-loopback address without mutual TLS (a serving certificate and a client CA);
- verbs on loopback in a pod on the host network (then "loopback" is the node's, shared by every host pod);
- no separate health port, or probes or the Prometheus annotation aimed anywhere but at it (under mutual TLS
  kubelet cannot present a certificate, and a probe on the verbs port would need the verbs reachable);
- a Service, or a declared container port, that forwards to the verbs port without mutual TLS;
- a sidecar kube-scheduler whose extender URL is not the loopback port the verbs listen on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

Obj = dict[str, Any]

ENTRYPOINT = ["extender", "serve", "--host", "0.0.0.0"]  # the Dockerfile's, checked by test_ops_dockerfile
LOOPBACK = {"127.0.0.1", "::1", "localhost"}
FLAG_ENV = {
    "--host": "EXTENDER_HOST",
    "--port": "EXTENDER_PORT",
    "--health-port": "EXTENDER_HEALTH_PORT",
    "--health-host": "EXTENDER_HEALTH_HOST",
    "--tls-cert-file": "EXTENDER_TLS_CERT_FILE",
    "--tls-key-file": "EXTENDER_TLS_KEY_FILE",
    "--client-ca-file": "EXTENDER_CLIENT_CA_FILE",
}


@dataclass(frozen=True)
class Listener:
    """Where an extender container serves, as its command line and environment say."""

    host: str
    port: int
    health_port: int | None
    tls_cert: str | None
    tls_key: str | None
    client_ca: str | None

    @property
    def mutual_tls(self) -> bool:
        """Every verb call must present a certificate signed by the client CA."""
        return bool(self.tls_cert and self.tls_key and self.client_ca)

    @property
    def loopback_only(self) -> bool:
        """The verbs listen on loopback only."""
        return self.host in LOOPBACK


def command_line(container: Obj) -> list[str]:
    """The container's full command line (the image's entrypoint unless ``command`` replaces it)."""
    return [*(container.get("command") or ENTRYPOINT), *(container.get("args") or [])]


def is_extender(container: Obj) -> bool:
    """The container runs ``extender serve``."""
    argv = command_line(container)
    return len(argv) >= 2 and argv[0].rsplit("/", 1)[-1] == "extender" and argv[1] == "serve"


def flags(argv: list[str]) -> dict[str, str]:
    """``--flag value`` and ``--flag=value`` pairs, the last of each winning."""
    out: dict[str, str] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("--") and "=" in arg:
            name, _, value = arg.partition("=")
            out[name] = value
        elif arg.startswith("--") and arg in FLAG_ENV and i + 1 < len(argv):
            out[arg] = argv[i + 1]
            i += 1
        i += 1
    return out


def listener(container: Obj) -> Listener:
    """Where the extender container listens."""
    env = {e["name"]: e.get("value", "") for e in container.get("env") or [] if "value" in e}
    given = flags(command_line(container))

    def value(flag: str) -> str | None:
        return given.get(flag, env.get(FLAG_ENV[flag]))

    health = value("--health-port")
    return Listener(host=value("--host") or "127.0.0.1", port=int(value("--port") or 8888),
                    health_port=int(health) if health else None, tls_cert=value("--tls-cert-file"),
                    tls_key=value("--tls-key-file"), client_ca=value("--client-ca-file"))


def _port_number(container: Obj, port: int | str) -> int | None:
    if isinstance(port, int):
        return port
    if port.isdigit():
        return int(port)
    for p in container.get("ports") or []:
        if p.get("name") == port:
            return int(p["containerPort"])
    return None


def problems(pod_template: Obj, services: Sequence[Obj] = (), scheduler_config: Obj | None = None) -> list[str]:
    """Every way this pod template (with the Services selecting it, and the sidecar kube-scheduler's
    configuration if any) exposes a verb without authentication beyond loopback; empty when none."""
    found: list[str] = []
    spec = pod_template["spec"]
    labels = pod_template.get("metadata", {}).get("labels", {})
    annotations = pod_template.get("metadata", {}).get("annotations") or {}
    extenders = [c for c in spec["containers"] if is_extender(c)]
    if not extenders:
        return ["no container runs `extender serve`"]
    for c in extenders:
        lst = listener(c)
        where = f"container {c['name']}"
        if not lst.loopback_only and not lst.mutual_tls:
            found.append(f"{where}: verbs on {lst.host}:{lst.port} without mutual TLS")
        if lst.loopback_only and spec.get("hostNetwork"):
            found.append(f"{where}: verbs on the node's loopback (hostNetwork), reachable by every host pod")
        if lst.health_port is None or lst.health_port == lst.port:
            found.append(f"{where}: no separate plain health port for probes and metrics")
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            if probe not in c:
                found.append(f"{where}: no {probe}")
                continue
            get = c[probe].get("httpGet")
            if get is None:
                found.append(f"{where}: {probe} is not an HTTP probe of the health port")
                continue
            if _port_number(c, get["port"]) != lst.health_port or get.get("scheme", "HTTP") != "HTTP":
                found.append(f"{where}: {probe} aims at port {get['port']}, not the plain health port")
        if annotations.get("prometheus.io/scrape") == "true" and \
                str(annotations.get("prometheus.io/port")) != str(lst.health_port):
            found.append(f"{where}: Prometheus would scrape port {annotations.get('prometheus.io/port')}")
        declared = {_port_number(c, p["containerPort"]) for p in c.get("ports") or []}
        if lst.port in declared and not lst.mutual_tls:
            found.append(f"{where}: declares the verbs port {lst.port} without mutual TLS")
        for svc in services:
            selector = svc["spec"].get("selector") or {}
            if not selector or not selector.items() <= labels.items():
                continue
            for p in svc["spec"]["ports"]:
                target = _port_number(c, p.get("targetPort", p["port"]))
                if target == lst.port and not lst.mutual_tls:
                    found.append(f"Service {svc['metadata']['name']}: port {p['port']} forwards to the verbs "
                                 "without mutual TLS")
        if scheduler_config is not None:
            for ext in scheduler_config.get("extenders") or []:
                url = ext["urlPrefix"]
                base = f"{'https' if lst.tls_cert else 'http'}://127.0.0.1:{lst.port}"
                if url != base and not url.startswith(base + "/"):
                    found.append(f"kube-scheduler calls {url}, not the verbs on {base}")
    return found


def check_objects(objects: list[Obj]) -> dict[str, list[str]]:
    """Deployment name -> its problems, for every Deployment among ``objects`` that runs the extender."""
    services = [o for o in objects if o["kind"] == "Service"]
    configs = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ConfigMap"}
    out: dict[str, list[str]] = {}
    for dep in (o for o in objects if o["kind"] == "Deployment"):
        template = dep["spec"]["template"]
        if not any(is_extender(c) for c in template["spec"]["containers"]):
            continue
        scheduler_config = None
        if any(c["name"] == "kube-scheduler" for c in template["spec"]["containers"]):
            for vol in template["spec"].get("volumes") or []:
                cm = configs.get((vol.get("configMap") or {}).get("name", ""))
                if cm is not None and "config.yaml" in cm.get("data", {}):
                    scheduler_config = yaml.safe_load(cm["data"]["config.yaml"])
            if scheduler_config is None:
                out[dep["metadata"]["name"]] = ["the sidecar kube-scheduler's configuration is not found"]
                continue
        same_ns = [s for s in services if s["metadata"].get("namespace") == dep["metadata"].get("namespace")]
        out[dep["metadata"]["name"]] = problems(template, same_ns, scheduler_config)
    return out
