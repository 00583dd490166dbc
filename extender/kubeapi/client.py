"""A small async apiserver client: lists on httpx, watches and Bindings on a lean client of our own.

Objects are returned as raw dicts decoded with orjson; nothing is converted into typed models.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import msgspec
import orjson

from extender.kubeapi.config import ClusterConfig
from extender.kubeapi.lean import LeanClient, LineSplitter, uses_proxy
from extender.kubeapi.liststream import ListSplitter, Part, join
from extender.kubeapi.podcodec import decode_pod_event, decode_pod_list, list_metadata

USER_AGENT = "kube-scheduler-extender/0.1"


Decoder = Callable[[bytes], dict[str, Any]]


@dataclass(frozen=True)
class Resource:
    """Where a kind lives in the API, and how its lists and watch events are decoded."""

    kind: str
    path: str  # collection path across namespaces, e.g. /api/v1/pods
    namespaced: bool
    decode_list: Decoder = orjson.loads
    decode_event: Decoder = orjson.loads
    # Its lists may be cut apart as they stream in (extender.kubeapi.liststream): no array inside the object
    # has elements that start with "metadata", so such a cut is only ever between two items.
    split_items: bool = False


RESOURCES: dict[str, Resource] = {r.kind: r for r in (
    Resource("Node", "/api/v1/nodes", False),
    # Pods are the bulk of a sync: decoded straight into the fields the cache keeps.
    Resource("Pod", "/api/v1/pods", True, decode_pod_list, decode_pod_event, split_items=True),
    Resource("Service", "/api/v1/services", True),
    Resource("ReplicationController", "/api/v1/replicationcontrollers", True),
    Resource("ReplicaSet", "/apis/apps/v1/replicasets", True),
    Resource("StatefulSet", "/apis/apps/v1/statefulsets", True),
    Resource("PersistentVolume", "/api/v1/persistentvolumes", False),
    Resource("PersistentVolumeClaim", "/api/v1/persistentvolumeclaims", True),
    Resource("StorageClass", "/apis/storage.k8s.io/v1/storageclasses", False),
    Resource("CSINode", "/apis/storage.k8s.io/v1/csinodes", False),
    Resource("Namespace", "/api/v1/namespaces", False),
    Resource("CSIDriver", "/apis/storage.k8s.io/v1/csidrivers", False),
    Resource("CSIStorageCapacity", "/apis/storage.k8s.io/v1/csistoragecapacities", True),
    Resource("VolumeAttachment", "/apis/storage.k8s.io/v1/volumeattachments", False),
    Resource("ResourceSlice", "/apis/resource.k8s.io/v1/resourceslices", False),
    Resource("ResourceClaim", "/apis/resource.k8s.io/v1/resourceclaims", True),
    Resource("DeviceClass", "/apis/resource.k8s.io/v1/deviceclasses", False),
    # resource.k8s.io/v1 from Kubernetes 1.37 (DRADeviceTaintRules GA); 1.36 serves it as v1beta2 behind the gate.
    Resource("DeviceTaintRule", "/apis/resource.k8s.io/v1/devicetaintrules", False),
    Resource("PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets", True),
    Resource("PriorityClass", "/apis/scheduling.k8s.io/v1/priorityclasses", False),
)}

#: Where a kind lives in an older API version, for releases that serve it only there (see cluster.live).
BETA_RESOURCES: dict[str, Resource] = {
    "DeviceTaintRule": Resource("DeviceTaintRule", "/apis/resource.k8s.io/v1beta2/devicetaintrules", False),
}


class ApiError(Exception):
    """A non-success answer from the apiserver, with its HTTP status and Status reason."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


class Gone(ApiError):
    """410 Gone: the resourceVersion is too old (compacted); the caller must relist."""


