"""Hostile bodies against the real service process: refused cleanly, and the service still serves.

The service runs with --max-body-bytes 1 MiB, --max-body-memory 2 MiB and --read-timeout 2 s. A body over the
limit gets 413 whether its Content-Length says so up front or it streams in chunks; JSON nested deeper than
the decoder allows gets 400; a client that stalls mid-body gets 408; oversized headers are refused by the HTTP
layer; a large body that does not fit in the memory large bodies may hold at once gets 503 with Retry-After,
and one that would decode to more than all of it 413. Each answer from our routes is ``{"Error": ...}`` and is
counted in extender_rejected_requests_total, and the service answers a normal filter correctly afterwards.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from ops_support import Service, metric_value, running

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "requests"
LIMIT = 1024 * 1024
JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The service on the demo cluster with a 1 MiB body limit, 2 MiB of body memory and a 2 s read timeout."""
    svc = Service(tmp_path_factory.mktemp("limits"), ["--max-body-bytes", str(LIMIT), "--read-timeout", "2",
                                                      "--max-body-memory", str(2 * LIMIT)])
    with running(svc):
        yield svc


def still_serves(service: Service) -> None:
    """Health and a real filter answer, as before."""
    with service.client() as client:
        assert client.get("/healthz").text == "ok"
        answer = client.post("/filter", content=(EXAMPLES / "filter.json").read_bytes(), headers=JSON)
        assert answer.status_code == 200 and answer.json()["NodeNames"] == ["zone-a-01", "zone-a-07"]


def padded_filter(size: int) -> bytes:
    """A valid filter body of about ``size`` bytes (padding in an annotation)."""
    body = json.loads((EXAMPLES / "filter.json").read_text())
    body["Pod"]["metadata"]["annotations"] = {"padding": "x" * size}
    return json.dumps(body).encode()


def test_body_over_the_limit_with_content_length(service: Service) -> None:
    """Declared too large: 413 before the body is read."""
    with service.client() as client:
        r = client.post("/filter", content=padded_filter(2 * LIMIT), headers=JSON)
    assert r.status_code == 413, r.text
    assert "exceeds the limit" in r.json()["Error"]
    still_serves(service)


def test_body_over_the_limit_streamed(service: Service) -> None:
    """Chunked, no Content-Length: counted while read, 413 as soon as it passes the limit."""
    data = padded_filter(3 * LIMIT)

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(data), 64 * 1024):
            yield data[i:i + 64 * 1024]

    with service.client() as client:
        try:
            r = client.post("/prioritize", content=chunks(), headers=JSON)
        except httpx.WriteError:  # the server answered and closed while we were still sending: also a refusal
            pass
        else:
            assert r.status_code == 413, r.text
            assert "exceeds the limit" in r.json()["Error"]
    still_serves(service)


def test_just_under_the_limit_is_served(service: Service) -> None:
    """A body a little under the limit is an ordinary request."""
    with service.client() as client:
        r = client.post("/filter", content=padded_filter(LIMIT - 4096), headers=JSON)
    assert r.status_code == 200 and r.json()["Error"] == "", r.text[:300]


@pytest.mark.parametrize("depth", [2_000, 200_000])
def test_deeply_nested_json_is_a_bad_request(service: Service, depth: int) -> None:
    """Nesting past the JSON decoder's depth limit: 400 naming the problem, no recursion error, no 500."""
    inner = "[" * depth + "]" * depth
    for body in (inner, '{"Pod": {"metadata": {"labels": ' + inner + "}}, \"NodeNames\": []}"):
        with service.client() as client:
            r = client.post("/filter", content=body.encode(), headers=JSON)
        assert r.status_code == 400, r.text[:300]
        assert "invalid JSON" in r.json()["Error"]
    still_serves(service)


def test_nesting_within_the_decoder_limit_is_answered(service: Service) -> None:
    """Deep but decodable junk inside the Pod: answered (an Error or a verdict), never a server error."""
    deep = '{"a": [' * 250 + '"leaf"' + "]}" * 250  # 500 levels: under orjson's limit of 1024
    text = (EXAMPLES / "filter.json").read_text()
    body = text.replace('"spec": {', '"spec": {"affinity": ' + deep + ", ", 1)
    assert json.loads(body)["Pod"]["spec"]["affinity"]["a"][0]["a"]
    with service.client() as client:
        r = client.post("/filter", content=body.encode(), headers=JSON)
    assert r.status_code < 500, r.text[:300]
    still_serves(service)


