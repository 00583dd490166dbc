"""A reflector, as client-go's: keep one kind in the cache equal to the apiserver's view of it.

List (paginated) → replace the kind in the cache → watch from the list's resourceVersion with
bookmarks and a server-side timeout → on a normal end, watch again from the last version seen → on a
disconnect or error, back off (jittered exponential) and resume from the last version → on 410 Gone
(the version was compacted away), relist. Events that cannot be read are logged and skipped; they
never stop the reflector. A kind the apiserver does not serve (404 on its collection, e.g. a kind of a newer
Kubernetes version) is held empty and synced, and listed again from time to time.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

import httpx

from extender.cluster.cache import CacheError, ClusterCache
from extender.kubeapi.client import ApiError, Gone, KubeClient, Resource
from extender.kubeapi.lean import LeanHTTPError

log = logging.getLogger("extender.reflector")

T = TypeVar("T")
# Runs a cache write where the cache lives (the engine thread in the service), in submission order.
CacheWriter = Callable[..., Awaitable[Any]]


async def write_in_place(fn: Callable[..., T], *args: Any) -> T:
    """The default CacheWriter: call at once, on the caller's thread."""
    return fn(*args)


# Runs a small cache write at once on the caller's thread if it may (True), else nothing ran (False): a watch event
# as it arrives (see KubeClient.watch's apply_now); what it declines goes through the CacheWriter, in order.
CacheWriterNow = Callable[..., bool]


def write_now_in_place(fn: Callable[..., object], *args: Any) -> bool:
    """The default CacheWriterNow: call at once, on the caller's thread."""
    fn(*args)
    return True


# How often a kind the apiserver does not serve is listed again (the API may be enabled later).
NOT_SERVED_RELIST_SECONDS = 300.0


class ReflectorObserver(Protocol):
    """Receives what a reflector does, for metrics."""

    def watch_restarted(self, kind: str, reason: str) -> None:
        """A watch ended abnormally (reason: gone, disconnect, error) and will be resumed or relisted."""

    def event_applied(self, kind: str, event_type: str) -> None:
        """An event (ADDED, MODIFIED, DELETED, BOOKMARK, LIST) was applied to the cache."""


class Backoff:
    """Exponential backoff with full jitter, reset after a healthy watch (client-go: 800ms to 30s)."""

    def __init__(self, initial: float = 0.8, maximum: float = 30.0, rng: random.Random | None = None) -> None:
        self.initial, self.maximum = initial, maximum
        self._next = initial
        self._rng = rng or random.Random()

    def next(self) -> float:
        """The next delay to wait."""
        delay = self._next * (1 + self._rng.random())
        self._next = min(self._next * 2, self.maximum)
        return min(delay, self.maximum)

    def reset(self) -> None:
        """Back to the initial delay."""
        self._next = self.initial


