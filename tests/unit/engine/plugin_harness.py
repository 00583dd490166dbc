"""Run one plugin through the public explain path, the way upstream's plugin tests call a plugin."""

from __future__ import annotations

from typing import Any

from extender.cluster.cache import ClusterCache
from extender.engine.explain import explain_objects
from extender.engine.profile import build_profile
from extender.engine.runtime import Framework
from extender.kube.release import Release


def cache_of(*objects: dict[str, Any]) -> ClusterCache:
    """A cache holding the objects (no assumed-pod expiry)."""
    cache = ClusterCache(assumed_ttl_seconds=0)
    cache.load(objects)
    return cache


def default(release: Release | None = None) -> Framework:
    """The default profile's framework (for a release; default: the newest)."""
    return Framework(build_profile(None, release=release))


def single_plugin_profile(name: str, args: dict[str, Any] | None = None, *, score_only: bool = False,
                          weight: int = 1) -> dict[str, Any]:
    """A profile running just one plugin (as filter and score, or only as score)."""
    plugins: dict[str, Any] = {"multiPoint": {"disabled": [{"name": "*"}]}}
    if score_only:
        plugins["score"] = {"enabled": [{"name": name, "weight": weight}]}
    else:
        plugins["multiPoint"]["enabled"] = [{"name": name, "weight": weight}]
    profile: dict[str, Any] = {"plugins": plugins}
    if args is not None:
        profile["pluginConfig"] = [{"name": name, "args": args}]
    return profile


def filter_verdicts(name: str, pod: dict[str, Any], objects: list[dict[str, Any]],
                    args: dict[str, Any] | None = None) -> dict[str, tuple[str, list[str]]]:
    """node -> (code, reasons) of one filter plugin; a PreFilter rejection applies to every node."""
    out = explain_objects(objects, pod, single_plugin_profile(name, args))
    pre = out["prefilter"].get(name)
    if pre and pre["code"] not in ("Success", "Skip"):
        return {o["metadata"]["name"]: (pre["code"], pre["reasons"]) for o in objects if o["kind"] == "Node"}
    return {node: (v["filters"][name]["code"], v["filters"][name]["reasons"]) for node, v in out["nodes"].items()}


def scores(name: str, pod: dict[str, Any], objects: list[dict[str, Any]], args: dict[str, Any] | None = None,
           *, normalized: bool = True, release: Release | None = None) -> dict[str, int] | None:
    """node -> score of one score plugin (None when its PreScore skipped), under ``release`` (default: newest)."""
    out = explain_objects(objects, pod, single_plugin_profile(name, args, score_only=True), release)
    result: dict[str, int] = {}
    for node, entry in out["nodes"].items():
        s = entry["scores"][name]
        if s.get("skipped"):
            return None
        result[node] = s["normalized" if normalized else "raw"]
    return result
