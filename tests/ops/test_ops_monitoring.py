"""The monitoring folder: Prometheus alerting rules and the Grafana dashboard, checked against the metrics the
service really exports.

- ``promtool check rules`` (with every lint, fatal) accepts the rules, and ``promtool test rules`` runs their
  unit tests: each alert fires on the series that should raise it and stays quiet on healthy neighbours;
  every alert has such a test. promtool v3 is built from the Go module proxy by ``tests/ops/build-tools``.
- A real ``extender serve`` answers filter, prioritize, bind and a multi-cluster placement; its /metrics is
  scraped. Every metric name in every rule and dashboard expression (template variable queries included) is
  one the service exports (with the ``_bucket``/``_count``/``_sum``/``_total`` suffixes Prometheus gives each
  type), or Prometheus' own ``up``; every metric the service exports is on the dashboard; and
  ``promtool check metrics`` finds nothing to say about the exposition.
- The dashboard is well formed: unique panel ids, one data source variable used by every query, every
  template variable used is defined.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_render import BUILD_TOOLS
from controlplane import unavailable
from ops_support import Service, running

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "monitoring" / "prometheus" / "scheduler-extender.rules.yaml"
RULE_TESTS = REPO / "monitoring" / "prometheus" / "scheduler-extender.rules.test.yaml"
DASHBOARD = REPO / "monitoring" / "grafana" / "scheduler-extender.json"
PROMETHEUS_OWN = {"up"}  # series Prometheus makes for every target


@pytest.fixture(scope="module")
def promtool() -> Iterator[Path]:
    """promtool from tests/ops/build-tools (built on first use)."""
    out = subprocess.run([str(BUILD_TOOLS)], capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    if out.returncode != 0:
        unavailable(f"tests/ops/build-tools failed (exit {out.returncode}): {out.stderr[-2000:]}")
    yield Path(out.stdout.strip().splitlines()[-1]) / "promtool"


# --------------------------------------------------------------------------- PromQL metric names

_KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left",
             "group_right", "inf", "nan", "atan2", "start", "end"}
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", re.IGNORECASE)
_IDENT = re.compile(r"(?<![\w.:$])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:]|\s*\()")


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (Grafana's $variables allowed anywhere)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', '""', expr)  # strings
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # ranges and subqueries
    text = re.sub(r"\$\{?\w+\}?", "0", text)  # template variables
    text = _GROUPING.sub("", text)
    return {name for name in _IDENT.findall(text) if name.lower() not in _KEYWORDS}


def variable_query_metrics(query: str) -> set[str]:
    """Metric names in a Grafana Prometheus variable query (``label_values(expr, label)`` or an expression)."""
    m = re.fullmatch(r"\s*label_values\((.*),\s*\w+\s*\)\s*", query, flags=re.DOTALL)
    if m:
        return metric_names(m.group(1))
    if re.fullmatch(r"\s*label_values\(\s*\w+\s*\)\s*", query):
        return set()
    return metric_names(query)


def test_metric_names_are_found_in_promql() -> None:
    """The extractor sees selectors, leaves out functions, keywords, labels, durations and variables."""
    expr = ('histogram_quantile(0.99, sum by (verb, le) (rate(extender_request_duration_seconds_bucket'
            '{job=~"$job", code!~"5.."}[5m] offset 1h))) > 2.5 and on (job) up == 1 unless absent(foo:bar_total)')
    assert metric_names(expr) == {"extender_request_duration_seconds_bucket", "up", "foo:bar_total"}
    assert metric_names('sum(rate(x_total[$__rate_interval])) / sum without (a) (y{a="b"}) * 1e3') == {
        "x_total", "y"}
    assert variable_query_metrics('label_values(extender_requests_total{job=~"$job"}, profile)') == {
        "extender_requests_total"}


def rule_expressions() -> dict[str, str]:
    """Alert name -> expression, for every rule."""
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return {rule["alert"]: rule["expr"] for group in groups for rule in group["rules"]}


def dashboard_expressions() -> dict[str, str]:
    """Where -> expression, for every panel target and template variable query of the dashboard."""
    board = json.loads(DASHBOARD.read_text())
    out = {f"panel {p['id']} {p['title']} {t['refId']}": t["expr"]
           for p in board["panels"] for t in p.get("targets", [])}
    for var in board["templating"]["list"]:
        if var["type"] == "query":
            query = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
            out[f"variable {var['name']}"] = query
    return out


# --------------------------------------------------------------------------- promtool


def test_promtool_checks_the_rules(promtool: Path) -> None:
    """Valid rule file, valid PromQL, templates that parse, and no lint finding."""
    out = subprocess.run([str(promtool), "check", "rules", "--lint=all", "--lint-fatal", str(RULES)],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"SUCCESS: {len(rule_expressions())} rules found" in out.stdout


def test_promtool_unit_tests_of_the_alerts(promtool: Path) -> None:
    """Each alert fires on the series that should raise it, with its labels and annotations, and not on the
    healthy series beside them."""
    out = subprocess.run([str(promtool), "test", "rules", RULE_TESTS.name], capture_output=True, text=True,
                         check=False, cwd=RULE_TESTS.parent)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SUCCESS" in out.stdout


def test_every_alert_has_a_firing_test() -> None:
    """No alert goes untested: each appears in the unit tests with at least one expected firing."""
    tests = yaml.safe_load(RULE_TESTS.read_text())["tests"]
    fired = {case["alertname"] for test in tests for case in test["alert_rule_test"] if case["exp_alerts"]}
    assert fired == set(rule_expressions())


def test_the_alerts_cover_what_operators_need() -> None:
    """Down, not ready, latency against kube-scheduler's httpTimeout, bind failures, watch relists."""
    exprs = rule_expressions()
    uses = {name: metric_names(expr) for name, expr in exprs.items()}
    assert uses["SchedulerExtenderDown"] == {"up"} and "absent(" in exprs["SchedulerExtenderDown"]
    assert uses["SchedulerExtenderNotReady"] == {"extender_ready"}
    assert uses["SchedulerExtenderSlow"] == {"extender_request_duration_seconds_bucket"}
    assert uses["SchedulerExtenderBindFailures"] == {"extender_binds_total"}
    assert 'reason="gone"' in exprs["SchedulerExtenderWatchRelisting"]


