"""The FastAPI application: extender verbs, health and readiness, Prometheus metrics, OpenAPI docs."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import PlainTextResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from extender import __version__
from extender.api.body_memory import BODY_MEMORY_FACTOR, BodyMemory
from extender.api.explain_routes import ExplainWorker, build_explain_router
from extender.api.http import (
    BODY_HELD_KEY,
    BODY_MEMORY_KEY,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_READ_TIMEOUT_SECONDS,
    JSONResponse,
    incoming_request_id,
)
from extender.api.metrics import Metrics
from extender.api.routes import FastVerbs, RequestLimits, build_router
from extender.cluster.engine_thread import DEFAULT_STALL_TIMEOUT_SECONDS, EngineThread
from extender.engine.scheduler import Scheduler
from extender.logs import request_id
from extender.multicluster.routes import PlacementLimits, build_multicluster_router
from extender.ui import build_ui_router

# () -> (ready, details): details say which source lags when not ready.
ReadinessCheck = Callable[[], tuple[bool, dict[str, Any]]]


class CacheCounts:
    """The cache's object counts, read from the event loop while the engine thread may be writing.

    Counting iterates the cache's dicts; a write on the engine thread between two steps can make that raise
    (a dict changed size). Health, readiness and metrics must answer without waiting for the engine, so a
    read that collides is retried, then answered with the last complete count.
    """

    def __init__(self, counts: Callable[[], dict[str, int]]) -> None:
        self._counts = counts
        self._last: dict[str, int] = {}

    def __call__(self) -> dict[str, int]:
        for _ in range(3):
            try:
                self._last = self._counts()
                break
            except RuntimeError:
                continue
        return dict(self._last)


class RequestIdMiddleware:
    """Tags each request with an id (X-Request-Id if the client sent one) for logs, and echoes it back; an
    internal error's answer says ``Connection: close``.

    A plain ASGI middleware: Starlette's function middleware would stream every response through an
    extra task, which costs a measurable share of a sub-millisecond filter call. After Starlette's error
    middleware has answered 500 it re-raises, and uvicorn then closes the connection: the header tells the
    client not to send its next request on it (a deliberate 503 leaves the connection usable).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = incoming_request_id(scope)
        token = request_id.set(rid)

        async def tagged_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = [(b"x-request-id", rid.encode("latin-1"))]
                if message["status"] >= 500 and message["status"] != 503:
                    extra.append((b"connection", b"close"))
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        try:
            await self.app(scope, receive, tagged_send)
        finally:
            request_id.reset(token)


class ExtenderApp(FastAPI):
    """FastAPI with request ids, and the verbs served ahead of it.

    kube-scheduler calls the verbs for every pod; FastAPI's routing, its error, telemetry and body-limit
    layers and Starlette's request and response objects each cost something per request, and the verbs need
    none of them (they bound their own bodies, answer every error themselves and tag their own request id):
    ``FastVerbs`` takes them from the ASGI call itself. Everything else passes through the whole stack.
    """

    fast_verbs: FastVerbs  # set before the first request
    body_memory: BodyMemory  # what large request bodies may hold at once (extender.api.body_memory)

    def build_middleware_stack(self) -> ASGIApp:
        return RequestIdMiddleware(super().build_middleware_stack())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        scope[BODY_MEMORY_KEY] = self.body_memory  # read_asgi_body takes a large body's size from it
        try:
            if not await self.fast_verbs.serve(scope, receive, send):
                await super().__call__(scope, receive, send)
        finally:
            held = scope.get(BODY_HELD_KEY)
            if held:
                self.body_memory.give_back(held)


