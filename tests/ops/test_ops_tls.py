"""HTTPS with client-certificate verification, as kube-scheduler's ``enableHTTPS`` + ``tlsConfig`` use it.

Our service runs with --tls-cert-file/--tls-key-file/--client-ca-file. A client presenting a certificate
signed by the CA is served; one with no certificate, or with a certificate from another CA, is refused
during the handshake; plain HTTP to the TLS port gets no HTTP answer. End to end, the real kube-scheduler
(v1.36.3) calls our filter over mutual TLS: without its client certificate it cannot, with it a pod lands
where our filter sends it.
"""

from __future__ import annotations

import copy
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from controlplane import ControlPlane, ExtenderConfig, KubeClient, Obj, Scheduler, scheduler_configuration, write_dump
from ops_support import Pki, Service, read_until_closed, running

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "requests"


def tls_args(pki: Pki) -> list[str]:
    """The serve flags for mutual TLS."""
    return ["--tls-cert-file", str(pki.server.cert), "--tls-key-file", str(pki.server.key),
            "--client-ca-file", str(pki.ca)]


@pytest.fixture(scope="module")
def tls_service(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """Our service on the demo cluster, requiring client certificates."""
    svc = Service(tmp_path_factory.mktemp("tls"), tls_args(pki), tls=pki.client_context(pki.client))
    with running(svc):
        yield svc


def test_client_with_certificate_is_served(tls_service: Service) -> None:
    """A client certificate signed by the CA: health, a filter, and the server certificate verified by name."""
    with tls_service.client() as client:
        assert client.get("/healthz").text == "ok"
        answer = client.post("/filter", content=(EXAMPLES / "filter.json").read_bytes(),
                             headers={"content-type": "application/json"})
        assert answer.status_code == 200
        assert answer.json()["NodeNames"] == ["zone-a-01", "zone-a-07"]


def _refused(url: str, context: ssl.SSLContext) -> Exception:
    """The error a client gets; fails the test if the request was answered."""
    with httpx.Client(verify=context, timeout=5) as client:
        try:
            response = client.get(f"{url}/healthz")
        except httpx.TransportError as err:
            return err
    pytest.fail(f"answered without an acceptable client certificate: {response.status_code} {response.text!r}")


def test_client_without_certificate_is_refused(tls_service: Service, pki: Pki) -> None:
    """No client certificate: the TLS handshake fails and no HTTP answer comes back."""
    err = _refused(tls_service.url, pki.client_context(None))
    assert isinstance(err, httpx.ConnectError | httpx.ReadError | httpx.RemoteProtocolError), repr(err)


def test_client_certificate_from_another_ca_is_refused(tls_service: Service, pki: Pki) -> None:
    """A certificate the server's client CA did not sign is refused just the same."""
    err = _refused(tls_service.url, pki.client_context(pki.stranger))
    assert isinstance(err, httpx.ConnectError | httpx.ReadError | httpx.RemoteProtocolError), repr(err)


def test_plain_http_to_the_tls_port_fails(tls_service: Service) -> None:
    """Plain HTTP gets no HTTP answer; the raw socket sees the connection closed, not a response."""
    plain = tls_service.url.replace("https://", "http://")
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{plain}/healthz", timeout=5)
    with socket.create_connection(("127.0.0.1", tls_service.port), timeout=5) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        received = read_until_closed(sock, 5)
    assert not received.startswith(b"HTTP/"), received[:200]


def test_service_still_serves_after_refusals(tls_service: Service, pki: Pki) -> None:
    """Refused handshakes leave the server healthy."""
    for _ in range(20):
        _refused(tls_service.url, pki.client_context(None))
    with tls_service.client() as client:
        assert client.get("/healthz").status_code == 200


# --------------------------------------------------------------------------- end to end with kube-scheduler

TAINT = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}


def _for_dump(node: Obj, taint: bool = False) -> Obj:
    """The apiserver's node as our dump has it (no resourceVersion: the dump's own object)."""
    out = copy.deepcopy(node)
    out["metadata"].pop("resourceVersion", None)
    if taint:
        out.setdefault("spec", {}).setdefault("taints", []).append(dict(TAINT))
    return out


