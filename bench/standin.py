"""What the paced benchmarks (bench.watch_paced, bench.bind_paced) share: a stand-in apiserver in a process of
its own, the CPU clock their sides read, and the rounds that set the sides against each other.

A paced benchmark's worker runs in a fresh interpreter with the measured checkout first on the path (see
bench.checkouts), where no ``bench`` package of this checkout can be imported: it runs this file by its path
(``runpy.run_path``) for :func:`side`, which runs a side's measurement beside the stand-in. :func:`running`
starts the script again with ``--serve`` (TLS, in a process of its own, so that its CPU is not the side's) and waits
until it accepts connections; the script's ``--serve`` calls :func:`serve_tls` with its connection handler.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def cpu_seconds() -> float:
    """This process's CPU time so far (user and system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def running(script: str, inputs: Path) -> Iterator[int]:
    """``script --serve INPUTS --port P`` running on a free port of 127.0.0.1: the port, once it accepts."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    server = subprocess.Popen([sys.executable, script, "--serve", str(inputs), "--port", str(port)],
                              env={**os.environ, "PYTHONPATH": ""})
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the stand-in apiserver did not start") from None
                time.sleep(0.05)
        yield port
    finally:
        server.kill()
        server.wait()


def side(script: str, inputs: Path, unit: str,
         run: Callable[[dict[str, Any], int, Callable[[], float]], Awaitable[tuple[int, float]]]) -> dict[str, Any]:
    """A worker's side: the stand-in started, ``run(params, port, cpu_seconds)`` on uvloop giving (how many
    ``unit``s it timed, the CPU seconds they took); the figures bench.checkouts reads."""
    import uvloop

    params = json.loads((inputs / "params.json").read_text())
    with running(script, inputs) as port:
        count, cpu = uvloop.run(run(params, port, cpu_seconds))
    tree = "floor"
    if params["side"] != "floor":
        import extender

        tree = str(Path(extender.__file__).parents[1])
    return {"extender": tree, f"us_per_{unit}": 1e6 * cpu / count, f"{unit}s": count}


def serve_tls(inputs: Path, port: int, handle: Handler) -> None:
    """Serve ``handle`` over TLS (inputs' server.crt and server.key) on 127.0.0.1:``port``, on uvloop, for ever;
    a connection's ends (reset, cut short, a TLS error) end its handler quietly."""
    import uvloop

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(inputs / "server.crt"), str(inputs / "server.key"))

    async def guarded(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(guarded, "127.0.0.1", port, ssl=context)
        async with server:
            await server.serve_forever()

    uvloop.run(main())


def write_pki(folder: Path) -> None:
    """A CA and a server key pair for 127.0.0.1 in ``folder`` (ca.crt, server.crt, server.key): tests/ops' PKI."""
    root = Path(__file__).resolve().parents[1]
    for folder_of_tests in ("e2e", "ops"):  # tests/ops' PKI uses the end-to-end harness
        if str(root / "tests" / folder_of_tests) not in sys.path:
            sys.path.insert(0, str(root / "tests" / folder_of_tests))
    from ops_support import make_pki

    pki = make_pki(folder / "pki")
    for name, source in (("ca.crt", pki.ca), ("server.crt", pki.server.cert), ("server.key", pki.server.key)):
        (folder / name).write_bytes(source.read_bytes())


def add_arguments(parser: argparse.ArgumentParser, count: str, default: int, help_: str) -> None:
    """bench.checkouts' arguments, then ``--<count>``, ``--pace-ms``, ``--rounds`` and ``--no-floor``."""
    from bench import checkouts

    checkouts.add_arguments(parser)
    parser.add_argument(f"--{count}", type=int, default=default, help=help_)
    parser.add_argument("--pace-ms", type=float, default=2.5, help="between two of them")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-floor", action="store_true", help="leave the floor side out")


def compare(script: str, args: argparse.Namespace, write_inputs: Callable[[Path], None], side: str,
            unit: str) -> None:
    """Rounds of each checkout (its inputs in the folder ``side``) and the floor (in ``floor``), in turn, the
    order alternating between rounds; each side's worker returns ``us_per_<unit>`` and ``<unit>s``."""
    from bench import checkouts

    sides: list[tuple[str, Path | None]] = [(label, tree) for label, tree in checkouts.sides(args.before)]
    if not args.no_floor:
        sides.append(("floor", None))
    root = Path(script).resolve().parents[1]
    figures: dict[str, list[float]] = {label: [] for label, _ in sides}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_inputs(folder)
        for round_ in range(args.rounds):
            for label, tree in sides if round_ % 2 == 0 else sides[::-1]:
                got: dict[str, Any] = checkouts.run_worker(script, tree or root,
                                                           folder / ("floor" if tree is None else side),
                                                           with_bench=False)
                figures[label].append(got[f"us_per_{unit}"])
                print(f"round {round_ + 1}, {label} ({got['extender']}): {got[f'us_per_{unit}']:.1f} µs of CPU per "
                      f"{unit} over {got[f'{unit}s']}; load {os.getloadavg()[0]:.1f}", flush=True)
    for label, values in figures.items():
        print(f"{label}: median {statistics.median(values):.1f} µs per {unit} "
              f"({', '.join(f'{v:.0f}' for v in values)})")
