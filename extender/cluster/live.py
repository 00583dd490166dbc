"""The live source: one reflector per watched kind, readiness, and expiry of assumed pods."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from extender.cluster.cache import ClusterCache
from extender.cluster.engine_thread import EngineThread
from extender.cluster.reflector import CacheWriter, Reflector, ReflectorObserver, write_in_place
from extender.gc_tuning import keep_loaded, prepare_for_load, settle_after_load
from extender.kubeapi.client import RESOURCES, KubeClient

log = logging.getLogger("extender.live")

WATCHED_KINDS = ("Node", "Pod", "Service", "ReplicationController", "ReplicaSet", "StatefulSet",
                 "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "Namespace", "CSIDriver",
                 "CSIStorageCapacity", "VolumeAttachment", "ResourceSlice", "ResourceClaim", "DeviceClass",
                 "PodDisruptionBudget", "PriorityClass")

# kube-scheduler's pod informer leaves terminated pods out (pkg/scheduler/scheduler.go newPodInformer).
POD_PARAMS = {"fieldSelector": "status.phase!=Succeeded,status.phase!=Failed"}


class LiveSource:
    """Keeps the cache equal to the apiserver's state for every watched kind."""

    def __init__(self, cache: ClusterCache, client: KubeClient, *, kinds: tuple[str, ...] = WATCHED_KINDS,
                 observer: ReflectorObserver | None = None, min_watch_timeout: int = 300,
                 cleanup_interval: float = 1.0, engine: EngineThread | None = None,
                 warm_up: Callable[[], None] | None = None) -> None:
        self.cache = cache
        self.client = client
        # With an engine thread, every write to the cache (lists, events, expiry) is handed to it, in order:
        # the cache keeps one writer and a request never sees it change mid-way.
        self.write: CacheWriter = engine.write if engine is not None else write_in_place
        self.reflectors = [
            Reflector(client, RESOURCES[kind], cache, params=POD_PARAMS if kind == "Pod" else None,
                      observer=observer, min_watch_timeout=min_watch_timeout, write=self.write,
                      on_page=self._page_loaded)
            for kind in kinds
        ]
        self.cleanup_interval = cleanup_interval
        self._tasks: list[asyncio.Task[None]] = []
        self._loading = False  # the first lists are under way (see extender.gc_tuning)
        # Run on the engine thread once every kind is listed, before readiness: what the first request would
        # build (the engine's cluster-wide indexes) is built then (see Scheduler.warm_up).
        self._warm_up = warm_up
        self._warm = asyncio.Event()

    async def start(self) -> None:
        """Start every reflector and the assumed-pod expiry loop (returns at once)."""
        self._loading = True
        await self.write(prepare_for_load)
        self._tasks = [asyncio.create_task(r.run(), name=f"reflector-{r.kind}") for r in self.reflectors]
        self._tasks.append(asyncio.create_task(self._expire(), name="assumed-pod-expiry"))
        self._tasks.append(asyncio.create_task(self._freeze_when_synced(), name="gc-freeze"))

    async def _freeze_when_synced(self) -> None:
        # The initial list creates most long-lived objects at once (see extender.gc_tuning).
        await self.wait_synced()
        if self._warm_up is not None:
            try:
                await self.write(self._warm_up)
            except Exception as err:  # the requests will meet it and say why, as without a warm-up
                log.warning("warming up the engine failed", extra={"error": f"{type(err).__name__}: {err}"})
        self._warm.set()
        self._loading = False
        await self.write(settle_after_load)

    def _page_loaded(self) -> None:
        if self._loading:  # a later relist replaces what is frozen already: nothing to gain there
            keep_loaded()

    async def stop(self) -> None:
        """Cancel everything and close the client."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        await self.client.aclose()

    async def wait_synced(self, timeout: float | None = None) -> bool:
        """Wait until every kind has been listed once; False on timeout."""
        try:
            await asyncio.wait_for(asyncio.gather(*(r.synced.wait() for r in self.reflectors)), timeout)
        except TimeoutError:
            return False
        return True

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        """Ready when every kind has synced; the details name the kinds that lag and each kind's state."""
        lagging = [r.kind for r in self.reflectors if not r.synced.is_set()]
        details = {
            "source": "apiserver",
            "unsynced": lagging,
            **({"warmedUp": self._warm.is_set()} if self._warm_up is not None else {}),
            "kinds": {r.kind: {"synced": r.synced.is_set(), "resourceVersion": r.resource_version,
                               "relists": r.relists, "restarts": r.restarts, "lastError": r.last_error}
                      for r in self.reflectors},
        }
        return not lagging and (self._warm_up is None or self._warm.is_set()), details

    async def _expire(self) -> None:
        while True:
            await asyncio.sleep(self.cleanup_interval)
            await self.write(self.cache.cleanup_expired)
