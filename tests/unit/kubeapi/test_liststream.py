"""A list streamed in parts decodes to exactly what decoding the whole response gives."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import orjson
import pytest

from bench.cluster import make_pod
from extender.cluster.records import SlimPod, slim_pod
from extender.kubeapi.client import RESOURCES, ApiError, KubeClient, Resource
from extender.kubeapi.config import ClusterConfig, StaticToken
from extender.kubeapi.liststream import ListSplitter, Part, join
from extender.kubeapi.podcodec import decode_pod_list, list_metadata


def apiserver_pods(count: int) -> list[dict[str, Any]]:
    """Pods shaped as the apiserver writes list items: metadata first, no kind."""
    rng = random.Random(5)
    pods = []
    for i in range(count):
        pod = make_pod(f"p{i}", "ns", "web", rng, f"node-{i % 3}", affinity="anti" if i % 4 == 0 else "",
                       spread=i % 3 == 0)
        pod["spec"]["volumes"] = [{"name": "token", "projected": {"sources": [{"serviceAccountToken": {}}]}},
                                  {"name": "data", "persistentVolumeClaim": {"claimName": f"c{i}"}}]
        pods.append({"metadata": pod["metadata"], "spec": pod["spec"], "status": pod["status"]})
    return pods


def body_of(items: list[dict[str, Any]], kind: str = "PodList") -> bytes:
    return orjson.dumps({"kind": kind, "apiVersion": "v1", "metadata": {"resourceVersion": "77"}, "items": items})


def split(body: bytes, part_bytes: int, chunk: int) -> tuple[bytes | None, list[Part], bytes | None]:
    splitter = ListSplitter(part_bytes)
    parts: list[Part] = []
    for at in range(0, len(body), chunk):
        parts += splitter.feed(body[at:at + chunk])
    whole, last = splitter.finish()
    if last is not None:
        parts.append(last)
    return splitter.head, parts, whole


@pytest.mark.parametrize("part_bytes", [1, 700, 5000, 1 << 22])
@pytest.mark.parametrize("chunk", [1, 13, 4096, 1 << 22])
def test_parts_hold_every_item_once_in_order(part_bytes: int, chunk: int) -> None:
    pods = apiserver_pods(25)
    body = body_of(pods)
    head, parts, whole = split(body, part_bytes, chunk)
    assert whole is None and head is not None
    assert list_metadata(head) == ("77", "")
    items = [item for part in parts for item in decode_pod_list(part.document())["items"]]
    assert items == decode_pod_list(body)["items"] == [slim_pod(p) for p in pods]
    assert all(type(item) is SlimPod for item in items)
    assert parts[-1].last and not any(p.last for p in parts[:-1])
    if part_bytes == 1 and chunk >= 4096:
        assert len(parts) > 1  # cut between items, not only at the end


def test_empty_list_and_a_body_without_items() -> None:
    head, parts, whole = split(body_of([]), 1, 5)
    assert head is not None and [decode_pod_list(p.document())["items"] for p in parts] == [[]]
    status = orjson.dumps({"kind": "Status", "code": 500, "message": "boom"})
    head, parts, whole = split(status, 1, 5)
    assert head is None and parts == [] and whole == status


def test_a_cut_inside_an_item_is_joined_with_the_next_part() -> None:
    # Arrays of objects that start with "metadata" inside an item (a StatefulSet's volumeClaimTemplates)
    # look like item boundaries; the part they end does not decode, and joined with the next one it does.
    sets = [{"metadata": {"name": f"s{i}"}, "spec": {"volumeClaimTemplates": [
        {"metadata": {"name": f"a{i}"}, "spec": {}}, {"metadata": {"name": f"b{i}"}, "spec": {}}]}} for i in range(4)]
    body = body_of(sets, "StatefulSetList")
    _, parts, _ = split(body, 1, 1 << 20)
    decoded: list[Any] = []
    carry: Part | None = None
    failures = 0
    for part in parts:
        part = part if carry is None else join(carry, part)
        try:
            decoded += orjson.loads(part.document())["items"]
        except orjson.JSONDecodeError:
            failures, carry = failures + 1, part
            continue
        carry = None
    assert failures > 0 and carry is None and decoded == sets


class StreamingApiserver:
    """Answers every GET with one list body, in small chunks, and records the queries."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.queries: list[str] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.queries.append(request.url.query.decode())

        async def chunks() -> Any:
            for at in range(0, len(self.body), 333):
                yield self.body[at:at + 333]
        return httpx.Response(200, content=chunks())


