"""The Helm chart (charts/scheduler-extender): linted, rendered, equal to k8s/, safe under every layout, and
accepted by a real apiserver.

helm v4 is built from the Go module proxy by ``tests/ops/build-tools`` (cached under
``~/.cache/extender-k8s/tools``); without Go these tests skip, and with CI=true they fail instead.

- ``helm lint --strict`` passes with the default values and with each layout's ``ci/`` values.
- k8s/ is the chart rendered (``scripts/render-k8s``): each generated file holds exactly the objects the chart
  renders for its layout, field for field, so the two cannot drift apart.
- Each value the chart offers changes what it should (image, replicas, resources, profiles, bind and its RBAC,
  TLS Secret, the extender profile kube-scheduler calls, NetworkPolicy sources), every rendering passes the
  exposure check (no verb without authentication beyond loopback), and values that would break that or
  cannot work are refused with a message.
- e2e: every rendering is applied server-side with ``dryRun=All`` to kube-apiserver v1.36.3 without a
  warning, and its pod template is dry-run created as a Pod (admission included).
"""

from __future__ import annotations

import copy
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_render import CHART, HAND_WRITTEN, K8S, LAYOUTS, ChartRefused, documents, helm_binary, key, render_layout
from chart_render import template as helm_template
from controlplane import KubeClient, unavailable
from exposure import check_objects, is_extender, listener
from test_ops_manifests import Api

from extender.config import parse_config

Obj = dict[str, Any]


@pytest.fixture(scope="module")
def helm() -> Iterator[Path]:
    """The helm binary (built on first use)."""
    try:
        yield helm_binary()
    except RuntimeError as exc:
        unavailable(str(exc))


def render(helm: Path, *sets: str, layout: str = "standalone", namespace: str | None = None,
           values: tuple[str, ...] = ()) -> list[Obj]:
    """The chart's objects for a layout with extra ``--set`` values."""
    ns = namespace or ("kube-system" if layout == "sidecar" else "scheduler-extender")
    text = helm_template(helm, "release", ns, values, (f"layout={layout}", *sets))
    return [yaml.safe_load(d) for d in documents(text)]


def one(objects: list[Obj], kind: str, suffix: str = "") -> Obj:
    """The one object of a kind (whose name ends with ``suffix``)."""
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"].endswith(suffix)]
    assert len(found) == 1, f"{kind} *{suffix}: {[o['metadata']['name'] for o in found]}"
    return found[0]


def extender_container(objects: list[Obj]) -> Obj:
    """The extender container of the rendering's Deployment."""
    pod = one(objects, "Deployment")["spec"]["template"]["spec"]
    return next(c for c in pod["containers"] if is_extender(c))


# --------------------------------------------------------------------------- lint and drift


@pytest.mark.parametrize("values", [None, "ci/sidecar-values.yaml", "ci/standalone-values.yaml"])
def test_helm_lint(helm: Path, values: str | None) -> None:
    """``helm lint --strict``: the chart's metadata, templates and rendered YAML."""
    argv = [str(helm), "lint", "--strict", str(CHART)] + (["-f", str(CHART / values)] if values else [])
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 chart(s) linted, 0 chart(s) failed" in out.stdout


@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout.folder for layout in LAYOUTS])
def test_k8s_is_the_chart_rendered(helm: Path, layout: Any) -> None:
    """Every generated file of k8s/<layout> holds exactly the objects the chart renders for that layout (run
    scripts/render-k8s after changing the chart), and no generated file is missing or extra."""
    rendered = render_layout(helm, layout)
    folder = K8S / layout.folder
    on_disk = {p.name for p in folder.glob("*.yaml") if p.name not in HAND_WRITTEN}
    assert on_disk == set(rendered), "k8s/ is stale: run scripts/render-k8s"
    for name, docs in rendered.items():
        want = [yaml.safe_load(d) for d in docs]
        have = [d for d in yaml.safe_load_all((folder / name).read_text()) if d]
        for obj in want + have:  # the embedded configuration compares as data, not text
            for field, text in (obj.get("data") or {}).items():
                if field.endswith(".yaml"):
                    obj["data"][field] = yaml.safe_load(text)
        assert have == want, f"k8s/{layout.folder}/{name} differs from the chart: run scripts/render-k8s"


