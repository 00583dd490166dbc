"""bench/http_glue.py: both sides are real servers that answer the benchmark's request with the same body, and
the service side goes through the product's HTTP path (its limits answer as the service's do)."""

from __future__ import annotations

import httpx
import pytest

from bench.http_glue import ANSWER, BODY, Server, measure


@pytest.mark.parametrize("side", ["service", "raw", "uvicorn", "lean"])
def test_each_side_answers_the_request_with_the_same_body(side: str) -> None:
    cpu, wall, answer = measure(side, requests=20, warm_up=5)
    assert answer == ANSWER
    assert cpu >= 0 and wall > 0


def test_paced_requests_wait_between_answers() -> None:
    """With a pause the client waits after each answer: the round takes at least the pauses, and the round
    trip reported is a request's own time, not the pause."""
    import time

    started = time.perf_counter()
    _, wall, answer = measure("lean", requests=20, warm_up=2, pause=0.02)
    assert answer == ANSWER
    assert time.perf_counter() - started >= 20 * 0.02
    assert 0 < wall < 20_000  # µs: far below the 20 ms pause


def test_the_service_side_is_the_products_application() -> None:
    """The verb goes through FastVerbs (which answers the client's request id) and everything else through the
    service's own application: the path measured is the product's."""
    server = Server("service")
    try:
        url = f"http://127.0.0.1:{server.port}"
        answered = httpx.post(f"{url}/filter", content=BODY, headers={"X-Request-Id": "glue-1"})
        assert answered.status_code == 200 and answered.content == ANSWER
        assert answered.headers["x-request-id"] == "glue-1"
        assert httpx.get(f"{url}/healthz").status_code == 200
    finally:
        server.close()
