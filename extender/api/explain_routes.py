"""Explain over HTTP: why a pod fits where it does, and what the scheduling cycle would conclude.

Ours, not kube-scheduler's protocol:

- ``POST /explain`` and ``/profiles/{profile}/explain``: a pod in the body, as ``{"pod", "nodes": [names]}``
  or as the ExtenderArgs body /filter takes (``Pod`` with ``NodeNames`` or full ``Nodes``, keys in any
  letter case), so that a captured filter request is explained as is;
- ``GET /explain/{namespace}/{name}`` and ``/profiles/{profile}/explain/{namespace}/{name}``: a pod the
  cache holds (from the watch when live, from the dump otherwise), pending or already bound.

Without a profile in the path, the profile is the one named by the pod's spec.schedulerName (as
kube-scheduler picks it), else the default one. ``?format=table`` answers the table the CLI prints. A
plugin failing on the pod is part of the explanation (200, ``outcome.status`` SchedulerError), never a 500.
The plugins run off the event loop and off the engine (see build_explain_router).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from extender.api.http import DEFAULT_READ_TIMEOUT_SECONDS, HTTPProblem, JSONResponse, read_json
from extender.api.wire import NodeList
from extender.cluster.snapshot import Snapshot
from extender.engine.explain import (
    PodNotFound,
    choose_framework,
    explain,
    explain_found,
    find_cached,
    frozen,
    render_table,
)
from extender.engine.runtime import Framework
from extender.engine.scheduler import RequestError, Scheduler
from extender.engine.sent_nodes import SentNode

# () -> (ready, details), as the app's readiness check.
Readiness = Callable[[], tuple[bool, dict[str, Any]]]
T = TypeVar("T")


class EngineRunner(Protocol):
    """Where engine work runs (reading the cache, running plugins): awaited from the event loop.

    A runner that refuses work when saturated raises an exception with ``retry_after`` (seconds): the
    request is then answered 503 with Retry-After.
    """

    async def request(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` where the cache may be read; its result or its exception."""
        ...


class InlineRunner:
    """Runs engine work at once on the calling thread (the cache's owner when nothing else is)."""

    async def request(self, fn: Callable[..., T], *args: Any) -> T:
        return fn(*args)


class ExplainArgs(BaseModel):
    """Body of POST /explain: ``pod`` and ``nodes`` (names), or /filter's ExtenderArgs (any letter case)."""

    model_config = ConfigDict(extra="forbid")
    pod: dict[str, Any] | None = Field(default=None, description="the v1.Pod to explain (ExtenderArgs: Pod)")
    nodes: list[str] | NodeList | None = Field(
        default=None, description="node names, or a v1.NodeList as /filter takes it (default: every node)")
    NodeNames: list[str] | None = Field(default=None, description="node names, as /filter takes them")


_FIELDS = {name.casefold(): name for name in ExplainArgs.model_fields}


class _BadRequest(ValueError):
    """A body that cannot be explained; answered 400 with the message."""


