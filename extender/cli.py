"""The ``extender`` command: ``serve`` the extender; ``explain`` a pod and ``simulate`` a batch of pods against
a cluster dump or the live cluster (listed once, nothing written); ``place`` replicas across clusters; ``plan``
capacity and what-if sweeps over simulate.

Every ``serve`` option can also come from the environment (EXTENDER_HOST, EXTENDER_PORT,
EXTENDER_HEALTH_HOST, EXTENDER_HEALTH_PORT, EXTENDER_CLUSTER, EXTENDER_CONFIG, EXTENDER_LOG_LEVEL,
EXTENDER_KUBERNETES_VERSION, EXTENDER_FEATURE_GATES); a flag wins over the environment, and both win over the
configuration file.
"""

from __future__ import annotations

import argparse
import importlib.resources
import logging
import os
import ssl
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from extender import __version__
from extender.api.body_memory import BODY_MEMORY_FACTOR
from extender.api.connections import DEFAULT_HEAD_TIMEOUT_SECONDS, DEFAULT_KEEP_ALIVE_SECONDS
from extender.api.http import DEFAULT_MAX_BODY_BYTES, DEFAULT_READ_TIMEOUT_SECONDS
from extender.api.listener import DEFAULT_MAX_CONNECTIONS
from extender.api.routes import DEFAULT_MAX_REQUEST_NODES
from extender.cluster.cache import ClusterCache
from extender.cluster.dump import DumpError, fill_cache, read_documents, read_dump, read_dump_objects
from extender.cluster.engine_thread import DEFAULT_MAX_PENDING, DEFAULT_STALL_TIMEOUT_SECONDS, DEFAULT_TIMEOUT_SECONDS
from extender.config import Config, ConfigError, load_config
from extender.engine.explain import explain_found, render_table
from extender.engine.profile import ProfileError
from extender.engine.registry import RegistryError
from extender.engine.runtime import Framework
from extender.engine.scheduler import Scheduler
from extender.gc_tuning import settle_after_load
from extender.kube.gates import GateError, parse_gate_list
from extender.kube.release import Release, Source, VersionError, choose, parse_setting
from extender.multicluster.budget import DEFAULT_WORK_STEPS
from extender.multicluster.routes import DEFAULT_MAX_CLUSTERS as DEFAULT_MAX_PLACEMENT_CLUSTERS

# Package data, so that a plain (non-editable) install and the container image find it too.
DEMO_CLUSTER = Path(str(importlib.resources.files("extender.data").joinpath("demo-cluster.yaml")))


class CLIError(Exception):
    """A failure to report on stderr with exit code 2."""


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value else default


def read_config(config_path: str | None, args: argparse.Namespace | None = None) -> Config:
    """The validated configuration (defaults when no file), with the kubernetesVersion and feature gates of the
    command line or the environment when given (``args``), as a CLI error when it is wrong."""
    try:
        config = load_config(config_path)
    except (ConfigError, ProfileError, RegistryError) as err:
        raise CLIError(f"configuration: {err}") from err
    version_text = (getattr(args, "kubernetes_version", None) or _env("EXTENDER_KUBERNETES_VERSION")) if args else None
    gates_text = (getattr(args, "feature_gates", None) or _env("EXTENDER_FEATURE_GATES")) if args else None
    if version_text is None and gates_text is None:
        return config
    try:
        minor = parse_setting(version_text) if version_text is not None else config.kubernetes_version
        gates = parse_gate_list(gates_text) if gates_text is not None else None
        if version_text is not None and minor is None:  # "auto" given explicitly overrides a fixed file setting
            config.kubernetes_version = None
        return config.with_settings(minor, gates)
    except (VersionError, GateError) as err:
        raise CLIError(f"configuration: {err}") from err
    except (ConfigError, ProfileError, RegistryError) as err:
        raise CLIError(f"configuration: {err}") from err


def release_of(config: Config, reported: str | None = None, *, source: Source = "default",
               reported_minor: str | None = None) -> Release:
    """The release to follow for this configuration and what the cluster reports (see engine.release.choose)."""
    choice = choose(config.kubernetes_version, reported, source=source, reported_minor_field=reported_minor)
    try:
        return config.release_for(choice)
    except ConfigError as err:
        raise CLIError(f"configuration: {err}") from err


