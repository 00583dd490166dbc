"""Shared machinery of the differential test: build and run the Go oracle, run the
Python engine, and compare the two results plugin by plugin.

Used by ``test_differential.py`` and ``run_many.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scenarios import Features

_TESTS = Path(__file__).resolve().parents[1]  # tests/: release_env (also when run as a script)
if str(_TESTS) not in sys.path:
    sys.path.append(str(_TESTS))
from release_env import versions_from_env  # noqa: E402

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"
OK_CODES = {"Success", "Skip", None}  # None: the engine did not report the plugin
FEASIBLE, TOTAL = "(feasible)", "(total)"  # pseudo-plugins in the agreement table
CYCLE, POST_FILTER = "(cycle message)", "(postFilter)"  # the whole PodScheduled message; PostFilter's writes

# The releases the oracle is built for (tests/oracle/build --version), by the engine's kubernetesVersion.
VERSIONS = {"1.36": "v1.36.3", "1.37": "v1.37.2"}

# Upstream's in-tree plugins per release: only these can be handed to the oracle.
_PLUGINS_V136 = {
    "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
    "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
    "PodTopologySpread", "InterPodAffinity", "DefaultPreemption", "NodeResourcesBalancedAllocation",
    "ImageLocality", "DefaultBinder", "DynamicResources", "NodeDeclaredFeatures",
}  # fmt: skip
UPSTREAM_PLUGINS_BY_VERSION = {"1.36": _PLUGINS_V136, "1.37": _PLUGINS_V136 | {"DeferredPodScheduling"}}
UPSTREAM_PLUGINS = _PLUGINS_V136  # kept for callers that predate versions (the plugins both releases have)

ENABLE_HINT = "install Go >= 1.26 (https://go.dev/dl, or the golang package) and run tests/oracle/build"


class OracleUnavailable(RuntimeError):
    """Go is missing or the oracle does not build."""


def versions_to_test() -> list[str]:
    """The releases a test run covers: ``ORACLE_VERSIONS`` (e.g. "1.37"), else every supported one."""
    return versions_from_env("ORACLE_VERSIONS", VERSIONS)


def build_oracle(version: str = "1.36") -> Path:
    """Build (or reuse the cached) oracle binary of a release ("1.36" or "1.37"); return its path."""
    if shutil.which("go") is None:
        raise OracleUnavailable(f"'go' not found: {ENABLE_HINT}")
    proc = subprocess.run(["bash", str(BUILD), "--version", VERSIONS[version]], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        raise OracleUnavailable(f"tests/oracle/build --version {version} failed ({proc.returncode}):\n"
                                f"{proc.stderr[-4000:]}")
    return Path(proc.stdout.strip().splitlines()[-1])


def engine_release(version: str, feature_gates: Mapping[str, bool] | None = None) -> Any:
    """The engine's Release for a version and gates (what the oracle runs with ``-feature-gates``)."""
    from extender.kube.release import release

    return release(int(version.split(".")[1]), dict(feature_gates or {}))


def gate_flag(feature_gates: Mapping[str, bool] | None) -> list[str]:
    """The oracle's ``-feature-gates`` argument for a gate map (none when empty)."""
    if not feature_gates:
        return []
    return ["-feature-gates", ",".join(f"{k}={str(v).lower()}" for k, v in sorted(feature_gates.items()))]