class Reflector:
    """Mirrors one kind from the apiserver into the cache."""

    def __init__(self, client: KubeClient, resource: Resource, cache: ClusterCache, *,
                 params: Mapping[str, Any] | None = None, observer: ReflectorObserver | None = None,
                 min_watch_timeout: int = 300, page_size: int = 1000,
                 write: CacheWriter = write_in_place, write_now: CacheWriterNow = write_now_in_place,
                 on_page: Callable[[], object] | None = None) -> None:
        self.client = client
        # Called where the cache lives, right after each page of a list is in it (see extender.gc_tuning).
        self.on_page = on_page
        self.write = write
        self.write_now = write_now
        self.resource = resource
        self.kind = resource.kind
        self.cache = cache
        self.params = dict(params or {})
        self.observer = observer
        self.min_watch_timeout = min_watch_timeout
        self.page_size = page_size
        self.synced = asyncio.Event()
        self.resource_version = ""
        self.relists = 0
        self.restarts = 0
        self.last_error = ""
        self.backoff = Backoff()
        self.not_served = False  # the apiserver answered 404 for this kind's collection

    async def list_and_replace(self) -> None:
        """List everything and make the cache's view of this kind equal to it."""
        seen: set[str] = set()
        version = ""
        # The first list is served from the apiserver's watch cache, as client-go's reflector asks for it;
        # a relist (after a 410) reads from etcd, consistently.
        pages = self.client.list_pages(self.resource, params=self.params, page_size=self.page_size,
                                       from_cache=not self.resource_version)
        try:
            async for items, page_version, restarted in pages:
                version = page_version
                if restarted:
                    seen = set()
                # Each page goes into the cache as it arrives: a 150k-pod list never sits in memory whole.
                for raw, err in await self.write(self._apply_page, items, seen):
                    meta = raw.get("metadata") or {}
                    log.warning("skipping unreadable object", extra={"kind": self.kind, "object": meta.get("name"),
                                                                     "error": str(err)})
        except ApiError as err:
            if err.status != 404 or seen:
                raise
            if not self.not_served:
                log.info("kind not served by the apiserver; holding none", extra={"kind": self.kind,
                                                                                   "path": self.resource.path})
            self.not_served = True
        else:
            self.not_served = False
        await self.write(self.cache.drop_unseen, self.kind, seen)
        self.resource_version = version
        self.last_error = ""
        self.relists += 1
        if self.observer is not None:
            self.observer.event_applied(self.kind, "LIST")
        self.synced.set()

    def _apply_page(self, items: list[dict[str, Any]], seen: set[str]) -> list[tuple[Mapping[str, Any], Exception]]:
        failures = self.cache.apply_many(self.kind, items, seen)
        if self.on_page is not None:
            self.on_page()
        return failures

    def apply(self, event: Mapping[str, Any]) -> None:
        """Apply one watch event to the cache."""
        kind, obj = event.get("type"), event.get("object") or {}
        version = (obj.get("metadata") or {}).get("resourceVersion")
        try:
            if kind in ("ADDED", "MODIFIED"):
                self.cache.apply(obj)
            elif kind == "DELETED":
                self.cache.delete(obj)
        except (ValueError, CacheError) as err:
            log.warning("skipping unreadable event", extra={"kind": self.kind, "event": kind,
                                                            "object": (obj.get("metadata") or {}).get("name"),
                                                            "error": str(err)})
        if version:
            self.resource_version = str(version)
        if self.observer is not None and isinstance(kind, str):
            self.observer.event_applied(self.kind, kind)

    def _apply_now(self, event: Mapping[str, Any]) -> bool:
        """Apply a watch event as it arrives, if the cache can take it at once (see CacheWriterNow)."""
        if not self.write_now(self.apply, event):
            return False
        self.backoff.reset()
        return True

    async def run(self) -> None:
        """List and watch until cancelled."""
        need_list = True
        while True:
            try:
                if need_list or not self.resource_version:
                    await self.list_and_replace()
                    need_list = False
                if self.not_served:
                    await asyncio.sleep(NOT_SERVED_RELIST_SECONDS)
                    need_list = True
                    continue
                timeout = random.randint(self.min_watch_timeout, 2 * self.min_watch_timeout)
                async for event in self.client.watch(self.resource, self.resource_version, timeout_seconds=timeout,
                                                     params=self.params, apply_now=self._apply_now):
                    await self.write(self.apply, event)  # one the engine could not take at once: in order
                    self.backoff.reset()
                continue  # the server closed the watch at its timeout: resume from where we are
            except asyncio.CancelledError:
                raise
            except Gone as err:
                self._restarted("gone", err)
                if not need_list:
                    need_list = True
                    continue  # the first relist after a compaction goes at once
                # Even a fresh list was refused: something is wrong, so back off as for any error.
            except (httpx.HTTPError, ApiError, ValueError, OSError) as err:
                disconnected = isinstance(err, (httpx.TransportError, LeanHTTPError))
                self._restarted("disconnect" if disconnected else "error", err)
            await asyncio.sleep(self.backoff.next())

    def _restarted(self, reason: str, err: Exception) -> None:
        self.restarts += 1
        self.last_error = f"{type(err).__name__}: {err}"
        log.info("watch restarting", extra={"kind": self.kind, "reason": reason, "error": self.last_error,
                                            "resource_version": self.resource_version})
        if self.observer is not None:
            self.observer.watch_restarted(self.kind, reason)

