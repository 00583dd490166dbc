"""The Kubernetes manifests under k8s/: consistent, least-privilege, no verb reachable without
authentication beyond loopback, accepted by a real apiserver, and the sidecar's KubeSchedulerConfiguration
driving the real kube-scheduler through our extender.

Without a control plane: every document parses, each kustomization lists exactly its folder's files, the
extender's ClusterRoles grant get/list/watch on exactly the kinds the live cache watches
(``extender.cluster.live.WATCHED_KINDS``) and nothing else, binding is a separate grant, the Deployments carry
the probes, resources and security context the operations guide promises, and the verbs are on loopback
(sidecar) or behind mutual TLS and a NetworkPolicy (standalone), with probes and metrics on the plain health
port (``exposure.py``). The extender containers' own command lines are then run for real (with the demo
cluster instead of --in-cluster) to see that the health port serves probes and metrics but no verb, and that
the verbs answer only where the static check says.

With kube-apiserver v1.36.3 (e2e): Namespaces and ServiceAccounts are created for real, every other object
is applied server-side with ``dryRun=All`` and must be accepted without warnings, and the pod templates are
dry-run created as Pods (admission included: Pod Security "restricted" in the extender's namespace).
Then kube-scheduler runs with the ConfigMap's configuration (only the kubeconfig and the extender's URL
changed), our service watches the apiserver (as --in-cluster would), and a pod that asks for
``extender-scheduler`` is filtered, scored and bound by our service.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from controlplane import ControlPlane, KubeClient, Obj, Scheduler, free_port
from exposure import check_objects, is_extender, listener
from ops_support import Pki, Service, metric_value, running

from extender.cluster.live import WATCHED_KINDS
from extender.kubeapi.client import RESOURCES

REPO = Path(__file__).resolve().parents[2]
K8S = REPO / "k8s"
FOLDERS = sorted(p.parent for p in K8S.rglob("kustomization.yaml"))
MANIFESTS = sorted(p for p in K8S.rglob("*.yaml") if p.name != "kustomization.yaml")


def documents(path: Path) -> list[Obj]:
    """The non-empty YAML documents of a file."""
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def all_objects() -> list[tuple[Path, Obj]]:
    """Every object of every manifest, with its file."""
    return [(p, d) for p in MANIFESTS for d in documents(p)]


def find(kind: str, name: str) -> Obj:
    """The one object of a kind and name."""
    found = [d for _, d in all_objects() if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} found"
    return found[0]


def scheduler_config() -> Obj:
    """The sidecar's KubeSchedulerConfiguration, parsed from its ConfigMap."""
    config: Obj = yaml.safe_load(find("ConfigMap", "extender-scheduler-config")["data"]["config.yaml"])
    return config


# --------------------------------------------------------------------------- static checks


def test_every_manifest_is_a_kubernetes_object() -> None:
    """apiVersion, kind and name on every document; namespaced kinds say their namespace."""
    assert {p.relative_to(K8S).parts[0] for p in MANIFESTS} == {"sidecar", "standalone", "standalone-bind"}
    cluster_scoped = {"Namespace", "ClusterRole", "ClusterRoleBinding"}
    for path, obj in all_objects():
        assert obj.get("apiVersion") and obj.get("kind") and obj["metadata"].get("name"), path
        if obj["kind"] not in cluster_scoped:
            assert obj["metadata"].get("namespace"), f"{path}: {obj['kind']}/{obj['metadata']['name']}"


@pytest.mark.parametrize("folder", FOLDERS, ids=[str(f.relative_to(K8S)) for f in FOLDERS])
def test_kustomization_lists_its_folder(folder: Path) -> None:
    """Each kustomization.yaml names every manifest beside it, and only existing files and folders."""
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
    resources = kustomization["resources"]
    for entry in resources:
        assert (folder / entry).exists(), f"{folder}/{entry}"
    local = {p.name for p in folder.glob("*.yaml") if p.name != "kustomization.yaml"}
    assert local == {r for r in resources if "/" not in r and r.endswith(".yaml")}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
