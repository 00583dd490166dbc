"""The extender verbs as HTTP routes: decode the wire format, call the engine, encode the answer.

Each verb is served at ``/<verb>`` for the default (first) profile and at
``/profiles/<name>/<verb>`` for every profile.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec
import numpy as np
import orjson
from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.types import Receive, Scope, Send

from extender.api.body_memory import BODY_MEMORY_FACTOR, BodyMemory
from extender.api.candidates import CandidateArgs, decode_candidate_args, remember_names
from extender.api.http import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_READ_TIMEOUT_SECONDS,
    HTTPProblem,
    decode_json,
    incoming_request_id,
    read_asgi_body,
)
from extender.api.metrics import Metrics
from extender.api.wire import (
    AmbiguousKeys,
    ExtenderArgs,
    ExtenderBindingArgs,
    ExtenderBindingResult,
    ExtenderFilterResult,
    ExtenderPreemptionArgs,
    ExtenderPreemptionResult,
    HostPriority,
    WireError,
    decode,
    decode_keeping_key_order,
    decode_preemption,
)
from extender.cluster.columns import NodeNames
from extender.cluster.engine_thread import EngineThread, Overloaded
from extender.engine.scheduler import BindError, MalformedError, RequestError, Scheduler
from extender.engine.sent_nodes import SentNode
from extender.logs import request_id

log = logging.getLogger("extender.api")

Handler = Callable[[bytes, str], Any]  # raw body, profile -> answer (runs on the engine thread)
T = TypeVar("T")
Server = Callable[[bytes, str], Awaitable[Any]]  # raw body, profile -> answer (on the event loop)
Answer = tuple[int, bytes, list[tuple[bytes, bytes]]]  # status, JSON body, extra headers
BodyReader = Callable[[], Awaitable[bytes]]  # the request's body, read under its limits (or HTTPProblem)
FastHandler = Callable[[BodyReader, str | None], Awaitable[Answer]]  # the body's reader, profile

# A verb body up to this size may be computed on the event loop when the engine thread is idle (see
# EngineThread.request's ``quick``): what kube-scheduler sends with nodeCacheCapable and its default
# percentageOfNodesToScore (a few hundred names, under 10 KB at 5000 nodes) fits. It runs there only while
# the last request of that verb and profile was quick (a first request builds cluster-wide indexes), and
# never for a pod with resource claims (a device allocation may take up to its FilterTimeout): anything
# else is handed to the engine thread as before, so a heavy request never holds the loop that answers probes.
INLINE_MAX_BODY_BYTES = 16 * 1024


class _HostPriority(msgspec.Struct):
    """One element of prioritize's answer, as it is encoded (wire.HostPriority documents it)."""

    Host: str
    Score: int


_HOST_PRIORITIES = msgspec.json.Encoder()


def _small(body: bytes) -> bool:
    return len(body) <= INLINE_MAX_BODY_BYTES and b"resourceClaims" not in body

# kube-scheduler's largest tested clusters have 5000 nodes and it never sends a node twice (the candidates
# are its own node list, filtered); past this a request is refused rather than computed.
DEFAULT_MAX_REQUEST_NODES = 15_000


@dataclass(frozen=True)
class RequestLimits:
    """What bounds one verb request beyond its body size."""

    max_nodes: int = DEFAULT_MAX_REQUEST_NODES


def _body_doc(model: type[Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema(
        ref_template="#/components/schemas/{model}")}}}}


def _candidates(args: CandidateArgs, limits: RequestLimits) -> tuple[list[str] | None, list[SentNode] | None]:
    """NodeNames when sent (nodeCacheCapable), else the full Nodes' items (possibly none); each node once, and
    at most ``limits.max_nodes`` of them."""
    if args.pod is None:
        raise WireError("Pod: a Pod is required")
    if args.names is not None:
        names = args.names
        _check_count("NodeNames", len(names), limits)
        _check_unique("NodeNames", names)
        return names, None
    items = args.nodes or []
    _check_count("Nodes.items", len(items), limits)
    _check_unique("Nodes.items", [node.name for node in items])
    return None, items


def _response(answer: Answer) -> Response:
    """An answer as a Starlette response (the documented FastAPI routes; the verbs' own path sends it raw)."""
    status, body, headers = answer
    return Response(body, status_code=status, media_type="application/json",
                    headers={key.decode("latin-1"): value.decode("latin-1") for key, value in headers})


