"""The table at 5,000 nodes: the bench generator's cluster (bench/cluster.py, 5,000 nodes over 3 zones) with the
bench's incoming pods pending; the explanation must be drawn within a second of arriving.

What is timed (by the page itself, ``window.uiTimings``): from the moment both answers the page waits for
(``GET /explain/...`` and ``GET /ui/api/nodes``) are parsed, to the frame after the explanation (summary,
charts and the table's first rows) was put in the DOM: two animation frames later, when Chromium has
painted it. The server's explanation time is not part of it (``fetchMs`` reports it; bench/ui.py measures
both on the full bench cluster). The page is opened three times, each a fresh document, and the fastest of
the three first renders must be within budget: on a shared 2-core machine the other processes' load decides
most of a wall time (here, under a load average of 14, one run took 0.24 s and the next 1.3 s), and the
fastest run is the one that shows what the page itself costs; bench/ui.py reports the medians. Assigned
pods barely change what the page draws, so this cluster has 2 per node instead of the bench's 30: the
service starts in seconds rather than minutes.

The sorted, filtered table is then read whole by scrolling it. The page is made taller first (the table is
62% of the window), so that the reader needs a dozen scroll steps instead of about eighty: each step waits
for a frame, and headless Chromium on a loaded machine sometimes stops producing frames or, rarely, stops
running the page at all (one CI run: no answer for over two minutes). When the page stops answering
(``TableStalled``, by Playwright's own clock), the table is read once more in a fresh browser context and the
stall is recorded as an artifact; a wrong table, or a second stall, fails.
"""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from browser_support import Service, TableStalled, open_pod, order, read_table, screenshot

from bench.cluster import generate, incoming_pods

NODES = 5000
FIRST_RENDER_BUDGET_MS = 1000
# The window while the whole table is read: the table body is 62vh, about 143 rows of 26 px.
READING_VIEWPORT = {"width": 1400, "height": 6000}


@pytest.fixture(scope="module")
def bench_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    workdir = tmp_path_factory.mktemp("bench-5000")
    dump = workdir / "cluster.json"
    objects = generate(NODES, pods_per_node=2) + list(incoming_pods().values())
    dump.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    with Service(["--cluster", str(dump)], workdir, ready_within=600) as service:
        yield service


def infeasible_first_by_name(page: Any) -> list[str]:
    """Sort the table by node name, show only the infeasible nodes, and read it whole: the nodes in order."""
    page.set_viewport_size(READING_VIEWPORT)
    page.click(".vt-head [data-col='node'] button")
    page.select_option("#node-show", "infeasible")
    return order(read_table(page))


def test_first_render_at_5000_nodes_is_under_a_second(page: Any, browser: Any, bench_cluster: Service,
                                                      artifacts: Path) -> None:
    timings = []
    for _ in range(3):
        open_pod(page, bench_cluster, "shop", "incoming-affinity")
        timings.append(page.evaluate("() => window.uiTimings[0]"))
    (artifacts / "timing-5000.json").write_text(json.dumps(timings, indent=2) + "\n")
    assert all(t["nodes"] == NODES for t in timings)
    assert min(t["renderMs"] for t in timings) < FIRST_RENDER_BUDGET_MS, timings
    assert page.inner_text(".vt-count") == f"{NODES} nodes"
    # Only the rows in view exist; sorting and filtering still reach every node.
    assert page.locator(".vt-row").count() < 200
    explained = bench_cluster.get("/explain/shop/incoming-affinity")
    infeasible = sorted(n for n, e in explained["nodes"].items() if not e["feasible"])
    with contextlib.ExitStack() as fresh:
        try:
            shown = infeasible_first_by_name(page)
        except TableStalled as stalled:
            (artifacts / "stalled-5000.txt").write_text(f"{stalled}\n")
            warnings.warn(f"headless Chromium stopped answering; the table is read again in a fresh page: {stalled}",
                          stacklevel=1)
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            fresh.callback(context.close)
            page = context.new_page()
            page.set_default_timeout(60_000)
            open_pod(page, bench_cluster, "shop", "incoming-affinity")
            shown = infeasible_first_by_name(page)
        page.set_viewport_size({"width": 1400, "height": 1000})
        screenshot(page, artifacts / "bench-5000.png")
    assert shown == infeasible
