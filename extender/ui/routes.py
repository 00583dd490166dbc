"""The web view's routes: the page at ``/ui/``, its files, and the small JSON API it calls.

Read-only. Every route is a GET except two POSTs that compute and write nothing: a what-if (explain or
simulate on a copy of the snapshot) and a multi-cluster placement. POSTs take ``application/json`` only, so a
cross-site form cannot send one without the browser's preflight, which this service never grants. The page
also calls ``GET /explain/...`` itself: the table is the engine's own explanation.

The routes are served where ``/explain`` is (the verbs' listener: loopback in the sidecar layout, mutual TLS
in the standalone one) and never on the health port; see *The web view* in docs/operations.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import yaml
from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from extender import __version__
from extender.api.explain_routes import ExplainWorker, overloaded, problem, problem_of
from extender.api.http import DEFAULT_READ_TIMEOUT_SECONDS, HTTPProblem, JSONResponse, read_json
from extender.cluster.snapshot import Snapshot
from extender.engine.explain import PodNotFound, choose_framework, explain, find_cached
from extender.multicluster.budget import WorkLimitError
from extender.multicluster.model import Cluster
from extender.multicluster.routes import PlacementLimits, WorkRunner
from extender.ui.assets import Assets
from extender.ui.devices import device_choices
from extender.ui.facts import nodes_overview, pending_list
from extender.ui.placement import cluster_summary, place
from extender.ui.whatif import WhatIfError, apply_changes, parse_changes, parse_pod_yaml, simulate_replicas

MODES = ("explain", "simulate")
# The POST bodies as OpenAPI documents them (the routes check them field by field, with messages that name
# the field).
WHAT_IF_BODY = {"type": "object", "required": ["pod"], "properties": {
    "pod": {"type": "string", "description": "the pod's YAML (or JSON)"},
    "changes": {"type": "array", "items": {"type": "object", "required": ["op", "node"], "properties": {
        "op": {"type": "string", "enum": ["cordon", "uncordon", "copy", "untaint"]},
        "node": {"type": "string"}, "count": {"type": "integer", "minimum": 1, "maximum": 1000},
        "taint": {"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"},
                                                   "effect": {"type": "string"}}}}}},
    "mode": {"type": "string", "enum": list(MODES), "default": "explain"},
    "profile": {"type": "string", "description": "default: the pod's schedulerName, else the first profile"},
    "replicas": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "simulate: copies placed"},
    "seed": {"type": "integer", "description": "simulate: seed for ties among top-scoring nodes"}}}
PLACE_BODY = {"type": "object", "required": ["yaml"], "properties": {"yaml": {
    "type": "string", "description": "a ResourceBinding, optionally a PropagationPolicy and Cluster objects"}}}


def _json_body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def _has_claims(raw_pod: Mapping[str, Any]) -> bool:
    spec = raw_pod.get("spec")
    return isinstance(spec, Mapping) and bool(spec.get("resourceClaims"))


def build_ui_router(worker: ExplainWorker, member_clusters: Callable[[], Sequence[Cluster]], *,
                    max_body_bytes: int, read_timeout: float = DEFAULT_READ_TIMEOUT_SECONDS,
                    placer: WorkRunner | None = None, placement_limits: PlacementLimits | None = None) -> APIRouter:
    """The page, its files and its API, computing through ``worker`` (the explain routes' own); placements
    run on ``placer`` (the service's placement thread, never the engine) under ``placement_limits``."""
    placements: WorkRunner = placer or worker.runner
    router = APIRouter()
    assets = Assets()
    scheduler = worker.scheduler

    async def json_body(request: Request) -> Mapping[str, Any]:
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise HTTPProblem(415, f"expected content-type application/json, got {kind or 'none'!r}", "content_type")
        body = await read_json(request, max_body_bytes, read_timeout)
        if not isinstance(body, Mapping):
            raise HTTPProblem(400, f"expected a JSON object, got {type(body).__name__}", "bad_body")
        return body

    async def page_root() -> Response:
        return RedirectResponse("ui/", status_code=307)

    async def page(request: Request) -> Response:
        return assets.answer("index.html", request)

    async def asset(name: str, request: Request) -> Response:
        return assets.answer(name, request)

    async def overview() -> Response:
        ready, details = worker.readiness() if worker.readiness is not None else (True, {})
        try:
            counts = await worker.read(scheduler.cache.counts)
        except Exception as err:
            return overloaded(err)
        return JSONResponse({"version": __version__, "profiles": sorted(scheduler.frameworks),
                             "defaultProfile": scheduler.default_profile, "ready": ready,
                             "source": details.get("source", "dump"), "unsynced": details.get("unsynced", []),
                             "cache": counts, "memberClusters": len(member_clusters())})

    async def pods(q: str = "") -> Response:
        try:
            listed = await worker.read(lambda: pending_list(scheduler.cache.pending_pods(), q))
        except Exception as err:
            return overloaded(err)
        return JSONResponse(listed)

    async def pod(namespace: str, name: str) -> Response:
        try:
            raw, _assumed = await worker.read(find_cached, scheduler.cache, namespace, name)
        except PodNotFound as err:
            return problem(404, str(err))
        except Exception as err:
            return overloaded(err)
        editable = {k: v for k, v in raw.items() if k != "status"}
        spec = editable.get("spec")
        if isinstance(spec, Mapping) and spec.get("nodeName"):  # a bound pod: ask where it would go now
            editable["spec"] = {k: v for k, v in spec.items() if k != "nodeName"}
        return JSONResponse({"pod": raw, "yaml": yaml.safe_dump(_plain(editable), sort_keys=False)})

    async def nodes() -> Response:
        try:
            snapshot = await worker.read(worker.snapshot_now)
        except Exception as err:
            return overloaded(err)
        return JSONResponse({"nodes": nodes_overview(snapshot)})

    async def devices(namespace: str, name: str, profile: str | None = None) -> Response:
        refused = worker.refused(profile)
        if refused is not None:
            return refused
        try:
            raw, _assumed = await worker.read(find_cached, scheduler.cache, namespace, name)
            snapshot = await worker.read(worker.snapshot_now)
            framework, _note = choose_framework(worker.frameworks(), scheduler.default_profile, raw, profile)
            answer = await worker.compute(device_choices, framework, snapshot, raw)
        except PodNotFound as err:
            return problem(404, str(err))
        except Exception as err:
            return overloaded(err)
        return JSONResponse(answer)

    def what_if_work(snapshot: Snapshot, body: Mapping[str, Any]) -> dict[str, Any]:
        text = body.get("pod")
        if not isinstance(text, str):
            raise WhatIfError("pod: expected the pod's YAML as a string")
        raw_pod = parse_pod_yaml(text)
        changes = parse_changes(body.get("changes"))
        mode = body.get("mode", "explain")
        if mode not in MODES:
            raise WhatIfError(f"mode: expected one of {list(MODES)}, got {mode!r}")
        profile = body.get("profile")
        if profile is not None and profile not in scheduler.frameworks:
            raise WhatIfError(f"profile: no profile named {profile!r}; profiles: {sorted(scheduler.frameworks)}")
        trial, added = apply_changes(snapshot, changes)
        framework, note = choose_framework(worker.frameworks(), scheduler.default_profile, raw_pod, profile)
        out: dict[str, Any] = {"mode": mode, "applied": [c.describe() for c in changes],
                               "nodes": nodes_overview(trial, [*added, *(c.node for c in changes)])}
        if mode == "simulate":
            replicas, seed = body.get("replicas", 1), body.get("seed")
            if not isinstance(replicas, int) or isinstance(replicas, bool):
                raise WhatIfError(f"replicas: expected an integer, got {replicas!r}")
            if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
                raise WhatIfError(f"seed: expected an integer, got {seed!r}")
            out["simulation"] = simulate_replicas(framework, trial, raw_pod, replicas, seed)
            out["profile"] = framework.name
            return out
        result = explain(framework, trial, raw_pod)
        if note and not result.get("error"):
            result["note"] = note
        out["explain"] = result
        if _has_claims(raw_pod):
            out["devices"] = device_choices(framework, trial, raw_pod)
        return out

    async def what_if(request: Request) -> Response:
        try:
            body = await json_body(request)
        except HTTPProblem as err:
            return problem_of(err)
        refused = worker.refused()
        if refused is not None:
            return refused
        try:
            snapshot = await worker.read(worker.snapshot_now)
            answer = await worker.compute(what_if_work, snapshot, body)
        except WhatIfError as err:
            return JSONResponse(err.as_dict(), status_code=400)
        except Exception as err:
            return overloaded(err)
        return JSONResponse(answer)

    async def clusters() -> Response:
        return JSONResponse({"clusters": [cluster_summary(c) for c in member_clusters()]})

    async def placement(request: Request) -> Response:
        try:
            body = await json_body(request)
        except HTTPProblem as err:
            return problem_of(err)
        text = body.get("yaml")
        if not isinstance(text, str):
            return problem(400, "yaml: expected the ResourceBinding's YAML as a string")
        try:
            answer = await placements.request(place, text, member_clusters(), placement_limits)
        except WhatIfError as err:
            return JSONResponse(err.as_dict(), status_code=400)
        except WorkLimitError as err:
            return problem(422, f"{err} (--placement-work-limit)")
        except Exception as err:
            return overloaded(err)
        return JSONResponse(answer)

    hidden: dict[str, Any] = {"include_in_schema": False}
    router.add_api_route("/ui", page_root, methods=["GET"], **hidden)
    router.add_api_route("/ui/", page, methods=["GET"], **hidden)
    router.add_api_route("/ui/assets/{name}", asset, methods=["GET"], **hidden)
    router.add_api_route("/ui/api/overview", overview, methods=["GET"],
                         summary="The web view: service version, profiles, cache counts and readiness")
    router.add_api_route("/ui/api/pods", pods, methods=["GET"],
                         summary="The web view: pending pods whose namespace/name contains every word of q")
    router.add_api_route("/ui/api/pods/{namespace}/{name}", pod, methods=["GET"],
                         summary="The web view: a pod the cache holds, as an object and as YAML to edit")
    router.add_api_route("/ui/api/nodes", nodes, methods=["GET"],
                         summary="The web view: every node's zone, pool, taints and usage")
    router.add_api_route("/ui/api/devices/{namespace}/{name}", devices, methods=["GET"],
                         summary="The web view: the devices each node could allocate to the pod's claims")
    router.add_api_route("/ui/api/whatif", what_if, methods=["POST"], openapi_extra=_json_body(WHAT_IF_BODY),
                         summary="The web view: explain or simulate an edited pod on an edited copy of the "
                                 "cluster (nothing is written)")
    router.add_api_route("/ui/api/multicluster", clusters, methods=["GET"],
                         summary="The web view: the service's Karmada member clusters")
    router.add_api_route("/ui/api/multicluster/place", placement, methods=["POST"],
                         openapi_extra=_json_body(PLACE_BODY),
                         summary="The web view: where a ResourceBinding's replicas go and why clusters were "
                                 "filtered out (nothing is written)")
    return router


def _plain(value: Any) -> Any:
    """Plain dicts and lists (the cache keeps pods in its own mapping type), for YAML."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
