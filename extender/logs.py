"""Structured JSON logs: one object per line on stderr, with the request id when there is one.

Lines cannot flood: a message repeated past a burst within a window is held back and counted (the next one
let through says how many were suppressed), and no field is written longer than :data:`MAX_FIELD_CHARS`.
"""

from __future__ import annotations

import collections
import contextvars
import logging
import sys
import threading
import time
from typing import Any

import orjson

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")

_RESERVED = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime", "color_message"}

#: Longest value written for a field (the message included); a longer one is cut and says by how much.
MAX_FIELD_CHARS = 2048
#: Lines of one kind let through per window, the window, and how many kinds are remembered.
REPEAT_BURST = 10
REPEAT_WINDOW_SECONDS = 10.0
_MAX_KINDS = 1024
#: Loggers whose every level is limited (the others: warnings and errors only, so that per-request debug
#: lines and each bind's info line are never dropped).
_LIMITED_LOGGERS = ("extender.connections", "asyncio")


def _cut(value: str) -> str:
    if len(value) <= MAX_FIELD_CHARS:
        return value
    return f"{value[:MAX_FIELD_CHARS]}... ({len(value) - MAX_FIELD_CHARS} more characters)"


def _cut_traceback(text: str) -> str:
    """A traceback cut in its middle: its first frames and its end, where the exception itself is named."""
    if len(text) <= MAX_FIELD_CHARS:
        return text
    half = MAX_FIELD_CHARS // 2
    return f"{text[:half]}\n... ({len(text) - 2 * half} characters cut) ...\n{text[-half:]}"


def _field(value: Any) -> Any:
    """A field's value as written: strings cut, large structures written as cut JSON text."""
    if isinstance(value, str):
        return _cut(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    text = orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()
    return value if len(text) <= MAX_FIELD_CHARS else _cut(text)


class RepeatLimiter(logging.Filter):
    """Lets through at most ``burst`` lines of one kind per ``window`` seconds.

    A kind is the logger, the level and the message template (``record.msg`` before its arguments), so a
    refused connection logged per client is one kind, whatever the client. The first line of a kind let
    through after some were held back carries ``suppressed``: how many. At most ``_MAX_KINDS`` kinds are
    remembered (the least recent is forgotten), so messages built from request data cannot grow it.
    """

    def __init__(self, burst: int = REPEAT_BURST, window: float = REPEAT_WINDOW_SECONDS) -> None:
        super().__init__()
        self.burst = burst
        self.window = window
        self._kinds: collections.OrderedDict[tuple[str, int, str], list[float]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        """False for a line over its kind's burst in the current window."""
        if record.levelno < logging.WARNING and not record.name.startswith(_LIMITED_LOGGERS):
            return True
        kind = (record.name, record.levelno, str(record.msg)[:200])
        now = time.monotonic()
        with self._lock:
            state = self._kinds.get(kind)  # [window start, lines let through, lines held back]
            if state is None or now - state[0] >= self.window:
                held = state[2] if state is not None else 0
                state = [now, 0, 0]
                self._kinds[kind] = state
                if held:
                    record.suppressed = int(held)
            self._kinds.move_to_end(kind)
            while len(self._kinds) > _MAX_KINDS:
                self._kinds.popitem(last=False)
            if state[1] >= self.burst:
                state[2] += 1
                return False
            state[1] += 1
            return True


class JsonFormatter(logging.Formatter):
    """Formats a record as one JSON object; ``extra=`` fields become keys."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": _cut(record.getMessage()),
        }
        rid = request_id.get()
        if rid:
            entry["request_id"] = rid
        for key, value in record.__dict__.items():
            if key not in _RESERVED and not key.startswith("_"):
                entry[key] = _field(value)
        if record.exc_info:
            entry["exc"] = _cut_traceback(self.formatException(record.exc_info))
        return orjson.dumps(entry, default=str).decode()


def configure(level: str = "info") -> None:
    """Send the service's and uvicorn's logs to stderr as JSON at the given level."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RepeatLimiter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
    # Access logs duplicate our own per-request log line; httpx would log every apiserver request (each
    # watch reconnect, each bind) at info.
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)
    for noisy in ("httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
