"""The engines of one machine: this process (``serial``) and a local process pool (``process``)."""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from extender.plan.engines import Engine, EngineError, Progress
from extender.plan.evaluate import PlanContext, Task, evaluate, install, installed_token
from extender.plan.results import VariantResult


class SerialEngine(Engine):
    """Every task in this process, one after another."""

    name = "serial"

    def __init__(self) -> None:
        super().__init__(1)

    def start(self, context: PlanContext) -> None:
        install(context)

    def run(self, tasks: Sequence[Task], progress: Progress | None = None) -> list[VariantResult]:
        results = []
        for task in tasks:
            results.append(evaluate(task))
            if progress is not None:
                progress(1)
        return results


class ProcessEngine(Engine):
    """A pool of worker processes (spawned: nothing of this process's state leaks into them), each given
    the context once by the pool's initializer."""

    name = "process"

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self._pool: ProcessPoolExecutor | None = None

    def start(self, context: PlanContext) -> None:
        self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=install, initargs=(context,))
        # The pool spawns a process per task submitted while none is idle: as many quick tasks as workers
        # start them all, and each answers only once its initializer has built the base cache.
        try:
            for future in [self._pool.submit(installed_token) for _ in range(self.workers)]:
                if future.result() != context.token:
                    raise EngineError("a worker process did not install the plan")
        except BrokenProcessPool as err:
            raise EngineError(f"a worker process died while starting: {err}") from err

    def run(self, tasks: Sequence[Task], progress: Progress | None = None) -> list[VariantResult]:
        if self._pool is None:
            raise EngineError("the process pool was not started")
        futures: dict[Future[VariantResult], int] = {self._pool.submit(evaluate, task): i
                                                      for i, task in enumerate(tasks)}
        results: list[VariantResult | None] = [None] * len(tasks)
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    results[futures[future]] = future.result()
                if progress is not None:
                    progress(len(done))
        except BrokenProcessPool as err:
            raise EngineError(f"a worker process died: {err}") from err
        finally:
            for future in pending:
                future.cancel()
        return [r for r in results if r is not None]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
