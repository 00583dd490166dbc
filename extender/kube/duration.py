"""Go ``time.Duration`` strings ("10s", "1m30s", "250ms"), as plugin args and configs write them."""

from __future__ import annotations

import re

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """A Go ``time.Duration`` string ("10s", "1m30s", "250ms", "-1s", "0") in seconds."""
    raw = text.strip()
    sign = 1.0
    if raw[:1] in "+-":
        sign = -1.0 if raw[0] == "-" else 1.0
        raw = raw[1:]
    if raw == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(raw):
        match = _DURATION_PART.match(raw, pos)
        if match is None:
            raise ValueError(f"time: invalid duration {text!r}")
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        pos = match.end()
    if not raw:
        raise ValueError(f"time: invalid duration {text!r}")
    return sign * total
