"""Sockets that never finish a TLS handshake cannot exhaust the service (the real process, real sockets).

The service serves the verbs over mutual TLS with a plain health port, its default cap of 512 connections and
a 3-second head deadline (``--head-timeout``, which from accept covers the handshake too). Idle sockets that
never send a ClientHello are counted from accept: the service's open descriptors stay under the cap plus
what it holds anyway, new connections make room by closing the oldest idle ones (so a real client still
gets in), the health port answers every probe, and the log does not flood (repeated lines are held back).

Sizes: 600 idle sockets, then a flood of ``EXTENDER_FLOOD_SOCKETS`` (default 3,000) opened as fast as this
process can, sized so that CI runs it in well under a minute. ``EXTENDER_FLOOD_SOCKETS=20000 python -m
pytest tests/ops/test_ops_tls_flood.py -s`` repeats the issue's 20,000 (the descriptor limit is raised to
allow it where the hard limit does).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator

import pytest
from ops_support import (
    Peak,
    Pki,
    Service,
    free_port,
    open_fds,
    open_idle_sockets,
    probe,
    raise_fd_limit,
    running,
    settled_fds,
    summary,
)

CAP = 512  # the service's default --max-connections
IDLE_SOCKETS = 600
FLOOD_SOCKETS = int(os.environ.get("EXTENDER_FLOOD_SOCKETS", "3000"))
#: Connections of the health probes themselves, which the service also holds while answering them.
HEALTH_PROBES = 2
#: Log growth allowed for a whole flood: repeated lines are held back after a burst per kind.
LOG_BUDGET_BYTES = 64 * 1024


#: Descriptors this test process keeps for itself beside the flood's sockets.
OWN_SOCKETS = 1024


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, pki: Pki) -> Iterator[tuple[Service, int]]:
    raise_fd_limit(FLOOD_SOCKETS + OWN_SOCKETS)
    health = free_port()
    svc = Service(tmp_path_factory.mktemp("tls-flood"),
                  ["--tls-cert-file", str(pki.server.cert), "--tls-key-file", str(pki.server.key),
                   "--client-ca-file", str(pki.ca), "--head-timeout", "3", "--log-level", "info",
                   "--health-port", str(health), "--health-host", "127.0.0.1"],
                  tls=pki.client_context(pki.client))
    with running(svc):
        yield svc, health


class Prober:
    """Probes /healthz on the health port every 20 ms in a thread, keeping latencies and failures."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.latencies.append(probe(self.port, "/healthz", timeout=3))
            except (OSError, AssertionError) as err:
                self.failures.append(repr(err))
            time.sleep(0.02)

    def __enter__(self) -> Prober:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


def _log_size(service: Service) -> int:
    assert service.process is not None
    return os.path.getsize(service.process.log_path)


def test_idle_pre_handshake_sockets_stay_under_the_cap_and_a_client_still_gets_in(
        served: tuple[Service, int], pki: Pki) -> None:
    service, health = served
    assert service.process is not None
    baseline = settled_fds(service.process.pid)
    log_before = _log_size(service)
    with Prober(health) as prober:
        idle = open_idle_sockets(service.port, IDLE_SOCKETS)
        try:
            time.sleep(1.0)
            held = open_fds(service.process.pid)
            # A real kube-scheduler connecting now is served: it makes room by closing the oldest idle socket.
            started = time.perf_counter()
            with service.client() as client:
                assert client.get("/healthz").text == "ok"
            client_seconds = time.perf_counter() - started
            time.sleep(0.5)
        finally:
            for sock in idle:
                sock.close()
    grown = _log_size(service) - log_before
    figures = summary(prober.latencies)
    print(f"\n{IDLE_SOCKETS} idle pre-handshake sockets: service fds {baseline} -> {held} (cap {CAP}); "
          f"an mTLS client served in {client_seconds * 1e3:.0f} ms; health probes {figures}; log +{grown} bytes")
    assert held <= baseline + CAP + HEALTH_PROBES, (baseline, held)
    assert not prober.failures, prober.failures[:5]
    assert figures["max_ms"] < 1000, figures
    assert grown < LOG_BUDGET_BYTES, grown


def test_a_flood_of_connections_keeps_fds_under_the_cap_and_the_log_quiet(served: tuple[Service, int]) -> None:
    service, health = served
    assert service.process is not None
    pid = service.process.pid
    baseline = settled_fds(pid)
    log_before = _log_size(service)
    limit = raise_fd_limit(FLOOD_SOCKETS + OWN_SOCKETS)
    count = min(FLOOD_SOCKETS, limit - OWN_SOCKETS)
    if count < FLOOD_SOCKETS:
        print(f"\nthis process may open {limit} descriptors: a flood of {count} instead of {FLOOD_SOCKETS}")
    with Peak(pid) as fds, Prober(health) as prober:
        started = time.perf_counter()
        flood = open_idle_sockets(service.port, count)
        opened = time.perf_counter() - started
        try:
            time.sleep(1.0)
            # Half-done handshakes too: a ClientHello's first bytes, then nothing.
            partial = open_idle_sockets(service.port, 200)
            time.sleep(0.5)
            for sock in partial:
                with contextlib.suppress(OSError):
                    sock.send(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
            time.sleep(1.0)
        finally:
            for sock in flood + partial:
                sock.close()
        time.sleep(0.5)
    peak = fds.peak
    after = settled_fds(pid, at_most=baseline + 8)
    grown = _log_size(service) - log_before
    figures = summary(prober.latencies)
    print(f"\nflood of {len(flood)} sockets in {opened:.1f} s: service fds peak {peak} (baseline {baseline}, "
          f"cap {CAP}), {after} after; health probes {figures}; log +{grown} bytes")
    assert peak <= baseline + CAP + HEALTH_PROBES, (baseline, peak)
    assert after <= baseline + 8, (baseline, after)
    assert not prober.failures, prober.failures[:5]
    assert figures["max_ms"] < 1000, figures
    assert grown < LOG_BUDGET_BYTES, grown
    with service.client() as client:
        assert client.get("/healthz").text == "ok"
        metrics = client.get("/metrics").text
    assert "extender_rejected_requests_total" in metrics
