"""The live source: the release to follow (from the apiserver's /version when it is not configured), one
reflector per kind that release reads, readiness, and expiry of assumed pods."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import httpx

from extender.cluster.cache import ClusterCache
from extender.cluster.engine_thread import EngineThread
from extender.cluster.reflector import (
    Backoff,
    CacheWriter,
    CacheWriterNow,
    Reflector,
    ReflectorObserver,
    write_in_place,
    write_now_in_place,
)
from extender.gc_tuning import keep_loaded, prepare_for_load, settle_after_load
from extender.kubeapi.client import BETA_RESOURCES, RESOURCES, ApiError, KubeClient, Resource
from extender.kubeapi.config import KubeConfigError

if TYPE_CHECKING:
    from extender.kube.release import Release

log = logging.getLogger("extender.live")

#: Every kind some supported release reads (what the RBAC grants cover); :func:`watched_kinds` gives a release's.
WATCHED_KINDS = ("Node", "Pod", "Service", "ReplicationController", "ReplicaSet", "StatefulSet",
                 "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "Namespace", "CSIDriver",
                 "CSIStorageCapacity", "VolumeAttachment", "ResourceSlice", "ResourceClaim", "DeviceClass",
                 "DeviceTaintRule", "PodDisruptionBudget", "PriorityClass")


def watched_kinds(release: Release | None) -> tuple[str, ...]:
    """The kinds a release's kube-scheduler reads: DeviceTaintRules only with DRADeviceTaintRules on (GA in 1.37,
    off by default in 1.36; scheduler.go builds the ResourceSlice tracker with the taint informer then)."""
    if release is None:
        return WATCHED_KINDS
    return tuple(k for k in WATCHED_KINDS if k != "DeviceTaintRule" or release.gate("DRADeviceTaintRules"))


def resource_of(kind: str, release: Release | None = None) -> Resource:
    """Where a kind is read for a release: DeviceTaintRules are resource.k8s.io/v1 from 1.37, v1beta2 before."""
    if kind in BETA_RESOURCES and release is not None and not release.at_least(37):
        return BETA_RESOURCES[kind]
    return RESOURCES[kind]


# Given the apiserver's /version answer: choose the release, rebuild the profiles for it, and return it.
ReleaseSettler = Callable[[dict[str, Any]], Awaitable["Release"]]

# kube-scheduler's pod informer leaves terminated pods out (pkg/scheduler/scheduler.go newPodInformer).
POD_PARAMS = {"fieldSelector": "status.phase!=Succeeded,status.phase!=Failed"}


class LiveSource:
    """Keeps the cache equal to the apiserver's state for every kind the followed release reads.

    With ``settle`` (kubernetesVersion auto), the source first reads the apiserver's ``/version`` (retrying
    with backoff until it answers) and hands it to ``settle``, which chooses the release and rebuilds the
    profiles for it; only then are the kinds of that release listed and watched. Until then the source is not
    ready. With ``release`` (a configured version) it watches that release's kinds at once; with neither,
    ``kinds``.
    """

    def __init__(self, cache: ClusterCache, client: KubeClient, *, kinds: tuple[str, ...] = WATCHED_KINDS,
                 observer: ReflectorObserver | None = None, min_watch_timeout: int = 300,
                 cleanup_interval: float = 1.0, engine: EngineThread | None = None,
                 release: Release | None = None, settle: ReleaseSettler | None = None,
                 warm_up: Callable[[], None] | None = None) -> None:
        self.cache = cache
        self.client = client
        # With an engine thread, every write to the cache (lists, events, expiry) is handed to it, in order:
        # the cache keeps one writer and a request never sees it change mid-way.
        self.write: CacheWriter = engine.write if engine is not None else write_in_place
        self.write_now: CacheWriterNow = engine.write_now if engine is not None else write_now_in_place
        self.observer = observer
        self.min_watch_timeout = min_watch_timeout
        self.release = release
        self.settle = settle
        self.version_error = ""
        self._settled = asyncio.Event() if settle is not None else None
        self.reflectors: list[Reflector] = [] if settle is not None else self._reflectors(
            watched_kinds(release) if release is not None else kinds)
        self.cleanup_interval = cleanup_interval
        self._tasks: list[asyncio.Task[None]] = []
        self._loading = False  # the first lists are under way (see extender.gc_tuning)
        # Run on the engine thread once every kind is listed, before readiness: what the first request would
        # build (the engine's cluster-wide indexes) is built then (see Scheduler.warm_up).
        self._warm_up = warm_up
        self._warm = asyncio.Event()

    def _reflectors(self, kinds: tuple[str, ...]) -> list[Reflector]:
        return [Reflector(self.client, resource_of(kind, self.release), self.cache,
                          params=POD_PARAMS if kind == "Pod" else None, observer=self.observer,
                          min_watch_timeout=self.min_watch_timeout, write=self.write, write_now=self.write_now,
                          on_page=self._page_loaded)
                for kind in kinds]

    async def start(self) -> None:
        """Start every reflector (after settling the release, when it is to be read from the apiserver) and the
        assumed-pod expiry loop (returns at once)."""
        self._loading = True
        await self.write(prepare_for_load)
        if self.settle is not None:
            self._tasks = [asyncio.create_task(self._settle_then_watch(), name="kubernetes-version")]
        else:
            self._tasks = [asyncio.create_task(r.run(), name=f"reflector-{r.kind}") for r in self.reflectors]
        self._tasks.append(asyncio.create_task(self._expire(), name="assumed-pod-expiry"))
        self._tasks.append(asyncio.create_task(self._freeze_when_synced(), name="gc-freeze"))

    async def _settle_then_watch(self) -> None:
        assert self.settle is not None and self._settled is not None
        backoff = Backoff()
        while True:
            try:
                version = await self.client.server_version()
                break
            except (httpx.HTTPError, ApiError, KubeConfigError, ValueError, OSError) as err:
                self.version_error = f"{type(err).__name__}: {err}"
                log.info("reading /version failed; retrying", extra={"error": self.version_error})
                await asyncio.sleep(backoff.next())
        self.version_error = ""
        try:
            self.release = await self.settle(version)
        except Exception as err:  # the configuration is not valid for the cluster's release: stay unready, say why
            self.version_error = f"the cluster reports {version.get('gitVersion')!r}: {err}"
            log.error("cannot follow the cluster's Kubernetes version", extra={"error": self.version_error})
            return
        self.reflectors = self._reflectors(watched_kinds(self.release))
        self._settled.set()
        self._tasks.extend(asyncio.create_task(r.run(), name=f"reflector-{r.kind}") for r in self.reflectors)

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
        """Wait until the release is settled and every kind has been listed once; False on timeout."""

        async def synced() -> None:
            if self._settled is not None:
                await self._settled.wait()
            await asyncio.gather(*(r.synced.wait() for r in self.reflectors))

        try:
            await asyncio.wait_for(synced(), timeout)
        except TimeoutError:
            return False
        return True

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        """Ready when the release is settled and every kind has synced; the details name the kinds that lag,
        each kind's state, and the release followed (or why it is not known yet)."""
        settling = self._settled is not None and not self._settled.is_set()
        lagging = [r.kind for r in self.reflectors if not r.synced.is_set()]
        details: dict[str, Any] = {
            "source": "apiserver",
            "unsynced": ["(the apiserver's /version)"] if settling else lagging,
            **({"warmedUp": self._warm.is_set()} if self._warm_up is not None else {}),
            "kinds": {r.kind: {"synced": r.synced.is_set(), "resourceVersion": r.resource_version,
                               "relists": r.relists, "restarts": r.restarts, "lastError": r.last_error,
                               **({"served": False} if r.not_served else {})}
                      for r in self.reflectors},
        }
        if settling:
            details["kubernetesVersion"] = {"pending": "reading the apiserver's /version",
                                            "lastError": self.version_error}
        return not settling and not lagging and (self._warm_up is None or self._warm.is_set()), details

    async def _expire(self) -> None:
        while True:
            await asyncio.sleep(self.cleanup_interval)
            await self.write(self.cache.cleanup_expired)