def test_the_namespace_is_the_only_object_k8s_adds(helm: Path) -> None:
    """Outside the generated files, k8s/ adds only the standalone Namespace (with Pod Security "restricted"):
    a chart leaves its namespace to ``helm install --create-namespace``."""
    (namespace,) = [d for d in yaml.safe_load_all((K8S / "standalone" / "namespace.yaml").read_text()) if d]
    assert namespace["kind"] == "Namespace" and namespace["metadata"]["name"] == "scheduler-extender"
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    rendered = render(helm, values=("ci/standalone-values.yaml",))
    assert {o["metadata"].get("namespace") for o in rendered} - {None} == {"scheduler-extender"}


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize("layout", ["sidecar", "standalone"])
@pytest.mark.parametrize("sets", [(), ("bind=true",), ("bind=false",), ("replicas=3",),
                                  ("networkPolicy.healthFrom[0].podSelector.matchLabels.app=prometheus",),
                                  ("extraArgs[0]=--host=127.0.0.1",),
                                  ("config.profiles[0].schedulerName=binpack",)])
def test_every_rendering_exposes_no_verb_without_authentication(helm: Path, layout: str, sets: tuple[str, ...]) -> None:
    """Whatever the values, the verbs stay on loopback (sidecar) or behind mutual TLS (standalone), with the
    probes on the plain health port."""
    objects = render(helm, *sets, layout=layout)
    checked = check_objects(objects)
    assert checked and all(not found for found in checked.values()), checked
    lst = listener(extender_container(objects))
    assert lst.loopback_only if layout == "sidecar" else lst.mutual_tls
    policy = one(objects, "NetworkPolicy")
    for rule in policy["spec"]["ingress"]:
        assert rule.get("from"), f"an ingress rule open to every source: {rule}"
    if layout == "standalone":
        verbs_rule = next(r for r in policy["spec"]["ingress"] if r["ports"][0]["port"] == "extender")
        assert verbs_rule["from"], "the verbs port would be open to every source"
    else:
        assert all(p["port"] != "extender" for r in policy["spec"]["ingress"] for p in r["ports"])


def test_defaults_per_layout(helm: Path) -> None:
    """Sidecar: 1 replica, the extender binds (bindVerb and the grant), a NetworkPolicy closing every port to all
    but the node. Standalone: 2 replicas, kube-scheduler binds (no grant), a Service, a PodDisruptionBudget and a
    NetworkPolicy admitting kube-scheduler to the verbs and no one but the node to the health port."""
    sidecar = render(helm, layout="sidecar")
    assert one(sidecar, "Deployment")["spec"]["replicas"] == 1
    config = yaml.safe_load(one(sidecar, "ConfigMap", "-config")["data"]["config.yaml"])
    assert config["extenders"][0]["bindVerb"] == "bind"
    assert one(sidecar, "ClusterRole", "-binder")["rules"] == [
        {"apiGroups": [""], "resources": ["pods/binding"], "verbs": ["create"]}]
    assert not [o for o in sidecar if o["kind"] in ("Service", "PodDisruptionBudget")]
    assert one(sidecar, "NetworkPolicy")["spec"]["ingress"] == []
    scraped = one(render(helm, "networkPolicy.healthFrom[0].podSelector.matchLabels.app=prometheus",
                         layout="sidecar"), "NetworkPolicy")["spec"]["ingress"]
    assert scraped == [{"from": [{"podSelector": {"matchLabels": {"app": "prometheus"}}}],
                        "ports": [{"port": "health", "protocol": "TCP"}, {"port": "scheduler", "protocol": "TCP"}]}]
    standalone = render(helm)
    assert one(standalone, "Deployment")["spec"]["replicas"] == 2
    assert not [o for o in standalone if o["metadata"]["name"].endswith("-binder")]
    assert {o["kind"] for o in standalone} >= {"Service", "NetworkPolicy", "PodDisruptionBudget"}
    rules = one(standalone, "NetworkPolicy")["spec"]["ingress"]
    assert [p["port"] for r in rules for p in r["ports"]] == ["extender"], "the health port is open by default"
    bound = render(helm, "bind=true")
    assert one(bound, "ClusterRoleBinding", "-binder")["subjects"][0]["name"] == one(bound, "ServiceAccount")[
        "metadata"]["name"]
    unbound_sidecar = render(helm, "bind=false", layout="sidecar")
    config = yaml.safe_load(one(unbound_sidecar, "ConfigMap", "-config")["data"]["config.yaml"])
    assert "bindVerb" not in config["extenders"][0]
    assert not [o for o in unbound_sidecar if o["metadata"]["name"].endswith("-binder")]


