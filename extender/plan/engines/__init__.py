"""Where a plan's simulations run.

Every engine gets the :class:`~extender.plan.evaluate.PlanContext` once per worker and then only tasks
(a variant each) and results travel; results come back in task order, so a plan's answer does not depend
on the engine, the number of workers or the order in which workers finish.

- ``serial``: this process, one task after another (the reference; no pool to start).
- ``process`` (default): a local pool of ``--workers`` processes; the context reaches each through the
  pool's initializer. No dependency beyond the standard library.
- ``ray``: Ray actors, one per worker, built from one ``ray.put`` of the context; a running cluster
  (``--address``) or a local one started for the run. Optional extra ``[ray]``.
- ``dask``: Dask distributed; the context is scattered to every worker (``broadcast=True``) and each task
  refers to it; a running scheduler (``--address``) or a ``LocalCluster``. Optional extra ``[dask]``.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from types import TracebackType

from extender.plan.evaluate import PlanContext, Task
from extender.plan.results import VariantResult

Progress = Callable[[int], None]  # called with the number of tasks just finished
ENGINES = ("process", "serial", "ray", "dask")


class EngineError(RuntimeError):
    """An engine that cannot start (a missing extra, an unreachable cluster); the message says what to do."""


class Engine(ABC):
    """Runs tasks on workers that hold one plan context."""

    name = ""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    @abstractmethod
    def start(self, context: PlanContext) -> None:
        """Ship the context to the workers (once); returns when every worker holds it and its base cache."""

    @abstractmethod
    def run(self, tasks: Sequence[Task], progress: Progress | None = None) -> list[VariantResult]:
        """Every task's result, in task order."""

    def close(self) -> None:  # noqa: B027 - an engine that starts nothing has nothing to stop
        """Stop whatever the engine started."""

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def make_engine(name: str, workers: int | None = None, address: str | None = None) -> Engine:
    """An engine by name (``workers`` None: one per core, or the Ray/Dask cluster's own count)."""
    if name == "serial":
        from extender.plan.engines.local import SerialEngine

        return SerialEngine()
    if name == "process":
        from extender.plan.engines.local import ProcessEngine

        if address:
            raise EngineError("--address is for --engine ray or dask; the process pool runs on this machine")
        return ProcessEngine(workers or default_workers())
    if name == "ray":
        from extender.plan.engines.ray_engine import RayEngine

        return RayEngine(workers, address)
    if name == "dask":
        from extender.plan.engines.dask_engine import DaskEngine

        return DaskEngine(workers, address)
    raise EngineError(f"unknown engine {name!r}; engines: {', '.join(ENGINES)}")
