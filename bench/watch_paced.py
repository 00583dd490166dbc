"""CPU per Pod watch event at the rhythm of kube-scheduler's loop: the service's watch path (issue 22).

    python -m bench.watch_paced                         # this checkout and the floor, three rounds
    python -m bench.watch_paced --before /tmp/before    # and another checkout, interleaved round by round
    python -m bench.watch_paced --events 4000 --pace-ms 2.5 --rounds 5

In the loop every scheduled pod comes back on the Pod watch one event at a time (its creation, then its
binding), a few milliseconds apart, to a process that is idle in between: each event wakes the process and
runs its code with cold caches, which costs several times what the same event costs in a burst
(bench.watch_cpu, whose pods are created eight at a time against a real kube-apiserver). This times that
rhythm alone. A stand-in apiserver (this script with ``--serve``: TLS, an empty PodList for the list, then a
chunked watch whose events are written one by one, ``--pace-ms`` apart) feeds:

- each checkout's reflector as the service runs it: ``extender.cluster.reflector.Reflector`` for Pods over the
  lean client, cache writes through an engine thread, uvloop, the collector's thresholds as after a load
  (extender.gc_tuning); the CPU time of its process (user + system) from the first event applied to the last,
  per event;
- ``floor``: an ``asyncio.Protocol`` on the same TLS connection that only counts the events in the bytes (as
  bench/watch_floor.py does against a real apiserver): the least a Python process spends being woken for them.

The events are the bench's plain pod as the apiserver sends it (defaults, managed fields), pending (ADDED),
then bound (MODIFIED: spec.nodeName, the PodScheduled condition, the node's zone and region labels as
PodTopologyLabelsAdmission copies them from 1.35), one pod after another; each side is a fresh process, the
sides alternate within each round and the order alternates between rounds. Read the differences, not the times.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import runpy
import ssl
import sys
from pathlib import Path
from typing import Any

_LIST = b'{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"100"},"items":[]}'
_WATCH_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"


# ------------------------------------------------------------------------------------------- the stand-in


def serve(inputs: Path, port: int) -> None:
    """The stand-in apiserver on 127.0.0.1:``port`` (run with ``--serve``): the list, then the paced watch."""
    params = json.loads((inputs / "params.json").read_text())
    lines = (inputs / "events.jsonl").read_bytes().splitlines(keepends=True)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        while b"watch=true" not in head.split(b"\r\n", 1)[0]:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                         % (len(_LIST), _LIST))
            head = await reader.readuntil(b"\r\n\r\n")
        writer.write(_WATCH_HEAD)
        await asyncio.sleep(0.5)
        for line in lines:
            writer.write(b"%x\r\n%s\r\n" % (len(line), line))
            await asyncio.sleep(params["pace_ms"] / 1000)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        await reader.read()  # until the client goes

    _standin()["serve_tls"](inputs, port, handle)


# ------------------------------------------------------------------------------------------- the sides


def worker(inputs: Path) -> dict[str, Any]:
    """One side in this process (the checkout first on the path): the stand-in started, its watch timed."""
    async def run(params: dict[str, Any], port: int, cpu_seconds: Any) -> tuple[int, float]:
        timed = _floor if params["side"] == "floor" else _reflector
        return await timed(inputs, port, params["events"], cpu_seconds)

    figures: dict[str, Any] = _standin()["side"](__file__, inputs, "event", run)
    return figures


def _standin() -> dict[str, Any]:
    """bench/standin.py's names, run by its path (the worker's interpreter may have no ``bench`` on its path)."""
    return runpy.run_path(str(Path(__file__).with_name("standin.py")))


async def _reflector(inputs: Path, port: int, expected: int, cpu_seconds: Any) -> tuple[int, float]:
    """The service's Pod reflector on the stand-in: (events timed, CPU seconds from the first to the last)."""
    import inspect

    from extender.cluster.cache import ClusterCache
    from extender.cluster.engine_thread import EngineThread
    from extender.cluster.live import POD_PARAMS, resource_of
    from extender.cluster.reflector import Reflector
    from extender.gc_tuning import settle_after_load
    from extender.kubeapi.client import KubeClient
    from extender.kubeapi.config import ClusterConfig

    settle_after_load()
    client = KubeClient(ClusterConfig(server=f"https://127.0.0.1:{port}", ca_file=str(inputs / "ca.crt")))
    cache = ClusterCache()
    engine = EngineThread()
    engine.start()
    finished: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    applied = [0, 0.0]

    class Counter:
        def watch_restarted(self, kind: str, reason: str) -> None:
            if not finished.done():
                finished.set_exception(RuntimeError(f"the watch restarted: {reason}"))

        def event_applied(self, kind: str, event_type: str) -> None:
            applied[0] += 1
            if applied[0] == 1:
                applied[1] = cpu_seconds()
            if applied[0] == expected and not finished.done():
                finished.set_result(cpu_seconds())

    # A checkout from before 2026-11-27 has no write_now: its events all went through write.
    extra = {"write_now": engine.write_now} if "write_now" in inspect.signature(Reflector).parameters else {}
    reflector = Reflector(client, resource_of("Pod"), cache, params=POD_PARAMS, write=engine.write,
                          observer=Counter(), **extra)
    task = asyncio.create_task(reflector.run())
    try:
        end = await asyncio.wait_for(finished, 600)
    finally:
        task.cancel()
    pods = cache.counts()
    if pods["pending_pods"] + pods["assigned_pods"] != expected // 2:
        raise RuntimeError(f"the cache holds {pods}, not {expected // 2} pods")
    await client.aclose()
    engine.stop()
    return expected - 1, end - applied[1]