def test_stalled_body_times_out(service: Service) -> None:
    """A client that sends part of its body and stops: 408 after the read timeout, the worker freed."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", service.port), timeout=10) as sock:
        sock.sendall(b"POST /filter HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1000\r\n\r\n{\"Pod\": ")
        received = b""
        while b"\r\n\r\n" not in received or not received.rstrip().endswith(b"}"):
            chunk = sock.recv(4096)
            if not chunk:
                break
            received += chunk
    assert received.startswith(b"HTTP/1.1 408"), received[:300]
    assert b"not received within 2 seconds" in received
    assert 1.5 < time.monotonic() - started < 9
    with service.client() as client:
        metrics = client.get("/metrics").text
    assert metric_value(metrics, "extender_rejected_requests_total", reason="timeout") >= 1
    still_serves(service)


def test_oversized_headers_are_refused(service: Service) -> None:
    """Headers far beyond any real client's: refused by the HTTP layer, nothing reaches the engine."""
    with service.client() as client:
        try:
            r = client.post("/filter", content=b"{}", headers={**JSON, "X-Padding": "x" * 200_000})
        except httpx.RemoteProtocolError:
            pass
        else:
            assert 400 <= r.status_code < 500, r.status_code
    still_serves(service)


def test_refusals_are_counted(service: Service) -> None:
    """Refusals show in /metrics by reason and by verb and code; no request ever got a 5xx."""
    with service.client() as client:
        def rejected(reason: str) -> float:
            return metric_value(client.get("/metrics").text, "extender_rejected_requests_total", reason=reason)

        too_large, bad_json = rejected("too_large"), rejected("bad_json")
        assert client.post("/bind", content=b"[" * 5000, headers=JSON).status_code == 400
        assert client.post("/bind", content=padded_filter(LIMIT + 1), headers=JSON).status_code == 413
        assert (rejected("too_large"), rejected("bad_json")) == (too_large + 1, bad_json + 1)
        metrics = client.get("/metrics").text
    assert metric_value(metrics, "extender_requests_total", verb="bind", code="413") >= 1
    assert 'code="5' not in metrics


@contextlib.contextmanager
def body_memory_held(service: Service, size: int) -> Iterator[None]:
    """Two connections each holding a ``size``-byte filter body from the body memory (head sent, body not);
    closed, and their memory given back, on leaving."""
    held = []
    try:
        for _ in range(2):
            sock = socket.create_connection(("127.0.0.1", service.port))
            held.append(sock)
            sock.sendall(b"POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n{" % size)
        time.sleep(0.3)
        yield
    finally:
        for sock in held:
            sock.close()
        time.sleep(0.3)


def test_large_bodies_past_the_body_memory_get_503_and_small_ones_are_served(service: Service) -> None:
    """Two connections hold 900 KiB bodies each (of 2 MiB); a third gets 503 with
    Retry-After before its body is read, a kube-scheduler-sized filter is answered meanwhile, and once the two
    are gone a large body is served again."""
    size = 900 * 1024
    with body_memory_held(service, size):
        with service.client() as client:
            r = client.post("/filter", content=padded_filter(size), headers=JSON)
        assert r.status_code == 503 and r.headers["retry-after"] == "1", r.text
        assert "--max-body-memory" in r.json()["Error"]
        still_serves(service)
    with service.client() as client:
        r = client.post("/filter", content=padded_filter(size), headers=JSON)
        assert r.status_code == 200, r.text
        metrics = client.get("/metrics").text
    assert metric_value(metrics, "extender_rejected_requests_total", reason="body_memory") >= 1


@pytest.mark.parametrize("path", ["/explain", "/ui/api/whatif", "/multicluster/schedule"])
def test_other_routes_refused_for_body_memory_get_503_with_retry_after(service: Service, path: str) -> None:
    """The routes besides the verbs draw on the same memory: their 503 tells the client when to retry, as the
    verbs' does, and the multi-cluster route counts it as overloaded, not as the client's bad request."""
    size = 900 * 1024
    with body_memory_held(service, size), service.client() as client:
        earlier = client.get("/metrics").text
        before = {outcome: metric_value(earlier, "extender_multicluster_schedules_total", outcome=outcome)
                  for outcome in ("overloaded", "bad_request")}
        r = client.post(path, content=b"{" + b" " * size + b"}", headers=JSON)
        metrics = client.get("/metrics").text
    assert r.status_code == 503 and r.headers["retry-after"] == "1", r.text
    assert "--max-body-memory" in r.text
    if path == "/multicluster/schedule":
        after = {outcome: metric_value(metrics, "extender_multicluster_schedules_total", outcome=outcome)
                 for outcome in before}
        assert after == {"overloaded": before["overloaded"] + 1, "bad_request": before["bad_request"]}, after
    still_serves(service)


def test_a_body_that_would_decode_to_more_than_the_body_memory_gets_413(service: Service) -> None:
    """900 KiB of ``0,0,0,...`` decodes to tens of times its size (200 MB of it made the service peak at
    7.5 GB): refused once read, by the estimate of what it decodes to, and the service still serves."""
    body = b'{"Pod":{"metadata":{"name":"a"}},"Nodes":{"items":[' + b"0," * (450 * 1024) + b'0]}}'
    with service.client() as client:
        r = client.post("/filter", content=body, headers=JSON)
    assert r.status_code == 413 and "would decode to about" in r.json()["Error"], r.text
    still_serves(service)