@pytest.mark.parametrize("folder", FOLDERS, ids=[str(f.relative_to(K8S)) for f in FOLDERS])
def test_kustomize_renders(folder: Path) -> None:
    """``kubectl kustomize`` builds each folder (a check of the kustomizations, not of the objects)."""
    out = subprocess.run(["kubectl", "kustomize", str(folder)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert [d for d in yaml.safe_load_all(out.stdout) if d]


def _rules(role: Obj) -> set[tuple[str, str, str]]:
    return {(g, r, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]
            for v in rule["verbs"]}


def _group_resource(path: str) -> tuple[str, str]:
    """('', 'pods') for /api/v1/pods, ('apps', 'replicasets') for /apis/apps/v1/replicasets."""
    parts = path.strip("/").split("/")
    return ("", parts[2]) if parts[0] == "api" else (parts[1], parts[3])


@pytest.mark.parametrize("name", ["scheduler-extender-reader", "extender-scheduler-reader"])
def test_reader_role_covers_exactly_the_watched_kinds(name: str) -> None:
    """get/list/watch on each kind the live cache watches; no other resource, verb or wildcard."""
    role = find("ClusterRole", name)
    expected = {(*_group_resource(RESOURCES[kind].path), verb) for kind in WATCHED_KINDS
                for verb in ("get", "list", "watch")}
    assert _rules(role) == expected
    assert not any("resourceNames" in rule or "nonResourceURLs" in rule for rule in role["rules"])


def test_binding_is_a_separate_grant() -> None:
    """create pods/binding in its own ClusterRole, bound for the sidecar (bindVerb set) and only in the opt-in
    overlay (k8s/standalone-bind) for the standalone Deployment."""
    for name in ("scheduler-extender-binder", "extender-scheduler-binder"):
        assert _rules(find("ClusterRole", name)) == {("", "pods/binding", "create")}
        assert find("ClusterRoleBinding", name)["roleRef"]["name"] == name
    for path, obj in all_objects():
        if obj["kind"] in ("ClusterRole", "Role"):
            for rule in obj["rules"]:
                assert "*" not in rule.get("verbs", []) + rule.get("resources", []) + rule.get("apiGroups", [])
        if obj["kind"] == "ClusterRole" and obj["metadata"]["name"].startswith("scheduler-extender-binder"):
            assert path.parent.name == "standalone-bind", path
    assert scheduler_config()["extenders"][0]["bindVerb"] == "bind"
    assert find("ClusterRoleBinding", "extender-scheduler-binder")["subjects"][0]["name"] == "extender-scheduler"
    overlay = yaml.safe_load((K8S / "standalone-bind" / "kustomization.yaml").read_text())["resources"]
    assert overlay == ["../standalone", "binder.yaml"]


def test_sidecar_scheduler_roles_follow_upstream() -> None:
    """system:kube-scheduler, system:volume-scheduler, the authentication reader, and its own Lease."""
    for name, role in (("extender-scheduler-as-kube-scheduler", "system:kube-scheduler"),
                       ("extender-scheduler-as-volume-scheduler", "system:volume-scheduler")):
        assert find("ClusterRoleBinding", name)["roleRef"]["name"] == role
    reader = find("RoleBinding", "extender-scheduler-extension-apiserver-authentication-reader")
    assert reader["metadata"]["namespace"] == "kube-system"
    assert reader["roleRef"]["name"] == "extension-apiserver-authentication-reader"
    election = scheduler_config()["leaderElection"]
    lease = find("Role", "extender-scheduler-leader-election")
    assert lease["metadata"]["namespace"] == election["resourceNamespace"]
    assert lease["rules"][0]["resourceNames"] == [election["resourceName"]]


def test_sidecar_configuration() -> None:
    """A second scheduler whose extender is the sidecar on loopback, names only, filter/prioritize/bind."""
    config = scheduler_config()
    assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert [p["schedulerName"] for p in config["profiles"]] == ["extender-scheduler"]
    (ext,) = config["extenders"]
    assert ext["urlPrefix"] == "http://127.0.0.1:8888"
    assert (ext["filterVerb"], ext["prioritizeVerb"], ext["bindVerb"]) == ("filter", "prioritize", "bind")
    assert ext["nodeCacheCapable"] is True and ext["weight"] >= 1 and ext["httpTimeout"]
    pod = find("Deployment", "extender-scheduler")["spec"]["template"]["spec"]
    images = {c["name"]: c["image"] for c in pod["containers"]}
    assert images["kube-scheduler"] == "registry.k8s.io/kube-scheduler:v1.36.3"
    assert "--in-cluster" in next(c for c in pod["containers"] if c["name"] == "extender")["args"]


def _hardened(container: Obj, pod: Obj) -> None:
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"


def test_standalone_deployment() -> None:
    """2+ replicas, probes on /readyz and /healthz, resources, a hardened security context, a writable /tmp
    only, and a Service and PodDisruptionBudget that select its pods."""
    deployment = find("Deployment", "scheduler-extender")
    assert deployment["spec"]["replicas"] >= 2
    template = deployment["spec"]["template"]
    pod = template["spec"]
    (container,) = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["resources"]["requests"]["cpu"] and container["resources"]["limits"]["memory"]
    _hardened(container, pod)
    assert [m["mountPath"] for m in container["volumeMounts"]] == ["/tmp", "/etc/extender/tls"]
    assert all(m.get("readOnly") for m in container["volumeMounts"][1:])
    assert "--in-cluster" in container["args"]
    labels = template["metadata"]["labels"]
    service = find("Service", "scheduler-extender")
    assert service["spec"]["selector"].items() <= labels.items()
    assert service["spec"]["ports"][0]["targetPort"] in {p["name"] for p in container["ports"]}
    pdb = find("PodDisruptionBudget", "scheduler-extender")
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert pdb["spec"]["minAvailable"] < deployment["spec"]["replicas"]
    sidecar = find("Deployment", "extender-scheduler")["spec"]["template"]["spec"]
    for c in sidecar["containers"]:
        _hardened(c, sidecar)


# --------------------------------------------------------------------------- who can reach the verbs


def folder_objects(folder: str) -> list[Obj]:
    """The objects ``kubectl apply -k k8s/<folder>`` creates (its own files and the folders it includes)."""
    base = K8S / folder
    out: list[Obj] = []
    for entry in yaml.safe_load((base / "kustomization.yaml").read_text())["resources"]:
        target = (base / entry).resolve()
        out += folder_objects(str(target.relative_to(K8S))) if target.is_dir() else documents(target)
    return out


def test_no_verb_is_reachable_without_authentication_beyond_loopback() -> None:
    """Sidecar: the verbs on 127.0.0.1, kube-scheduler calling them there, no port of theirs declared.
    Standalone: the verbs over mutual TLS, a NetworkPolicy letting only kube-scheduler reach them.
    Both: probes and the Prometheus annotation on the plain health port (exposure.py says why each matters)."""
    for folder in ("sidecar", "standalone", "standalone-bind"):
        checked = check_objects(folder_objects(folder))
        assert checked and all(not found for found in checked.values()), f"{folder}: {checked}"
    sidecar = find("Deployment", "extender-scheduler")["spec"]["template"]["spec"]
    ext = next(c for c in sidecar["containers"] if is_extender(c))
    assert listener(ext).loopback_only and not sidecar.get("hostNetwork")
    standalone = find("Deployment", "scheduler-extender")["spec"]["template"]
    (ext,) = standalone["spec"]["containers"]
    assert listener(ext).mutual_tls
    tls_volume = next(v for v in standalone["spec"]["volumes"] if v["name"] == "tls")
    assert tls_volume["secret"]["secretName"] == "scheduler-extender-tls"
    policy = find("NetworkPolicy", "scheduler-extender")
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= standalone["metadata"]["labels"].items()
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    ports = {p["name"]: p["containerPort"] for p in ext["ports"]}
    opened_verbs = False
    for rule in policy["spec"]["ingress"]:
        assert rule.get("ports"), "an ingress rule without ports opens every port"
        assert rule.get("from"), f"an ingress rule open to every source: {rule}"
        opened = {ports.get(p["port"], p["port"]) for p in rule["ports"]}
        assert opened in ({listener(ext).port}, {listener(ext).health_port}), opened
        opened_verbs |= listener(ext).port in opened
    assert opened_verbs, "kube-scheduler cannot reach the verbs"
    # The sidecar's pod (its kube-scheduler included) admits no one but the node: kubelet's probes.
    sidecar_policy = find("NetworkPolicy", "extender-scheduler")
    sidecar_pod = find("Deployment", "extender-scheduler")["spec"]["template"]
    assert sidecar_policy["spec"]["podSelector"]["matchLabels"].items() <= sidecar_pod["metadata"]["labels"].items()
    assert sidecar_policy["spec"]["policyTypes"] == ["Ingress"] and sidecar_policy["spec"]["ingress"] == []


def _mutated(folder: str, change: Any) -> list[Obj]:
    objects = copy.deepcopy(folder_objects(folder))
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    change(pod, next(c for c in pod["containers"] if is_extender(c)), objects)
    return objects


@pytest.mark.parametrize(("folder", "change", "expected"), [
    ("sidecar", lambda pod, c, objs: c["args"].append("--host=0.0.0.0"), "without mutual TLS"),
    ("sidecar", lambda pod, c, objs: pod.update(hostNetwork=True), "hostNetwork"),
    ("sidecar", lambda pod, c, objs: c["args"].remove("--health-port=8889"), "no separate plain health port"),
    ("sidecar", lambda pod, c, objs: c["env"].append({"name": "EXTENDER_HOST", "value": "0.0.0.0"})
     or c["args"].remove("--host=127.0.0.1"), "without mutual TLS"),
    ("standalone", lambda pod, c, objs: c["args"].remove("--client-ca-file=/etc/extender/tls/ca.crt"),
     "without mutual TLS"),
    ("standalone", lambda pod, c, objs: c["readinessProbe"]["httpGet"].update(port="extender"),
     "readinessProbe aims at port extender"),
    ("standalone", lambda pod, c, objs: [c["args"].remove(a) for a in list(c["args"]) if a.startswith("--tls")],
     "Service scheduler-extender: port 8888 forwards to the verbs"),
])
def test_the_exposure_check_sees_each_way_in(folder: str, change: Any, expected: str) -> None:
    """Each exposure the check exists for, made in a copy of the manifests, is reported."""
    found = [p for problems in check_objects(_mutated(folder, change)).values() for p in problems]
    assert any(expected in p for p in found), found


def _serves_health_port() -> bool:
    out = subprocess.run([sys.executable, "-m", "extender", "serve", "--help"], capture_output=True, text=True,
                         check=False, cwd=REPO)
    return "--health-port" in out.stdout


def _local_argv(container: Obj, port: int, health_port: int, pki: Pki | None = None,
                source: str = f"--cluster={REPO / 'config' / 'demo-cluster.yaml'}") -> list[str]:
    """The container's command line, run here: ``source`` (the demo cluster) instead of --in-cluster, free
    loopback ports instead of 8888/8889 and 0.0.0.0 (tests listen on loopback only), the test PKI instead of
    the Secret."""
    files = {"tls.crt": pki.server.cert, "tls.key": pki.server.key, "ca.crt": pki.ca} if pki else {}
    argv = [sys.executable, "-m", "extender", "serve", "--host", "127.0.0.1"]
    for arg in container["args"]:
        name, _, value = arg.partition("=")
        if arg == "--in-cluster":
            arg = source
        elif name == "--host":
            arg = "--host=127.0.0.1"
        elif name == "--port":
            arg = f"--port={port}"
        elif name == "--health-port":
            arg = f"--health-port={health_port}"
        elif name in ("--tls-cert-file", "--tls-key-file", "--client-ca-file"):
            arg = f"{name}={files[value.rsplit('/', 1)[-1]]}"
        argv.append(arg)
    return [*argv, "--health-host=127.0.0.1"]


FILTER_BODY = (REPO / "examples" / "requests" / "filter.json").read_bytes()


@pytest.mark.parametrize("name", ["extender-scheduler", "scheduler-extender"])
def test_the_manifest_command_lines_serve_verbs_only_where_checked(name: str, pki: Pki, tmp_path: Path) -> None:
    """The extender container's own arguments, run: the health port answers /healthz, /readyz and /metrics
    over plain HTTP and no verb; the verbs answer on their port, and there only with a client certificate
    when the manifest asks for mutual TLS."""
    if not _serves_health_port():
        pytest.skip("extender serve has no --health-port yet")
    pod = find("Deployment", name)["spec"]["template"]["spec"]
    container = next(c for c in pod["containers"] if is_extender(c))
    mtls = listener(container).mutual_tls
    port, health = free_port(), free_port()
    svc = Service(tmp_path, port=health, command=_local_argv(container, port, health, pki), cluster=None)
    with running(svc, timeout=60), svc.client() as plain:
        assert plain.get("/healthz").status_code == 200
        assert plain.get("/readyz").json()["ready"] is True
        assert "extender_requests_total" in plain.get("/metrics").text
        for verb in ("filter", "prioritize", "bind", "preempt", "profiles/default-scheduler/filter"):
            answer = plain.post(f"/{verb}", content=FILTER_BODY, headers={"content-type": "application/json"})
            assert answer.status_code in (404, 405), f"/{verb} on the health port: {answer.status_code}"
        verbs = f"{'https' if mtls else 'http'}://127.0.0.1:{port}"
        post = {"content": FILTER_BODY, "headers": {"content-type": "application/json"}, "timeout": 10}
        if not mtls:
            assert httpx.post(f"{verbs}/filter", **post).json()["Error"] == ""  # type: ignore[arg-type]
            return
        with pytest.raises(httpx.HTTPError):
            httpx.post(f"http://127.0.0.1:{port}/filter", **post)  # type: ignore[arg-type]
        with pytest.raises(httpx.HTTPError):
            httpx.post(f"{verbs}/filter", verify=pki.client_context(None), **post)  # type: ignore[arg-type]
        with pytest.raises(httpx.HTTPError):
            httpx.post(f"{verbs}/filter", verify=pki.client_context(pki.stranger), **post)  # type: ignore[arg-type]
        ok = httpx.post(f"{verbs}/filter", verify=pki.client_context(pki.client), **post)  # type: ignore[arg-type]
        assert ok.status_code == 200 and ok.json()["Error"] == ""


# --------------------------------------------------------------------------- against kube-apiserver


class Api:
    """Kind -> REST path through the apiserver's discovery, and requests that keep the Warning headers."""

    def __init__(self, kube: KubeClient) -> None:
        self.http: httpx.Client = kube.http
        self._resources: dict[str, dict[str, tuple[str, bool]]] = {}

    def _discover(self, api_version: str) -> dict[str, tuple[str, bool]]:
        if api_version not in self._resources:
            base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
            r = self.http.get(base)
            r.raise_for_status()
            self._resources[api_version] = {
                res["kind"]: (f"{base}/{res['name']}", bool(res["namespaced"]))
                for res in r.json()["resources"] if "/" not in res["name"]}
        return self._resources[api_version]

    def path(self, obj: Obj) -> str:
        """The object's own URL path."""
        collection, namespaced = self._discover(obj["apiVersion"])[obj["kind"]]
        name = obj["metadata"]["name"]
        if namespaced:
            base, _, plural = collection.rpartition("/")
            return f"{base}/namespaces/{obj['metadata']['namespace']}/{plural}/{name}"
        return f"{collection}/{name}"

    def apply(self, obj: Obj, dry_run: bool) -> httpx.Response:
        """Server-side apply (optionally dryRun=All)."""
        params = {"fieldManager": "ops-manifest-test", "force": "true"}
        if dry_run:
            params["dryRun"] = "All"
        response: httpx.Response = self.http.patch(self.path(obj), params=params, content=json.dumps(obj),
                                                   headers={"Content-Type": "application/apply-patch+yaml"})
        return response

    def create_pod_dry_run(self, namespace: str, pod: Obj) -> httpx.Response:
        """POST a Pod with dryRun=All: validation and admission, nothing stored."""
        response: httpx.Response = self.http.post(f"/api/v1/namespaces/{namespace}/pods", params={"dryRun": "All"},
                                                  content=json.dumps(pod), headers={"Content-Type": "application/json"})
        return response


@pytest.mark.e2e
def test_every_manifest_is_accepted_by_the_apiserver(ops_kube: KubeClient) -> None:
    """Namespaces and ServiceAccounts for real, the rest server-side dry-run; all accepted, no warnings."""
    api = Api(ops_kube)
    objects = [obj for _, obj in all_objects()]
    order = ["Namespace", "ServiceAccount"]
    for obj in sorted(objects, key=lambda o: order.index(o["kind"]) if o["kind"] in order else len(order)):
        real = obj["kind"] in order
        r = api.apply(obj, dry_run=not real)
        where = f"{obj['kind']}/{obj['metadata']['name']}"
        assert r.status_code in (200, 201), f"{where}: {r.status_code} {r.text[:600]}"
        assert "Warning" not in r.headers, f"{where}: {r.headers.get('Warning')}"
        returned = r.json()
        assert returned["kind"] == obj["kind"] and returned["metadata"]["name"] == obj["metadata"]["name"]
        if not real:  # dry run: nothing stored
            assert ops_kube.http.get(api.path(obj)).status_code == 404, f"{where} was stored by a dry run"

    for deployment in (find("Deployment", "scheduler-extender"), find("Deployment", "extender-scheduler")):
        template = copy.deepcopy(deployment["spec"]["template"])
        namespace = deployment["metadata"]["namespace"]
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {**template["metadata"], "name": f"{deployment['metadata']['name']}-dry-run"},
               "spec": template["spec"]}
        r = api.create_pod_dry_run(namespace, pod)
        assert r.status_code == 201, f"pod of {deployment['metadata']['name']}: {r.status_code} {r.text[:600]}"
        assert "Warning" not in r.headers, r.headers.get("Warning")


@pytest.fixture
def live_namespace(ops_kube: KubeClient) -> Iterator[str]:
    """A namespace for the test's pods; its pods and every node are removed afterwards."""
    ns = f"ops-sidecar-{int(time.time() * 1000) % 100000}"
    ops_kube.ensure_namespace(ns)
    yield ns
    ops_kube.delete_pods(ns)
    ops_kube.delete_all_nodes()


@pytest.mark.e2e
def test_sidecar_configuration_schedules_and_binds_through_the_extender(
    ops_control_plane: ControlPlane, ops_kube: KubeClient, live_namespace: str, tmp_path: Path
) -> None:
    """The ConfigMap's KubeSchedulerConfiguration, as shipped but for the kubeconfig and the extender's port,
    drives kube-scheduler v1.36.3: a pod asking for extender-scheduler is filtered and scored by our service,
    and bound by it (with bindVerb kube-scheduler does not bind: the pod gets its node from our Binding).
    The extender runs with the container's own arguments (verbs on loopback, probes and metrics on the health
    port), but for free ports and a kubeconfig: --in-cluster needs a pod's service account."""
    ops_kube.create_node("node-a")
    ops_kube.create_node("node-b")
    kubeconfig = f"--kubeconfig={ops_control_plane.kubeconfig}"
    if _serves_health_port():
        pod_spec = find("Deployment", "extender-scheduler")["spec"]["template"]["spec"]
        container = next(c for c in pod_spec["containers"] if is_extender(c))
        port, health = free_port(), free_port()
        svc = Service(tmp_path, port=health, cluster=None,
                      command=_local_argv(container, port, health, source=kubeconfig))
        verbs_url = f"http://127.0.0.1:{port}"
    else:  # before the health port existed: the verbs and the probes on one port
        svc = Service(tmp_path, [kubeconfig], cluster=None)
        verbs_url = svc.url
    with running(svc, timeout=60):
        config = scheduler_config()
        config["clientConnection"] = {"kubeconfig": str(ops_control_plane.kubeconfig)}
        assert config["extenders"][0]["urlPrefix"] == "http://127.0.0.1:8888"
        config["extenders"][0]["urlPrefix"] = verbs_url
        scheduler = Scheduler(ops_control_plane, tmp_path / "extender-scheduler", config)
        try:
            scheduler.wait_ready()
            pod: dict[str, Any] = {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "web", "namespace": live_namespace},
                "spec": {"schedulerName": "extender-scheduler", "terminationGracePeriodSeconds": 0,
                         "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                         "resources": {"requests": {"cpu": "100m"}}}]},
            }
            ops_kube.post(f"/api/v1/namespaces/{live_namespace}/pods", pod)
            node = ops_kube.wait_scheduled(live_namespace, "web", timeout=60)
            assert node in ("node-a", "node-b")
            with svc.client() as client:
                metrics = client.get("/metrics").text
        finally:
            scheduler.stop()
    profile = "default-scheduler"
    assert metric_value(metrics, "extender_requests_total", verb="filter", profile=profile, code="200") >= 1
    assert metric_value(metrics, "extender_requests_total", verb="prioritize", profile=profile, code="200") >= 1
    assert metric_value(metrics, "extender_binds_total", outcome="bound") == 1
    assert "extender_binds_total{outcome=\"error\"}" not in metrics
