"""Which Kubernetes releases a test run covers, from an environment variable (shared by the oracle and e2e)."""

from __future__ import annotations

import os
from collections.abc import Iterable


def versions_from_env(variable: str, known: Iterable[str]) -> list[str]:
    """The releases named in ``variable`` (comma-separated, e.g. "1.37"), else every known one, in order."""
    known = list(known)
    raw = os.environ.get(variable, "").strip()
    wanted = [v.strip() for v in raw.split(",") if v.strip()] if raw else known
    unknown = [v for v in wanted if v not in known]
    if unknown:
        raise ValueError(f"{variable}: unknown version(s) {unknown}; known: {sorted(known)}")
    return wanted