def run_oracle(binary: Path, scenarios: Iterable[Mapping[str, Any]], *args: str) -> Iterator[dict[str, Any]]:
    """Stream scenarios through ONE oracle process; yield its results in order."""
    proc = subprocess.Popen(
        [str(binary), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=sys.stderr,
        text=True,
        bufsize=1 << 16,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin = proc.stdin
    errors: list[BaseException] = []

    def feed() -> None:
        try:
            for sc in scenarios:
                stdin.write(json.dumps(sc, separators=(",", ":")) + "\n")
        except BaseException as err:  # surfaced by the reader below
            errors.append(err)
        finally:
            stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        for line in proc.stdout:
            yield json.loads(line)
    finally:
        writer.join(timeout=5)
        proc.stdout.close()
        rc = proc.wait()
    if errors:
        raise errors[0]
    if rc != 0:
        raise RuntimeError(f"oracle exited with {rc}")


# Upstream's plugins with a PostFilter extension point.
UPSTREAM_POST_FILTERS = {"DynamicResources", "DefaultPreemption"}


def oracle_profile(enabled: Mapping[str, Any], base: Mapping[str, Any] | None = None,
                   version: str = "1.36") -> dict[str, Any]:
    """A v1 KubeSchedulerProfile running exactly ``enabled`` (``{"filter": [...], "score": {...},
    "postFilter": [...]}``) with the plugins of ``version``'s registry.

    Filter-only plugins are kept out of PreScore/Score and score-only ones out of
    PreFilter/Filter, so that unimplemented plugins cannot change the feasible set; a plugin the engine
    runs without its PostFilter is kept out of PostFilter.
    """
    upstream = UPSTREAM_PLUGINS_BY_VERSION[version]
    filters = [p for p in enabled["filter"] if p in upstream]
    scores = {p: w for p, w in enabled["score"].items() if p in upstream}
    post_filters = [p for p in enabled.get("postFilter", []) if p in upstream]
    names = list(dict.fromkeys([*filters, *scores, *post_filters]))
    multi = [{"name": n, **({"weight": scores[n]} if n in scores else {})} for n in names]
    plugins: dict[str, Any] = {"multiPoint": {"enabled": multi, "disabled": [{"name": "*"}]}}
    filter_only = [{"name": n} for n in filters if n not in scores]
    score_only = [{"name": n} for n in scores if n not in filters]
    if filter_only:
        plugins["preScore"] = {"disabled": filter_only}
        plugins["score"] = {"disabled": filter_only}
    if score_only:
        plugins["preFilter"] = {"disabled": score_only}
        plugins["filter"] = {"disabled": score_only}
    without_post_filter = [{"name": n} for n in names if n in UPSTREAM_POST_FILTERS and n not in post_filters]
    if without_post_filter:
        plugins["postFilter"] = {"disabled": without_post_filter}
    profile: dict[str, Any] = {"schedulerName": (base or {}).get("schedulerName", "default-scheduler")}
    profile["plugins"] = plugins
    if base and base.get("pluginConfig"):
        profile["pluginConfig"] = base["pluginConfig"]
    return profile


@dataclass
class Mismatch:
    """One disagreement between the oracle (expected) and the engine (got)."""

    seed: int
    plugin: str
    node: str
    what: str
    expected: Any
    got: Any

    def __str__(self) -> str:
        return (
            f"seed {self.seed}: {self.plugin} on {self.node}: {self.what}: expected {self.expected!r}, got {self.got!r}"
        )


@dataclass
class Stats:
    """Per-plugin agreement counts, per scenario and per node check."""

    scenarios: int = 0
    oracle_errors: list[tuple[int, str]] = field(default_factory=list)
    engine_errors: list[tuple[int, str]] = field(default_factory=list)
    plugin_scenarios: dict[str, list[int]] = field(default_factory=dict)  # [agreed, total]
    plugin_checks: dict[str, list[int]] = field(default_factory=dict)
    failed_seeds: dict[int, list[Mismatch]] = field(default_factory=dict)
    # How kube-scheduler's own cycles ended: Schedulable, Unschedulable, ..., and what PostFilter wrote.
    cycles: dict[str, int] = field(default_factory=dict)

    def count_cycle(self, cycle: Mapping[str, Any] | None) -> None:
        """Tally one oracle cycle's ending."""
        if not cycle:
            return
        kinds = [cycle["status"]]
        post_filter = cycle.get("postFilter") or {}
        if post_filter.get("victims"):
            kinds.append("preempted")
        if post_filter.get("deallocated") or post_filter.get("deleted"):
            kinds.append("claim deallocated or deleted")
        for kind in kinds:
            self.cycles[kind] = self.cycles.get(kind, 0) + 1

    def add(self, seed: int, plugins: Iterable[str], mismatches: list[Mismatch], checks: dict[str, int]) -> None:
        """Record one compared scenario."""
        self.scenarios += 1
        bad: dict[str, int] = {}
        for m in mismatches:
            bad[m.plugin] = bad.get(m.plugin, 0) + 1
        for p in plugins:
            sc = self.plugin_scenarios.setdefault(p, [0, 0])
            sc[1] += 1
            sc[0] += p not in bad
            ch = self.plugin_checks.setdefault(p, [0, 0])
            ch[1] += checks.get(p, 0)
            ch[0] += max(0, checks.get(p, 0) - bad.get(p, 0))
        if mismatches:
            self.failed_seeds[seed] = mismatches

    def table(self) -> str:
        """Agreement per plugin as an aligned text table."""
        rows = [("PLUGIN", "SCENARIOS AGREED", "RATE", "NODE CHECKS AGREED", "RATE")]
        for p in sorted(self.plugin_scenarios):
            a, t = self.plugin_scenarios[p]
            ca, ct = self.plugin_checks.get(p, [0, 0])
            rows.append((p, f"{a}/{t}", _pct(a, t), f"{ca}/{ct}", _pct(ca, ct)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in rows]
        if self.cycles:
            lines.append("kube-scheduler's cycles: " + ", ".join(f"{n} {k}" for k, n in sorted(self.cycles.items())))
        lines.append(
            f"{self.scenarios} scenarios compared, {len(self.failed_seeds)} with mismatches, "
            f"{len(self.oracle_errors)} oracle errors, {len(self.engine_errors)} engine errors"
        )
        return "\n".join(lines)


def _pct(a: int, t: int) -> str:
    return f"{100.0 * a / t:.2f}%" if t else "-"


def _norm_code(entry: Mapping[str, Any] | None) -> str:
    code = None if entry is None else entry.get("code")
    return "Success" if code in OK_CODES else str(code)


def _reasons(entry: Mapping[str, Any] | None) -> list[str]:
    if entry is None or _norm_code(entry) == "Success":
        return []
    return sorted(entry.get("reasons") or [])  # Go map order makes upstream's order unstable


def compare(
    seed: int, expected: Mapping[str, Any], got: Mapping[str, Any], enabled: Mapping[str, Any],
    version: str = "1.36",
) -> tuple[list[Mismatch], dict[str, int]]:
    """Compare one scenario. Returns the mismatches and the number of checks per plugin."""
    upstream = UPSTREAM_PLUGINS_BY_VERSION[version]
    filters = [p for p in enabled["filter"] if p in upstream]
    scores = [p for p in enabled["score"] if p in upstream]
    out: list[Mismatch] = []
    checks: dict[str, int] = {}

    def check(plugin: str, node: str, what: str, exp: Any, act: Any) -> None:
        checks[plugin] = checks.get(plugin, 0) + 1
        if exp != act:
            out.append(Mismatch(seed, plugin, node, what, exp, act))

    exp_pre, got_pre = expected.get("prefilter") or {}, got.get("prefilter") or {}
    for p in filters:
        if p in exp_pre or p in got_pre:
            e, g = exp_pre.get(p), got_pre.get(p)
            check(p, "*", "prefilter code", _norm_code(e), _norm_code(g))
            if _norm_code(e) == _norm_code(g):
                check(p, "*", "prefilter reasons", _reasons(e), _reasons(g))
    rejected = any(_norm_code(v) != "Success" for v in exp_pre.values())
    exp_nodes: Mapping[str, Any] = expected.get("nodes") or {}
    got_nodes: Mapping[str, Any] = got.get("nodes") or {}
    if rejected:  # rejected everywhere; the engine may list the nodes (with empty filters) or not
        for node in sorted(exp_nodes):
            check(FEASIBLE, node, "feasible", False, bool((got_nodes.get(node) or {}).get("feasible")))
        return out, checks
    if set(exp_nodes) != set(got_nodes):
        out.append(Mismatch(seed, FEASIBLE, "*", "node set", sorted(exp_nodes), sorted(got_nodes)))
        return out, checks
    for node in sorted(exp_nodes):
        e, g = exp_nodes[node], got_nodes[node]
        for p in filters:
            ef, gf = e["filters"].get(p), (g.get("filters") or {}).get(p)
            check(p, node, "filter code", _norm_code(ef), _norm_code(gf))
            if _norm_code(ef) == _norm_code(gf):
                check(p, node, "filter reasons", _reasons(ef), _reasons(gf))
        check(FEASIBLE, node, "feasible", e["feasible"], bool(g.get("feasible")))
        if e["feasible"] != bool(g.get("feasible")):
            continue
        if not e["feasible"]:
            continue
        for p in scores:
            es, gs = e["scores"].get(p) or {}, (g.get("scores") or {}).get(p) or {}
            # Skipped where upstream's PreScore skipped, and only there: where upstream scores (0), so do we.
            check(p, node, "score skipped", bool(es.get("skipped")), bool(gs.get("skipped")))
            for k in ("raw", "normalized", "weighted") if not es.get("skipped") else ("normalized", "weighted"):
                check(p, node, f"score {k}", es.get(k, 0), gs.get(k, 0))
        check(TOTAL, node, "total", e["total"], g.get("total"))
    return out, checks


def compare_cycle(seed: int, expected: Mapping[str, Any] | None, outcome: Mapping[str, Any]
                  ) -> tuple[list[Mismatch], dict[str, int]]:
    """Compare kube-scheduler's own cycle (the oracle's ``cycle``) with explain's ``outcome``: the status,
    the whole PodScheduled message, and the PostFilter's status, nomination and writes (where upstream
    picks at random among equals, any of the ones explain names will do)."""
    out: list[Mismatch] = []
    checks: dict[str, int] = {}

    def check(plugin: str, what: str, exp: Any, act: Any) -> None:
        checks[plugin] = checks.get(plugin, 0) + 1
        if exp != act:
            out.append(Mismatch(seed, plugin, "*", what, exp, act))

    if not expected:
        return out, checks
    check(CYCLE, "status", expected["status"], outcome.get("status"))
    if expected["status"] == "Gated":
        # No cycle, no condition: which plugin keeps the pod out is what the user reads (the words are ours).
        check(CYCLE, "PreEnqueue plugin", expected["message"].split(":")[0], outcome.get("plugin"))
        return out, checks
    if expected["status"] == "Schedulable":
        return out, checks
    exp_pf, got_pf = expected.get("postFilter"), outcome.get("postFilter")
    check(CYCLE, "message", expected["message"], _as_upstream_picked(outcome.get("message"), exp_pf, got_pf))
    if expected["status"] != "Unschedulable" or (exp_pf is None and got_pf is None):
        return out, checks
    if exp_pf is None or got_pf is None:
        check(POST_FILTER, "ran", exp_pf is not None, got_pf is not None)
        return out, checks
    check(POST_FILTER, "code", exp_pf["code"], got_pf["code"])
    check(POST_FILTER, "message", exp_pf["message"], _as_upstream_picked(got_pf["message"], exp_pf, got_pf))
    actions = got_pf.get("actions") or []
    preempt = next((a for a in actions if a["action"] == "preempt"), None)
    choices = {} if preempt is None else {c["node"]: c for c in [preempt, *preempt.get("alternatives", [])]}
    nominated = exp_pf.get("nominatedNode")
    got_nominated = got_pf.get("nominatedNode")
    if nominated is not None and nominated in choices:
        got_nominated = nominated  # one of the nodes tied on every criterion: upstream picks one at random
    check(POST_FILTER, "nominated node", nominated, got_nominated)
    victims = sorted(v["pod"] for v in (choices.get(nominated or "") or {}).get("victims", []))
    check(POST_FILTER, "victims", sorted(exp_pf.get("victims") or []), victims)
    for kind, field_name in (("deallocate", "deallocated"), ("delete", "deleted")):
        mine = [a for a in actions if a["action"] == kind]
        theirs = list(exp_pf.get(field_name) or [])
        allowed = {c for a in mine for c in [a["claim"], *a.get("orOneOf", [])]}
        got = theirs if theirs and set(theirs) <= allowed and len(theirs) == len(mine) else [a["claim"] for a in mine]
        check(POST_FILTER, field_name, theirs, got)
    return out, checks


def _as_upstream_picked(message: Any, exp_pf: Mapping[str, Any] | None, got_pf: Mapping[str, Any] | None) -> Any:
    """The engine's message naming the node upstream nominated when it is one of the nodes the engine found tied
    with its own pick (v1.37.2 words a successful preemption: "... on node N, preempting K victims")."""
    if not isinstance(message, str) or not exp_pf or not got_pf:
        return message
    preempt = next((a for a in got_pf.get("actions") or [] if a["action"] == "preempt"), None)
    picked = exp_pf.get("nominatedNode")
    if preempt is None or not picked or picked == preempt["node"] or picked not in preempt.get("orOneOf", []):
        return message
    return message.replace(f"on node {preempt['node']}, preempting", f"on node {picked}, preempting")


def run_engine(explain: Callable[..., dict[str, Any]], scenario: Mapping[str, Any], profile: Any,
               release: Any = None) -> dict[str, Any]:
    """Run the Python engine; an exception becomes the result's error."""
    try:
        return explain(scenario["objects"], scenario["pod"], profile, release)
    except Exception as err:  # reported, not raised: one bad scenario must not hide the others
        return {"error": f"{type(err).__name__}: {err}", "prefilter": {}, "nodes": {}}


def differential(
    seeds: Iterable[int],
    make: Callable[[int], dict[str, Any]],
    profile: Mapping[str, Any] | None = None,
    profile_for: Callable[[int], Mapping[str, Any] | None] | None = None,
    on_result: Callable[[int, list[Mismatch]], None] | None = None,
    version: str = "1.36",
    feature_gates: Mapping[str, bool] | None = None,
) -> Stats:
    """Run scenarios (``make(seed)``) through one release's oracle and the engine following that release (with
    the same feature gates) and compare them all.

    ``profile`` (or ``profile_for(seed)``) is the engine's profile (None: its default); the
    oracle gets the same plugins, weights and pluginConfig."""
    from extender.engine.explain import enabled_plugins, explain_objects

    def profile_of(seed: int) -> Mapping[str, Any] | None:
        return profile_for(seed) if profile_for else profile

    release = engine_release(version, feature_gates)
    upstream = UPSTREAM_PLUGINS_BY_VERSION[version]
    binary = build_oracle(version)
    stats = Stats()
    seed_list = list(seeds)
    scenarios = (
        {**make(s), "profile": oracle_profile(enabled_plugins(profile_of(s), release), profile_of(s), version)}
        for s in seed_list
    )
    # The generator is cheap; regenerate for the engine rather than keep thousands in memory.
    for seed, expected in zip(seed_list, run_oracle(binary, scenarios, *gate_flag(feature_gates)), strict=True):
        # A scoring failure comes with the filter verdicts (the cycle ends in an Error after Filter): those are
        # compared, and the engine must report the same failure; any other error is the oracle's (a generator bug).
        score_error = expected.get("error") if expected.get("nodes") else None
        if expected.get("error") and score_error is None:
            stats.oracle_errors.append((seed, str(expected["error"])))
            continue
        prof = profile_of(seed)
        enabled = enabled_plugins(prof, release)
        compared = [p for p in dict.fromkeys([*enabled["filter"], *enabled["score"]]) if p in upstream]
        sc = make(seed)
        got = run_engine(explain_objects, sc, prof, release)
        if got.get("error"):
            stats.engine_errors.append((seed, str(got["error"])))
            mism = [Mismatch(seed, FEASIBLE, "*", "engine error", None, got["error"])]
            stats.add(seed, [*compared, FEASIBLE, TOTAL, CYCLE, POST_FILTER], mism, {})
        else:
            stats.count_cycle(expected.get("cycle"))
            mism, checks = compare(seed, expected, got, enabled, version)
            if score_error is not None:
                got_error = (got.get("outcome") or {}).get("scoreError")
                checks[TOTAL] = checks.get(TOTAL, 0) + 1
                if got_error != score_error:
                    mism.append(Mismatch(seed, TOTAL, "*", "score error", score_error, got_error))
            cycle_mism, cycle_checks = compare_cycle(seed, expected.get("cycle"), got.get("outcome") or {})
            stats.add(seed, [*compared, FEASIBLE, TOTAL, CYCLE, POST_FILTER], mism + cycle_mism,
                      {**checks, **cycle_checks})
        if on_result:
            on_result(seed, stats.failed_seeds.get(seed, []))
    return stats


def scenario_features(spec: str | None, profile: Mapping[str, Any] | None = None, version: str = "1.36") -> Features:
    """The scenario features for a spec (``ORACLE_FEATURES``), narrowed to the engine's plugins."""
    from extender.engine.explain import enabled_plugins

    enabled = enabled_plugins(profile, engine_release(version))
    return Features.parse(spec).for_plugins([*enabled["filter"], *enabled["score"], *enabled["postFilter"]])


def env_int(name: str, default: int) -> int:
    """An integer from the environment."""
    raw = os.environ.get(name, "")
    return int(raw) if raw.strip() else default
