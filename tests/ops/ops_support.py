"""Helpers for the operations tests: a throw-away PKI and our service as a child process.

The PKI is a CA, a server certificate for 127.0.0.1 and client certificates, made with the
``cryptography`` package when it is installed and with the ``openssl`` command otherwise.
The service runs as ``python -m extender serve`` through the end-to-end harness's
``ManagedProcess`` (own process group, output in a log file, killed if the test process dies).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import select
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))

from controlplane import ManagedProcess, free_port

REPO = Path(__file__).resolve().parents[2]
DEMO_CLUSTER = REPO / "config" / "demo-cluster.yaml"


# --------------------------------------------------------------------------- PKI


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key, as PEM files."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class Pki:
    """A CA, a server certificate for 127.0.0.1/localhost, a client certificate, and a stranger's client
    certificate signed by another CA."""

    ca: Path
    server: KeyPair
    client: KeyPair
    stranger: KeyPair  # a client certificate from a CA the server does not trust

    def client_context(self, pair: KeyPair | None = None, *, verify_server: bool = True) -> ssl.SSLContext:
        """A client TLS context trusting our CA and presenting ``pair`` (none: no certificate)."""
        ctx = ssl.create_default_context(cafile=str(self.ca))
        if not verify_server:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if pair is not None:
            ctx.load_cert_chain(str(pair.cert), str(pair.key))
        return ctx


def make_pki(directory: Path) -> Pki:
    """Write a CA, server and client certificates under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    try:
        import cryptography  # noqa: F401
    except ImportError:
        if shutil.which("openssl") is None:
            raise RuntimeError("neither the cryptography package nor the openssl command is available") from None
        return _openssl_pki(directory)
    return _cryptography_pki(directory)


def _cryptography_pki(d: Path) -> Pki:
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)

    def write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
        path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))

    def ca(name: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5))
                .not_valid_after(now + datetime.timedelta(days=1))
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, encipher_only=False,
                                             decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .sign(key, hashes.SHA256()))
        return cert, key

    def leaf(name: str, issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey], server: bool,
             stem: str) -> KeyPair:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
                   .issuer_name(issuer[0].subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False,
                                                content_commitment=False, data_encipherment=False,
                                                key_agreement=False, key_cert_sign=False, crl_sign=False,
                                                encipher_only=False, decipher_only=False), critical=True)
                   .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH if server
                                                         else ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer[1].public_key()),
                                  critical=False))
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]), critical=False)
        cert = builder.sign(issuer[1], hashes.SHA256())
        pair = KeyPair(d / f"{stem}.crt", d / f"{stem}.key")
        pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        write_key(key, pair.key)
        return pair

    root = ca("extender-test-ca")
    other = ca("someone-else-ca")
    (d / "ca.crt").write_bytes(root[0].public_bytes(serialization.Encoding.PEM))
    return Pki(ca=d / "ca.crt", server=leaf("127.0.0.1", root, True, "server"),
               client=leaf("kube-scheduler", root, False, "client"),
               stranger=leaf("kube-scheduler", other, False, "stranger"))


def _openssl_pki(d: Path) -> Pki:
    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=d)

    def ca(stem: str, name: str) -> None:
        run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-subj", f"/CN={name}", "-keyout", f"{stem}.key", "-out", f"{stem}.crt",
            "-addext", "basicConstraints=critical,CA:TRUE,pathlen:0",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature")

    def leaf(stem: str, name: str, ca_stem: str, extensions: str) -> KeyPair:
        run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", f"/CN={name}",
            "-keyout", f"{stem}.key", "-out", f"{stem}.csr")
        (d / f"{stem}.ext").write_text(extensions)
        run("x509", "-req", "-in", f"{stem}.csr", "-CA", f"{ca_stem}.crt", "-CAkey", f"{ca_stem}.key",
            "-CAcreateserial", "-days", "1", "-extfile", f"{stem}.ext", "-out", f"{stem}.crt")
        return KeyPair(d / f"{stem}.crt", d / f"{stem}.key")

    ca("ca", "extender-test-ca")
    ca("other-ca", "someone-else-ca")
    base = "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
    return Pki(
        ca=d / "ca.crt",
        server=leaf("server", "127.0.0.1", "ca",
                    base + "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n"),
        client=leaf("client", "kube-scheduler", "ca", base + "extendedKeyUsage=clientAuth\n"),
        stranger=leaf("stranger", "kube-scheduler", "other-ca", base + "extendedKeyUsage=clientAuth\n"),
    )


