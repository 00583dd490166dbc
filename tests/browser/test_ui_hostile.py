"""Every cluster string the page shows is text: pod, namespace and node names, labels and reasons written as
HTML or script stay inert and appear literally. (The Content-Security-Policy would also stop inline script;
these checks look at the DOM itself, so they hold with or without it.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import yaml
from browser_support import Service, read_table, screenshot

NODE = 'n1"><img src=x onerror="window.__pwned=1">'
ZONE = "<script>window.__pwned=2</script>"
POOL = "<b onmouseover=window.__pwned=3>pool</b>"
NAMESPACE = "ns<svg onload=window.__pwned=4>"
NAME = "<img src=x onerror=window.__pwned=5>"
CLAIM = "<iframe src=javascript:window.__pwned=6>"
INJECTED = "img, iframe, script:not([src]), [onerror], [onload], [onmouseover]"


def node(name: str, zone: str, pool: str) -> dict[str, Any]:
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone, "pool": pool}},
            "status": {"allocatable": alloc, "capacity": alloc}}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    workdir = tmp_path_factory.mktemp("hostile")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": NAME, "namespace": NAMESPACE, "uid": "u1"},
           "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": CLAIM}]}}
    dump = workdir / "hostile.yaml"
    dump.write_text(yaml.safe_dump_all([node(NODE, ZONE, POOL), node("plain", "zone-a", "general"), pod]))
    with Service(["--cluster", str(dump)], workdir) as service:
        yield service


def test_hostile_names_are_shown_as_text(page: Any, hostile: Service, artifacts: Path) -> None:
    page.goto(hostile.url)
    page.wait_for_selector(".pod-link")
    assert page.inner_text(".pod-link") == f"{NAMESPACE}/{NAME}"
    page.click(".pod-link")
    page.wait_for_selector("body[data-ready]", state="attached")
    page.wait_for_selector("#whatif-yaml")
    assert page.inner_text(".pod-name") == f"{NAMESPACE}/{NAME}"
    message = hostile.get(f"/explain/{quote(NAMESPACE, safe='')}/{quote(NAME, safe='')}")["outcome"]["message"]
    assert CLAIM in message
    assert page.inner_text("#outcome-message") == message
    rows = read_table(page)
    assert set(rows) == {NODE, "plain"}
    assert rows[NODE]["cells"]["zone"]["text"] == ZONE and rows[NODE]["cells"]["pool"]["text"] == POOL
    assert CLAIM in page.input_value("#whatif-yaml")
    page.select_option("#node-zone", ZONE)
    assert set(read_table(page)) == {NODE}
    screenshot(page, artifacts / "hostile.png", full_page=True)
    assert page.evaluate("() => window.__pwned") is None
    assert page.evaluate(f"() => document.querySelectorAll({INJECTED!r}).length") == 0
    # The address names the pod through the fixed #/pod/ route, percent-encoded.
    assert page.evaluate("() => location.hash").startswith("#/pod/ns%3Csvg")
