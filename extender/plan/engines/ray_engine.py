"""``--engine ray``: one Ray actor per worker, each built from a single ``ray.put`` of the plan's context.

The context goes into Ray's object store once; every actor's constructor receives that object (Ray
resolves the reference on the actor's node, once) and builds its base cache from it. Tasks then carry a
variant each. Without ``--address`` a local Ray instance is started for the run (``--workers`` CPUs, no
dashboard) and stopped after it; with ``--address`` (``ray://host:10001`` or ``auto``) the running cluster
is used, and every node of it needs this package installed at the same version.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from extender.plan.engines import Engine, EngineError, Progress
from extender.plan.evaluate import PlanContext, Task, evaluate, install
from extender.plan.results import VariantResult


class PlanActor:
    """A Ray worker holding one plan context."""

    def __init__(self, context: PlanContext) -> None:
        install(context)

    def ready(self) -> bool:
        """True once constructed (the context installed)."""
        return True

    def run(self, index: int, task: Task) -> tuple[int, VariantResult]:
        """Simulate one task; its index comes back with the result."""
        return index, evaluate(task)


class RayEngine(Engine):
    """Ray actors over a local or running cluster."""

    name = "ray"

    def __init__(self, workers: int | None, address: str | None) -> None:
        super().__init__(workers or 0)
        self.address = address
        self._started = False
        self._actors: list[Any] = []

    def start(self, context: PlanContext) -> None:
        try:
            import ray
        except ImportError as err:
            raise EngineError("--engine ray needs Ray: pip install 'kube-scheduler-extender[ray]'") from err
        try:
            if self.address:
                ray.init(address=self.address, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.ERROR)
            else:
                from extender.plan.engines import default_workers

                self.workers = self.workers or default_workers()
                ray.init(num_cpus=self.workers, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.ERROR)
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise EngineError(f"ray: cannot start or reach the cluster: {err}") from err
        self._started = True
        if not self.workers:
            self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        shared = ray.put(context)
        actor = ray.remote(num_cpus=1)(PlanActor)
        self._actors = [actor.remote(shared) for _ in range(self.workers)]
        try:
            ray.get([a.ready.remote() for a in self._actors])
        except ray.exceptions.RayError as err:
            raise EngineError(f"ray: a worker could not install the plan: {err}") from err

    def run(self, tasks: Sequence[Task], progress: Progress | None = None) -> list[VariantResult]:
        import ray
        from ray.util import ActorPool

        if not self._actors:
            raise EngineError("the Ray engine was not started")
        results: list[VariantResult | None] = [None] * len(tasks)
        pool = ActorPool(self._actors)
        try:
            items: list[Any] = list(enumerate(tasks))
            for index, result in pool.map_unordered(lambda actor, item: actor.run.remote(*item), items):
                results[index] = result
                if progress is not None:
                    progress(1)
        except ray.exceptions.RayError as err:
            raise EngineError(f"ray: a task failed: {err}") from err
        return [r for r in results if r is not None]

    def close(self) -> None:
        if self._started:
            import ray

            for actor in self._actors:
                ray.kill(actor)
            self._actors = []
            ray.shutdown()
            self._started = False