# --------------------------------------------------------------------------- our service


@dataclass
class Service:
    """``extender serve`` on a free loopback port, started with extra flags."""

    workdir: Path
    args: Sequence[str] = ()
    cluster: Path | None = DEMO_CLUSTER
    port: int = field(default_factory=free_port)
    tls: ssl.SSLContext | None = None  # the client context to probe readiness with (None: plain HTTP)
    argv_prefix: Sequence[str] = (sys.executable, "-m", "extender")
    env: dict[str, str] | None = None  # the whole environment (None: ours, with the repo on PYTHONPATH)
    cwd: Path = REPO
    command: Sequence[str] | None = None  # the whole command line, instead of the one built from the fields
    process: ManagedProcess | None = None

    @property
    def url(self) -> str:
        """The base URL (https when a TLS context is given)."""
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def argv(self) -> list[str]:
        """The command line."""
        if self.command is not None:
            return list(self.command)
        argv = [*self.argv_prefix, "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        if self.cluster is not None:
            argv += ["--cluster", str(self.cluster)]
        return argv + list(self.args)

    def start(self, timeout: float = 30.0, ready_path: str = "/readyz") -> Service:
        """Start the process and wait until ``ready_path`` answers 200."""
        env = dict(os.environ if self.env is None else self.env)
        if self.env is None:
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
        self.process = ManagedProcess("extender", self.argv(), self.workdir / f"extender-{self.port}.log",
                                      env=env, cwd=self.cwd)
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        with self.client() as client:
            while True:
                self.process.check_alive()
                try:
                    if client.get(ready_path, timeout=2).status_code == 200:
                        return self
                except httpx.HTTPError as err:
                    last = err
                if time.monotonic() > deadline:
                    raise RuntimeError(f"extender not ready after {timeout:.0f}s ({last}):\n{self.process.tail(30)}")
                time.sleep(0.1)

    def client(self, **kw: Any) -> httpx.Client:
        """An HTTP client for the service (presenting the TLS context given, if any)."""
        return httpx.Client(base_url=self.url, verify=self.tls or True, timeout=kw.pop("timeout", 10), **kw)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after the grace period."""
        if self.process is not None:
            self.process.stop(timeout=15)


@contextlib.contextmanager
def running(service: Service, **kw: Any) -> Iterator[Service]:
    """Start a service for the duration of the block."""
    try:
        yield service.start(**kw)
    finally:
        service.stop()


def metric_value(text: str, name: str, **labels: str) -> float:
    """The sum of a Prometheus sample's values over the series matching ``labels`` (0 when absent)."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        series, _, label_text = head.partition("{")
        if series != name:
            continue
        found = dict(part.split("=", 1) for part in label_text.rstrip("}").split(",") if "=" in part)
        if all(found.get(k, "").strip('"') == v for k, v in labels.items()):
            total += float(value)
    return total


# --------------------------------------------------------------------------- sockets and figures


def probe(port: int, path: str, *, timeout: float = 5.0, context: ssl.SSLContext | None = None) -> float:
    """Seconds for one GET on a fresh connection (as kubelet probes), status 200 required."""
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as raw:
        sock = context.wrap_socket(raw, server_hostname="127.0.0.1") if context is not None else raw
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        head = b""
        while b"\r\n" not in head:
            chunk = sock.recv(4096)
            if not chunk:
                break
            head += chunk
    elapsed = time.perf_counter() - started
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    return elapsed


def open_fds(pid: int) -> int:
    """File descriptors the process holds open now."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def open_idle_sockets(port: int, count: int) -> list[socket.socket]:
    """``count`` connections started at once, as a flood does (non-blocking: a SYN the full listen queue
    drops is sent again by the kernel, while the next connections go out)."""
    sockets = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        sockets.append(sock)
    return sockets


def settled_fds(pid: int, *, at_most: int | None = None, within: float = 6.0) -> int:
    """The service's descriptors once connections from earlier are gone: unchanged for half a second (and
    down to ``at_most``), or after ``within`` seconds (default 6: twice the tests' head deadline)."""
    history = [open_fds(pid)]
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        time.sleep(0.1)
        history.append(open_fds(pid))
        if len(set(history[-5:])) == 1 and len(history) >= 5 and (at_most is None or history[-1] <= at_most):
            break
    return history[-1]


class Peak:
    """The most a process held of something (``measure(pid)``: by default its open descriptors) while the
    block ran, sampled every 10 ms in a thread."""

    def __init__(self, pid: int, measure: Callable[[int], int] | None = None) -> None:
        self.pid = pid
        self.measure = measure or open_fds
        self.peak = self.measure(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(OSError):
                self.peak = max(self.peak, self.measure(self.pid))
            time.sleep(0.01)

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def raise_fd_limit(wanted: int) -> int:
    """Raise this process's descriptor limit towards ``wanted`` (up to the hard limit); the limit now."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return max(soft, target)


def summary(values: Sequence[float]) -> dict[str, float]:
    """Count, median, 99th percentile and maximum of latencies in seconds (reported in milliseconds)."""
    ordered = sorted(values)
    if not ordered:
        return {"count": 0}
    return {"count": len(ordered), "p50_ms": round(ordered[len(ordered) // 2] * 1e3, 1),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3, 1),
            "max_ms": round(ordered[-1] * 1e3, 1)}


@contextlib.contextmanager
def uvicorn_in_thread(app: Any, http: Any, **config: Any) -> Iterator[int]:
    """``app`` served by uvicorn in this process with the HTTP protocol class ``http`` (the service's guarded
    protocols, or a listener's), on a free loopback port and uvicorn's default loop (uvloop when installed,
    as the service runs): yields the port once it listens, and stops the server on leaving."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off", log_config=None,
                                           access_log=False, http=http, **config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.started, "uvicorn did not start within 10 s"
        yield port
    finally:
        server.should_exit = True
        thread.join(10)


def oversized_head(start: bytes) -> bytes:
    """``start`` (a request line and maybe headers) with 4 MiB of header lines after it: no end in sight."""
    return start + (b"X-Pad: " + b"a" * 1000 + b"\r\n") * 4096


def head_of(size: int, start: bytes) -> bytes:
    """A complete request head of ``size`` bytes (header lines padded to it), starting with ``start``."""
    line = b"X-Pad: " + b"a" * 1000 + b"\r\n"
    lines, rest = divmod(size - len(start) - len(b"X-Last: \r\n\r\n"), len(line))
    return start + line * lines + b"X-Last: " + b"b" * rest + b"\r\n\r\n"


def send_until_answered(sock: socket.socket, data: bytes, piece: int = 4096, within: float = 5.0) -> bytes:
    """Send ``data`` a piece at a time, stopping as soon as the server answers or stops taking it; what it
    answered (b"" if nothing)."""
    sock.setblocking(False)
    deadline = time.monotonic() + within
    sent = 0
    while time.monotonic() < deadline:
        readable, writable, _ = select.select([sock], [sock] if sent < len(data) else [], [], 0.05)
        if readable:
            break
        if writable:
            try:
                sent += sock.send(data[sent:sent + piece])
            except (BlockingIOError, InterruptedError):
                pass
            except (BrokenPipeError, ConnectionResetError):
                break
    return read_until_closed(sock, within)


def read_until_closed(sock: socket.socket, within: float) -> bytes:
    """What the server sends until it closes the connection (or resets it, or ``within`` seconds pass)."""
    sock.settimeout(within)
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return answer


def closed_by_server(sock: socket.socket, within: float) -> float | None:
    """Seconds until the server closed the connection (EOF or reset; anything it sends first is read and
    dropped), or None if it stayed open ``within`` seconds."""
    started = time.monotonic()
    sock.settimeout(0.05)
    while time.monotonic() - started < within:
        try:
            if sock.recv(65536) == b"":
                return time.monotonic() - started
        except TimeoutError:
            continue
        except ConnectionResetError:
            return time.monotonic() - started
    return None
