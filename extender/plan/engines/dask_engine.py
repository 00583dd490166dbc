"""``--engine dask``: Dask distributed, the context scattered once to every worker.

``client.scatter(context, broadcast=True)`` places the context in each worker's memory; every task
refers to that future, so Dask hands the worker its own copy instead of sending the cluster again, and the
worker builds its base cache on the first task only (keyed by the context's token). Without ``--address``
a ``LocalCluster`` of ``--workers`` single-threaded processes (no dashboard) is started for the run; with
``--address`` (``tcp://host:8786``) the running scheduler is used, and its workers need this package
installed at the same version.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from extender.plan.engines import Engine, EngineError, Progress
from extender.plan.evaluate import PlanContext, Task, evaluate, install
from extender.plan.results import VariantResult


def run_on_worker(task: Task, context: PlanContext) -> VariantResult:
    """A Dask task: simulate on the worker's context (installed at start; a worker that joined later
    installs it on its first task)."""
    install(context)
    return evaluate(task)


class DaskEngine(Engine):
    """Dask distributed over a local or running cluster."""

    name = "dask"

    def __init__(self, workers: int | None, address: str | None, connect_timeout: float = 30.0) -> None:
        super().__init__(workers or 0)
        self.address = address
        self.connect_timeout = connect_timeout
        self._cluster: Any = None
        self._client: Any = None
        self._context: Any = None

    def start(self, context: PlanContext) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as err:
            raise EngineError("--engine dask needs Dask: pip install 'kube-scheduler-extender[dask]'") from err
        try:
            if self.address:
                self._client = Client(self.address, timeout=f"{self.connect_timeout}s")
            else:
                from extender.plan.engines import default_workers

                self.workers = self.workers or default_workers()
                self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                             dashboard_address=None, silence_logs=logging.ERROR)
                self._client = Client(self._cluster)
        except (OSError, TimeoutError, ValueError) as err:
            self.close()
            raise EngineError(f"dask: cannot start or reach the scheduler: {err}") from err
        if not self.workers:
            self.workers = max(1, len(self._client.scheduler_info()["workers"]))
        self._context = self._client.scatter(context, broadcast=True, hash=False)
        # One install per worker, pinned to it, on its own copy of the scattered context.
        installs = [self._client.submit(install, self._context, workers=[address], pure=False,
                                        allow_other_workers=False)
                    for address in self._client.scheduler_info()["workers"]]
        self._client.gather(installs)

    def run(self, tasks: Sequence[Task], progress: Progress | None = None) -> list[VariantResult]:
        from dask.distributed import as_completed

        if self._client is None:
            raise EngineError("the Dask engine was not started")
        futures = self._client.map(run_on_worker, list(tasks), context=self._context, pure=False)
        position = {future.key: i for i, future in enumerate(futures)}
        results: list[VariantResult | None] = [None] * len(tasks)
        try:
            for future in as_completed(futures):
                results[position[future.key]] = future.result()
                if progress is not None:
                    progress(1)
        except Exception as err:  # a worker's exception comes back as itself
            for future in futures:
                future.cancel()
            raise EngineError(f"dask: a task failed: {type(err).__name__}: {err}") from err
        return [r for r in results if r is not None]

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
