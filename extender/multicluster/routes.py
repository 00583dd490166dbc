"""``POST /multicluster/schedule``: Karmada placement over HTTP.

Body: ``{"binding": <ResourceBinding>, "policy": <PropagationPolicy or its placement> (optional: else the
binding's spec.placement), "clusters": [<Cluster>...] (optional: else the provider's clusters)}``.
Answer (200, also when the workload does not fit): ``{"clusters": [{"name", "replicas"}], "filtered":
{cluster: [reasons]}, "error": ""}``.  A body that cannot be read gets 400 with the same shape and the
problem, naming the field, in ``error``; 413 past the size limit or the cluster limit; 422 when the
placement needs more work than one request may do (:mod:`extender.multicluster.budget`); 503 with
Retry-After when the placement queue is full or the answer did not come in time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field, ValidationError

from extender.api.http import DEFAULT_MAX_BODY_BYTES, HTTPProblem, JSONResponse, decode_json, read_body
from extender.multicluster.budget import DEFAULT_WORK_STEPS, WorkBudget, WorkLimitError, bounded
from extender.multicluster.model import Cluster, ModelError, parse_binding, parse_cluster, parse_placement_source
from extender.multicluster.scheduler import schedule

__all__ = ["PlacementLimits", "ScheduleRequest", "ScheduleResponse", "TargetClusterModel",
           "build_multicluster_router"]

#: Karmada fleets run to hundreds of clusters; a request naming more than this is refused before parsing.
DEFAULT_MAX_CLUSTERS: Final = 5000
#: Placements waiting for or on the placement thread at once; past it 503.
DEFAULT_MAX_PENDING: Final = 8


@dataclass(frozen=True)
class PlacementLimits:
    """What bounds one multi-cluster placement: clusters per request, steps of work (and, on the service,
    the request timeout as a deadline), and how many may wait for the placement thread."""

    max_clusters: int = DEFAULT_MAX_CLUSTERS
    work_steps: int = DEFAULT_WORK_STEPS
    max_pending: int = DEFAULT_MAX_PENDING
    seconds: float | None = None

T = TypeVar("T")


class WorkRunner(Protocol):
    """Where the decoding and the placement run, off the event loop (the service's engine thread): it raises
    an exception with a ``retry_after`` attribute (seconds) when it is saturated."""

    async def request(self, fn: Callable[..., T], *args: Any) -> T: ...


class _Inline:
    async def request(self, fn: Callable[..., T], *args: Any) -> T:
        return fn(*args)


class ScheduleRequest(BaseModel):
    """What to schedule, under which placement, onto which clusters."""

    binding: dict[str, Any] = Field(description="a work.karmada.io/v1alpha2 ResourceBinding")
    policy: dict[str, Any] | None = Field(
        default=None, description="a policy.karmada.io/v1alpha1 PropagationPolicy, or just its placement; "
                                  "default: the binding's spec.placement")
    clusters: list[dict[str, Any]] | None = Field(
        default=None, description="cluster.karmada.io/v1alpha1 Cluster objects; default: the service's clusters")


class TargetClusterModel(BaseModel):
    """A target cluster and its replicas (``ResourceBinding.spec.clusters[i]``)."""

    name: str
    replicas: int


class ScheduleResponse(BaseModel):
    """Where the replicas go, the clusters filtered out with their reasons, and the error (empty on success)."""

    clusters: list[TargetClusterModel]
    filtered: dict[str, list[str]]
    error: str


def _problem(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"clusters": [], "filtered": {}, "error": message}, status_code=status, headers=headers)


def _validation_message(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    return f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg", "invalid"))


def build_multicluster_router(clusters_provider: Callable[[], Sequence[Cluster]], *,
                              max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
                              requests: Any | None = None, latency: Any | None = None,
                              runner: WorkRunner | None = None, limits: PlacementLimits | None = None) -> APIRouter:
    """The router serving ``POST /multicluster/schedule``.

    ``clusters_provider`` returns the member clusters used when a request sends none.  Optional
    Prometheus metrics: ``requests``, a Counter labelled by ``outcome`` (scheduled, unschedulable,
    bad_request, too_much_work, overloaded), and ``latency``, an unlabelled Histogram of seconds per request.
    Decoding and placement run on ``runner`` (inline when none is given; the service's placement thread), so
    a large fleet never stalls the loop; ``limits`` bound each placement's clusters and work.
    """
    router = APIRouter()
    work: WorkRunner = runner or _Inline()
    bounds = limits or PlacementLimits()
    schema_ref = "#/components/schemas/{model}"
    body_doc = {"requestBody": {"required": True, "content": {"application/json": {
        "schema": ScheduleRequest.model_json_schema(ref_template=schema_ref)}}}}

    def count(outcome: str, started: float) -> None:
        if requests is not None:
            requests.labels(outcome=outcome).inc()
        if latency is not None:
            latency.observe(time.perf_counter() - started)

    def place(body: bytes) -> tuple[str, Response]:
        """Decode, validate and place: the outcome label and the answer."""
        try:
            decoded = decode_json(body)
            sent = decoded.get("clusters") if isinstance(decoded, dict) else None
            if isinstance(sent, list) and len(sent) > bounds.max_clusters:  # refused before any more work
                return "bad_request", _problem(413, f"clusters: {len(sent)} clusters exceed the limit of "
                                                    f"{bounds.max_clusters} per request (--max-placement-clusters)")
            parsed = ScheduleRequest.model_validate(decoded)
            binding = parse_binding(parsed.binding, path="binding")
            placement = parse_placement_source(parsed.policy, path="policy") if parsed.policy is not None else None
            if parsed.clusters is not None:
                clusters: Sequence[Cluster] = [parse_cluster(c, path=f"clusters[{i}]")
                                               for i, c in enumerate(parsed.clusters)]
            else:
                clusters = clusters_provider()
        except HTTPProblem as err:
            return "bad_request", _problem(err.status, err.message)
        except ValidationError as err:
            return "bad_request", _problem(400, _validation_message(err))
        except ModelError as err:
            return "bad_request", _problem(400, str(err))
        try:
            with bounded(WorkBudget(bounds.work_steps, bounds.seconds)):
                result = schedule(clusters, binding, placement)
        except WorkLimitError as err:
            return "too_much_work", _problem(422, f"{err} (--placement-work-limit)")
        return ("scheduled" if result.ok else "unschedulable"), JSONResponse(result.as_dict())

    async def schedule_route(request: Request) -> Response:
        started = time.perf_counter()
        try:
            body = await read_body(request, max_body_bytes)
            outcome, answer = await work.request(place, body)
        except HTTPProblem as err:
            # A body refused for the memory bodies may hold at once (503) is the service saturated, not the
            # request at fault: it is counted with the other refusals of a busy service.
            count("overloaded" if err.status == 503 else "bad_request", started)
            return _problem(err.status, err.message, err.header_map())
        except Exception as err:
            retry_after = getattr(err, "retry_after", None)
            if retry_after is None:
                raise
            count("overloaded", started)
            answer = _problem(503, str(err))
            answer.headers["Retry-After"] = str(retry_after)
            return answer
        count(outcome, started)
        return answer

    router.add_api_route(
        "/multicluster/schedule", schedule_route, methods=["POST"],
        summary="Place a Karmada ResourceBinding's replicas on member clusters",
        responses={200: {"model": ScheduleResponse}, 400: {"model": ScheduleResponse},
                   413: {"model": ScheduleResponse}, 422: {"model": ScheduleResponse},
                   503: {"model": ScheduleResponse}},
        openapi_extra=body_doc, tags=["multicluster"],
    )
    return router
