"""The FastAPI application: extender verbs, health and readiness, Prometheus metrics, OpenAPI docs."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.responses import PlainTextResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from extender import __version__
from extender.api.explain_routes import build_explain_router
from extender.api.http import DEFAULT_MAX_BODY_BYTES, DEFAULT_READ_TIMEOUT_SECONDS, JSONResponse
from extender.api.metrics import Metrics
from extender.api.routes import FastVerbs, build_router
from extender.engine.scheduler import Scheduler
from extender.logs import request_id
from extender.multicluster.routes import build_multicluster_router

# () -> (ready, details): details say which source lags when not ready.
ReadinessCheck = Callable[[], tuple[bool, dict[str, Any]]]


class RequestIdMiddleware:
    """Tags each request with an id (X-Request-Id if the client sent one) for logs, and echoes it back.

    A plain ASGI middleware: Starlette's function middleware would stream every response through an
    extra task, which costs a measurable share of a sub-millisecond filter call.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = ""
        for key, value in scope.get("headers") or ():
            if key == b"x-request-id":
                rid = value.decode("latin-1")[:64]
                break
        rid = rid or uuid.uuid4().hex[:16]
        token = request_id.set(rid)

        async def tagged_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-request-id", rid.encode("latin-1"))]
            await send(message)

        try:
            await self.app(scope, receive, tagged_send)
        finally:
            request_id.reset(token)


def create_app(scheduler: Scheduler, *, metrics: Metrics | None = None, readiness: ReadinessCheck | None = None,
               max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, read_timeout: float = DEFAULT_READ_TIMEOUT_SECONDS,
               on_startup: Sequence[Callable[[], Awaitable[None]]] = (),
               on_shutdown: Sequence[Callable[[], Awaitable[None]]] = (),
               member_clusters: Sequence[Any] = ()) -> FastAPI:
    """Build the service around a scheduler (engine + cache); hooks start and stop a live source."""
    metrics = metrics or Metrics(scheduler.cache.counts)
    metrics.track_readiness(lambda: readiness()[0] if readiness is not None else True)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        for hook in on_startup:
            await hook()
        try:
            yield
        finally:
            for hook in on_shutdown:
                await hook()

    app = FastAPI(
        lifespan=lifespan,
        title="kube-scheduler extender",
        version=__version__,
        description="kube-scheduler's HTTP extender protocol (filter, prioritize, bind) backed by the in-tree "
                    "predicate and priority engine. Field names on the wire are Go's, capitalised; any "
                    "letter case is accepted on input.",
    )
    app.state.scheduler = scheduler
    app.state.metrics = metrics
    for fw in scheduler.frameworks.values():
        fw.timer = metrics.plugin_timer

    verbs = build_router(scheduler, metrics, max_body_bytes, read_timeout)
    app.include_router(verbs)
    app.include_router(build_explain_router(scheduler, max_body_bytes=max_body_bytes, read_timeout=read_timeout,
                                            readiness=readiness), tags=["tools"])
    # Added first, so the request-id middleware (added next) still wraps it.
    app.add_middleware(FastVerbs, verbs=verbs.verbs)
    app.add_middleware(RequestIdMiddleware)
    clusters = list(member_clusters)
    app.include_router(build_multicluster_router(lambda: clusters, max_body_bytes=max_body_bytes,
                                                 requests=metrics.multicluster_requests,
                                                 latency=metrics.multicluster_latency), tags=["multicluster"])

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

    @app.get("/healthz", tags=["operations"], summary="Liveness: the process serves requests")
    async def healthz() -> PlainTextResponse:
        return PlainTextResponse("ok")

    @app.get("/readyz", tags=["operations"], summary="Readiness: the cache is synced")
    async def readyz() -> Response:
        ready, details = readiness() if readiness is not None else (True, {})
        body = {"ready": ready, **details, "profiles": sorted(scheduler.frameworks),
                "cache": scheduler.cache.counts()}
        return JSONResponse(body, status_code=200 if ready else 503)

    @app.get("/metrics", tags=["operations"], summary="Prometheus metrics")
    async def prometheus() -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return app