def test_values_reach_the_objects(helm: Path) -> None:
    """Image, pull policy, replicas, resources, log level, TLS Secret, extra arguments and the scheduler's
    extender settings land where they belong."""
    objects = render(helm, "image.repository=registry.example/extender", "image.tag=1.2.3", "replicas=4",
                     "image.pullPolicy=Always", "resources.limits.memory=3Gi", "logLevel=debug",
                     "tls.secretName=my-certs", "extraArgs[0]=--read-timeout=10")
    deployment = one(objects, "Deployment")
    container = extender_container(objects)
    assert container["image"] == "registry.example/extender:1.2.3" and container["imagePullPolicy"] == "Always"
    assert deployment["spec"]["replicas"] == 4
    assert container["resources"]["limits"]["memory"] == "3Gi"
    assert {"name": "EXTENDER_LOG_LEVEL", "value": "debug"} in container["env"]
    assert container["args"][-1] == "--read-timeout=10"  # after the chart's own: a later flag wins
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert volumes["tls"]["secret"]["secretName"] == "my-certs"

    sidecar = render(helm, "scheduler.extender.profile=binpack", "scheduler.extender.weight=2",
                     "scheduler.extender.preempt=true", "scheduler.schedulerName=binpacker", "port=9000",
                     "healthPort=9001", layout="sidecar")
    config = yaml.safe_load(one(sidecar, "ConfigMap", "-config")["data"]["config.yaml"])
    (ext,) = config["extenders"]
    assert ext["urlPrefix"] == "http://127.0.0.1:9000/profiles/binpack"
    assert (ext["weight"], ext["preemptVerb"]) == (2, "preempt")
    assert config["profiles"] == [{"schedulerName": "binpacker"}]
    assert config["leaderElection"]["resourceName"] == "binpacker"
    assert one(sidecar, "Role", "-leader-election")["rules"][0]["resourceNames"] == ["binpacker"]
    assert listener(extender_container(sidecar)).health_port == 9001
    assert check_objects(sidecar) == {"release-scheduler-extender": []}


