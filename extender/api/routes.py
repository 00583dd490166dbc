"""The extender verbs as HTTP routes: decode the wire format, call the engine, encode the answer.

Each verb is served at ``/<verb>`` for the default (first) profile and at
``/profiles/<name>/<verb>`` for every profile.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from extender.api.http import DEFAULT_READ_TIMEOUT_SECONDS, HTTPProblem, JSONResponse, read_json
from extender.api.metrics import Metrics
from extender.api.wire import (
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriority,
    WireError,
    decode,
    decode_preemption,
)
from extender.engine.scheduler import BindError, RequestError, Scheduler

log = logging.getLogger("extender.api")

Handler = Callable[[Any, str], Awaitable[Any]]


def _body_doc(model: type[Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema(
        ref_template="#/components/schemas/{model}")}}}}


def _candidates(args: ExtenderArgs) -> tuple[list[str] | None, list[dict[str, Any]] | None]:
    """NodeNames when sent (nodeCacheCapable), else the full Nodes' items (possibly none)."""
    if args.Pod is None:
        raise WireError("Pod: a Pod is required")
    if args.NodeNames is not None:
        return args.NodeNames, None
    return None, (args.Nodes.items or []) if args.Nodes is not None else []


class VerbRouter(APIRouter):
    """The verbs' routes (documented in OpenAPI as usual), plus ``verbs``: verb -> handler for the fast path."""

    verbs: dict[str, Callable[[Request, str | None], Awaitable[Response]]]


