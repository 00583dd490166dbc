"""A progress bar on stderr for long plans: on a terminal only, never with ``--quiet``."""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 30
MIN_INTERVAL_SECONDS = 0.1  # redraw at most this often


class ProgressBar:
    """Counts finished simulations against a total that may grow (searches add rounds as they go)."""

    def __init__(self, total: int, *, enabled: bool, stream: TextIO | None = None) -> None:
        self.total = total
        self.done = 0
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self._drawn = 0.0
        self._started = time.monotonic()

    @classmethod
    def for_terminal(cls, total: int, quiet: bool) -> ProgressBar:
        """Shown when stderr is a terminal and ``quiet`` is off."""
        return cls(total, enabled=not quiet and sys.stderr.isatty())

    def __call__(self, finished: int) -> None:
        self.done += finished
        self.total = max(self.total, self.done)
        now = time.monotonic()
        if self.enabled and (now - self._drawn >= MIN_INTERVAL_SECONDS or self.done == self.total):
            self._drawn = now
            filled = WIDTH * self.done // max(self.total, 1)
            elapsed = now - self._started
            self.stream.write(f"\r[{'#' * filled}{'.' * (WIDTH - filled)}] {self.done}/{self.total} simulations"
                              f"  {elapsed:5.1f}s")
            self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.enabled and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