def create_app(scheduler: Scheduler, *, metrics: Metrics | None = None, readiness: ReadinessCheck | None = None,
               max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, read_timeout: float = DEFAULT_READ_TIMEOUT_SECONDS,
               max_body_memory: int | None = None,
               on_startup: Sequence[Callable[[], Awaitable[None]]] = (),
               on_shutdown: Sequence[Callable[[], Awaitable[None]]] = (),
               member_clusters: Sequence[Any] = (), engine: EngineThread | None = None,
               limits: RequestLimits | None = None, placement_limits: PlacementLimits | None = None,
               stall_timeout: float = DEFAULT_STALL_TIMEOUT_SECONDS) -> FastAPI:
    """Build the service around a scheduler (engine + cache); hooks start and stop a live source.

    ``engine`` is the thread that owns the cache (a new one by default); the live source, when there is one,
    must hand its writes to the same thread. Multi-cluster placements run on a thread and queue of their own
    (``placement_limits``), so that they never hold up the verbs. A job running past its thread's request
    timeout makes the service unready, past ``stall_timeout`` seconds unhealthy (the kubelet restarts it)."""
    engine = engine or EngineThread()
    # A placement's deadline is the request timeout: past it nobody waits for the answer.
    placement_limits = dataclasses.replace(placement_limits or PlacementLimits(), seconds=engine.timeout)
    placer = EngineThread(max_pending=placement_limits.max_pending, timeout=engine.timeout, name="multicluster")
    counts = CacheCounts(scheduler.cache.counts)
    metrics = metrics or Metrics(counts)
    stalls = Stalls({"engine": engine, "multicluster": placer}, stall_timeout)
    metrics.track_readiness(lambda: stalls.ready() and (readiness()[0] if readiness is not None else True))
    metrics.track_release(lambda: scheduler.release.describe())

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        engine.start()
        placer.start()
        for hook in on_startup:
            await hook()
        try:
            yield
        finally:
            for hook in on_shutdown:
                await hook()
            placer.stop(timeout=0.5)  # a placement still running is abandoned (a daemon thread)
            engine.stop()

    app = ExtenderApp(
        lifespan=lifespan,
        title="kube-scheduler extender",
        version=__version__,
        description="kube-scheduler's HTTP extender protocol (filter, prioritize, bind) backed by the in-tree "
                    "predicate and priority engine. Field names on the wire are Go's, capitalised; any "
                    "letter case is accepted on input.",
    )
    app.state.scheduler = scheduler
    app.state.metrics = metrics
    app.state.engine = engine
    for fw in scheduler.frameworks.values():
        fw.timer = metrics.plugin_timer

    verbs = build_router(scheduler, metrics, max_body_bytes, read_timeout, engine=engine, limits=limits)
    app.include_router(verbs)
    explainer = ExplainWorker(scheduler, engine, readiness)  # one explanation or what-if at a time
    app.include_router(build_explain_router(scheduler, max_body_bytes=max_body_bytes, read_timeout=read_timeout,
                                            worker=explainer), tags=["tools"])
    app.body_memory = BodyMemory(max_body_memory if max_body_memory is not None
                                  else BODY_MEMORY_FACTOR * max_body_bytes)
    app.fast_verbs = FastVerbs(verbs.verbs, verbs.max_body_bytes, verbs.read_timeout, app.body_memory)
    clusters = list(member_clusters)
    app.include_router(build_multicluster_router(lambda: clusters, max_body_bytes=max_body_bytes,
                                                 requests=metrics.multicluster_requests,
                                                 latency=metrics.multicluster_latency, runner=placer,
                                                 limits=placement_limits),
                       tags=["multicluster"])
    app.include_router(build_ui_router(explainer, lambda: clusters, max_body_bytes=max_body_bytes,
                                       read_timeout=read_timeout, placer=placer,
                                       placement_limits=placement_limits), tags=["web view"])

    def openapi() -> dict[str, Any]:
        """FastAPI's schema, with the request models' nested definitions moved into components.

        Request bodies are documented from pydantic schemas (the routes read raw bytes for speed), whose
        nested models come as ``$defs`` while references point at ``#/components/schemas/<Model>``.
        """
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description,
                                 routes=app.routes)
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            for path in schema.get("paths", {}).values():
                for operation in path.values():
                    content = ((operation.get("requestBody") or {}).get("content") or {}).get("application/json")
                    if content and "$defs" in content.get("schema", {}):
                        components.update(content["schema"].pop("$defs"))
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    probes = Probes(scheduler, metrics, counts, readiness, stalls)
    app.state.probes = probes

    @app.get("/healthz", tags=["operations"], summary="Liveness: the process serves requests")
    async def healthz() -> Response:
        return probes.healthz()

    @app.get("/readyz", tags=["operations"], summary="Readiness: the cache is synced")
    async def readyz() -> Response:
        return probes.readyz()

    @app.get("/metrics", tags=["operations"], summary="Prometheus metrics")
    async def prometheus() -> Response:
        return probes.metrics()

    return app