def test_profiles_become_the_extenders_configuration(helm: Path, tmp_path: Path) -> None:
    """``config`` is rendered into a ConfigMap, mounted read-only and passed as --config; the extender's own
    configuration parser accepts what is mounted, profiles and plugin arguments intact. The pod template's
    checksum changes with it, so a new configuration rolls the pods."""
    values = tmp_path / "values.yaml"
    config = {"profiles": [
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "binpack", "pluginConfig": [
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]}
    values.write_text(yaml.safe_dump({"config": config}))
    text = helm_template(helm, "release", "scheduler-extender", (str(values),))
    objects = [yaml.safe_load(d) for d in documents(text)]
    mounted = yaml.safe_load(one(objects, "ConfigMap", "-profiles")["data"]["extender.yaml"])
    assert mounted == config
    parsed = parse_config(mounted, "chart")
    assert [p.name for p in parsed.profiles] == ["default-scheduler", "binpack"]
    container = extender_container(objects)
    assert "--config=/etc/extender/profiles/extender.yaml" in container["args"]
    mount = next(m for m in container["volumeMounts"] if m["name"] == "profiles")
    assert mount["mountPath"] == "/etc/extender/profiles" and mount["readOnly"] is True

    def checksum(text: str) -> str:
        deployment = next(d for d in yaml.safe_load_all(text) if d and d["kind"] == "Deployment")
        value: str = deployment["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
        return value

    values.write_text(yaml.safe_dump({"config": {"profiles": [{"schedulerName": "other"}]}}))
    assert checksum(text) != checksum(helm_template(helm, "release", "scheduler-extender", (str(values),)))


@pytest.mark.parametrize(("sets", "message"), [
    (("layout=hybrid",), "at '/layout': value must be one of 'sidecar', 'standalone'"),
    (("healthPort=8888",), "port and healthPort must differ"),
    (("networkPolicy.schedulers=null",), "networkPolicy.schedulers must name who may call the verbs"),
    (("layout=sidecar", "extraArgs[0]=--host=0.0.0.0"), "--host=0.0.0.0 would serve the verbs on the pod's address"),
    (("layout=sidecar", "extraArgs[0]=--log-level=debug", "extraArgs[1]=--host", "extraArgs[2]=10.1.2.3"),
     "--host=10.1.2.3 would serve the verbs on the pod's address without mutual TLS"),
    (("extraArgs[0]=--host=0.0.0.0", "extraArgs[1]=--client-ca-file="), "with a TLS flag emptied"),
    (("replica=3",), "additional properties 'replica' not allowed"),
    (("bind=maybe",), "at '/bind': got string, want null or boolean"),
    (("scheduler.extender.httpTimeout=5",), "at '/scheduler/extender/httpTimeout': got number, want string"),
    (("port=0",), "at '/port'"),
])
def test_values_that_would_expose_the_verbs_are_refused(helm: Path, sets: tuple[str, ...], message: str) -> None:
    """helm template fails with a message naming the problem: the chart's own checks, and values.schema.json
    for misspelt keys and wrong types."""
    with pytest.raises(ChartRefused, match=message):
        helm_template(helm, "release", "scheduler-extender", (), sets)


# --------------------------------------------------------------------------- against kube-apiserver


RENDERINGS: list[tuple[str, tuple[str, ...]]] = [
    ("sidecar", ()),
    ("sidecar", ("bind=false", "scheduler.extender.preempt=true", "config.profiles[0].schedulerName=a")),
    ("standalone", ()),
    ("standalone", ("bind=true", "replicas=3", "config.profiles[0].schedulerName=a",
                    "networkPolicy.healthFrom[0].namespaceSelector.matchLabels.team=monitoring")),
]


@pytest.mark.e2e
@pytest.mark.parametrize(("layout", "sets"), RENDERINGS)
def test_every_rendering_is_accepted_by_the_apiserver(helm: Path, ops_kube: KubeClient, layout: str,
                                                      sets: tuple[str, ...]) -> None:
    """Server-side dry-run apply of each object, then the pod template as a Pod: accepted, no warnings, nothing
    stored (the ServiceAccount is created for real, as a Pod needs it)."""
    namespace = "kube-system" if layout == "sidecar" else "scheduler-extender"
    ops_kube.ensure_namespace(namespace)
    api = Api(ops_kube)
    objects = render(helm, *sets, layout=layout)
    for obj in sorted(objects, key=lambda o: o["kind"] != "ServiceAccount"):
        real = obj["kind"] == "ServiceAccount"
        r = api.apply(obj, dry_run=not real)
        where = f"{obj['kind']}/{obj['metadata']['name']}"
        assert r.status_code in (200, 201), f"{where}: {r.status_code} {r.text[:600]}"
        assert "Warning" not in r.headers, f"{where}: {r.headers.get('Warning')}"
        if not real:
            assert ops_kube.http.get(api.path(obj)).status_code == 404, f"{where} was stored by a dry run"
    deployment = one(objects, "Deployment")
    template = copy.deepcopy(deployment["spec"]["template"])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {**template["metadata"], "name": "chart-dry-run"},
           "spec": template["spec"]}
    r = api.create_pod_dry_run(namespace, pod)
    assert r.status_code == 201, f"{r.status_code} {r.text[:600]}"
    assert "Warning" not in r.headers, r.headers.get("Warning")
    assert key(deployment)[1] == namespace


# --------------------------------------------------------------------------- Prometheus Operator objects


RULES = CHART.parents[1] / "monitoring" / "prometheus" / "scheduler-extender.rules.yaml"


def test_the_charts_rules_are_the_monitoring_rules() -> None:
    """The chart's files/ copy of the alerting rules is byte for byte monitoring/prometheus's (Helm reads
    nothing outside the chart): edit monitoring/, then copy."""
    assert (CHART / "files" / RULES.name).read_bytes() == RULES.read_bytes()


@pytest.mark.parametrize("layout", ["sidecar", "standalone"])
def test_monitors_scrape_the_health_port_as_the_rules_job(helm: Path, layout: str) -> None:
    """Off by default. On: a PodMonitor (sidecar) or ServiceMonitor (standalone) on the health port whose job
    label is the job the rules and the dashboard select, and a PrometheusRule holding exactly the rules."""
    assert not [o for o in render(helm, layout=layout) if o["apiVersion"].startswith("monitoring.coreos.com")]
    objects = render(helm, "monitoring.podMonitor.enabled=true", "monitoring.prometheusRule.enabled=true",
                     "monitoring.podMonitor.labels.release=prom", layout=layout)
    job = re.search(r'job="([^"]+)"', RULES.read_text())
    assert job is not None
    rule = one(objects, "PrometheusRule")
    assert rule["spec"] == yaml.safe_load(RULES.read_text())
    deployment = one(objects, "Deployment")
    if layout == "sidecar":
        monitor = one(objects, "PodMonitor")
        (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
        assert endpoint["port"] == "health"
        labelled = deployment["spec"]["template"]["metadata"]["labels"]
    else:
        monitor = one(objects, "ServiceMonitor")
        (endpoint,) = monitor["spec"]["endpoints"]
        service = one(objects, "Service")
        port = next(p for p in service["spec"]["ports"] if p["name"] == endpoint["port"])
        assert port["targetPort"] == "health"
        labelled = service["metadata"]["labels"]
    assert endpoint["path"] == "/metrics"
    assert monitor["metadata"]["labels"]["release"] == "prom"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= labelled.items()
    assert labelled[monitor["spec"]["jobLabel"]] == job.group(1)