def frameworks_of(config: Config, release: Release | None = None) -> list[Framework]:
    """One framework per profile, for a release (default: the one the configuration names, or the newest
    supported release for auto). Plugin args are validated here."""
    try:
        profiles = config.profiles if release is None else config.profiles_for(release)
    except (ConfigError, ProfileError, RegistryError) as err:
        raise CLIError(f"configuration: {err}") from err
    frameworks = []
    for profile in profiles:
        try:
            frameworks.append(Framework(profile))
        except (ConfigError, ProfileError, RegistryError) as err:
            raise CLIError(f"configuration: {err}") from err
        except KeyboardInterrupt:
            raise
        except BaseException as err:
            # A user plugin's constructor, sys.exit() and BaseException included: reported as any other bad
            # configuration, never a traceback or a silent exit.
            raise CLIError(f"configuration: profile {profile.name!r}: a plugin failed to start: "
                           f"{type(err).__name__}: {_one_line(err)}") from None
    return frameworks


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or "(no message)"


def build_scheduler(cluster: str | None, config: Config | str | None, *,
                    static: bool = True) -> tuple[Scheduler, Config]:
    """Load the cluster dump and build the engine over it (``config``: a Config, or a path to one), following
    the release the configuration names or, for auto, the one the dump records (else the newest)."""
    if not isinstance(config, Config):
        config = read_config(config)
    path = cluster or str(DEMO_CLUSTER)
    try:
        contents = read_dump(path)
    except DumpError as err:
        raise CLIError(f"cluster: {err}") from err
    recorded = contents.version
    release = release_of(config, recorded.git_version if recorded else None, source="dump",
                         reported_minor=recorded.minor if recorded else None)
    # A static dump has no watch to confirm assumed pods, so they must never expire there.
    cache = ClusterCache(assumed_ttl_seconds=0 if static else config.assumed_pod_ttl_seconds, release=release)
    try:
        fill_cache(path, contents, cache)
    except DumpError as err:
        raise CLIError(f"cluster: {err}") from err
    return Scheduler(cache, frameworks_of(config, release)), config


def _warn(release: Release) -> None:
    """The one warning line of an unsupported cluster version, for the one-shot commands (stderr)."""
    if release.warning:
        sys.stderr.write(f"extender: warning: {release.warning}\n")