def decode_explain_args(body: Any) -> ExplainArgs:
    """Fold key case onto ExplainArgs' fields (later keys win, as Go's decoder) and validate."""
    if not isinstance(body, Mapping):
        raise _BadRequest(f"expected a JSON object, got {type(body).__name__}")
    folded: dict[str, Any] = {}
    unknown: list[str] = []
    for key, value in body.items():
        name = _FIELDS.get(str(key).casefold())
        if name is None:
            unknown.append(str(key))
        else:
            folded[name] = value
    if unknown:
        raise _BadRequest(f"unknown field(s) {sorted(unknown)}: expected pod and nodes, or /filter's Pod with "
                          "NodeNames or Nodes")
    try:
        args = ExplainArgs.model_validate(folded)
    except ValidationError as err:
        first = err.errors()[0]
        raise _BadRequest(f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from err
    if args.pod is None:
        raise _BadRequest("pod: a Pod is required")
    return args


def problem(status: int, message: str, **headers: str) -> Response:
    """An error answer: ``{"Error": message}`` with the status (and headers, e.g. Retry-After)."""
    return JSONResponse({"Error": message}, status_code=status, headers=headers or None)


def problem_of(err: HTTPProblem) -> Response:
    """The error answer for a request refused while its body was read (with its headers: a 503's Retry-After)."""
    return problem(err.status, err.message, **err.header_map())


def overloaded(err: Exception) -> Response:
    """503 with Retry-After for an exception that carries ``retry_after`` (a saturated runner, Busy); any
    other exception is raised again."""
    retry_after = getattr(err, "retry_after", None)
    if retry_after is None:
        raise err
    return problem(503, str(err), **{"Retry-After": str(retry_after)})


class Busy(RuntimeError):
    """Another whole-cluster computation is running; the request is answered 503 with Retry-After."""

    retry_after = 1


class ExplainWorker:
    """Where explanations (and the web view's what-ifs) run: off the event loop and off the engine.

    An explanation runs every plugin on every node (about a second per thousand nodes), so only the cache
    reads run on ``runner`` (a pod's lookup and a frozen copy of the snapshot, both quick); the plugins then
    run in a worker thread, on profiles instantiated for that request (plugins keep per-instance indexes the
    verbs use), one computation at a time: another one meanwhile raises :class:`Busy`.
    """

    def __init__(self, scheduler: Scheduler, runner: EngineRunner | None = None,
                 readiness: Readiness | None = None) -> None:
        self.scheduler = scheduler
        self.runner: EngineRunner = runner or InlineRunner()
        self.readiness = readiness
        self._one_at_a_time = asyncio.Lock()

    def refused(self, profile: str | None = None) -> Response | None:
        """404 for a profile there is none of, 503 while the cache is not synced (an answer would miss
        objects); None when the computation may go ahead."""
        if profile is not None and profile not in self.scheduler.frameworks:
            return problem(404, f"no profile named {profile!r}; profiles: {sorted(self.scheduler.frameworks)}")
        ready, details = self.readiness() if self.readiness is not None else (True, {})
        if ready:
            return None
        return problem(503, f"the cache is not synced yet (kinds not listed: {details.get('unsynced')}); "
                            "an explanation now would miss objects", **{"Retry-After": "1"})

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a quick cache read where the cache may be read."""
        return await self.runner.request(fn, *args)

    async def compute(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a whole-cluster computation in a worker thread; Busy if one is running already."""
        if self._one_at_a_time.locked():
            raise Busy("another explanation is being computed; retry shortly")
        async with self._one_at_a_time:
            return await asyncio.to_thread(fn, *args)

    def frameworks(self) -> dict[str, Framework]:
        """Every profile, instantiated for one computation."""
        return {name: Framework(fw.profile) for name, fw in self.scheduler.frameworks.items()}

    def snapshot_now(self) -> Snapshot:
        """A frozen copy of the cache's snapshot (call through :meth:`read`)."""
        return frozen(self.scheduler.cache.snapshot())


def build_explain_router(scheduler: Scheduler, *, max_body_bytes: int,
                         read_timeout: float = DEFAULT_READ_TIMEOUT_SECONDS, readiness: Readiness | None = None,
                         engine: EngineRunner | None = None, worker: ExplainWorker | None = None) -> APIRouter:
    """The explain routes over the scheduler's cache and profiles, computed by ``worker`` (see ExplainWorker;
    one over ``engine`` by default): another explanation meanwhile is answered 503."""
    router = APIRouter()
    worker = worker or ExplainWorker(scheduler, engine, readiness)

    def answer(result: Mapping[str, Any], format: str) -> Response:
        status = 400 if result.get("error") else 200
        if format == "table":
            return PlainTextResponse(render_table(result), status_code=status)
        return JSONResponse(result, status_code=status)

    def found_now(namespace: str, name: str) -> tuple[Mapping[str, Any], bool, Snapshot]:
        raw, assumed = find_cached(scheduler.cache, namespace, name)
        return raw, assumed, frozen(scheduler.cache.snapshot())

    def explain_posted_work(args: ExplainArgs, profile: str | None, snapshot: Snapshot) -> dict[str, Any]:
        assert args.pod is not None
        framework, note = choose_framework(worker.frameworks(), scheduler.default_profile, args.pod, profile)
        names = args.NodeNames if args.NodeNames is not None else (
            args.nodes if isinstance(args.nodes, list) else None)
        nodes = (scheduler.resolve_nodes(snapshot, [SentNode.of_object(item) for item in args.nodes.items or []])
                 if args.NodeNames is None and isinstance(args.nodes, NodeList) else None)
        result = explain(framework, snapshot, args.pod, names, nodes=nodes)
        if note and not result.get("error"):
            result["note"] = note
        return result

    async def explain_posted(request: Request, profile: str | None = None, format: str = "json") -> Response:
        refused = worker.refused(profile)
        if refused is not None:
            return refused
        try:
            args = decode_explain_args(await read_json(request, max_body_bytes, read_timeout))
        except HTTPProblem as err:
            return problem_of(err)
        except _BadRequest as err:
            return problem(400, str(err))
        try:
            snapshot = await worker.read(worker.snapshot_now)
            done = await worker.compute(explain_posted_work, args, profile, snapshot)
        except RequestError as err:
            return problem(400, str(err))
        except Exception as err:
            return overloaded(err)
        return answer(done, format)

    async def explain_named(namespace: str, name: str, profile: str | None = None, format: str = "json") -> Response:
        refused = worker.refused(profile)
        if refused is not None:
            return refused
        try:
            raw, assumed, snapshot = await worker.read(found_now, namespace, name)
            done = await worker.compute(lambda: explain_found(worker.frameworks(), scheduler.default_profile,
                                                              snapshot, raw, assumed, profile))
        except PodNotFound as err:
            return problem(404, str(err))
        except Exception as err:
            return overloaded(err)
        return answer(done, format)

    body_doc = {"requestBody": {"required": True, "content": {"application/json": {
        "schema": ExplainArgs.model_json_schema(ref_template="#/components/schemas/{model}")}}}}
    posted = ("Why the pod fits or not on each node: every filter plugin's verdict, every score plugin's raw, "
              "normalised and weighted score, and the scheduling cycle's outcome (?format=table for people). "
              "Takes {pod, nodes} or the body /filter takes.")
    named = ("The same for a pod the extender's cache holds (pending, or bound: then explained as when it was "
             "scheduled, without its own usage of its node).")
    router.add_api_route("/explain", explain_posted, methods=["POST"], summary=posted, openapi_extra=body_doc,
                         name="explain")
    router.add_api_route("/profiles/{profile}/explain", explain_posted, methods=["POST"], summary=posted,
                         openapi_extra=body_doc, name="explain_profile")
    router.add_api_route("/explain/{namespace}/{name}", explain_named, methods=["GET"], summary=named,
                         name="explain_pod")
    router.add_api_route("/profiles/{profile}/explain/{namespace}/{name}", explain_named, methods=["GET"],
                         summary=named, name="explain_pod_profile")
    return router
