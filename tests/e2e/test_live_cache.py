"""End-to-end: the live cluster cache (``extender serve --kubeconfig``) against the real kube-apiserver.

Each test compares two caches with a fresh LIST of every watched kind: our service's (through /readyz
counts and /filter probes that read each node's requested CPU and memory to the millicore and byte) and
an in-process ``LiveSource`` on the same apiserver (exactly: per-node pod UIDs, requests, every object's
resourceVersion). Bursts create, change and delete Nodes, Pods (assigned, pending, bound later,
terminating, Succeeded), Services, PVCs and Namespaces from several threads at once.

The restart and compaction tests use a private etcd and kube-apiserver ("A", killed with SIGKILL and
restarted on the same port) plus a second apiserver on the same etcd to write through while A is down.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from controlplane import ControlPlane, KubeClient, Obj, TestCluster
from live_helpers import (
    Burst,
    ClusterView,
    InProcessSource,
    Janitor,
    LiveService,
    LiveServices,
    SpareControlPlane,
    all_kinds,
    check_pod_counts,
    churn,
    poll,
    register_burst_cleanup,
    restarts_by_reason,
    run_burst,
    service_account_token,
    wait_converged,
    write_kubeconfig,
)

from extender.kubeapi.client import RESOURCES

pytestmark = pytest.mark.e2e

Check = Callable[[ClusterView], list[str]]
LAGGING = ["PersistentVolumeClaim", "StorageClass"]  # kinds the service account may not read at first


def read_rules(kinds: list[str]) -> list[dict[str, list[str]]]:
    """RBAC rules to get, list and watch these kinds (API group and resource from the client's paths)."""
    rules = []
    for kind in kinds:
        parts = RESOURCES[kind].path.strip("/").split("/")  # api/v1/pods or apis/<group>/<version>/<resource>
        group = "" if parts[0] == "api" else parts[1]
        rules.append({"apiGroups": [group], "resources": [parts[-1]], "verbs": ["get", "list", "watch"]})
    return rules



@pytest.fixture
def janitor() -> Iterator[Janitor]:
    """Cleanup actions registered by the test, run after it whatever its outcome."""
    j = Janitor()
    yield j
    failures = j.run()
    assert not failures, failures


@pytest.fixture(scope="module")
def spare(k8s_bin: Path, e2e_workdir: Path) -> Iterator[SpareControlPlane]:
    """A private etcd + kube-apiserver that the tests may kill, plus a writer apiserver on the same etcd."""
    cp = SpareControlPlane(k8s_bin, e2e_workdir / "spare-controlplane")
    try:
        cp.start()
        yield cp
    finally:
        cp.stop()


def lagging_with(svc: LiveService, code: str, kinds: list[str]) -> Callable[[], Obj | None]:
    """A poll check: /readyz is 503, exactly ``kinds`` are unsynced and each failed last with ``code``."""

    def check() -> Obj | None:
        status, body = svc.readyz()
        states = body.get("kinds") or {}
        if status == 503 and body.get("unsynced") == kinds and all(
                code in str(states.get(k, {}).get("lastError")) for k in kinds):
            return body
        return None

    return check


def version_unread_with(svc: LiveService, code: str) -> Callable[[], Obj | None]:
    """A poll check: /readyz is 503 while the service cannot read the apiserver's /version (which it reads
    before listing any kind, to settle kubernetesVersion auto), the last attempt having failed with ``code``."""

    def check() -> Obj | None:
        status, body = svc.readyz()
        pending = body.get("kubernetesVersion") or {}
        if (status == 503 and body.get("unsynced") == ["(the apiserver's /version)"]
                and code in str(pending.get("lastError"))):
            return body
        return None

    return check


def test_cache_equals_apiserver_after_bursts(
    control_plane: ControlPlane,
    kube: KubeClient,
    cluster: TestCluster,
    live_services: LiveServices,
    janitor: Janitor,
    tmp_path: Path,
) -> None:
    """/readyz is 503 and names the lagging kinds until every kind has synced, then 200; after concurrent
    bursts over every kind, both caches equal a fresh LIST (per-node pods and requests, counts, versions).

    The service starts with a token file holding a wrong token (its first read, the apiserver's /version,
    fails with 401 and no kind is listed before it succeeds), then the file gets
    a service account's token (re-read after a 401) whose role cannot read PVCs and StorageClasses (those
    two lag, 403), then the role is widened while the bursts run.
    """
    role = f"{cluster.ns}-extender"
    janitor.add("cluster role", lambda: kube.delete(f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{role}"))
    janitor.add("binding", lambda: kube.delete(f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{role}"))
    kube.post("/apis/rbac.authorization.k8s.io/v1/clusterroles",
              {"metadata": {"name": role}, "rules": read_rules([k for k in all_kinds(kube) if k not in LAGGING])})
    kube.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
              {"metadata": {"name": role},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
               "subjects": [{"kind": "ServiceAccount", "name": "extender", "namespace": cluster.ns}]})
    token = service_account_token(kube, cluster.ns, "extender")
    token_file = tmp_path / "token"
    token_file.write_text("not-a-valid-token\n")
    svc = live_services.start(write_kubeconfig(tmp_path / "sa.kubeconfig", control_plane.url,
                                               control_plane.ca_file, token_file=token_file))

    body = poll("/version unread, failing with 401", version_unread_with(svc, "401"), 20)
    assert body["ready"] is False and body["cache"]["nodes"] == 0 and body["kinds"] == {}, body

    token_file.write_text(token)
    body = poll("only PVCs and StorageClasses lagging, failing with 403", lagging_with(svc, "403", LAGGING), 30)
    assert body["ready"] is False, body
    assert all(body["kinds"][k]["synced"] for k in all_kinds(kube) if k not in LAGGING), body

    burst = Burst(prefix="live", ns=cluster.ns)
    register_burst_cleanup(janitor, control_plane.client, burst)
    with InProcessSource(control_plane.kubeconfig) as source:
        kube.merge_patch(f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{role}",
                         {"rules": read_rules(all_kinds(kube))})
        run_burst(control_plane.client, burst)
        body = svc.wait_ready(timeout=60)
        assert body["unsynced"] == [] and body["ready"] is True, body
        checks: dict[str, Check] = {"in-process LiveSource": source.diffs, "service": svc.diffs}
        view = wait_converged(kube, checks, timeout=60)

    # The bursts did reach the cases that matter.
    counts = view.counts()
    assert counts["placeholder_nodes"] >= 1 and counts["pending_pods"] >= 1, counts
    assert burst.ghost_node in view.per_node and burst.node_names[-1] not in view.nodes
    everything = kube.get(f"/api/v1/namespaces/{cluster.ns}/pods")["items"]
    assert any(p["status"].get("phase") == "Succeeded" for p in everything)
    assert any(p["metadata"].get("deletionTimestamp") for p in everything)


def _setup_live(spare: SpareControlPlane, live_services: LiveServices, janitor: Janitor, ns: str,
                prefix: str) -> tuple[KubeClient, Burst, LiveService]:
    """A namespace and a first burst on A, our service on A; returns A's admin client."""
    admin = spare.admin()
    janitor.add("admin client", admin.close)
    admin.ensure_namespace(ns)
    burst = Burst(prefix=prefix, ns=ns, nodes=6, pod_workers=2, pods_per_worker=20, services=6, pvcs=6,
                  namespaces=2)
    register_burst_cleanup(janitor, spare.writer, burst)  # B: up even if a failure left A down
    run_burst(spare.admin, burst)
    svc = live_services.start(spare.kubeconfig)
    return admin, burst, svc


@pytest.mark.parametrize("watch_cache", [True, False], ids=["watch-cache", "no-watch-cache"])
def test_apiserver_killed_and_restarted(
    spare: SpareControlPlane, live_services: LiveServices, janitor: Janitor, watch_cache: bool
) -> None:
    """kube-apiserver SIGKILLed mid-watch: what changes while it is down (written through another
    apiserver on the same etcd) and right after it is back all reaches both caches, nothing twice.

    With the watch cache (the default) the restarted apiserver answers the resume with 410 (too old for
    its fresh cache) and the reflectors relist; without it the resume is served from etcd's history and no
    kind may relist: the changes arrive as events.
    """
    spare.ensure_apiserver(watch_cache=watch_cache)
    admin, burst, svc = _setup_live(spare, live_services, janitor, f"restart-{int(watch_cache)}",
                                    f"rs{int(watch_cache)}")
    with InProcessSource(spare.kubeconfig) as source:
        svc.wait_ready()
        checks: dict[str, Check] = {"in-process LiveSource": source.diffs, "service": svc.diffs}
        wait_converged(admin, checks)
        relists_before = {k: relists for k, (relists, _) in source.stats().items()}

        spare.kill_apiserver()
        writer = spare.writer()
        janitor.add("writer client", writer.close)
        churn(writer, burst, seed=1)
        down_burst = Burst(prefix=f"{burst.prefix}d", ns=burst.ns, nodes=3, pod_workers=1, pods_per_worker=15,
                           services=3, pvcs=3, namespaces=2, seed=7)
        register_burst_cleanup(janitor, spare.writer, down_burst)
        run_burst(spare.writer, down_burst)
        spare.start_apiserver(watch_cache=watch_cache)
        churn(admin, down_burst, seed=2)  # right after it is back, while the reflectors reconnect

        view = wait_converged(admin, checks)
        check_pod_counts(svc, admin, view)
        assert source.observer.restarts["Pod", "disconnect"] >= 1, source.observer.restarts
        assert restarts_by_reason(svc, "disconnect").get("Pod", 0) >= 1, svc.metrics()
        if not watch_cache:
            assert {k: relists for k, (relists, _) in source.stats().items()} == relists_before
            assert not restarts_by_reason(svc, "gone"), "resumed watches were answered 410 without compaction"
            assert all(state["relists"] == 1 for state in svc.readyz()[1]["kinds"].values())
    assert view.counts()["placeholder_nodes"] >= 1


def test_relist_after_compaction(spare: SpareControlPlane, live_services: LiveServices, janitor: Janitor) -> None:
    """etcd compacted past every reflector's resourceVersion while the watches are down: the resumes get
    410 Gone, every kind relists once (extender_watch_restarts_total{reason="gone"}, /readyz relists) and
    both caches converge, with the deletions made while down gone from them.

    The apiserver runs without its watch cache, so the 410 can only come from the compaction (the
    restart test shows a resume without compaction relists nothing).
    """
    spare.ensure_apiserver(watch_cache=False)
    admin, burst, svc = _setup_live(spare, live_services, janitor, "compaction", "cp")
    with InProcessSource(spare.kubeconfig) as source:
        svc.wait_ready()
        checks: dict[str, Check] = {"in-process LiveSource": source.diffs, "service": svc.diffs}
        wait_converged(admin, checks)
        assert not restarts_by_reason(svc, "gone")
        assert all(relists == 1 for relists, _ in source.stats().values()), source.stats()

        spare.kill_apiserver()
        writer = spare.writer()
        janitor.add("writer client", writer.close)
        churn(writer, burst, seed=3)
        revision = spare.etcd_revision()
        spare.compact(revision)
        spare.start_apiserver(watch_cache=False)

        check_pod_counts(svc, admin, wait_converged(admin, checks))
        kinds = all_kinds(admin)
        gone = restarts_by_reason(svc, "gone")
        assert sorted(gone) == sorted(kinds) and all(v >= 1 for v in gone.values()), gone
        states = svc.readyz()[1]["kinds"]
        assert all(states[k]["relists"] >= 2 for k in kinds), states
        assert all(source.observer.restarts[k, "gone"] >= 1 for k in kinds), source.observer.restarts
        assert all(relists >= 2 for relists, _ in source.stats().values()), source.stats()


def test_a_node_heartbeat_through_the_apiserver_leaves_the_cached_node_as_it_was(
    control_plane: ControlPlane, kube: KubeClient, cluster: TestCluster,
) -> None:
    """A status report that only moves the conditions' heartbeat times, as a kubelet sends every few minutes,
    reaches the cache through kube-apiserver (which also moves the version and the managed fields' times) and
    leaves the node as it was: the same record, now at the new resourceVersion, and the same generation. A
    report that changes a condition's status is a new node."""
    name = f"{cluster.ns}-beat"[:63]
    stored = cluster.node(name)

    def held(version: str) -> tuple[object, int] | None:
        def read() -> tuple[object, int] | None:
            info = source.cache.node_info(name)
            if info is None or info.node is None or info.node.resource_version != version:
                return None
            return info.node, info.generation
        return source.call(read)

    def report(ready: str, when: str) -> Obj:
        conditions = [{**c, "status": ready if c["type"] == "Ready" else c["status"], "lastHeartbeatTime": when}
                      for c in stored["status"]["conditions"]]
        return kube.merge_patch(f"/api/v1/nodes/{name}/status", {"status": {"conditions": conditions}})

    with InProcessSource(control_plane.kubeconfig) as source:
        record, generation = poll("the node in the cache", lambda: held(stored["metadata"]["resourceVersion"]), 30)
        time.sleep(1.1)  # the managed fields keep the write's time to the second: a later one changes them
        beat = report("True", "2030-01-01T00:00:00Z")
        assert beat["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"]
        assert beat["metadata"]["managedFields"] != stored["metadata"]["managedFields"]
        after = poll("the heartbeat in the cache", lambda: held(beat["metadata"]["resourceVersion"]), 30)
        assert after == (record, generation)
        down = report("False", "2030-01-01T00:01:00Z")
        changed, changed_generation = poll("the change in the cache",
                                           lambda: held(down["metadata"]["resourceVersion"]), 30)
        assert changed is not record and changed_generation != generation


def test_a_replicasets_status_update_through_the_apiserver_leaves_the_snapshots_replicasets(
    control_plane: ControlPlane, kube: KubeClient, cluster: TestCluster,
) -> None:
    """kube-controller-manager writes a ReplicaSet's status (its replica counts) at each step of its pods, through
    the status subresource. Through kube-apiserver (which moves the version and the managed fields too), such an
    update reaches the cache, which then holds it, and leaves the snapshot's mapping of ReplicaSets as it was:
    nothing default spreading reads of it changed. A change of its labels gives the kind a new mapping."""
    name = "web-status"
    path = f"/apis/apps/v1/namespaces/{cluster.ns}/replicasets"
    template = {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "registry.example.com/web:1"}]}}
    created = kube.post(path, {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                               "metadata": {"name": name, "namespace": cluster.ns},
                               "spec": {"replicas": 0, "selector": {"matchLabels": {"app": name}},
                                        "template": template}})
    key = f"{cluster.ns}/{name}"

    def held(version: str) -> object | None:
        def read() -> object | None:
            obj = source.cache.get_object("ReplicaSet", key)
            if obj is None or obj["metadata"]["resourceVersion"] != version:
                return None
            return source.cache.snapshot().kind("ReplicaSet")
        return source.call(read)

    with InProcessSource(control_plane.kubeconfig) as source:
        mapping = poll("the ReplicaSet in the cache", lambda: held(created["metadata"]["resourceVersion"]), 30)
        time.sleep(1.1)  # the managed fields keep the write's time to the second: a later one changes them
        status = kube.merge_patch(f"{path}/{name}/status", {"status": {"replicas": 0, "observedGeneration": 1}})
        assert status["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
        assert poll("the status update in the cache", lambda: held(status["metadata"]["resourceVersion"]), 30) \
            is mapping
        labelled = kube.merge_patch(f"{path}/{name}", {"metadata": {"labels": {"tier": "front"}}})
        assert poll("the label change in the cache", lambda: held(labelled["metadata"]["resourceVersion"]), 30) \
            is not mapping
