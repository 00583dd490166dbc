"""A bound on the work one multi-cluster placement may do.

Most of a placement costs a few steps per cluster, but some parts multiply what the request sends: every
``clusterAffinities`` term runs the whole pipeline again, static weight rules and overflow tiers are matched
against every cluster, each taint is checked against every toleration, and the region search of spread
constraints enumerates combinations of regions. A small body can therefore ask for a great deal of work.

The pipeline charges a :class:`WorkBudget` as it goes, in steps of roughly equal cost: a cluster checked by
a filter or matched against a selector expression (two each), a taint against a toleration, an estimate, a
party of the Webster division, a step of the region search (twenty: each builds and compares paths). Past
the budget's steps, or its deadline, it raises :class:`WorkLimitError`, which the service answers with 422.
The budget is per request and travels in a context variable, so the library's functions keep their
signatures; outside :func:`bounded` nothing is counted.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Final

__all__ = ["DEFAULT_WORK_STEPS", "WorkBudget", "WorkLimitError", "bounded", "charge"]

#: Steps one placement may take by default: one to two seconds of work on one core (a step is about a
#: microsecond or two of Python); placements over thousands of clusters take a few tens of thousands.
DEFAULT_WORK_STEPS: Final = 1_000_000


class WorkLimitError(Exception):
    """The placement needs more work than its budget allows; the message says which bound and why."""


class WorkBudget:
    """Steps left for one placement, and the time it must finish by."""

    __slots__ = ("deadline", "limit", "seconds", "used")

    def __init__(self, steps: int = DEFAULT_WORK_STEPS, seconds: float | None = None) -> None:
        self.limit = steps
        self.seconds = seconds
        self.used = 0
        self.deadline = time.monotonic() + seconds if seconds is not None else None

    def charge(self, steps: int, what: str) -> None:
        """Count ``steps`` of ``what``; raise :class:`WorkLimitError` past the limit or the deadline."""
        self.used += steps
        if self.used > self.limit:
            raise WorkLimitError(f"the placement needs more than {self.limit} steps of work (reached at {what}); "
                                 "send fewer clusters, affinity terms, weight rules, tolerations or spread groups")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise WorkLimitError(f"the placement did not finish within {self.seconds:g} seconds (at {what})")


_current: ContextVar[WorkBudget | None] = ContextVar("multicluster_work_budget", default=None)


def charge(steps: int, what: str) -> None:
    """Charge the current placement's budget, if it has one."""
    budget = _current.get()
    if budget is not None:
        budget.charge(steps, what)


@contextlib.contextmanager
def bounded(budget: WorkBudget | None) -> Iterator[WorkBudget | None]:
    """Charge ``budget`` for the placement work done inside the block (``None``: no bound)."""
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)
