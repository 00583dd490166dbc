"""Log lines cannot flood: repeated lines are held back past a burst and counted; long fields are cut."""

from __future__ import annotations

import io
import logging

import orjson

from extender.logs import MAX_FIELD_CHARS, JsonFormatter, RepeatLimiter


def _logger(name: str, limiter: RepeatLimiter) -> tuple[logging.Logger, io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(limiter)
    logger = logging.getLogger(name)
    logger.handlers[:] = [handler]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    return logger, out


def _lines(out: io.StringIO) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in out.getvalue().splitlines()]


def test_a_repeated_warning_is_held_back_past_the_burst_and_counted() -> None:
    limiter = RepeatLimiter(burst=3, window=0.2)
    log, out = _logger("test.logs.repeat", limiter)
    for i in range(50):  # one kind, whatever the client
        log.warning("connection refused: too many open connections", extra={"client": f"10.0.0.{i}"})
    assert len(_lines(out)) == 3
    import time

    time.sleep(0.25)  # the next window: let through again, saying how many were held back
    log.warning("connection refused: too many open connections", extra={"client": "10.0.0.99"})
    last = _lines(out)[-1]
    assert last["suppressed"] == 47 and last["client"] == "10.0.0.99"


def test_kinds_are_limited_separately_and_info_lines_are_not_limited() -> None:
    limiter = RepeatLimiter(burst=2, window=60)
    log, out = _logger("test.logs.kinds", limiter)
    for _ in range(5):
        log.warning("first kind")
        log.error("second kind: %s", "with an argument")
        log.info("bound")  # each bind's line: never dropped
    messages = [line["msg"] for line in _lines(out)]
    assert messages.count("first kind") == 2
    assert messages.count("second kind: with an argument") == 2
    assert messages.count("bound") == 5


def test_connection_lines_are_limited_at_every_level() -> None:
    limiter = RepeatLimiter(burst=4, window=60)
    log, out = _logger("extender.connections", limiter)
    for i in range(100):
        log.info("connection closed: TLS handshake failed", extra={"client": f"c{i}"})
    assert len(_lines(out)) == 4


def test_messages_built_from_request_data_do_not_grow_the_limiter() -> None:
    limiter = RepeatLimiter(burst=1, window=60)
    log, _ = _logger("test.logs.unbounded", limiter)
    for i in range(5000):
        log.warning(f"distinct message {i}")
    assert len(limiter._kinds) <= 1024


def test_long_fields_and_messages_are_cut() -> None:
    limiter = RepeatLimiter()
    log, out = _logger("test.logs.long", limiter)
    log.warning("x" * 100_000, extra={"error": "y" * 100_000, "values": list(range(100_000))})
    (line,) = _lines(out)
    assert len(out.getvalue()) < 4 * MAX_FIELD_CHARS + 1000
    assert str(line["msg"]).endswith(f"({100_000 - MAX_FIELD_CHARS} more characters)")
    assert str(line["error"]).startswith("y" * 100) and "more characters" in str(line["error"])
    assert str(line["values"]).startswith("[0,1,2,")


def test_a_long_traceback_keeps_the_exception_it_ends_with() -> None:
    """A cut traceback still names its exception: the middle goes, not the end (a 500 found by fuzzing was
    unreadable in the log because the cut removed the ZeroDivisionError)."""
    log, out = _logger("test.logs.traceback", RepeatLimiter())

    try:
        try:
            raise ValueError("a long cause " + "x" * 10_000)
        except ValueError as cause:
            raise ZeroDivisionError("the last line") from cause
    except ZeroDivisionError:
        log.exception("internal error")
    (line,) = _lines(out)
    exc = str(line["exc"])
    assert len(exc) < MAX_FIELD_CHARS + 100
    assert exc.startswith("Traceback") and exc.endswith("ZeroDivisionError: the last line")
    assert "characters cut" in exc