def listed(resource: Resource, body: bytes, part_bytes: int) -> tuple[list[list[dict[str, Any]]], list[str]]:
    server = StreamingApiserver(body)

    async def main() -> list[list[dict[str, Any]]]:
        client = KubeClient(ClusterConfig("http://fake", tokens=StaticToken("t")),
                            transport=httpx.MockTransport(server.handle))
        client.list_part_bytes = part_bytes
        pages = [items async for items, version, _ in client.list_pages(resource, from_cache=True)
                 if version == "77"]
        await client.aclose()
        return pages
    return asyncio.run(main()), server.queries


def test_client_streams_the_first_pod_list_from_the_watch_cache() -> None:
    pods = apiserver_pods(40)
    pages, queries = listed(RESOURCES["Pod"], body_of(pods), 2000)
    assert len(pages) > 3
    assert [item for page in pages for item in page] == [{**slim_pod(p), "kind": "Pod"} for p in pods]
    assert queries == ["resourceVersion=0"]


def test_client_recovers_from_cuts_inside_items() -> None:
    sets = [{"metadata": {"name": f"s{i}"}, "spec": {"volumeClaimTemplates": [
        {"metadata": {"name": f"a{i}"}}, {"metadata": {"name": f"b{i}"}}]}} for i in range(6)]
    resource = Resource("StatefulSet", "/apis/apps/v1/statefulsets", True, split_items=True)
    pages, _ = listed(resource, body_of(sets, "StatefulSetList"), 1)
    assert [item for page in pages for item in page] == [{**s, "kind": "StatefulSet"} for s in sets]


def test_an_error_answer_to_a_streamed_list_is_raised_with_its_status() -> None:
    async def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(403, json={"kind": "Status", "reason": "Forbidden", "message": "pods is forbidden"})

    async def main() -> None:
        client = KubeClient(ClusterConfig("http://fake", tokens=StaticToken("t")),
                            transport=httpx.MockTransport(refuse))
        with pytest.raises(ApiError) as caught:
            async for _ in client.list_pages(RESOURCES["Pod"], from_cache=True):
                pass
        await client.aclose()
        assert caught.value.status == 403 and caught.value.message == "pods is forbidden"
    asyncio.run(main())


def test_a_watch_stream_cut_anywhere_gives_every_event_once_in_order() -> None:
    """The watch reads the stream as bytes and splits it into lines itself: events cut across reads (or
    several in one read, with blank keep-alive lines between) come out whole, once each, in order."""
    pods = apiserver_pods(12)
    events = [{"type": "ADDED" if i % 2 else "MODIFIED", "object": pod} for i, pod in enumerate(pods)]
    stream = b"".join(orjson.dumps(event) + (b"\n\n" if i % 3 == 0 else b"\n") for i, event in enumerate(events))
    rng = random.Random(9)

    for _ in range(20):
        cuts = sorted(rng.sample(range(1, len(stream)), rng.randint(1, 60)))
        pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]

        async def answer(request: httpx.Request, pieces: list[bytes] = pieces) -> httpx.Response:
            async def body() -> Any:
                for piece in pieces:
                    yield piece
            return httpx.Response(200, content=body())

        async def main() -> list[dict[str, Any]]:
            client = KubeClient(ClusterConfig("http://fake", tokens=StaticToken("t")),
                                transport=httpx.MockTransport(answer))
            got = [event async for event in client.watch(RESOURCES["Pod"], "1", timeout_seconds=5)]
            await client.aclose()
            return got

        got = asyncio.run(main())
        assert [e["type"] for e in got] == [e["type"] for e in events]
        assert [e["object"]["metadata"]["name"] for e in got] == [p["metadata"]["name"] for p in pods]
        assert got == [{"type": e["type"], "object": {**slim_pod(e["object"]), "kind": "Pod"}} for e in events]
