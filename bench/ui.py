"""The web view at 5,000 nodes: the server's explanation and the browser's first render, measured apart.

    python -m bench.ui                      # the bench cluster: 5,000 nodes, 30 pods each (~4 min here)
    python -m bench.ui --pods-per-node 2    # what tests/browser/test_ui_scale.py serves

The cluster is bench.cluster's with its incoming pods pending; the pod explained is ``incoming-affinity``
(required node affinity, tolerations, a preferred term). ``extender serve --cluster`` serves it; then, in
turn, ``--runs`` times:

- server: the wall time of ``GET /explain/shop/incoming-affinity`` over loopback (plugins on every node, the
  JSON answer and its transfer);
- browser: the page opened afresh in Debian's headless Chromium, which records (``window.uiTimings``) the time
  from both answers it waits for being parsed (that explanation and ``GET /ui/api/nodes``) to the frame after
  the explanation was put in the DOM (summary, charts, the table's first rows), split into building the DOM
  and the frame that paints it.

Medians of the run, on this machine, in this run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import orjson

from bench.cluster import generate, incoming_pods

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from browser_support import Service, chromium_binary, launch_args  # noqa: E402

POD = "shop/incoming-affinity"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods-per-node", type=int, default=30)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    binary = chromium_binary()
    if binary is None:
        sys.exit("bench.ui: no Chromium (apt-get install chromium-headless-shell)")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "cluster.json"
        objects = generate(args.nodes, pods_per_node=args.pods_per_node) + list(incoming_pods().values())
        dump.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
        del objects
        started = time.monotonic()
        with Service(["--cluster", str(dump)], Path(tmp), ready_within=1800) as service, sync_playwright() as driver:
            print(f"{args.nodes} nodes x {args.pods_per_node} pods served after {time.monotonic() - started:.0f} s")
            browser = driver.chromium.launch(executable_path=str(binary), args=launch_args())
            server, render, build, paint = [], [], [], []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                httpx.get(f"{service.base}/explain/{POD}", timeout=300).raise_for_status()
                server.append((time.perf_counter() - t0) * 1000)
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                page = context.new_page()
                page.set_default_timeout(300_000)
                page.goto(f"{service.url}#/pod/{POD}")
                page.wait_for_selector(f"body[data-ready='{POD}']", state="attached")
                timing = page.evaluate("() => window.uiTimings[0]")
                render.append(timing["renderMs"])
                build.append(timing["buildMs"])
                paint.append(timing["paintMs"])
                context.close()
            browser.close()
    print(f"server: GET /explain/{POD}: median {statistics.median(server):.0f} ms "
          f"(runs: {', '.join(f'{v:.0f}' for v in server)})")
    print(f"browser: answers parsed -> explanation painted: median {statistics.median(render):.0f} ms "
          f"(build {statistics.median(build):.0f} ms + paint {statistics.median(paint):.0f} ms; "
          f"runs: {', '.join(str(v) for v in render)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