class FastVerbs:
    """Serves POST /<verb> and /profiles/<name>/<verb> straight from the handlers, ahead of FastAPI's routing.

    kube-scheduler calls these verbs for every pod; FastAPI's router, dependency and exception layers cost
    a large share of a millisecond-scale request, and these handlers need none of them (they read the raw
    body and answer a ready Response). Everything else, OpenAPI included, goes to the application.
    """

    def __init__(self, app: ASGIApp, verbs: dict[str, Callable[[Request, str | None], Awaitable[Response]]]) -> None:
        self.app = app
        self.verbs = verbs

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            parts = scope["path"].strip("/").split("/")
            handler = None
            profile: str | None = None
            if len(parts) == 1:
                handler = self.verbs.get(parts[0])
            elif len(parts) == 3 and parts[0] == "profiles" and parts[1]:
                handler, profile = self.verbs.get(parts[2]), parts[1]
            if handler is not None:
                response = await handler(Request(scope, receive), profile)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def build_router(scheduler: Scheduler, metrics: Metrics, max_body_bytes: int,
                 read_timeout: float = DEFAULT_READ_TIMEOUT_SECONDS) -> VerbRouter:
    """Routes for filter, prioritize, bind and preempt (default profile and per profile)."""
    router = VerbRouter()
    router.verbs = {}

    async def run(verb: str, request: Request, profile: str | None, handler: Handler,
                  error_body: Callable[[str], Any]) -> Response:
        started = time.perf_counter()
        name = profile or scheduler.default_profile
        if name not in scheduler.frameworks:
            metrics.rejected_requests.labels("unknown_profile").inc()
            return JSONResponse({"Error": f"no profile named {name!r}; profiles: {sorted(scheduler.frameworks)}"},
                                status_code=404)
        status = 200
        try:
            body = await read_json(request, max_body_bytes, read_timeout)
            content = await handler(body, name)
        except HTTPProblem as err:
            status = err.status
            metrics.rejected_requests.labels(err.reason).inc()
            content = {"Error": err.message}
        except WireError as err:
            status = 400
            metrics.rejected_requests.labels("bad_request").inc()
            content = {"Error": str(err)}
        except RequestError as err:
            # Well-formed but unusable content: an answer kube-scheduler will surface as an error.
            status, content = error_body(str(err))
        elapsed = time.perf_counter() - started
        metrics.requests.labels(verb, name, str(status)).inc()
        metrics.latency.labels(verb, name).observe(elapsed)
        if status != 200:
            log.warning("request failed", extra={"verb": verb, "profile": name, "status": status,
                                                 "error": content.get("Error") if isinstance(content, dict) else ""})
        else:
            log.debug("request", extra={"verb": verb, "profile": name, "seconds": round(elapsed, 6)})
        return JSONResponse(content, status_code=status)

    async def do_filter(body: Any, profile: str) -> Any:
        args = decode(body, ExtenderArgs)
        names, nodes = _candidates(args)
        answer = scheduler.filter(profile, args.Pod, names, nodes)
        for reason, count in answer.reasons.items():
            metrics.filter_rejections.labels(profile, reason).inc(count)
        if answer.error:
            return {"Nodes": None, "NodeNames": None, "FailedNodes": None, "FailedAndUnresolvableNodes": None,
                    "Error": answer.error}
        return {
            "Nodes": {"metadata": {}, "items": answer.passed_nodes} if answer.passed_nodes is not None else None,
            "NodeNames": answer.passed if names is not None else None,
            "FailedNodes": answer.failed,
            "FailedAndUnresolvableNodes": answer.failed_unresolvable,
            "Error": "",
        }

    def filter_error(message: str) -> tuple[int, Any]:
        return 200, {"Nodes": None, "NodeNames": None, "FailedNodes": None, "FailedAndUnresolvableNodes": None,
                     "Error": message}

    async def do_prioritize(body: Any, profile: str) -> Any:
        args = decode(body, ExtenderArgs)
        names, nodes = _candidates(args)
        scores = scheduler.prioritize(profile, args.Pod, names, nodes)
        per_value: dict[int, int] = {}
        for _, score in scores:
            per_value[score] = per_value.get(score, 0) + 1
        for score, count in per_value.items():
            metrics.prioritize_scores.labels(profile, str(score)).inc(count)
        return [{"Host": host, "Score": score} for host, score in scores]

    def prioritize_error(message: str) -> tuple[int, Any]:
        # kube-scheduler ignores a failed prioritize; count it so that someone notices.
        metrics.prioritize_failures.labels(scheduler.default_profile).inc()
        return 400, {"Error": message}

    async def do_bind(body: Any, profile: str) -> Any:
        args = decode(body, ExtenderBindingArgs)
        try:
            await scheduler.bind(args.PodNamespace or "default", args.PodName, args.PodUID, args.Node)
        except BindError as err:
            metrics.binds.labels("error").inc()
            log.warning("bind failed", extra={"pod": f"{args.PodNamespace}/{args.PodName}", "node": args.Node,
                                              "error": str(err)})
            return {"Error": str(err)}
        metrics.binds.labels("bound").inc()
        log.info("bound", extra={"pod": f"{args.PodNamespace}/{args.PodName}", "node": args.Node})
        return {"Error": ""}

    async def do_preempt(body: Any, profile: str) -> Any:
        args = decode_preemption(body)
        if args.Pod is None:
            raise WireError("Pod: a Pod is required")
        candidates: dict[str, tuple[list[Any], int]] = {}
        if args.NodeNameToMetaVictims is not None:
            for node, meta in args.NodeNameToMetaVictims.items():
                candidates[node] = ([p.UID for p in meta.Pods], meta.NumPDBViolations) if meta else ([], 0)
        elif args.NodeNameToVictims is not None:
            for node, victims in args.NodeNameToVictims.items():
                candidates[node] = (list(victims.Pods), victims.NumPDBViolations) if victims else ([], 0)
        kept = scheduler.preempt(profile, args.Pod, candidates)
        return {"NodeNameToMetaVictims": {
            node: {"Pods": [{"UID": uid} for uid in uids], "NumPDBViolations": pdb}
            for node, (uids, pdb) in kept.items()}}

    def preempt_error(message: str) -> tuple[int, Any]:
        return 400, {"Error": message}

    def bind_error(message: str) -> tuple[int, Any]:
        return 200, {"Error": message}

    verbs: list[tuple[str, Handler, Callable[[str], tuple[int, Any]], type[Any], Any, str]] = [
        ("filter", do_filter, filter_error, ExtenderArgs, ExtenderFilterResult,
         "Nodes the pod fits, and why the others do not."),
        ("prioritize", do_prioritize, prioritize_error, ExtenderArgs, list[HostPriority],
         "A 0..10 score for each candidate node."),
        ("bind", do_bind, bind_error, ExtenderBindingArgs, ExtenderBindingResult,
         "Bind the pod to the node (assumes it in the cache first)."),
        ("preempt", do_preempt, preempt_error, ExtenderPreemptionArgs, ExtenderPreemptionResult,
         "The candidate nodes on which the pod passes our filters once the victims are evicted."),
    ]
    for verb, handler, on_error, request_model, response_model, summary in verbs:
        def make(verb: str = verb, handler: Handler = handler,
                 on_error: Callable[[str], tuple[int, Any]] = on_error) -> tuple[Any, Any]:
            async def for_default(request: Request) -> Response:
                return await run(verb, request, None, handler, on_error)

            async def for_profile(profile: str, request: Request) -> Response:
                return await run(verb, request, profile, handler, on_error)

            return for_default, for_profile

        default_route, profile_route = make()

        async def fast(request: Request, profile: str | None, verb: str = verb, handler: Handler = handler,
                       on_error: Callable[[str], tuple[int, Any]] = on_error) -> Response:
            return await run(verb, request, profile, handler, on_error)

        router.verbs[verb] = fast
        extra = _body_doc(request_model)
        responses: dict[int | str, dict[str, Any]] = {200: {"model": response_model}}
        router.add_api_route(f"/{verb}", default_route, methods=["POST"], summary=summary,
                             openapi_extra=extra, responses=responses, tags=["extender"],
                             name=f"{verb}")
        router.add_api_route(f"/profiles/{{profile}}/{verb}", profile_route, methods=["POST"],
                             summary=f"{summary} (named profile)", openapi_extra=extra, responses=responses,
                             tags=["extender"], name=f"{verb}_profile")
    return router