class Stalls:
    """Whether a worker thread (the engine, the multi-cluster placer) is stuck in one job.

    A job cannot be interrupted once it runs. One running past its thread's request timeout means nothing
    queued behind it is answered in time: the service reports itself unready (no new traffic). One running
    past ``stall_timeout`` means the thread is wedged: liveness fails, so that the kubelet restarts the pod
    rather than leave scheduling down.
    """

    def __init__(self, workers: Mapping[str, EngineThread], stall_timeout: float) -> None:
        self.workers = dict(workers)
        self.stall_timeout = stall_timeout

    def running(self) -> dict[str, float]:
        """Seconds each busy worker's current job has run."""
        return {name: round(seconds, 3) for name, worker in self.workers.items()
                if (seconds := worker.running_for()) > 0}

    def late(self) -> dict[str, float]:
        """Workers whose current job has run past their request timeout."""
        return {name: seconds for name, seconds in self.running().items() if seconds > self.workers[name].timeout}

    def ready(self) -> bool:
        """No job has run past its request timeout."""
        return not self.late()

    def stuck(self) -> dict[str, float]:
        """Workers whose current job has run past ``stall_timeout``."""
        return {name: seconds for name, seconds in self.running().items() if seconds > self.stall_timeout}


class Probes:
    """Health, readiness and metrics: answered on the event loop, never waiting for the engine."""

    def __init__(self, scheduler: Scheduler, metrics: Metrics, counts: Callable[[], dict[str, int]],
                 readiness: ReadinessCheck | None, stalls: Stalls) -> None:
        self.scheduler = scheduler
        self.profiles = sorted(scheduler.frameworks)
        self.registry = metrics.registry
        self.counts = counts
        self.readiness = readiness
        self.stalls = stalls

    def healthz(self) -> Response:
        """Liveness: fails once a worker thread has been stuck in one job past the stall timeout."""
        stuck = self.stalls.stuck()
        if stuck:
            detail = ", ".join(f"{name} has run one job for {seconds:g} s" for name, seconds in stuck.items())
            return PlainTextResponse(f"stuck: {detail} (limit {self.stalls.stall_timeout:g} s)", status_code=503)
        return PlainTextResponse("ok")

    def readyz(self) -> Response:
        """Readiness, with the cache's counts, the source's state and any job running past its timeout."""
        ready, details = self.readiness() if self.readiness is not None else (True, {})
        late = self.stalls.late()
        if late:
            ready = False
            details = {**details, "stalled": {name: f"one job has run for {seconds:g} s, past the "
                                                    f"{self.stalls.workers[name].timeout:g} s request timeout"
                                              for name, seconds in late.items()}}
        body = {"ready": ready, **details, "profiles": self.profiles, "cache": self.counts(),
                "running": self.stalls.running()}
        if "kubernetesVersion" not in details:  # the source is still reading /version otherwise
            release = self.scheduler.release
            body["kubernetesVersion"] = release.describe()
            if release.warning:
                body["warnings"] = [release.warning]
        return JSONResponse(body, status_code=200 if ready else 503)

    def metrics(self) -> Response:
        """Prometheus exposition."""
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)


def create_health_app(app: FastAPI) -> ASGIApp:
    """The plain-HTTP health listener's application: GET /healthz, /readyz and /metrics of ``app``, nothing
    else (no verbs, no docs), for probes and scrapers that must not reach the verbs."""
    probes: Probes = app.state.probes
    routes: dict[str, Callable[[], Response]] = {"/healthz": probes.healthz, "/readyz": probes.readyz,
                                                 "/metrics": probes.metrics}

    async def health_app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        answer = routes.get(scope["path"])
        if answer is None:
            response: Response = PlainTextResponse("not found: this port serves /healthz, /readyz and /metrics",
                                                   status_code=404)
        elif scope["method"] not in ("GET", "HEAD"):
            response = PlainTextResponse("method not allowed", status_code=405, headers={"Allow": "GET, HEAD"})
        else:
            response = answer()
        await response(scope, receive, send)

    return health_app
