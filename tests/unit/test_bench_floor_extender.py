"""bench/floor_extender.py: the Python floor answers the verbs as kube-scheduler reads them, posts each pod's
Binding and reports the apiserver's refusal, and is ready only once its Pod watch is open."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from bench.floor_extender import serve
from bench.verb_client import VerbClient
from extender.kubeapi.config import ClusterConfig


class StandIn:
    """A plain-HTTP apiserver on its own thread: the pod list, a watch held open, Bindings recorded."""

    def __init__(self) -> None:
        self.bindings: list[tuple[str, dict[str, Any]]] = []
        self.watching = threading.Event()
        self.list_answered = threading.Event()  # the pod list waits for it (the test's hold on the floor's start)
        self.writers: list[asyncio.StreamWriter] = []
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(started,), daemon=True)
        self.thread.start()
        started.wait(10)

    def _run(self, started: threading.Event) -> None:
        async def main() -> None:
            server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
            self.port = server.sockets[0].getsockname()[1]
            started.set()
            await server.serve_forever()

        self.loop.run_until_complete(main())

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            line, *headers = head.decode("latin-1").split("\r\n")
            method, target, _ = line.split(" ")
            length = next((int(h.split(":")[1]) for h in headers if h.lower().startswith("content-length:")), 0)
            body = await reader.readexactly(length)
            if "watch=true" in target:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
                self.watching.set()
                continue  # held open: no event is ever sent
            if method == "GET":
                await asyncio.to_thread(self.list_answered.wait, 20)
                status = 200
                answer = orjson.dumps({"kind": "PodList", "metadata": {"resourceVersion": "7"}, "items": []})
            elif target.endswith("/binding"):
                self.bindings.append((target, orjson.loads(body)))
                name = target.split("/")[-2]
                status = 201 if name != "gone" else 404
                answer = orjson.dumps({"kind": "Status", "code": status,
                                       "message": "" if status == 201 else f'pods "{name}" not found'})
            else:
                answer, status = b"{}", 404
            writer.write(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                         % (status, len(answer), answer))

    def stop(self) -> None:
        """Closes every connection (the floor's watch ends, and with it the floor)."""
        def close() -> None:
            for writer in self.writers:
                writer.close()

        self.loop.call_soon_threadsafe(close)


@pytest.fixture
def floor() -> Iterator[tuple[str, StandIn]]:
    apiserver = StandIn()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = ClusterConfig(server=f"http://127.0.0.1:{apiserver.port}")
    served = threading.Thread(target=lambda: asyncio.run(serve(port, config)), daemon=True)
    served.start()
    url = f"http://127.0.0.1:{port}"

    def readiness() -> int:
        deadline = time.monotonic() + 20
        while True:
            try:
                return httpx.get(f"{url}/readyz").status_code
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the floor extender never listened"
                time.sleep(0.05)

    assert readiness() == 503  # listening, its watch not open: the pod list is held
    apiserver.list_answered.set()
    deadline = time.monotonic() + 20
    while readiness() != 200:
        assert time.monotonic() < deadline, "the floor extender never became ready"
        time.sleep(0.05)
    assert apiserver.watching.wait(5)  # ready once the watch is requested (the stand-in reads it meanwhile)
    yield url, apiserver
    apiserver.stop()
    served.join(10)
    assert not served.is_alive()  # the floor ends with its watch


def test_the_verbs_pass_every_node_score_zero_and_bind_through_the_apiserver(floor: tuple[str, StandIn]) -> None:
    url, apiserver = floor
    pod = {"metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1"}, "spec": {"containers": []}}
    names = ["n1", "n2", "n3"]
    with VerbClient.for_url(url) as client:
        filtered = orjson.loads(client.post("/filter", orjson.dumps({"Pod": pod, "NodeNames": names})))
        assert filtered == {"Nodes": None, "NodeNames": names, "FailedNodes": {}, "FailedAndUnresolvableNodes": {},
                            "Error": ""}
        scores = orjson.loads(client.post("/prioritize", orjson.dumps({"Pod": pod, "NodeNames": names})))
        assert scores == [{"Host": name, "Score": 0} for name in names]
        bound = orjson.loads(client.post("/bind", orjson.dumps(
            {"PodName": "web-1", "PodNamespace": "shop", "PodUID": "u-1", "Node": "n2"})))
        assert bound == {"Error": ""}
        refused = orjson.loads(client.post("/bind", orjson.dumps(
            {"PodName": "gone", "PodNamespace": "shop", "PodUID": "u-2", "Node": "n1"})))
        assert refused["Error"].startswith("binding: 404") and 'pods \\"gone\\" not found' in refused["Error"]
    assert apiserver.bindings[0] == ("/api/v1/namespaces/shop/pods/web-1/binding", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web-1", "namespace": "shop", "uid": "u-1"},
        "target": {"kind": "Node", "name": "n2"}})
    assert len(apiserver.bindings) == 2
    assert httpx.get(f"{url}/metrics").text == ""