def _check_count(field: str, count: int, limits: RequestLimits) -> None:
    if count > limits.max_nodes:
        raise HTTPProblem(413, f"{field}: {count} nodes exceed the limit of {limits.max_nodes} per request "
                               "(--max-request-nodes)", "too_many_nodes")


def _check_unique(field: str, names: list[Any]) -> None:
    if isinstance(names, NodeNames) and names.unique():
        return  # a list seen before (decoded lists are shared by their text): checked once
    try:
        if len(set(names)) == len(names):
            return  # the usual case, decided in one pass
    except TypeError:
        pass  # unhashable entries: the loop below skips them
    seen: set[Any] = set()
    for name in names:
        if not isinstance(name, str):
            continue  # reported by the engine with the item's index
        if name in seen:
            raise WireError(f"{field}: node {name!r} appears more than once (kube-scheduler sends each node once)")
        seen.add(name)


def _decode_folded(body: bytes, read: Callable[[Any], T]) -> T:
    """Decode a verb's body and read it into its wire model; the last of keys differing only in case wins, as
    in Go's decoder (a body whose keys are ambiguous is decoded again, keeping their order)."""
    try:
        return read(decode_json(body))
    except AmbiguousKeys:
        return read(decode_keeping_key_order(body))


class VerbRouter(APIRouter):
    """The verbs' routes (documented in OpenAPI as usual), plus ``verbs``: verb -> handler for the fast path."""

    verbs: dict[str, FastHandler]
    max_body_bytes: int
    read_timeout: float


class FastVerbs:
    """Serves POST /<verb> and /profiles/<name>/<verb> ahead of FastAPI: from the ASGI call itself, or straight
    from the verbs' own HTTP protocol (:mod:`extender.api.verb_protocol`), which reads the body under the same
    limits and asks :meth:`route` which handler answers a path.

    kube-scheduler calls these verbs for every pod; FastAPI's router, dependency and exception layers and
    Starlette's request and response objects cost a large share of a millisecond-scale request, and these
    handlers need none of them: they read the raw body and answer status, JSON and headers, sent here with
    the request's id as two messages. Everything else, OpenAPI included, goes to the application.
    """

    def __init__(self, verbs: dict[str, FastHandler], max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
                 read_timeout: float = DEFAULT_READ_TIMEOUT_SECONDS, body_memory: BodyMemory | None = None) -> None:
        self.verbs = verbs
        self.max_body_bytes = max_body_bytes
        self.read_timeout = read_timeout
        # What large bodies may hold at once (the verbs' protocol takes from it; the ASGI path finds it in the
        # scope, put there by the application).
        self.body_memory = body_memory if body_memory is not None \
            else BodyMemory(BODY_MEMORY_FACTOR * max_body_bytes)

    def route(self, path: str) -> tuple[FastHandler, str | None] | None:
        """The handler of a verb's path and its profile (None: the default one), or None for any other path."""
        parts = path.strip("/").split("/")
        if len(parts) == 1:
            handler = self.verbs.get(parts[0])
            return None if handler is None else (handler, None)
        if len(parts) == 3 and parts[0] == "profiles" and parts[1]:
            handler = self.verbs.get(parts[2])
            return None if handler is None else (handler, parts[1])
        return None

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> bool:
        """Answer the request if it is a verb's; False (nothing sent) otherwise."""
        if scope["type"] != "http" or scope["method"] != "POST":
            return False
        routed = self.route(scope["path"])
        if routed is None:
            return False
        handler, profile = routed
        rid = incoming_request_id(scope)
        token = request_id.set(rid)
        try:
            status, body, headers = await handler(
                lambda: read_asgi_body(scope, receive, self.max_body_bytes, self.read_timeout), profile)
        finally:
            request_id.reset(token)
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", b"%d" % len(body)),
            (b"x-request-id", rid.encode("latin-1")), *headers]})
        await send({"type": "http.response.body", "body": body})
        return True


