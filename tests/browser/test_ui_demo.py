"""The web view in a real Chromium, on the demo cluster served by the real ``extender serve``: the page its
log names, the pending pods, each pod's table checked against /explain's JSON, sorting and filtering,
what-ifs that change the answer (and write nothing), devices, Karmada placement, and no console errors."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import browser_support
import httpx
import pytest
from browser_support import ROOT, Service, TableStalled, open_pod, order, read_table, screenshot

PASSING = ("Success", "Skip")
SYMBOLS = {"Success": "✓", "Skip": "skip", "Unschedulable": "✗", "UnschedulableAndUnresolvable": "✗✗",
           "Error": "error"}


def shot(page: Any, artifacts: Path, name: str) -> None:
    screenshot(page, artifacts / f"{name}.png", full_page=True)


def expected_cells(entry: dict[str, Any]) -> dict[str, str]:
    """What each cell of a node's row must say, from the node's entry in /explain's JSON."""
    cells = {"fits": "yes" if entry["feasible"] else "no"}
    for plugin, verdict in entry["filters"].items():
        cells[f"f:{plugin}"] = SYMBOLS[verdict["code"]]
    for plugin, score in entry["scores"].items():
        cells[f"s:{plugin}"] = "skip" if score.get("skipped") else \
            f"{score['raw']}/{score['normalized']}/{score['weighted']}"
    cells["total"] = str(entry["total"]) if entry["feasible"] and entry["scores"] else "-"
    cells["answer"] = str(entry.get("extender_score", "-"))
    cells["reasons"] = "; ".join(f"{p}: {', '.join(v['reasons']) or v['code']}"
                                 for p, v in entry["filters"].items() if v["code"] not in PASSING)
    return cells


def check_table_against_explain(page: Any, explained: dict[str, Any]) -> dict[str, dict[str, Any]]:
    rows = read_table(page)
    assert set(rows) == set(explained["nodes"])
    for node, entry in explained["nodes"].items():
        cells = rows[node]["cells"]
        for column, text in expected_cells(entry).items():
            assert cells[column]["text"] == text, (node, column)
        for plugin, verdict in entry["filters"].items():
            cell = cells[f"f:{plugin}"]
            assert cell["code"] == verdict["code"], (node, plugin)
            assert all(reason in cell["title"] for reason in verdict["reasons"]), (node, plugin)
        missing = [c for c in cells if c.startswith("s:") and c[2:] not in entry["scores"]]
        assert all(cells[c]["text"] == "-" for c in missing), node
    return rows


def test_the_logged_page_lists_the_pending_pods(page: Any, demo: Service, artifacts: Path) -> None:
    assert demo.url == f"{demo.base}/ui/"
    page.goto(demo.url)
    page.wait_for_selector(".pod-link")
    listed = page.eval_on_selector_all(".pod-link", "links => links.map(a => a.dataset.pod)")
    assert listed == ["data/etl-large", "ml/llm-finetune", "shop/search-indexer", "shop/web-pending"]
    page.fill("#pod-search", "shop index")
    page.wait_for_function("() => document.querySelectorAll('.pod-link').length === 1")
    assert page.inner_text(".pod-link") == "shop/search-indexer"
    assert "33 nodes, 4 pending pods" in page.inner_text("#service")
    shot(page, artifacts, "pods")


