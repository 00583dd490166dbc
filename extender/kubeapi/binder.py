"""Binding pods through the apiserver (the extender's bind verb against a live cluster)."""

from __future__ import annotations

from typing import Any

import httpx

from extender.kubeapi.client import ApiError, KubeClient
from extender.kubeapi.lean import LeanHTTPError


class ApiBinder:
    """Creates Bindings with the pods/binding subresource; errors carry the apiserver's message."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """Bind, raising RuntimeError with a message kube-scheduler can show."""
        try:
            await self.client.create_binding(namespace, name, uid, node)
        except ApiError as err:
            raise RuntimeError(f"binding {namespace}/{name} to {node}: {err.message or err.reason}") from err
        except (httpx.HTTPError, LeanHTTPError) as err:
            raise RuntimeError(f"binding {namespace}/{name} to {node}: apiserver unreachable: {err}") from err

    async def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The pod from the apiserver (for a bind of a pod the cache has not seen yet)."""
        try:
            return await self.client.get_pod(namespace, name)
        except (ApiError, httpx.HTTPError):
            return None