def build_router(scheduler: Scheduler, metrics: Metrics, max_body_bytes: int,
                 read_timeout: float = DEFAULT_READ_TIMEOUT_SECONDS, *, engine: EngineThread | None = None,
                 limits: RequestLimits | None = None) -> VerbRouter:
    """Routes for filter, prioritize, bind and preempt (default profile and per profile).

    Engine work runs on ``engine`` (the thread owning the cache), except small steps that stay quick (a body
    of at most INLINE_MAX_BODY_BYTES, bind's cache steps), which run on the event loop under the engine's
    lock when the engine thread is idle; everything else on the loop is reading bodies and writing answers."""
    router = VerbRouter()
    router.verbs = {}
    router.max_body_bytes, router.read_timeout = max_body_bytes, read_timeout

    def body_of(request: Request) -> BodyReader:
        return lambda: read_asgi_body(request.scope, request.receive, max_body_bytes, read_timeout)
    engine = engine or EngineThread()
    limits = limits or RequestLimits()

    async def run(verb: str, read_body: BodyReader, profile: str | None, serve: Server,
                  error_body: Callable[[str, str], Any]) -> Answer:
        started = time.perf_counter()
        name = profile or scheduler.default_profile
        if name not in scheduler.frameworks:
            metrics.rejected_requests.labels("unknown_profile").inc()
            return 404, orjson.dumps(
                {"Error": f"no profile named {name!r}; profiles: {sorted(scheduler.frameworks)}"}), []
        status = 200
        headers: list[tuple[bytes, bytes]] = []
        try:
            content = await serve(await read_body(), name)
        except Overloaded as err:
            status, headers = 503, [(b"retry-after", str(err.retry_after).encode())]
            metrics.rejected_requests.labels("overloaded").inc()
            content = {"Error": str(err)}
        except HTTPProblem as err:
            status, headers = err.status, list(err.headers)
            metrics.rejected_requests.labels(err.reason).inc()
            content = {"Error": err.message}
        except WireError as err:
            status = 400
            metrics.rejected_requests.labels("bad_request").inc()
            content = {"Error": str(err)}
        except MalformedError as err:
            status = 400
            metrics.rejected_requests.labels("bad_json").inc()
            content = {"Error": str(err)}
        except RequestError as err:
            # Well-formed but unusable content: an answer kube-scheduler will surface as an error.
            status, content = error_body(str(err), name)
        elapsed = time.perf_counter() - started
        metrics.answered(verb, name, status, elapsed)
        if status != 200:
            log.warning("request failed", extra={"verb": verb, "profile": name, "status": status,
                                                 "error": content.get("Error") if isinstance(content, dict) else ""})
        elif log.isEnabledFor(logging.DEBUG):
            log.debug("request", extra={"verb": verb, "profile": name, "seconds": round(elapsed, 6)})
        return status, orjson.dumps(content), headers

    def do_filter(body: bytes, profile: str) -> Any:
        args = decode_candidate_args(body, limits.max_nodes)
        names, nodes = _candidates(args, limits)
        answer = scheduler.filter(profile, args.pod, names, nodes)
        for reason, count in answer.reasons.items():
            metrics.filter_rejections.labels(profile, metrics.reason_label(reason)).inc(count)
        if answer.error:
            return {"Nodes": None, "NodeNames": None, "FailedNodes": None, "FailedAndUnresolvableNodes": None,
                    "Error": answer.error}
        passed = None
        if names is not None:  # the passed names' own text: as the prioritize call will send them back
            remember_names(answer.passed)
            passed = orjson.Fragment(answer.passed.text)
        return {
            "Nodes": {"metadata": {}, "items": answer.passed_nodes} if answer.passed_nodes is not None else None,
            "NodeNames": passed,
            "FailedNodes": answer.failed,
            "FailedAndUnresolvableNodes": answer.failed_unresolvable,
            "Error": "",
        }

    def filter_error(message: str, profile: str) -> tuple[int, Any]:
        return 200, {"Nodes": None, "NodeNames": None, "FailedNodes": None, "FailedAndUnresolvableNodes": None,
                     "Error": message}

    def do_prioritize(body: bytes, profile: str) -> Any:
        args = decode_candidate_args(body, limits.max_nodes)
        names, nodes = _candidates(args, limits)
        answer = scheduler.prioritize(profile, args.pod, names, nodes)
        metrics.scores_answered(profile, np.bincount(answer.scores).tolist())
        # Thousands of hosts: encoded from structs in one call (twice as fast as building a dict per host).
        return orjson.Fragment(_HOST_PRIORITIES.encode(list(map(_HostPriority, answer.hosts,
                                                                  answer.scores.tolist()))))

    def prioritize_error(message: str, profile: str) -> tuple[int, Any]:
        # kube-scheduler ignores a failed prioritize; count it so that someone notices.
        metrics.prioritize_failures.labels(profile).inc()
        return 400, {"Error": message}

    def decode_bind(body: bytes) -> ExtenderBindingArgs:
        return _decode_folded(body, lambda decoded: decode(decoded, ExtenderBindingArgs))

    async def bind(body: bytes, profile: str) -> Any:
        # Decoding reads no cache: a small body is decoded right here, a large one on the engine thread so
        # that it never holds the event loop.
        args = decode_bind(body) if len(body) <= INLINE_MAX_BODY_BYTES else await engine.request(decode_bind, body)
        try:
            await scheduler.bind(args.PodNamespace or "default", args.PodName, args.PodUID, args.Node,
                                 on_cache=engine.write)  # each step on the loop while it stays quick
        except BindError as err:
            metrics.binds.labels("error").inc()
            log.warning("bind failed", extra={"pod": f"{args.PodNamespace}/{args.PodName}", "node": args.Node,
                                              "error": str(err)})
            return {"Error": str(err)}
        metrics.binds.labels("bound").inc()
        log.info("bound", extra={"pod": f"{args.PodNamespace}/{args.PodName}", "node": args.Node})
        return {"Error": ""}

    def do_preempt(body: bytes, profile: str) -> Any:
        args = _decode_folded(body, decode_preemption)
        if args.Pod is None:
            raise WireError("Pod: a Pod is required")
        candidates: dict[str, tuple[list[Any], int]] = {}
        if args.NodeNameToMetaVictims is not None:
            _check_count("NodeNameToMetaVictims", len(args.NodeNameToMetaVictims), limits)
            for node, meta in args.NodeNameToMetaVictims.items():
                candidates[node] = ([p.UID for p in meta.Pods], meta.NumPDBViolations) if meta else ([], 0)
        elif args.NodeNameToVictims is not None:
            _check_count("NodeNameToVictims", len(args.NodeNameToVictims), limits)
            for node, victims in args.NodeNameToVictims.items():
                candidates[node] = (list(victims.Pods), victims.NumPDBViolations) if victims else ([], 0)
        kept = scheduler.preempt(profile, args.Pod, candidates)
        return {"NodeNameToMetaVictims": {
            node: {"Pods": [{"UID": uid} for uid in uids], "NumPDBViolations": pdb}
            for node, (uids, pdb) in kept.items()}}

    def preempt_error(message: str, profile: str) -> tuple[int, Any]:
        return 400, {"Error": message}

    def bind_error(message: str, profile: str) -> tuple[int, Any]:
        return 200, {"Error": message}

    def on_engine(handler: Handler) -> Server:
        """``handler`` on the engine thread (or on the loop, while small requests of its kind stay quick)."""
        async def serve(body: bytes, profile: str) -> Any:
            return await engine.request(handler, body, profile, quick=(handler, profile) if _small(body) else None)
        return serve

    verbs: list[tuple[str, Server, Callable[[str, str], tuple[int, Any]], type[Any], Any, str]] = [
        ("filter", on_engine(do_filter), filter_error, ExtenderArgs, ExtenderFilterResult,
         "Nodes the pod fits, and why the others do not."),
        ("prioritize", on_engine(do_prioritize), prioritize_error, ExtenderArgs, list[HostPriority],
         "A 0..10 score for each candidate node."),
        ("bind", bind, bind_error, ExtenderBindingArgs, ExtenderBindingResult,
         "Bind the pod to the node (assumes it in the cache first)."),
        ("preempt", on_engine(do_preempt), preempt_error, ExtenderPreemptionArgs, ExtenderPreemptionResult,
         "The candidate nodes on which the pod passes our filters once the victims are evicted."),
    ]
    for verb, serve, on_error, request_model, response_model, summary in verbs:
        def make(verb: str = verb, serve: Server = serve,
                 on_error: Callable[[str, str], tuple[int, Any]] = on_error) -> tuple[Any, Any]:
            async def for_default(request: Request) -> Response:
                return _response(await run(verb, body_of(request), None, serve, on_error))

            async def for_profile(profile: str, request: Request) -> Response:
                return _response(await run(verb, body_of(request), profile, serve, on_error))

            return for_default, for_profile

        default_route, profile_route = make()

        async def fast(read_body: BodyReader, profile: str | None, verb: str = verb,
                       serve: Server = serve, on_error: Callable[[str, str], tuple[int, Any]] = on_error) -> Answer:
            return await run(verb, read_body, profile, serve, on_error)

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