# --------------------------------------------------------------------------- against the service's /metrics


def exported_names(exposition: str) -> tuple[set[str], set[str]]:
    """(every sample name the exposition can carry, the metric families) from its # TYPE lines and samples."""
    names: set[str] = set()
    families: set[str] = set()
    suffixes = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_count", "_sum", "_created"),
                "summary": ("", "_count", "_sum", "_created"), "gauge": ("",), "untyped": ("",)}
    for line in exposition.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            base = name.removesuffix("_total") if kind == "counter" else name
            if name.endswith("_created") and kind == "gauge":
                continue  # prometheus_client's creation timestamps of histograms
            families.add(base)
            names.update(base + s for s in suffixes[kind])
        elif line and not line.startswith("#"):
            names.add(re.split(r"[{ ]", line, maxsplit=1)[0])
    return names, families


@pytest.fixture(scope="module")
def exposition(tmp_path_factory: pytest.TempPathFactory) -> str:
    """/metrics of a real service after a filter, a prioritize, a bind, a preempt and a placement."""
    svc = Service(tmp_path_factory.mktemp("monitoring"))
    requests = REPO / "examples" / "requests"
    headers = {"content-type": "application/json"}
    with running(svc), svc.client() as client:
        for verb in ("filter", "prioritize", "bind"):
            answer = client.post(f"/{verb}", content=(requests / f"{verb}.json").read_bytes(), headers=headers)
            assert answer.status_code == 200, answer.text
        client.post("/profiles/no-such-profile/filter", content=b"{}", headers=headers)
        client.post("/filter", content=b"{not json", headers=headers)
        mc = REPO / "config" / "multicluster"
        placement = {"binding": yaml.safe_load((mc / "binding.yaml").read_text()),
                     "policy": yaml.safe_load((mc / "policy.yaml").read_text()),
                     "clusters": [d for d in yaml.safe_load_all((mc / "clusters.yaml").read_text()) if d]}
        client.post("/multicluster/schedule", json=placement)
        text: str = client.get("/metrics").text
    return text