async def _floor(inputs: Path, port: int, expected: int, cpu_seconds: Any) -> tuple[int, float]:
    """Only counting the events on the same TLS connection, until the watch's last chunk: (events timed, CPU
    seconds from the first to the end)."""
    loop = asyncio.get_running_loop()
    finished: asyncio.Future[float] = loop.create_future()
    seen = [0, 0.0]

    class Counting(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            transport.write(b"GET /api/v1/pods?watch=true HTTP/1.1\r\nHost: apiserver\r\n\r\n")  # type: ignore[attr-defined]

        tail = b""

        def data_received(self, data: bytes) -> None:
            # Each event's line ends with the end of its object, then the newline: "}\n" nowhere else (the JSON
            # has no raw newline). The previous reads' last bytes join a mark split between two reads.
            joined = self.tail + data
            count = joined.count(b"}\n") - self.tail.count(b"}\n")
            self.tail = joined[-6:]
            if count and not seen[0]:
                seen[1], count = cpu_seconds(), 1
            seen[0] += count
            if joined.endswith(b"\r\n0\r\n\r\n") and not finished.done():  # the last chunk
                finished.set_result(cpu_seconds())

    context = ssl.create_default_context(cafile=str(inputs / "ca.crt"))
    transport, _ = await loop.create_connection(Counting, "127.0.0.1", port, ssl=context,
                                                server_hostname="127.0.0.1")
    end = await asyncio.wait_for(finished, 600)
    transport.close()
    return int(seen[0]) - 1, end - seen[1]


# ------------------------------------------------------------------------------------------- inputs


def write_inputs(folder: Path, events: int, pace_ms: float) -> None:
    """A TLS key pair and its CA, and the events: the plain pod pending, then bound, one pod after another."""
    from bench.cluster import ZONES, incoming_pods
    from bench.standin import write_pki

    write_pki(folder)
    template = incoming_pods()["plain"]
    lines = []
    version = 100
    for i in range(events // 2):
        pod = copy.deepcopy(template)
        node = f"node-{i * 7919 % 500:05d}"
        pod["metadata"].update(name=f"web-{i}", uid=f"uid-web-{i}", creationTimestamp="2026-11-27T05:00:00Z",
                               managedFields=[{"manager": "kube-controller-manager", "operation": "Update",
                                               "apiVersion": "v1", "time": "2026-11-27T05:00:00Z",
                                               "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {}}}])
        pod["spec"].update(restartPolicy="Always", terminationGracePeriodSeconds=30, dnsPolicy="ClusterFirst",
                           serviceAccountName="default", schedulerName="default-scheduler", priority=0,
                           enableServiceLinks=True, preemptionPolicy="PreemptLowerPriority")
        pod["status"] = {"phase": "Pending", "qosClass": "Burstable"}
        version += 1
        pod["metadata"]["resourceVersion"] = str(version)
        lines.append(json.dumps({"type": "ADDED", "object": pod}, separators=(",", ":")))
        bound = copy.deepcopy(pod)
        version += 1
        bound["metadata"]["resourceVersion"] = str(version)
        bound["metadata"]["labels"] = {**bound["metadata"]["labels"], "topology.kubernetes.io/zone":
                                       ZONES[i % 3], "topology.kubernetes.io/region": "bench-1"}
        bound["spec"]["nodeName"] = node
        bound["status"]["conditions"] = [{"type": "PodScheduled", "status": "True",
                                          "lastTransitionTime": "2026-11-27T05:00:01Z"}]
        lines.append(json.dumps({"type": "MODIFIED", "object": bound}, separators=(",", ":")))
    (folder / "events.jsonl").write_text("\n".join(lines) + "\n")
    for side in ("reflector", "floor"):
        (folder / side).mkdir()
        for name in ("ca.crt", "server.crt", "server.key", "events.jsonl"):
            (folder / side / name).symlink_to(folder / name)
        (folder / side / "params.json").write_text(json.dumps({"side": side, "events": 2 * (events // 2),
                                                               "pace_ms": pace_ms}))


def main() -> None:
    from bench import standin

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    standin.add_arguments(parser, "events", 2000, "events per side and round (half pods pending)")
    args = parser.parse_args()
    standin.compare(__file__, args, lambda folder: write_inputs(folder, args.events, args.pace_ms), "reflector",
                    "event")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(Path(sys.argv[2]), int(sys.argv[4]))
    else:
        main()