def _https_scheduler_config(cp: ControlPlane, url: str, tls_config: Obj) -> Obj:
    """kube-scheduler's configuration with one extender over HTTPS (filter and prioritize, names only)."""
    config = scheduler_configuration(cp.kubeconfig, [ExtenderConfig(
        url, filter_verb="filter", prioritize_verb="prioritize", node_cache_capable=True, http_timeout="5s")])
    config["extenders"][0].update(enableHTTPS=True, tlsConfig=tls_config)
    return config


def _condition_message(kube: KubeClient, ns: str, name: str, timeout: float = 30.0) -> str:
    """The PodScheduled=False message once it mentions the extender's URL."""
    deadline = time.monotonic() + timeout
    message = ""
    while time.monotonic() < deadline:
        pod = kube.get_pod(ns, name)
        assert not pod["spec"].get("nodeName"), f"scheduled to {pod['spec']['nodeName']} without a client certificate"
        for c in pod.get("status", {}).get("conditions") or []:
            if c.get("type") == "PodScheduled" and c.get("status") == "False":
                message = str(c.get("message", ""))
                if "/filter" in message:
                    return message
        time.sleep(0.2)
    raise AssertionError(f"no PodScheduled=False naming our filter after {timeout:.0f}s; last: {message!r}")


@pytest.mark.e2e
def test_kube_scheduler_calls_the_extender_over_mutual_tls(
    ops_control_plane: ControlPlane, ops_kube: KubeClient, pki: Pki, tmp_path: Path
) -> None:
    """kube-scheduler with enableHTTPS and tlsConfig {certFile, keyFile, caFile} reaches our filter.

    Our dump taints node-b, the apiserver's node-b is clean: a pod that lands on node-a, every time, was
    placed through our filter. Before that, a kube-scheduler with the CA but no client certificate is
    refused by our service, and the pod stays Pending with an error naming our filter's URL.
    """
    ns = f"ops-tls-{int(time.time() * 1000) % 100000}"
    ops_kube.ensure_namespace(ns)
    a = ops_kube.create_node("node-a")
    b = ops_kube.create_node("node-b")
    dump = write_dump(tmp_path / "cluster.json", [_for_dump(a), _for_dump(b, taint=True)])
    svc = Service(tmp_path, tls_args(pki), cluster=dump, tls=pki.client_context(pki.client))
    schedulers: list[Scheduler] = []
    try:
        with running(svc):
            anonymous = Scheduler(ops_control_plane, tmp_path / "scheduler-no-cert",
                                  _https_scheduler_config(ops_control_plane, svc.url, {"caFile": str(pki.ca)}))
            schedulers.append(anonymous)
            anonymous.wait_ready()
            ops_kube.create_pod(ns, "p0", cpu="100m")
            message = _condition_message(ops_kube, ns, "p0")
            # A transport error (Go's url.Error: 'Post "<url>": <cause>'), not an answer of ours: the refused
            # handshake shows as a TLS alert, a reset or an EOF depending on timing.
            assert f'Post "{svc.url}/filter": ' in message, message
            anonymous.stop()

            mutual = Scheduler(ops_control_plane, tmp_path / "scheduler-mtls", _https_scheduler_config(
                ops_control_plane, svc.url,
                {"certFile": str(pki.client.cert), "keyFile": str(pki.client.key), "caFile": str(pki.ca)}))
            schedulers.append(mutual)
            mutual.wait_ready()
            names = ["p0", "p1", "p2", "p3"]
            for n in names[1:]:
                ops_kube.create_pod(ns, n, cpu="100m")
            assert [ops_kube.wait_scheduled(ns, n, timeout=30) for n in names] == ["node-a"] * 4
            with svc.client() as client:
                metrics = client.get("/metrics").text
            assert 'extender_requests_total{code="200",profile="default-scheduler",verb="filter"}' in metrics
    finally:
        for s in schedulers:
            s.stop()
        ops_kube.delete_pods(ns)
        ops_kube.delete_all_nodes()
