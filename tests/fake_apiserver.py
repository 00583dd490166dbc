"""An in-process fake apiserver for reflector tests: lists with pagination, watches from a resourceVersion
(long-polling for new events), bookmarks, compaction (410), dropped connections, 401s and bindings."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs

import httpx
import orjson

from extender.kubeapi.client import RESOURCES

PATH_KIND = {r.path: kind for kind, r in RESOURCES.items()}


class _Stream(httpx.AsyncByteStream):
    def __init__(self, chunks: AsyncIterator[bytes]) -> None:
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._chunks:
            yield chunk


class FakeApiserver:
    """State of the fake: objects per kind and an event log with global resourceVersions."""

    def __init__(self) -> None:
        self.version = 100
        self.objects: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in RESOURCES}
        self.log: list[tuple[int, str, str, dict[str, Any]]] = []  # (rv, kind, type, object)
        self.compacted_below = 0
        self.changed = asyncio.Event()
        self.drop_watches_after: int | None = None  # events per watch before the connection drops
        self.valid_token = "good"
        self.requests: list[str] = []
        self.bindings: list[tuple[str, str, str]] = []
        self.git_version = "v1.37.2"  # what GET /version reports
        self.version_failures = 0  # GET /version answers 503 this many times first
        self.not_served: set[str] = set()  # kinds whose collections answer 404 (an API this apiserver lacks)

    # ---- mutations ------------------------------------------------------------------------------
    def _key(self, obj: dict[str, Any]) -> str:
        meta = obj["metadata"]
        return f"{meta.get('namespace', '')}/{meta['name']}"

    def put(self, kind: str, obj: dict[str, Any]) -> None:
        obj = copy.deepcopy(obj)
        obj.pop("kind", None)
        self.version += 1
        obj["metadata"]["resourceVersion"] = str(self.version)
        key = self._key(obj)
        event = "MODIFIED" if key in self.objects[kind] else "ADDED"
        self.objects[kind][key] = obj
        self.log.append((self.version, kind, event, obj))
        self.changed.set()

    def delete(self, kind: str, obj: dict[str, Any]) -> None:
        key = self._key(obj)
        current = self.objects[kind].pop(key)
        self.version += 1
        current = copy.deepcopy(current)
        current["metadata"]["resourceVersion"] = str(self.version)
        self.log.append((self.version, kind, "DELETED", current))
        self.changed.set()

    def compact(self) -> None:
        """Forget history: any watch from an older version now gets 410."""
        self.compacted_below = self.version + 1

    # ---- HTTP -----------------------------------------------------------------------------------
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(f"{request.method} {request.url.path}?{request.url.query.decode()}")
        if request.headers.get("authorization") != f"Bearer {self.valid_token}":
            return httpx.Response(401, json={"kind": "Status", "reason": "Unauthorized", "message": "bad token"})
        path = request.url.path
        query = {k: v[0] for k, v in parse_qs(request.url.query.decode()).items()}
        if request.method == "POST" and path.endswith("/binding"):
            return self._bind(path, orjson.loads(request.content))
        if path == "/version":
            if self.version_failures > 0:
                self.version_failures -= 1
                return httpx.Response(503, json={"kind": "Status", "reason": "ServiceUnavailable", "message": "busy"})
            minor = self.git_version.split(".")[1]
            return httpx.Response(200, json={"major": "1", "minor": minor, "gitVersion": self.git_version})
        kind = PATH_KIND.get(path)
        if kind is None or kind in self.not_served:
            return httpx.Response(404, json={"kind": "Status", "reason": "NotFound", "message": path})
        if query.get("watch") == "true":
            return self._watch(kind, int(query["resourceVersion"]), query)
        return self._list(kind, query)

    def _selected(self, kind: str, obj: dict[str, Any], query: dict[str, str]) -> bool:
        selector = query.get("fieldSelector", "")
        if kind == "Pod" and "status.phase!=Succeeded" in selector:
            return (obj.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        return True

    def _list(self, kind: str, query: dict[str, str]) -> httpx.Response:
        items = [o for o in self.objects[kind].values() if self._selected(kind, o, query)]
        start = int(query.get("continue", "0"))
        limit = int(query.get("limit", "0")) or len(items) or 1
        page = items[start:start + limit]
        meta: dict[str, Any] = {"resourceVersion": str(self.version)}
        if start + limit < len(items):
            meta["continue"] = str(start + limit)
        return httpx.Response(200, json={"kind": f"{kind}List", "metadata": meta, "items": page})

    def _watch(self, kind: str, since: int, query: dict[str, str]) -> httpx.Response:
        if since < self.compacted_below - 1:
            return httpx.Response(410, json={"kind": "Status", "reason": "Expired", "code": 410,
                                             "message": "too old resource version"})

        async def events() -> AsyncIterator[bytes]:
            sent = 0
            cursor = since
            while True:
                pending = [e for e in self.log if e[0] > cursor and e[1] == kind]
                if not pending:
                    self.changed.clear()
                    try:
                        await asyncio.wait_for(self.changed.wait(), 0.2)
                    except TimeoutError:
                        # A bookmark, then the "server timeout": the client resumes from it.
                        bookmark = {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": str(self.version)}}}
                        yield orjson.dumps(bookmark) + b"\n"
                        return
                    continue
                for rv, _, event_type, obj in pending:
                    cursor = rv
                    if not self._selected(kind, obj, query):
                        event_type = "DELETED"
                    yield orjson.dumps({"type": event_type, "object": obj}) + b"\n"
                    sent += 1
                    if self.drop_watches_after is not None and sent >= self.drop_watches_after:
                        raise httpx.ReadError("connection reset by fake apiserver")

        return httpx.Response(200, stream=_Stream(events()))

    def _bind(self, path: str, body: dict[str, Any]) -> httpx.Response:
        parts = path.split("/")
        namespace, name = parts[4], parts[6]
        pod = self.objects["Pod"].get(f"{namespace}/{name}")
        if pod is None:
            return httpx.Response(404, json={"kind": "Status", "reason": "NotFound",
                                             "message": f'pods "{name}" not found'})
        if pod["spec"].get("nodeName"):
            return httpx.Response(409, json={"kind": "Status", "reason": "Conflict",
                                             "message": f"pod {name} is already assigned to node "
                                                        f"\"{pod['spec']['nodeName']}\""})
        node = body["target"]["name"]
        self.bindings.append((namespace, name, node))
        bound = copy.deepcopy(pod)
        bound["spec"]["nodeName"] = node
        self.put("Pod", bound)
        return httpx.Response(201, json={"kind": "Status", "status": "Success"})