@pytest.mark.parametrize("pod", ["shop/search-indexer", "shop/web-pending", "data/etl-large", "ml/llm-finetune"])
def test_the_table_says_what_explain_says(page: Any, demo: Service, artifacts: Path, pod: str) -> None:
    namespace, name = pod.split("/")
    open_pod(page, demo, namespace, name)
    explained = demo.get(f"/explain/{namespace}/{name}")
    outcome = explained["outcome"]
    assert page.inner_text("#outcome-message") == outcome["message"]
    assert page.get_attribute(".badge", "data-status") == outcome["status"]
    assert f"profile {explained['profile']}" in page.inner_text(".meta")
    if outcome["status"] == "Schedulable":
        assert page.inner_text("#pick .node-name") == outcome["best"][0]["node"]
    rows = check_table_against_explain(page, explained)
    # First shown: the feasible nodes by total, highest first, as the CLI prints them.
    feasible = [n for n in order(rows) if explained["nodes"][n]["feasible"]]
    assert order(rows)[:len(feasible)] == feasible
    totals = [explained["nodes"][n]["total"] for n in feasible]
    assert totals == sorted(totals, reverse=True)
    # The bar chart counts the nodes each plugin rules out.
    bars = page.eval_on_selector_all("#chart-reasons g[data-label]", "gs => gs.map(g => [g.dataset.label, "
                                     "g.querySelector('text.value').textContent])")
    counted: dict[str, int] = {}
    for entry in explained["nodes"].values():
        for plugin, verdict in entry["filters"].items():
            if verdict["code"] not in PASSING:
                counted[plugin] = counted.get(plugin, 0) + 1
    assert dict((label, int(value)) for label, value in bars) == counted
    shot(page, artifacts, f"explain-{namespace}-{name}")


def test_the_table_scrolls_and_sorts_without_animation_frames(page: Any, demo: Service) -> None:
    """A page that gets no animation frames (a background tab; headless Chromium's compositor now and then)
    still draws the rows scrolled into view, on its own timer."""
    page.add_init_script("window.requestAnimationFrame = () => 0; window.cancelAnimationFrame = () => {};")
    page.set_viewport_size({"width": 1400, "height": 420})  # the table's minimum height: 33 nodes scroll
    open_pod(page, demo, "shop", "web-pending")
    nodes = demo.get("/explain/shop/web-pending")["nodes"]
    assert page.evaluate("() => document.querySelector('.vt-body').scrollHeight > "
                         "2 * document.querySelector('.vt-body').clientHeight")
    page.click(".vt-head [data-col='node'] button")
    assert order(read_table(page)) == sorted(nodes)