class _TokenAuth(httpx.Auth):
    """Bearer token from a TokenSource; on a 401 the token is refreshed and the request retried once."""

    def __init__(self, config: ClusterConfig) -> None:
        self._tokens = config.tokens

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self._tokens.token()
        if token:
            request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code == 401 and token:
            self._tokens.refresh()
            fresh = self._tokens.token()
            if fresh and fresh != token:
                request.headers["Authorization"] = f"Bearer {fresh}"
                yield request


def _error(response: httpx.Response, body: bytes) -> ApiError:
    return _status_error(response.status_code, response.reason_phrase, body)


def _status_error(code: int, reason: str, body: bytes) -> ApiError:
    message = body.decode(errors="replace")[:500]
    try:
        status = orjson.loads(body)
        if isinstance(status, Mapping):
            reason, message = str(status.get("reason") or reason), str(status.get("message") or message)
    except orjson.JSONDecodeError:
        pass
    cls = Gone if code == 410 else ApiError
    return cls(code, reason, message)


async def _lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The non-empty lines of a stream of bytes, as bytes: the decoder takes bytes, and httpx's text lines
    would decode every event to a str and back."""
    splitter = LineSplitter()
    async for chunk in chunks:
        for line in splitter.feed(chunk):
            yield line
    if (last := splitter.end()) is not None:
        yield last


def _event(resource: Resource, line: bytes) -> dict[str, Any]:
    """A watch event from its line of the body; an ERROR event raises (Gone for 410)."""
    event = resource.decode_event(line)
    if not isinstance(event, dict):  # (a ValueError, as for a line that is not JSON: the watch restarts)
        raise ValueError(f"a watch event that is not a JSON object: {line[:80]!r}")
    if event.get("type") == "ERROR":
        status = event.get("object")
        status = status if isinstance(status, dict) else {}
        code = status.get("code")
        code = code if type(code) is int else 500
        cls = Gone if code == 410 else ApiError
        raise cls(code, str(status.get("reason") or ""), str(status.get("message") or ""))
    obj = event.get("object")
    if isinstance(obj, dict):
        obj["kind"] = resource.kind
    return event


# Applies a watch event at once if it can (True), on the event loop, in the order events arrive (see KubeClient.watch).
ApplyNow = Callable[[dict[str, Any]], bool]


class KubeClient:
    """One connection pool to one apiserver."""

    def __init__(self, config: ClusterConfig, *, timeout: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.config = config
        self._http = httpx.AsyncClient(
            base_url=config.server, auth=_TokenAuth(config), verify=config.ssl_context(), transport=transport,
            timeout=httpx.Timeout(timeout, read=None), headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
        )
        self._timeout = timeout
        # Watches and Bindings, a pod's traffic, go through the lean client unless a test transport or a proxy
        # is in the way (see lean.py).
        self._lean = None if transport is not None or uses_proxy(config.server) else LeanClient(
            config, timeout=timeout, user_agent=USER_AGENT)
        # How much of a streamed list is decoded at once (extender.kubeapi.liststream): about 1000 pods.
        self.list_part_bytes = 4 << 20

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()
        if self._lean is not None:
            await self._lean.aclose()

    async def get(self, path: str, params: Mapping[str, Any] | None = None,
                  decode: Decoder = orjson.loads) -> dict[str, Any]:
        """GET a JSON object."""
        return decode(await self._get_body(path, params))

    async def _get_body(self, path: str, params: Mapping[str, Any] | None) -> bytes:
        # Streamed into a body of our own rather than kept as the response's content: httpx's response and
        # its stream refer to each other, so what the response holds is only freed by a collection, and a
        # page of pods weighs megabytes (see extender.gc_tuning). This body goes as soon as it is decoded.
        async with self._http.stream("GET", path, params=params, timeout=self._timeout) as response:
            body = b"".join([chunk async for chunk in response.aiter_bytes()])
        if response.status_code != 200:
            raise _error(response, body)
        return body

    async def list_pages(self, resource: Resource, *, params: Mapping[str, Any] | None = None,
                         page_size: int = 500, from_cache: bool = False,
                         ) -> AsyncIterator[tuple[list[dict[str, Any]], str, bool]]:
        """A kind's objects page by page: (items with their ``kind`` set, resourceVersion, restarted).

        Consumers handle one page at a time, so a list of 150k pods never sits in memory at once.

        ``from_cache`` asks for what the apiserver's watch cache holds (resourceVersion=0), as client-go's
        reflector does for its first list: the apiserver answers that from memory, in one response, at
        about half the CPU of a paginated consistent list. A kind whose lists can be cut apart streams it
        in parts (see extender.kubeapi.liststream), each decoded in a worker thread while the next arrives.

        Otherwise pages follow each other (each names the next), so the apiserver would wait while we
        decode: as soon as a page has arrived, its continue token is read (a scan of the page's list
        metadata alone), the next page is requested, and the page is decoded in a worker thread while the
        event loop receives the next one. If a continue token expires mid-way (410), the list restarts from
        the beginning without pagination, as client-go does, and that page comes with ``restarted`` True:
        drop what earlier pages gave.
        """
        if from_cache and resource.split_items:
            async for part in self._list_streamed(resource, {**(params or {}), "resourceVersion": "0"}):
                yield part
            return
        query: dict[str, Any] = {**(params or {}), "limit": page_size}
        if from_cache:
            query["resourceVersion"] = "0"
        restarted = False
        pending: asyncio.Task[bytes] | None = asyncio.create_task(self._get_body(resource.path, dict(query)))
        try:
            while pending is not None:
                try:
                    body = await pending
                except Gone:
                    if "continue" not in query:
                        raise
                    query = {k: v for k, v in query.items() if k not in ("continue", "limit")}
                    restarted = True
                    pending = asyncio.create_task(self._get_body(resource.path, dict(query)))
                    continue
                version, token = list_metadata(body)
                if token:
                    query["continue"] = token
                    query.pop("resourceVersion", None)  # a continue token carries its own
                    pending = asyncio.create_task(self._get_body(resource.path, dict(query)))
                else:
                    pending = None
                page = await asyncio.to_thread(resource.decode_list, body)
                del body
                yield self._items(resource, page), version, restarted
                restarted = False
        finally:
            if pending is not None:
                pending.cancel()

    @staticmethod
    def _items(resource: Resource, page: Mapping[str, Any]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = page.get("items") or []
        for item in items:
            item["kind"] = resource.kind
        return items

    async def _list_streamed(self, resource: Resource, query: dict[str, Any],
                             ) -> AsyncIterator[tuple[list[dict[str, Any]], str, bool]]:
        """One unpaginated list, decoded part by part while the rest of the response arrives."""
        received: asyncio.Queue[tuple[str, Any]] = asyncio.Queue(maxsize=4)  # a few parts of ~4 MB ahead

        async def receive() -> None:
            splitter = ListSplitter(self.list_part_bytes)
            try:
                async with self._http.stream("GET", resource.path, params=query, timeout=self._timeout) as response:
                    if response.status_code != 200:
                        raise _error(response, await response.aread())
                    async for chunk in response.aiter_bytes():
                        head = splitter.head
                        parts = splitter.feed(chunk)
                        if head is None and splitter.head is not None:
                            await received.put(("head", splitter.head))
                        for part in parts:
                            await received.put(("part", part))
                whole, last = splitter.finish()
                await received.put(("whole", whole) if whole is not None else ("part", last))
                await received.put(("end", None))
            except Exception as err:  # handed over to the consumer, which raises it
                await received.put(("error", err))

        producer = asyncio.create_task(receive())
        version = ""
        carry: Part | None = None
        try:
            while True:
                what, value = await received.get()
                if what == "error":
                    raise value
                if what == "end":
                    return
                if what == "head":
                    version, _ = list_metadata(value)
                    continue
                if what == "whole":  # no items array found: the body is decoded as it is
                    version, _ = list_metadata(value)
                    yield self._items(resource, await asyncio.to_thread(resource.decode_list, value)), version, False
                    continue
                part = value if carry is None else join(carry, value)
                try:
                    page = await asyncio.to_thread(resource.decode_list, part.document())
                except (ValueError, msgspec.DecodeError):
                    if part.last:
                        raise
                    carry = part  # cut inside an item: decode it together with the next part
                    continue
                carry = None
                yield self._items(resource, page), version, False
        finally:
            producer.cancel()

    async def list(self, resource: Resource, *, params: Mapping[str, Any] | None = None,
                   page_size: int = 500) -> tuple[list[dict[str, Any]], str]:
        """All objects of a kind (paginated) and the list's resourceVersion. Items get their ``kind``."""
        items: list[dict[str, Any]] = []
        version = ""
        async for page, page_version, restarted in self.list_pages(resource, params=params, page_size=page_size):
            version = page_version
            if restarted:
                items = []
            items.extend(page)
        return items, version

    async def watch(self, resource: Resource, resource_version: str, *, timeout_seconds: int,
                    params: Mapping[str, Any] | None = None, apply_now: ApplyNow | None = None,
                    ) -> AsyncIterator[dict[str, Any]]:
        """Watch events ({"type", "object"}) from a resourceVersion, with bookmarks, until the server ends it.

        ``apply_now`` is offered each event as it arrives, in order: an event it applied (True) is not yielded.
        On the lean client it is called from the connection's callback, so an event applied there costs no task
        wake-up; once it declines one, that event and those after it are yielded in order, and it is offered
        events again once the consumer has them all. Raises Gone when the version is too old (at connect or as
        an in-stream ERROR event); events before an ERROR event are applied or yielded first.
        """
        query = {**(params or {}), "watch": "true", "resourceVersion": resource_version,
                 "allowWatchBookmarks": "true", "timeoutSeconds": timeout_seconds}

        def take(line: bytes) -> dict[str, Any] | None:
            event = _event(resource, line)
            return None if apply_now is not None and apply_now(event) else event

        if self._lean is not None:
            # One deadline for the whole watch: the server ends it at timeoutSeconds.
            async with self._lean.open_stream(f"{resource.path}?{urlencode(query)}",
                                              seconds=timeout_seconds + 30) as stream:
                if stream.status != 200:
                    raise _status_error(stream.status, stream.reason, await stream.body())
                async for event in stream.lines(take):
                    yield event
            return
        async with self._http.stream("GET", resource.path, params=query,
                                     timeout=httpx.Timeout(self._timeout, read=timeout_seconds + 30)) as response:
            if response.status_code != 200:
                raise _error(response, await response.aread())
            async for line in _lines(response.aiter_bytes()):
                if (declined := take(line)) is not None:
                    yield declined

    async def create_binding(self, namespace: str, name: str, uid: str, node: str) -> None:
        """Bind a pod to a node through the pods/binding subresource (as kube-scheduler's DefaultBinder)."""
        meta: dict[str, Any] = {"name": name, "namespace": namespace}
        if uid:
            meta["uid"] = uid
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": meta, "target": {"kind": "Node", "name": node}}
        # Quoted: the names come from a request, and must not reshape the request line.
        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/pods/{quote(name, safe='')}/binding"
        if self._lean is not None:
            status, reason, answer = await self._lean.post(path, orjson.dumps(body))
            if status not in (200, 201):
                raise _status_error(status, reason, answer)
            return
        response = await self._http.post(path,
                                         content=orjson.dumps(body), headers={"Content-Type": "application/json"},
                                         timeout=self._timeout)
        if response.status_code not in (200, 201):
            raise _error(response, response.content)

    async def server_version(self) -> dict[str, Any]:
        """The apiserver's ``/version`` answer (``major``, ``minor``, ``gitVersion``, ...)."""
        return await self.get("/version")

    async def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        """A pod, or None if it does not exist."""
        try:
            pod = await self.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
        except ApiError as err:
            if err.status == 404:
                return None
            raise
        pod["kind"] = "Pod"
        return pod