def test_every_expression_names_only_exported_metrics(exposition: str) -> None:
    """Each metric a rule or the dashboard selects is one the service exports (or Prometheus' ``up``)."""
    names, _ = exported_names(exposition)
    assert "extender_requests_total" in names and "extender_request_duration_seconds_bucket" in names
    unknown = {}
    for where, expr in {**{f"rule {k}": v for k, v in rule_expressions().items()},
                        **dashboard_expressions()}.items():
        used = variable_query_metrics(expr) if where.startswith("variable") else metric_names(expr)
        assert used, f"{where}: no metric found in {expr!r}"
        if used - names - PROMETHEUS_OWN:
            unknown[where] = sorted(used - names - PROMETHEUS_OWN)
    assert not unknown, unknown


def test_a_misspelt_metric_is_caught(exposition: str) -> None:
    """The comparison is not vacuous: a rule naming a metric the service does not export is reported."""
    names, _ = exported_names(exposition)
    bad = rule_expressions()["SchedulerExtenderBindFailures"].replace("extender_binds_total", "extender_bind_total")
    assert metric_names(bad) - names - PROMETHEUS_OWN == {"extender_bind_total"}


def test_the_dashboard_shows_every_exported_metric(exposition: str) -> None:
    """Each metric family of the service is on some panel of the dashboard."""
    _, families = exported_names(exposition)
    shown: set[str] = set()
    for expr in dashboard_expressions().values():
        shown |= metric_names(expr)
    missing = {f for f in families if not any(s == f or s.startswith(f + "_") for s in shown)}
    assert not missing, f"not on the dashboard: {sorted(missing)}"


def test_promtool_checks_the_exposition(promtool: Path, exposition: str) -> None:
    """``promtool check metrics``: the exposition parses and follows Prometheus' naming conventions."""
    out = subprocess.run([str(promtool), "check", "metrics"], input=exposition, capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stdout + out.stderr


# --------------------------------------------------------------------------- dashboard


def test_the_dashboard_is_well_formed() -> None:
    """Unique panel ids and uid; every query on the data source variable; every $variable defined; panels
    inside the 24-column grid."""
    board: dict[str, Any] = json.loads(DASHBOARD.read_text())
    assert board["uid"] and board["title"] and board["schemaVersion"] >= 36
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids))
    variables = {v["name"] for v in board["templating"]["list"]}
    assert {"datasource", "job", "instance", "profile"} <= variables
    builtin = {"__rate_interval", "__interval", "__range"}
    for panel in board["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert refs and len(refs) == len(set(refs)), panel["title"]
        for target in panel["targets"]:
            used = set(re.findall(r"\$\{?(\w+)", target["expr"]))
            assert used <= variables | builtin, (panel["title"], used - variables - builtin)


def test_the_health_port_serves_what_prometheus_scrapes() -> None:
    """The pods are annotated for scraping on the port whose /metrics the rules read (chart and k8s/ alike)."""
    for path in (REPO / "k8s" / "standalone" / "deployment.yaml", REPO / "k8s" / "sidecar" / "deployment.yaml"):
        deployment = next(d for d in yaml.safe_load_all(path.read_text()) if d)
        annotations = deployment["spec"]["template"]["metadata"]["annotations"]
        assert annotations["prometheus.io/scrape"] == "true" and annotations["prometheus.io/path"] == "/metrics"
        ports = {p["name"]: p["containerPort"] for c in deployment["spec"]["template"]["spec"]["containers"]
                 for p in c.get("ports", [])}
        assert int(annotations["prometheus.io/port"]) == ports["health"], path