def test_a_page_that_stops_running_fails_the_table_read_in_bounded_time(page: Any, demo: Service,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A renderer that stops running the page (its timers too) never reaches the reader's own time limit;
    read_table gives up by Playwright's clock instead of waiting for ever (a CI run once hung so)."""
    open_pod(page, demo, "shop", "web-pending")
    monkeypatch.setattr(browser_support, "READ_TABLE_LIMIT_MS", 1_000)
    monkeypatch.setattr(browser_support, "READ_TABLE_MARGIN_MS", 2_000)
    # The page's main thread is busy for 20 s from its next task on: the reader starts and gets no further.
    page.evaluate("() => { setTimeout(() => { const end = Date.now() + 20000; while (Date.now() < end) {} }, 0); }")
    started = time.monotonic()
    with pytest.raises(TableStalled, match="no answer from the page in 3 s"):
        read_table(page)
    assert time.monotonic() - started < 15


def test_sort_and_filter(page: Any, demo: Service, artifacts: Path) -> None:
    open_pod(page, demo, "shop", "web-pending")
    explained = demo.get("/explain/shop/web-pending")
    nodes = explained["nodes"]
    page.click(".vt-head [data-col='node'] button")
    assert order(read_table(page)) == sorted(nodes)
    page.click(".vt-head [data-col='node'] button")
    assert order(read_table(page)) == sorted(nodes, reverse=True)
    assert page.get_attribute(".vt-th[data-col='node']", "aria-sort") == "descending"
    page.click(".vt-head [data-col='total'] button")  # ascending: the infeasible ("-") first, then by total
    ranked = order(read_table(page))
    values = [nodes[n]["total"] if nodes[n]["feasible"] else -1 for n in ranked]
    assert values == sorted(values)
    plugin = "s:TaintToleration"
    page.click(f".vt-head [data-col='{plugin}'] button")
    weighted = [nodes[n]["scores"]["TaintToleration"]["weighted"] if nodes[n]["feasible"] else -1
                for n in order(read_table(page))]
    assert weighted == sorted(weighted)

    feasible = explained["outcome"]["feasibleNodes"]
    page.select_option("#node-show", "feasible")
    assert set(read_table(page)) == set(feasible)
    assert page.inner_text(".vt-count") == f"{len(feasible)} of {len(nodes)} nodes shown"
    page.select_option("#node-show", "infeasible")
    page.select_option("#node-plugin", "TaintToleration")
    tainted = {n for n, e in nodes.items() if e["filters"]["TaintToleration"]["code"] not in PASSING}
    assert set(read_table(page)) == tainted
    page.click("#node-clear")
    page.fill("#node-search", "zone-c")
    assert set(read_table(page)) == {n for n in nodes if n.startswith("zone-c")}
    page.click("#node-clear")
    # A bar of the chart filters the table to the nodes its plugin rules out; a heat map cell to its zone/pool.
    page.click("#chart-reasons g[data-label='NodeResourcesFit']")
    assert set(read_table(page)) == {n for n, e in nodes.items()
                                     if e["filters"]["NodeResourcesFit"]["code"] not in PASSING}
    page.click("#node-clear")
    page.click("#chart-zones g[data-zone='zone-b'][data-pool='m.large']")
    facts = {n["name"]: n for n in demo.get("/ui/api/nodes")["nodes"]}
    assert set(read_table(page)) == {n for n in nodes if facts[n]["zone"] == "zone-b" and facts[n]["pool"] == "m.large"}
    shot(page, artifacts, "sorted-filtered")


def test_a_what_if_on_the_cluster_makes_the_pod_fit(page: Any, demo: Service, artifacts: Path) -> None:
    before = demo.get("/explain/shop/search-indexer")
    cache = demo.get("/readyz")["cache"]
    open_pod(page, demo, "shop", "search-indexer")
    page.wait_for_selector("#whatif-yaml")
    page.select_option("#edit-op", "untaint")
    page.fill("#edit-node", "zone-a-10")
    page.wait_for_selector("#edit-taint option", state="attached")
    assert page.inner_text("#edit-taint") == "example.com/gpu=present:NoSchedule"
    page.click("#edit-add")
    page.select_option("#edit-op", "copy")
    page.fill("#edit-node", "zone-a-10")
    page.fill("#edit-count", "2")
    page.click("#edit-add")
    assert page.locator("#whatif-edits li").count() == 2
    page.click("#whatif-explain")
    page.wait_for_selector("#whatif-banner")
    assert page.get_attribute(".badge", "data-status") == "Schedulable"
    assert page.inner_text("#outcome-message") == "3/35 nodes are feasible"
    assert "remove taint example.com/gpu=present:NoSchedule from zone-a-10" in page.inner_text("#whatif-banner")
    rows = read_table(page)
    assert {n for n, r in rows.items() if r["cells"]["fits"]["text"] == "yes"} == {
        "zone-a-10", "zone-a-10-copy-1", "zone-a-10-copy-2"}
    assert rows["zone-a-10-copy-1"]["cells"]["zone"]["text"] == "zone-a"
    shot(page, artifacts, "what-if-untaint")
    page.click("#whatif-back")
    page.wait_for_selector("#whatif-banner", state="detached")
    assert page.get_attribute(".badge", "data-status") == "Unschedulable"
    # Nothing was written: the service answers as before and holds the same objects.
    assert demo.get("/explain/shop/search-indexer") == before
    assert demo.get("/readyz")["cache"] == cache


def test_a_what_if_on_the_pod_yaml_makes_it_fit_and_errors_name_the_line(page: Any, demo: Service,
                                                                          artifacts: Path) -> None:
    open_pod(page, demo, "data", "etl-large")
    page.wait_for_selector("#whatif-yaml")
    text = page.input_value("#whatif-yaml")
    page.fill("#whatif-yaml", text.replace("cpu: '20'", "cpu: '3'"))
    page.click("#whatif-explain")
    page.wait_for_selector("#whatif-banner")
    assert page.get_attribute(".badge", "data-status") == "Schedulable"
    assert "before: Unschedulable: 0/33 nodes feasible" in page.inner_text("#whatif-banner")
    page.problems.expect("the server responded with a status of 400")  # the service refuses the broken YAML
    page.fill("#whatif-yaml", text.replace("spec:", "spec: [", 1))
    page.click("#whatif-explain")
    page.wait_for_selector("#whatif-error:not([hidden])")
    error = page.inner_text("#whatif-error")
    assert error.startswith("pod: invalid YAML at line") and "column" in error
    shot(page, artifacts, "what-if-yaml-error")
    page.click("#whatif-reset")
    page.fill("#whatif-replicas", "2")
    page.click("#whatif-simulate")
    page.wait_for_selector("#simulation")
    assert "0 of 2 replicas placed" in page.inner_text("#simulation h3")
    assert demo.get("/explain/data/etl-large")["outcome"]["status"] == "Unschedulable"


def test_devices_of_a_dra_pod(page: Any, demo: Service, artifacts: Path) -> None:
    open_pod(page, demo, "ml", "llm-finetune")
    page.wait_for_selector("#device-inventory")
    section = page.inner_text("#devices")
    assert "33 node(s): cannot allocate all claims" in section
    assert page.locator("#device-inventory .device.used").count() == 2
    assert page.locator("#device-inventory .device.free").count() == 9
    page.fill("#whatif-yaml", page.input_value("#whatif-yaml").replace("eight-gpus", "single-gpu"))
    page.click("#whatif-explain")
    page.wait_for_selector("#device-choices")
    assert page.get_attribute(".badge", "data-status") == "Schedulable"
    shot(page, artifacts, "devices")


def test_multicluster_placement_matches_the_schedule_route(page: Any, demo: Service, artifacts: Path) -> None:
    config = ROOT / "config" / "multicluster"
    binding, policy = (config / "binding.yaml").read_text(), (config / "policy-static.yaml").read_text()
    page.goto(demo.url + "#/multicluster")
    page.wait_for_selector("#mc-members")
    page.fill("#mc-yaml", binding + "\n---\n" + policy)
    page.click("#mc-place")
    page.wait_for_selector("#mc-result")
    import yaml

    reference = httpx.post(f"{demo.base}/multicluster/schedule", timeout=60, json={
        "binding": yaml.safe_load(binding), "policy": yaml.safe_load(policy)}).json()
    for row in page.query_selector_all("#mc-result tbody tr"):
        cluster = row.get_attribute("data-cluster")
        cells = [c.inner_text() for c in row.query_selector_all("td")]
        placed = {c["name"]: c["replicas"] for c in reference["clusters"]}
        assert cells[2] == str(placed.get(cluster, 0)), cluster
        assert cells[7] == "; ".join(reference["filtered"].get(cluster, [])), cluster
    assert page.inner_text("#mc-message") == "12 replica(s) to 3 cluster(s)"
    shot(page, artifacts, "multicluster")


def test_readme_screenshot(page: Any, demo: Service, artifacts: Path) -> None:
    """The README's picture (scripts/ui-screenshot copies it to docs/ui.png): a pod that fits nowhere."""
    page.set_viewport_size({"width": 1360, "height": 1020})
    open_pod(page, demo, "shop", "search-indexer")
    page.wait_for_selector("#whatif-yaml")
    assert "node(s) didn't match Pod's node affinity/selector" in page.inner_text("#outcome-message")
    screenshot(page, artifacts / "readme.png")


def test_fields_explain_adds_later_are_shown(page: Any, demo: Service) -> None:
    """A newer engine's explanation (a Kubernetes version, a PostFilter message, fields unknown today) is shown
    as it comes: the version beside the profile, the outcome's message verbatim, the rest under "More"."""
    message = ("0/33 nodes are available: 1 node(s) were unschedulable. preemption: 0/33 nodes are available: "
               "33 Preemption is not helpful for scheduling.")

    def newer(route: Any) -> None:
        answer = route.fetch().json()
        answer["version"] = "v1.37.2"
        answer["outcome"]["message"] = message
        answer["outcome"]["nominatedNode"] = "zone-b-09"
        answer["futureField"] = {"note": "<b>kept as text</b>"}
        route.fulfill(json=answer)

    page.route("**/explain/shop/search-indexer", newer)
    open_pod(page, demo, "shop", "search-indexer")
    assert "Kubernetes v1.37.2" in page.inner_text(".meta")
    assert page.inner_text("#outcome-message") == message
    more = page.inner_text("details.more")
    assert "nominatedNode" in more and "zone-b-09" in more
    assert "futureField" in more and "<b>kept as text</b>" in more