def _port(text: str, what: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise CLIError(f"{what}: expected 1..65535, got {text!r}")
    return int(text)


def _positive(value: float, what: str) -> None:
    if not value > 0:
        raise CLIError(f"{what}: expected a positive number, got {value:g}")


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the HTTP service until interrupted."""
    import logging

    from extender import logs
    from extender.api.app import create_app
    from extender.api.metrics import Metrics
    from extender.api.routes import RequestLimits
    from extender.cluster.engine_thread import EngineThread
    from extender.multicluster.routes import PlacementLimits

    config = read_config(args.config or _env("EXTENDER_CONFIG"), args)
    level = args.log_level or _env("EXTENDER_LOG_LEVEL") or config.log_level or "info"
    logs.configure(level)
    host = args.host or _env("EXTENDER_HOST", "127.0.0.1") or "127.0.0.1"
    port = _port(str(args.port or _env("EXTENDER_PORT", "8888")), "port")
    health_text = str(args.health_port or _env("EXTENDER_HEALTH_PORT", "") or "")
    health_port = _port(health_text, "health port") if health_text else None
    health_host = args.health_host or _env("EXTENDER_HEALTH_HOST", "0.0.0.0") or "0.0.0.0"
    if health_port is not None and health_port == port:
        raise CLIError(f"health port: {health_port} is also the verbs' port; choose another")
    for value, what in ((args.read_timeout, "read timeout"), (args.head_timeout, "head timeout"),
                        (args.keep_alive_timeout, "keep-alive timeout"), (args.request_timeout, "request timeout"),
                        (args.stall_timeout, "stall timeout")):
        _positive(value, what)
    for count, what in ((args.max_connections, "max connections"), (args.max_pending, "max pending"),
                        (args.max_request_nodes, "max request nodes"), (args.max_body_bytes, "max body bytes"),
                        (args.max_placement_clusters, "max placement clusters"),
                        (args.placement_work_limit, "placement work limit")):
        _positive(count, what)
    max_body_memory = args.max_body_memory if args.max_body_memory is not None \
        else BODY_MEMORY_FACTOR * args.max_body_bytes
    if max_body_memory < args.max_body_bytes:
        raise CLIError(f"max body memory: {max_body_memory} is less than --max-body-bytes ({args.max_body_bytes}): "
                       "a body of the largest size allowed could never be read")
    kubeconfig = args.kubeconfig or _env("EXTENDER_KUBECONFIG")
    live = bool(kubeconfig or args.in_cluster or args.live)
    cluster = args.cluster or _env("EXTENDER_CLUSTER")
    if live and cluster:
        raise CLIError("--cluster (a static dump) and a live apiserver source exclude each other")
    tls = _tls_context(args)
    engine = EngineThread(max_pending=args.max_pending, timeout=args.request_timeout)
    limits: dict[str, Any] = {"max_body_bytes": args.max_body_bytes, "read_timeout": args.read_timeout,
                              "max_body_memory": max_body_memory,
                              "member_clusters": _member_clusters(args.member_clusters
                                                                  or _env("EXTENDER_MEMBER_CLUSTERS")),
                              "engine": engine, "limits": RequestLimits(max_nodes=args.max_request_nodes),
                              "placement_limits": PlacementLimits(max_clusters=args.max_placement_clusters,
                                                                  work_steps=args.placement_work_limit),
                              "stall_timeout": args.stall_timeout}
    if live:
        app, described = _live_app(config, kubeconfig, args, create_app, Metrics, limits)
    else:
        scheduler, _config = build_scheduler(cluster, config)
        if scheduler.release.warning:
            logging.getLogger("extender").warning(scheduler.release.warning)
        scheduler.warm_up()  # before the listener opens: the first request costs what the next ones do
        app = create_app(scheduler, **limits)
        settle_after_load()
        described = {"cluster": cluster or str(DEMO_CLUSTER), "cache": scheduler.cache.counts(),
                     "kubernetesVersion": scheduler.release.describe()}
    described["tls"] = "off" if tls is None else ("mutual" if tls.verify_mode == ssl.CERT_REQUIRED else "server")
    if health_port is not None:
        _check_bindable(health_host, health_port, "health port")
        described.update(health_host=health_host, health_port=health_port)
    _check_bindable(host, port, "port")
    described["ui"] = page_url(host, port, tls=bool(tls))
    logging.getLogger("extender").info("serving", extra={"host": host, "port": port, **described})
    # The engine thread computes while the event loop answers probes: a waiting thread gets the interpreter
    # after at most this long (Python's default is 5 ms, which a probe may pay several times).
    sys.setswitchinterval(ENGINE_SWITCH_INTERVAL_SECONDS)
    _run_servers(app, args, host, port, tls, health_host, health_port)
    return 0


def page_url(host: str, port: int, *, tls: bool) -> str:
    """The web view's address for the log: a wildcard listener is opened on loopback, IPv6 in brackets."""
    shown = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    if ":" in shown:
        shown = f"[{shown}]"
    return f"{'https' if tls else 'http'}://{shown}:{port}/ui/"


def _check_bindable(host: str, port: int, what: str) -> None:
    """Fail with one line, before logging "serving", when the address cannot be listened on."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as err:
        raise CLIError(f"{what}: cannot resolve {host!r}: {err.strerror or err}") from err
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as err:
            raise CLIError(f"{what}: cannot listen on {host}:{port}: {err.strerror or err}") from err


def _run_servers(app: Any, args: argparse.Namespace, host: str, port: int, tls: ssl.SSLContext | None,
                 health_host: str, health_port: int | None) -> None:
    """The verbs' listener and, with a health port, the plain-HTTP one for probes and metrics
    (:mod:`extender.api.listener`: connections counted and timed from accept, TLS under that deadline)."""
    from extender.api.app import create_health_app
    from extender.api.listener import Endpoint, ListenerLimits, serve

    rejected = app.state.metrics.rejected_requests

    def refused(reason: str) -> None:
        rejected.labels(reason).inc()

    verbs = Endpoint(host, port, ListenerLimits(args.max_connections, args.head_timeout),
                     keep_alive_seconds=args.keep_alive_timeout, head_seconds=args.head_timeout, tls=tls)
    health = None
    if health_port is not None:
        # Probes and scrapes take milliseconds: short deadlines, a lifetime, and a budget of their own.
        health = Endpoint(health_host, health_port,
                          ListenerLimits(HEALTH_MAX_CONNECTIONS, min(args.head_timeout, HEALTH_SECONDS),
                                         lifetime_seconds=HEALTH_LIFETIME_SECONDS),
                          keep_alive_seconds=min(args.keep_alive_timeout, HEALTH_SECONDS),
                          head_seconds=min(args.head_timeout, HEALTH_SECONDS))
    serve(app, verbs, shutdown_grace=args.shutdown_grace, health_app=create_health_app(app) if health else None,
          health=health, on_refused=refused)


HEALTH_MAX_CONNECTIONS = 64
HEALTH_SECONDS = 2.0  # request head and keep-alive idle time on the health port
HEALTH_LIFETIME_SECONDS = 10.0  # a health-port connection is closed at this age whatever it does
ENGINE_SWITCH_INTERVAL_SECONDS = 0.001


def _member_clusters(path: str | None) -> list[Any]:
    """Karmada member clusters for the multi-cluster endpoint (none unless a file is given)."""
    if not path:
        return []
    from extender.multicluster.dump import load_clusters
    from extender.multicluster.model import ModelError

    try:
        return list(load_clusters(path))
    except (ModelError, DumpError, ValueError) as err:
        raise CLIError(f"member clusters: {err}") from err


def _tls_context(args: argparse.Namespace) -> ssl.SSLContext | None:
    """The verbs' TLS context (None: plain HTTP): a server certificate, and client certificates required when
    a CA is given. Loaded here so that a bad file is one line and exit 2, before anything is served."""
    cert = args.tls_cert_file or _env("EXTENDER_TLS_CERT_FILE")
    key = args.tls_key_file or _env("EXTENDER_TLS_KEY_FILE")
    client_ca = args.client_ca_file or _env("EXTENDER_CLIENT_CA_FILE")
    if not cert and not key and not client_ca:
        return None
    if not cert or not key:
        raise CLIError("tls: --tls-cert-file and --tls-key-file go together")
    for path in (cert, key, client_ca):
        if path and not Path(path).is_file():
            raise CLIError(f"tls: no such file {path}")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)

    def no_pass_phrase() -> str:
        # OpenSSL would otherwise prompt on the terminal, and a service has no one to answer.
        raise CLIError(f"tls: {key} is encrypted (protected by a pass phrase); give an unencrypted private key")

    try:
        context.load_cert_chain(cert, key, password=no_pass_phrase)
    except CLIError:
        raise
    except ssl.SSLError as err:
        raise CLIError(f"tls: {cert} and {key} are not a usable certificate and matching private key: "
                       f"{err.reason or err}") from err
    except OSError as err:
        raise CLIError(f"tls: cannot read {cert} or {key}: {err.strerror or err}") from err
    if client_ca:
        try:
            context.load_verify_locations(cafile=client_ca)
        except (ssl.SSLError, OSError) as err:
            raise CLIError(f"tls: {client_ca} holds no usable CA certificate: "
                           f"{getattr(err, 'reason', None) or err}") from err
        context.verify_mode = ssl.CERT_REQUIRED
    else:
        context.verify_mode = ssl.CERT_NONE
    return context


def _live_app(config: Config, kubeconfig: str | None, args: argparse.Namespace, create_app: Any,
              metrics_class: Any, limits: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The service on a cache kept current from an apiserver, binding through it."""
    from extender.cluster.live import LiveSource
    from extender.kubeapi import config as kubeconfig_module
    from extender.kubeapi.binder import ApiBinder
    from extender.kubeapi.client import KubeClient

    # A configured version is followed from the start; with auto the profiles are built for the newest release
    # until the apiserver's /version is read, then rebuilt for the cluster's before anything is listed (the
    # service is not ready until then).
    release = release_of(config) if config.kubernetes_version is not None else None
    frameworks = frameworks_of(config, release)
    try:
        cluster = (kubeconfig_module.in_cluster() if args.in_cluster
                   else kubeconfig_module.load(kubeconfig, args.context))
    except kubeconfig_module.KubeConfigError as err:
        raise CLIError(f"apiserver: {err}") from err
    client = KubeClient(cluster)
    from extender.api.app import CacheCounts

    cache = ClusterCache(assumed_ttl_seconds=config.assumed_pod_ttl_seconds, release=release)
    scheduler = Scheduler(cache, frameworks, binder=ApiBinder(client))
    metrics = metrics_class(CacheCounts(cache.counts))
    engine = limits["engine"]

    async def settle(version: dict[str, Any]) -> Release:
        """The cluster's version is known: follow its release (profiles and cache), before anything is listed."""
        chosen = release_of(config, str(version.get("gitVersion") or ""), source="apiserver",
                            reported_minor=str(version.get("minor") or ""))

        def switch() -> None:
            cache.follow(chosen)
            scheduler.use_frameworks(frameworks_of(config, chosen))

        await engine.write(switch)  # a CLIError here leaves the source unready, saying why (see LiveSource)
        log = logging.getLogger("extender")
        if chosen.warning:
            log.warning(chosen.warning)
        log.info("following the cluster's Kubernetes version", extra={"kubernetesVersion": chosen.describe()})
        return chosen

    source = LiveSource(cache, client, observer=metrics, engine=engine, release=release,
                        settle=settle if release is None else None, warm_up=scheduler.warm_up)
    app = create_app(scheduler, metrics=metrics, readiness=source.readiness, on_startup=[source.start],
                     on_shutdown=[source.stop], **limits)
    return app, {"apiserver": cluster.server, "profiles": sorted(scheduler.frameworks),
                 "kubernetesVersion": release.describe() if release is not None else "auto: from the apiserver"}


def _read_pod(path: str) -> dict[str, Any]:
    try:
        docs = [d for d in read_documents(Path(path)) if d.get("kind") in (None, "Pod")]
    except DumpError as err:
        raise CLIError(f"pod: {err}") from err
    if len(docs) != 1:
        raise CLIError(f"pod: {path} must hold exactly one Pod, found {len(docs)}")
    return docs[0]


def _live_cluster(args: argparse.Namespace, *, by_default: bool) -> Any:
    """The apiserver to read once (a ClusterConfig), or None for a dump.

    ``--kubeconfig``, ``--context`` and ``--in-cluster`` ask for one; ``by_default`` (a pod named on the
    command line and no ``--cluster``) takes the current kubeconfig context, as kubectl would.
    """
    from extender.kubeapi import config as kubeconfig_module

    wanted = bool(args.kubeconfig or args.context or args.in_cluster)
    if wanted and args.cluster:
        raise CLIError("--cluster (a dump) and --kubeconfig/--context/--in-cluster (a live cluster) exclude each other")
    if not wanted and not (by_default and not args.cluster):
        return None
    try:
        return (kubeconfig_module.in_cluster() if args.in_cluster
                else kubeconfig_module.load(args.kubeconfig, args.context))
    except kubeconfig_module.KubeConfigError as err:
        raise CLIError(f"apiserver: {err}") from err


def _read_live(cluster: Any, config: Config,
               pod: tuple[str, str] | None = None) -> tuple[ClusterCache, dict[str, Any] | None, Release]:
    """List the live cluster once into a fresh cache (and read one pod), following the configured release or,
    for auto, the apiserver's; as a CLI error when that fails."""
    from extender.cluster.live import watched_kinds
    from extender.cluster.oneshot import ClusterReadError, read_cluster

    cache = ClusterCache(assumed_ttl_seconds=0)
    chosen: list[Release] = []

    def kinds_for(version: dict[str, Any]) -> tuple[str, ...]:
        if config.kubernetes_version is not None:
            release = release_of(config)
        else:
            release = release_of(config, str(version.get("gitVersion") or ""), source="apiserver",
                                 reported_minor=str(version.get("minor") or ""))
        cache.follow(release)
        chosen.append(release)
        return watched_kinds(release)

    try:
        raw_pod = read_cluster(cluster, cache, pod, kinds_for_version=kinds_for)
    except ClusterReadError as err:
        raise CLIError(f"apiserver: {err}") from err
    _warn(chosen[0])
    return cache, raw_pod, chosen[0]


def cmd_explain(args: argparse.Namespace) -> int:
    """Print why a pod fits or not on each node, how each node scores, and what the scheduler concludes."""
    if bool(args.pod) == bool(args.name):
        raise CLIError("explain: name a pod (NAME, with -n NAMESPACE) or give one in a file (--pod FILE), not both")
    config = read_config(args.config, args)
    default = config.profiles[0].name
    live = _live_cluster(args, by_default=bool(args.name))
    pod: Mapping[str, Any]
    if live is not None:
        namespace = args.namespace or live.namespace
        cache, fetched, release = _read_live(live, config, (namespace, args.name) if args.name else None)
        frameworks = {fw.name: fw for fw in frameworks_of(config, release)}
        pod = fetched if fetched is not None else _read_pod(args.pod)
    else:
        scheduler, _config = build_scheduler(args.cluster, config)
        _warn(scheduler.release)
        frameworks = scheduler.frameworks
        cache = scheduler.cache
        if args.name:
            namespace = args.namespace or "default"
            found = cache.find_pod(namespace, args.name)
            if found is None:
                raise CLIError(f"pod {namespace}/{args.name} not found in {args.cluster or DEMO_CLUSTER}")
            pod = found.raw
        else:
            pod = _read_pod(args.pod)
    if args.profile is not None and args.profile not in frameworks:
        raise CLIError(f"profile: no profile named {args.profile!r}; profiles: {sorted(frameworks)}")
    names = args.nodes.split(",") if args.nodes else None
    result = explain_found(frameworks, default, cache.snapshot(), pod, profile=args.profile, node_names=names)
    if args.output == "json":
        sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(render_table(result))
    return 1 if result.get("error") else 0


def cmd_simulate(args: argparse.Namespace) -> int:
    """Schedule a list of pods onto a cluster (a dump, or the live cluster read once) and report where they land."""
    from extender.engine.simulate import Simulator

    live = _live_cluster(args, by_default=False)
    config = read_config(args.config, args)
    if live is None:
        scheduler, _config = build_scheduler(args.cluster, config)
        _warn(scheduler.release)
    elif args.profile is not None and args.profile not in {p.name for p in config.profiles}:
        known = sorted(p.name for p in config.profiles)
        raise CLIError(f"profile: no profile named {args.profile!r}; profiles: {known}")
    try:
        pods = [d for d in read_dump_objects(args.pods) if d.get("kind") == "Pod"]
    except DumpError as err:
        raise CLIError(f"pods: {err}") from err
    if not pods:
        raise CLIError(f"pods: no Pod in {args.pods}")
    if live is not None:
        # Read after the pods file is known to be good: a snapshot taken now, placed into, and never written back.
        cache, _pod, release = _read_live(live, config)
        scheduler = Scheduler(cache, frameworks_of(config, release))
    try:
        framework = scheduler.framework(args.profile)
    except KeyError:
        known = sorted(scheduler.frameworks)
        raise CLIError(f"profile: no profile named {args.profile!r}; profiles: {known}") from None
    try:
        simulator = Simulator(framework, scheduler.cache, host_selection=args.host_selection, seed=args.seed,
                              percentage_of_nodes_to_score=args.percentage_of_nodes_to_score)
    except ValueError as err:
        raise CLIError(str(err)) from err
    show_progress = args.progress or (sys.stderr.isatty() and len(pods) >= 50)
    result = simulator.run(pods, _progress_bar if show_progress else None)
    if show_progress:
        sys.stderr.write("\n")
    if args.output == "json":
        sys.stdout.write(orjson.dumps(result.as_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        sys.stdout.write(render_simulation(result))
    return 0 if not result.unschedulable else 1


def _progress_bar(done: int, total: int) -> None:
    width = 30
    filled = width * done // total
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} pods")
    sys.stderr.flush()


def render_simulation(result: Any) -> str:
    """A readable report: placements, unschedulable pods, utilisation of the nodes that changed."""
    from extender.engine.explain import describe_action, release_line

    def attempts(p: Any) -> list[str]:
        return [f"  {'':<40}    first: {a['message']}; kube-scheduler would then "
                + "; ".join(describe_action(action) for action in a["postFilter"]) for a in p.attempts]

    lines = [f"scheduled {len(result.scheduled)} of {len(result.placements)} pods, "
             f"{release_line(result.kubernetes or None)}"]
    for p in result.scheduled:
        score = ("its nominated node" if p.nominated else "only feasible node" if p.score is None
                 else f"total score {p.score}")
        lines.append(f"  {p.pod:<40} -> {p.node:<20} ({score}, {p.feasible} feasible)")
        lines.extend(attempts(p))
    if result.unschedulable:
        lines.append(f"unschedulable: {len(result.unschedulable)}")
        for p in result.unschedulable:
            lines.append(f"  {p.pod:<40} {p.message}")
            lines.extend(attempts(p))
    changed = [n for n in result.after if result.after[n] != result.before.get(n)]
    if changed:
        lines.append("utilisation of the nodes that received pods (cpu %, memory %, pods: before -> after)")
        for name in sorted(changed):
            b, a = result.before[name], result.after[name]
            lines.append(f"  {name:<20} cpu {b['cpu']:>5} -> {a['cpu']:>5}   memory {b['memory']:>5} -> "
                         f"{a['memory']:>5}   pods {b['pods']:>3} -> {a['pods']:>3}")
    return "\n".join(lines) + "\n"


def parser() -> argparse.ArgumentParser:
    """The command-line grammar."""
    p = argparse.ArgumentParser(prog="extender", description="A kube-scheduler extender with the in-tree engine.")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="serve the extender verbs over HTTP")
    serve.add_argument("--host", help="address to listen on (EXTENDER_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (EXTENDER_PORT, default 8888)")
    serve.add_argument("--cluster", help="cluster dump: a kubectl -o yaml|json file or directory "
                                         "(EXTENDER_CLUSTER, default: the bundled demo cluster)")
    serve.add_argument("--config", help="configuration file (EXTENDER_CONFIG)")
    _add_version_options(serve)
    serve.add_argument("--kubeconfig", help="watch this cluster instead of a dump (EXTENDER_KUBECONFIG)")
    serve.add_argument("--context", help="kubeconfig context (default: the current one)")
    serve.add_argument("--in-cluster", action="store_true", help="watch the cluster this pod runs in")
    serve.add_argument("--live", action="store_true",
                       help="watch the cluster of $KUBECONFIG, the in-cluster service account or ~/.kube/config")
    serve.add_argument("--member-clusters", help="Karmada Cluster objects (file or directory) that "
                                                 "POST /multicluster/schedule places replicas on by default")
    serve.add_argument("--log-level", help="debug, info, warning or error (EXTENDER_LOG_LEVEL, default info)")
    serve.add_argument("--tls-cert-file", help="serve HTTPS with this certificate (EXTENDER_TLS_CERT_FILE)")
    serve.add_argument("--tls-key-file", help="the certificate's private key (EXTENDER_TLS_KEY_FILE)")
    serve.add_argument("--client-ca-file", help="require client certificates signed by this CA, as kube-scheduler's "
                                                "tlsConfig certFile/keyFile present (EXTENDER_CLIENT_CA_FILE)")
    serve.add_argument("--max-body-bytes", type=int, default=DEFAULT_MAX_BODY_BYTES,
                       help="largest request body accepted (default 256 MiB: a 5000-node NodeList fits)")
    serve.add_argument("--max-body-memory", type=int,
                       help="bytes the request bodies larger than 512 KiB may hold at once, all connections "
                            "together, from their head until their answer, with what they decode to (their "
                            "bytes and 64 per JSON separator); a body that does not fit gets 503 with "
                            "Retry-After, one whose estimate exceeds it 413 (default: 8 times --max-body-bytes)")
    serve.add_argument("--read-timeout", type=float, default=DEFAULT_READ_TIMEOUT_SECONDS,
                       help="seconds a client may take to send its body (default 30)")
    serve.add_argument("--shutdown-grace", type=int, default=10,
                       help="seconds in-flight requests get to finish on SIGTERM (default 10)")
    serve.add_argument("--health-port", type=int, help="also serve GET /healthz, /readyz and /metrics (nothing "
                                                       "else) over plain HTTP on this port (EXTENDER_HEALTH_PORT)")
    serve.add_argument("--health-host", help="address of the health port (EXTENDER_HEALTH_HOST, default 0.0.0.0)")
    serve.add_argument("--max-request-nodes", type=int, default=DEFAULT_MAX_REQUEST_NODES,
                       help="most nodes (NodeNames or Nodes) one request may name; past it 413 (default 15000)")
    serve.add_argument("--max-pending", type=int, default=DEFAULT_MAX_PENDING,
                       help="requests waiting for or in the engine at once; past it 503 with Retry-After "
                            "(default 128)")
    serve.add_argument("--request-timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS,
                       help="seconds a request may wait for and run in the engine before it is answered 503 "
                            "(default 10)")
    serve.add_argument("--head-timeout", type=float, default=DEFAULT_HEAD_TIMEOUT_SECONDS,
                       help="seconds a connection has to send a complete request head before it is closed "
                            "(default 10)")
    serve.add_argument("--keep-alive-timeout", type=int, default=DEFAULT_KEEP_ALIVE_SECONDS,
                       help="seconds an idle keep-alive connection stays open (default 5)")
    serve.add_argument("--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS,
                       help="open connections to the verbs' port; new ones past it are closed at once "
                            "(default 512)")
    serve.add_argument("--stall-timeout", type=float, default=DEFAULT_STALL_TIMEOUT_SECONDS,
                       help="seconds one engine job may run before /healthz fails, so that the kubelet restarts "
                            "a wedged service (default 60; /readyz fails past --request-timeout)")
    serve.add_argument("--max-placement-clusters", type=int, default=DEFAULT_MAX_PLACEMENT_CLUSTERS,
                       help="most clusters one POST /multicluster/schedule may send; past it 413 (default 5000)")
    serve.add_argument("--placement-work-limit", type=int, default=DEFAULT_WORK_STEPS,
                       help="steps of work one multi-cluster placement may take; past it 422 "
                            f"(default {DEFAULT_WORK_STEPS})")
    serve.set_defaults(func=cmd_serve)

    exp = sub.add_parser(
        "explain", help="explain a pod's verdict and score on every node, and the scheduler's outcome",
        description="Explain a pod named in the cluster (NAME, read from the apiserver of the current kubeconfig "
                    "context, or from --cluster DUMP) or given in a file (--pod FILE, against the bundled demo "
                    "cluster unless --cluster or --kubeconfig says otherwise).")
    exp.add_argument("name", nargs="?", metavar="NAME", help="the pod's name (read from the cluster)")
    exp.add_argument("-n", "--namespace", help="the pod's namespace (default: the context's, else default)")
    exp.add_argument("--pod", metavar="FILE", help="a file holding one Pod (YAML or JSON) instead of NAME")
    exp.add_argument("--cluster", help="cluster dump (default for --pod: the bundled demo cluster)")
    _add_live_options(exp)
    exp.add_argument("--config", help="configuration file")
    _add_version_options(exp)
    exp.add_argument("--profile",
                     help="profile name (default: the one named by the pod's schedulerName, else the first)")
    exp.add_argument("--nodes", help="comma-separated node names (default: every node)")
    exp.add_argument("-o", "--output", choices=("table", "json"), default="table")
    exp.set_defaults(func=cmd_explain)

    from extender.multicluster.cli import add_place_command

    add_place_command(sub)

    from extender.plan.cli import add_plan_command

    add_plan_command(sub)

    sim = sub.add_parser("simulate", help="schedule a list of pods onto a cluster dump or the live cluster, one by one")
    sim.add_argument("--pods", required=True, help="pods to schedule, in order (YAML/JSON file or directory)")
    sim.add_argument("--cluster", help="cluster dump (default: the bundled demo cluster)")
    _add_live_options(sim)
    sim.add_argument("--config", help="configuration file")
    _add_version_options(sim)
    sim.add_argument("--profile", help="profile name (default: the first)")
    sim.add_argument("--seed", type=int, help="seed for breaking ties among top-scoring nodes")
    sim.add_argument("--host-selection", choices=("random", "round-robin"),
                     help="how ties are broken (default: random; round-robin for 0-10 era profiles, as v1.12)")
    sim.add_argument("--percentage-of-nodes-to-score", type=int, metavar="PERCENT",
                     help="stop the search for feasible nodes as kube-scheduler does (0: adaptive; default: "
                          "filter and score every node)")
    sim.add_argument("--progress", action="store_true", help="show a progress bar (default: on a terminal)")
    sim.add_argument("-o", "--output", choices=("table", "json"), default="table")
    sim.set_defaults(func=cmd_simulate)
    return p


def _add_version_options(command: argparse.ArgumentParser) -> None:
    """Which kube-scheduler release to follow, and its feature gates (both win over the configuration file)."""
    command.add_argument("--kubernetes-version", metavar="VERSION",
                         help="follow kube-scheduler 1.36 or 1.37, or auto: the cluster's version (the apiserver's "
                              "/version live, the version a dump records, else the newest) "
                              "(EXTENDER_KUBERNETES_VERSION; default: the configuration's kubernetesVersion, or auto)")
    command.add_argument("--feature-gates", metavar="A=true,B=false",
                         help="kube-scheduler feature gates to change from the release's defaults, as kube-scheduler's "
                              "--feature-gates (EXTENDER_FEATURE_GATES; added to the configuration's featureGates)")


def _add_live_options(command: argparse.ArgumentParser) -> None:
    """Where a one-shot command reads a live cluster (listed once, nothing written)."""
    command.add_argument("--kubeconfig", help="read the cluster of this kubeconfig (listed once, nothing written)")
    command.add_argument("--context", help="kubeconfig context (default: the current one)")
    command.add_argument("--in-cluster", action="store_true", help="read the cluster this pod runs in")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script."""
    args = parser().parse_args(argv)
    try:
        return int(args.func(args))
    except CLIError as err:
        sys.stderr.write(f"extender: {err}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
