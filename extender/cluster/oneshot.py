"""One look at a live cluster: every kind the live source watches, listed once into a fresh cache, no watch.

For the command-line tools (``explain``, ``simulate``) that answer about the cluster as it is now and then
exit. The lists are the live source's own (the same kinds, the same pod field selector, the same decoding
and the same handling of unreadable objects, through :meth:`Reflector.list_and_replace`), so that a
one-shot answer and the running service's agree on the same cluster. Nothing is ever written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from extender.cluster.cache import ClusterCache
from extender.cluster.live import POD_PARAMS, WATCHED_KINDS, resource_of
from extender.cluster.reflector import Reflector
from extender.kubeapi.client import ApiError, KubeClient
from extender.kubeapi.config import ClusterConfig, KubeConfigError

# Given the apiserver's /version answer, which kinds to list (the release to follow decides: see cluster.live).
KindsForVersion = Callable[[dict[str, Any]], Sequence[str]]


class ClusterReadError(RuntimeError):
    """The cluster could not be read; the message says what failed (unreachable, forbidden, missing pod)."""


async def list_into(client: KubeClient, cache: ClusterCache, kinds: Sequence[str] = WATCHED_KINDS) -> None:
    """List every kind once into the cache (all kinds at once, each page applied as it arrives), each from the
    API version the cache's release reads it at (DeviceTaintRules: v1beta2 before 1.37)."""
    reflectors = [Reflector(client, resource_of(kind, cache.release), cache,
                            params=POD_PARAMS if kind == "Pod" else None) for kind in kinds]

    async def listed(reflector: Reflector) -> None:
        try:
            await reflector.list_and_replace()
        except ApiError as err:
            raise ClusterReadError(f"listing {reflector.kind}: {err}") from err

    tasks = [asyncio.create_task(listed(r)) for r in reflectors]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        # One failure ends the read: stop the other lists before the client closes under them.
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _read(config: ClusterConfig, cache: ClusterCache, pod: tuple[str, str] | None,
                client: KubeClient | None, kinds_for_version: KindsForVersion | None) -> dict[str, Any] | None:
    if client is None:
        try:
            client = KubeClient(config)
        except OSError as err:  # unreadable CA or client certificate files (ssl.SSLError is an OSError)
            raise ClusterReadError(f"apiserver TLS settings: {err}") from err
    try:
        raw_pod = None
        if pod is not None:
            namespace, name = pod
            try:
                raw_pod = await client.get_pod(namespace, name)
            except ApiError as err:
                raise ClusterReadError(f"reading pod {namespace}/{name}: {err}") from err
            if raw_pod is None:
                raise ClusterReadError(f"pod {namespace}/{name} not found")
        kinds: Sequence[str] = WATCHED_KINDS
        if kinds_for_version is not None:
            try:
                version = await client.server_version()
            except ApiError as err:
                raise ClusterReadError(f"reading /version: {err}") from err
            kinds = kinds_for_version(version)
        await list_into(client, cache, kinds)
        return raw_pod
    except httpx.HTTPError as err:
        raise ClusterReadError(f"cannot reach {config.server}: {err or type(err).__name__}") from err
    except KubeConfigError as err:  # credentials are resolved at the first request (token files, exec plugins)
        raise ClusterReadError(str(err)) from err
    finally:
        await client.aclose()


def read_cluster(config: ClusterConfig, cache: ClusterCache, pod: tuple[str, str] | None = None, *,
                 client: KubeClient | None = None,
                 kinds_for_version: KindsForVersion | None = None) -> dict[str, Any] | None:
    """Fill ``cache`` from the apiserver once; with ``pod`` (namespace, name), also return that pod as stored.

    The pod is read first and in full (a Succeeded pod too, which the pod list leaves out). With
    ``kinds_for_version``, the apiserver's ``/version`` is read next and handed to it (the caller chooses the
    release to follow from it), and the kinds it returns are listed; otherwise every kind any release watches.
    Raises ClusterReadError with a one-line message on any failure.
    """
    return asyncio.run(_read(config, cache, pod, client, kinds_for_version))
