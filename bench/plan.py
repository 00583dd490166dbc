"""``extender plan`` at scale: variants × pods on a generated base cluster, on every engine, beside the serial loop.

    python -m bench.plan                          # 200 variants x 2,000 pods on 500 nodes, every side, all variants
    python -m bench.plan --sample 10              # time 10 of the 200 variants per side (every 20th)
    python -m bench.plan --sample 6 --append      # a second run, added to bench/PLAN-RESULTS.json

The base cluster is bench.cluster's (500 nodes over 3 zones, 30 pods each); the workload is four
Deployments built from bench.cluster's incoming pods (plain, node affinity + tolerations, pod
anti-affinity, zone spread) with 2,000 pods between them; the 200 variants cycle through every kind a plan
has (pool nodes added, a zone lost, cordons, nodes removed, weights, a bin-packing profile,
percentageOfNodesToScore; a lost zone or removed nodes re-create their pods, so those variants place more
than 2,000 pods). Sides: the serial loop (this process, one variant after another), the local
process pool with 1 and 2 workers, Ray and Dask with 2 workers each (local clusters). Every side is started
once (its start-up and the shipping of the base timed apart), then the variants are timed in chunks, the
sides taking turns chunk by chunk (the order rotated each chunk), so load from elsewhere falls on every
side alike; each side's time is the sum of its chunks. With ``--sample N`` only N variants (evenly spread
over the 200) are timed and the time for all 200 is that sum scaled by 200/N, marked as such. It also
measures how the base pickles, how time grows with the number of variants (process pool, 2 workers) and
with pods per variant (serial loop), both on variants that only add pool nodes (the same work each), and
checks that every side's results are equal.
"""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from bench.cluster import generate, incoming_pods
from extender.cluster.records import slim_pod
from extender.plan.base import BaseCluster
from extender.plan.engines import Engine, make_engine
from extender.plan.evaluate import PlanContext, Task
from extender.plan.planfile import NodeSelector, Plan, Pool, Variant, WorkloadEntry
from extender.plan.results import VariantResult
from extender.plan.workload import expand_workload

ROOT = Path(__file__).resolve().parents[1]
RESULTS_JSON = ROOT / "bench" / "PLAN-RESULTS.json"
RESULTS_MD = ROOT / "bench" / "PLAN-RESULTS.md"
SIDES = ("serial", "process-1", "process-2", "ray-2", "dask-2")
MIX = (("plain", 0.4), ("affinity+tolerations", 0.25), ("spread", 0.25), ("anti-affinity", 0.1))


def base_cluster(nodes: int) -> BaseCluster:
    """bench.cluster's cluster, pods in the cache's slim form (as extender plan reads a dump)."""
    objects = generate(nodes, 30)
    return BaseCluster(tuple(slim_pod(o) if o["kind"] == "Pod" else o for o in objects), f"bench.cluster({nodes})")


def workload(pods: int) -> list[WorkloadEntry]:
    """Four Deployments from the incoming pod mix, ``pods`` replicas between them."""
    entries = []
    counts = [int(pods * share) for _, share in MIX]
    counts[0] += pods - sum(counts)
    for (kind, _), count in zip(MIX, counts, strict=True):
        pod = incoming_pods()[kind]
        name = {"plain": "web", "affinity+tolerations": "api", "spread": "worker", "anti-affinity": "db"}[kind]
        template = {"metadata": {"labels": dict(pod["metadata"]["labels"])}, "spec": pod["spec"]}
        selector = {"matchLabels": {"app": pod["metadata"]["labels"]["app"]}}
        deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                      "metadata": {"name": f"bench-{name}", "namespace": "shop"},
                      "spec": {"replicas": count, "selector": selector, "template": template}}
        entries.append(WorkloadEntry(f"bench:{name}", (deployment,), count))
    return entries


def variants(count: int) -> list[Variant]:
    """``count`` variants cycling through every kind of change."""
    out: list[Variant] = []
    packing = {"pluginConfig": [{"name": "NodeResourcesFit",
                                 "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}
    for i in range(count):
        kind = i % 8
        name = f"v{i:03d}"
        if kind == 0:
            out.append(Variant(f"{name} +{i % 40} general", add_nodes=(("general", i % 40),)))
        elif kind == 1:
            out.append(Variant(f"{name} zone {'abc'[i % 3]} lost", zones_lost=(f"zone-{'abc'[i % 3]}",),
                               add_nodes=(("general", i % 20),)))
        elif kind == 2:
            out.append(Variant(f"{name} cordon m.{8 * 2 ** (i % 3)}x", cordon=NodeSelector(
                match_labels=(("node.kubernetes.io/instance-type", f"m.{8 * 2 ** (i % 3)}x"),))))
        elif kind == 3:
            out.append(Variant(f"{name} weights", weights=(("TaintToleration", 1 + i % 5),
                                                           ("NodeResourcesBalancedAllocation", 1 + i % 3))))
        elif kind == 4:
            out.append(Variant(f"{name} bin packing", profile=packing, add_nodes=(("highmem", i % 10),)))
        elif kind == 5:
            out.append(Variant(f"{name} search {(0, 30, 50)[i % 3]}%", percentage_of_nodes_to_score=(0, 30, 50)[i % 3]))
        elif kind == 6:
            gone = tuple(f"node-{j:05d}" for j in range(i % 50, 500, 25))
            out.append(Variant(f"{name} {len(gone)} nodes removed", remove_nodes=NodeSelector(names=gone)))
        else:
            out.append(Variant(f"{name} +{i % 16} highmem", add_nodes=(("highmem", i % 16),)))
    return out


def pool_variants(count: int) -> list[Variant]:
    """``count`` variants adding general nodes only: the same work per variant (for the growth figures)."""
    return [Variant(f"g{i:03d} +{i % 40} general", add_nodes=(("general", i % 40),)) for i in range(count)]


def plan_context(nodes: int, pods: int, count: int, base: BaseCluster | None = None, *,
                 uniform: bool = False) -> PlanContext:
    """The benchmark plan's context (``uniform``: pool variants only)."""
    base = base or base_cluster(nodes)
    chosen = pool_variants(count) if uniform else variants(count)
    plan = Plan(source="bench", seed=1, workload=workload(pods), variants=chosen, pools={
        "general": Pool("general", like="node-00001", labels=(("pool", "general"),), name_prefix="general-"),
        "highmem": Pool("highmem", like="node-00002", labels=(("pool", "highmem"),), name_prefix="highmem-")})
    return PlanContext(base, plan, expand_workload(plan.workload, base.objects), {})


def engine_of(side: str) -> Engine:
    """``serial``, or ``<engine>-<workers>``."""
    if side == "serial":
        return make_engine("serial")
    name, workers = side.rsplit("-", 1)
    return make_engine(name, int(workers))


def measure_pickling(base: BaseCluster) -> dict[str, float]:
    """The base as shipped (compressed JSON inside the pickle) against a plain pickle of its objects."""
    started = time.perf_counter()
    packed = pickle.dumps(base)
    dumped = time.perf_counter() - started
    started = time.perf_counter()
    again = pickle.loads(packed)
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    plain = pickle.dumps(list(base.objects))
    plain_dumped = time.perf_counter() - started
    started = time.perf_counter()
    pickle.loads(plain)
    plain_loaded = time.perf_counter() - started
    started = time.perf_counter()
    again.cache().snapshot()
    built = time.perf_counter() - started
    return {"packedMB": len(packed) / 1e6, "dumpS": dumped, "loadS": loaded, "plainMB": len(plain) / 1e6,
            "plainDumpS": plain_dumped, "plainLoadS": plain_loaded, "cacheBuildS": built}


def sample_of(tasks: Sequence[Task], sample: int) -> list[Task]:
    """``sample`` tasks spread evenly over all of them."""
    if sample >= len(tasks):
        return list(tasks)
    step = len(tasks) / sample
    return [tasks[int(i * step)] for i in range(sample)]


def interleaved(sides: Sequence[str], context: PlanContext, tasks: Sequence[Task],
                chunk: int) -> tuple[dict[str, dict[str, Any]], dict[str, list[VariantResult]]]:
    """Start every side, then time the tasks chunk by chunk, the sides taking turns."""
    engines: dict[str, Engine] = {}
    report: dict[str, dict[str, Any]] = {}
    results: dict[str, list[VariantResult]] = {side: [] for side in sides}
    try:
        for side in sides:
            engine = engine_of(side)
            started = time.perf_counter()
            engine.start(context)  # returns once every worker holds the context and its base cache
            report[side] = {"startS": time.perf_counter() - started, "workers": engine.workers, "chunks": []}
            engines[side] = engine
            print(f"  {side}: started in {report[side]['startS']:.1f}s", file=sys.stderr)
        chunks = [list(tasks[i:i + chunk]) for i in range(0, len(tasks), chunk)]
        for number, part in enumerate(chunks):
            order = list(sides[number % len(sides):]) + list(sides[:number % len(sides)])
            for side in order:
                load = os.getloadavg()[0]
                started = time.perf_counter()
                done = engines[side].run(part)
                results[side] += done
                report[side]["chunks"].append({"seconds": time.perf_counter() - started, "load": load,
                                               "cpuS": sum(r.cpu_seconds for r in done)})
            print(f"  chunk {number + 1}/{len(chunks)}: " + ", ".join(
                f"{s} {report[s]['chunks'][-1]['seconds']:.1f}s" for s in sides), file=sys.stderr)
    finally:
        for engine in engines.values():
            engine.close()
    return report, results


def _stop_on_sigterm() -> None:
    """SIGTERM (and SIGINT, which Ray's and Dask's handlers may swallow) end the run through the finally
    blocks above, so that every engine's workers and clusters are stopped."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


def growth(context_for: Any, sides: Sequence[str], points: Sequence[int]) -> list[dict[str, Any]]:
    """Time of one side at each point (a fresh context per point)."""
    out = []
    for point in points:
        context = context_for(point)
        tasks = [Task(v) for v in context.plan.variants]
        [side] = sides
        with engine_of(side) as engine:
            engine.start(context)
            started = time.perf_counter()
            results = engine.run(tasks)
            elapsed = time.perf_counter() - started
        out.append({"point": point, "seconds": elapsed, "pods": sum(r.pods for r in results),
                    "load": os.getloadavg()[0]})
        print(f"  growth {side} at {point}: {elapsed:.1f}s", file=sys.stderr)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    """One benchmark run."""
    started = time.time()
    _stop_on_sigterm()
    base = base_cluster(args.nodes)
    context = plan_context(args.nodes, args.pods, args.variants, base)
    tasks = sample_of([Task(v) for v in context.plan.variants], args.sample)
    print(f"bench.plan: {len(context.plan.variants)} variants x {len(context.workload.pods)} pods on "
          f"{args.nodes} nodes; timing {len(tasks)} variants per side", file=sys.stderr)
    pickling = measure_pickling(base)
    sides = [s for s in args.sides.split(",") if s]
    report, results = interleaved(sides, context, tasks, args.chunk)
    reference = [r.as_dict() for r in results[sides[0]]]
    equal = {side: [r.as_dict() for r in results[side]] == reference for side in sides}
    pods_per_variant = statistics.mean(r.pods for r in results[sides[0]])
    placed = sum(r.placed for r in results[sides[0]])
    by_variants = growth(lambda n: plan_context(args.nodes, args.pods, n, base, uniform=True), [args.growth_side],
                         [int(x) for x in args.growth_variants.split(",") if x])
    by_pods = growth(lambda n: plan_context(args.nodes, n, args.growth_pods_variants, base, uniform=True), ["serial"],
                     [int(x) for x in args.growth_pods.split(",") if x])
    return {
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)), "label": args.label,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "loadAtStart": os.getloadavg()[0],
                    "autogroup": _autogroup()},
        "config": {"nodes": args.nodes, "basePods": sum(1 for o in base.objects if o.get("kind") == "Pod"),
                   "variants": args.variants, "pods": len(context.workload.pods), "timed": len(tasks),
                   "chunk": args.chunk},
        "pickling": pickling, "sides": report, "equal": equal, "podsPerVariant": pods_per_variant,
        "placedInTimed": placed, "growthVariants": {"side": args.growth_side, "points": by_variants},
        "growthPods": {"side": "serial", "variants": args.growth_pods_variants, "points": by_pods},
        "wallS": time.time() - started,
    }


def _autogroup() -> bool:
    """Whether the kernel shares CPU time between sessions rather than processes (sched_autogroup)."""
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        return False


#: A load average no lower than this all through a run means other work shared the machine (a run's own
#: processes make at most about 2 workers + the driver).
_OTHER_WORK_LOAD = 5.0


def _cores(side: str) -> int:
    return 1 if side == "serial" else int(side.rsplit("-", 1)[1])


def render(runs: Sequence[dict[str, Any]]) -> str:
    """bench/PLAN-RESULTS.md from every recorded run."""
    lines = ["# extender plan: benchmark", "", "Generated by `python -m bench.plan` (see its docstring for what is "
             "measured and how). The machine: 2 shared cores, other work running on it; each run gives the load "
             "average (1 min) seen at every timed chunk.", "",
             "Reading the tables: *start-up* is the engine's start until every worker holds the plan and has "
             "built its base cache (spawning processes, importing, a local Ray or Dask cluster); *timed variants* "
             "is the sum of the side's chunks; *200 variants* scales that to the whole plan when only a sample "
             "was timed (the sample is spread evenly over the 200, so it holds every kind of variant in "
             "proportion); *pods scheduled /s/core* counts every pod a variant places or finds pending (a lost "
             "zone's re-created pods included) per second of the side's time and per worker; *worker CPU* is the "
             "CPU time the simulations took in the workers (each measures its own), and *pods /CPU-s* the pods "
             "per second of that: the per-core rate with the machine's load taken out (runs before it was "
             "recorded show -). *equal* says the side's results are the serial loop's, field for field.", ""]
    for run_ in runs:
        cfg = run_["config"]
        scale = cfg["variants"] / cfg["timed"]
        lines += [f"## {run_['label'] or 'run'} ({run_['started']})", "",
                  f"{cfg['variants']} variants x {cfg['pods']} pods on {cfg['nodes']} nodes ({cfg['basePods']} pods "
                  f"already bound); {cfg['timed']} of the {cfg['variants']} variants timed per side, in chunks of "
                  f"{cfg['chunk']}, sides interleaved; whole run {run_['wallS'] / 60:.0f} min.", ""]
        lines += ["| side | start-up (s) | timed variants (s) | per variant (s) | 200 variants (s)"
                  + (" *scaled*" if scale != 1 else "") + " | pods scheduled /s/core | worker CPU (s) | "
                  "pods /CPU-s | load (min-max) | equal |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for side, data in run_["sides"].items():
            seconds = sum(c["seconds"] for c in data["chunks"])
            loads = [c["load"] for c in data["chunks"]]
            pods = cfg["timed"] * run_["podsPerVariant"]
            cpu = sum(c.get("cpuS", 0.0) for c in data["chunks"])
            lines.append(f"| {side} | {data['startS']:.1f} | {seconds:.1f} | {seconds / cfg['timed']:.2f} | "
                         f"{seconds * scale:.0f} | {pods / seconds / _cores(side):.0f} | "
                         + (f"{cpu:.1f} | {pods / cpu:.0f}" if cpu else "- | -")
                         + f" | {min(loads):.1f}-{max(loads):.1f} | {'yes' if run_['equal'][side] else 'NO'} |")
        serial = sum(c["seconds"] for c in run_["sides"].get("serial", {"chunks": [{"seconds": 0}]})["chunks"])
        if serial:
            ratios = ", ".join(f"{side} {serial / sum(c['seconds'] for c in d['chunks']):.2f}x"
                               for side, d in run_["sides"].items() if side != "serial")
            lines += ["", f"Speed-up over the serial loop (timed variants): {ratios}."]
        cpu = {side: sum(c.get("cpuS", 0.0) for c in d["chunks"]) for side, d in run_["sides"].items()}
        all_loads = [c["load"] for d in run_["sides"].values() for c in d["chunks"]]
        if min(all_loads) < _OTHER_WORK_LOAD:
            quiet = f"{min(all_loads):.1f}-{max(all_loads):.1f}"
            lines += ["", f"Nothing else ran on the machine (load {quiet}: this run's own processes), so the "
                          "wall-clock speed-ups above are what a second worker gives here."]
        elif run_["machine"].get("autogroup"):
            lines += ["", "This kernel shares CPU time between sessions, not processes (`sched_autogroup_enabled` is "
                          "1), and other sessions kept both cores busy: the workers of one side, all in this run's "
                          "session, shared that session's slice, so wall-clock times cannot show the speed-up of a "
                          "second worker here (a plain two-process CPU loop shows the same)."]
        if all(cpu.values()):
            lines += ["", "Worker CPU and pods per CPU-second are the load-independent figures; on two idle cores "
                          "the 200 variants would take about the workers' CPU for them divided by the workers: "
                          + ", ".join(f"{side} {seconds * scale / _cores(side):.0f} s" for side, seconds in cpu.items())
                          + " (scaled from the timed variants)."]
        p = run_["pickling"]
        lines += ["", f"Shipping the base ({cfg['nodes']} nodes, {cfg['basePods']} pods): pickled as compressed JSON "
                      f"{p['packedMB']:.1f} MB in {p['dumpS']:.2f} s, read back in {p['loadS']:.2f} s; a plain "
                      f"pickle of the same objects is {p['plainMB']:.1f} MB, {p['plainDumpS']:.2f} s and "
                      f"{p['plainLoadS']:.2f} s. "
                      f"A worker then builds its base cache once in {p['cacheBuildS']:.2f} s.", ""]
        gv, gp = run_["growthVariants"], run_["growthPods"]
        lines += [f"Time against variants ({gv['side']}, {cfg['pods']} pods each): "
                  + ", ".join(f"{x['point']} variants {x['seconds']:.1f} s (load {x['load']:.1f})"
                              for x in gv["points"]) + ".", "",
                  f"Time against pods per variant (serial loop, {gp['variants']} variants): "
                  + ", ".join(f"{x['point']} pods {x['seconds']:.1f} s (load {x['load']:.1f})"
                              for x in gp["points"]) + ".", ""]
        if run_.get("note"):  # added to PLAN-RESULTS.json by hand, after the run: what a reader must know
            lines += [run_["note"], ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run, record and render."""
    parser = argparse.ArgumentParser(prog="python -m bench.plan", description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--variants", type=int, default=200)
    parser.add_argument("--sample", type=int, default=200, help="variants timed per side (default: all)")
    parser.add_argument("--chunk", type=int, default=2, help="variants per interleaved chunk")
    parser.add_argument("--sides", default=",".join(SIDES))
    parser.add_argument("--growth-side", default="process-2")
    parser.add_argument("--growth-variants", default="2,4,8")
    parser.add_argument("--growth-pods", default="500,1000,2000")
    parser.add_argument("--growth-pods-variants", type=int, default=2)
    parser.add_argument("--label", default="")
    parser.add_argument("--render-only", action="store_true", help="rewrite PLAN-RESULTS.md from the JSON")
    parser.add_argument("--append", action="store_true", help="add this run to bench/PLAN-RESULTS.json")
    args = parser.parse_args(argv)
    if args.render_only:
        RESULTS_MD.write_text(render(orjson.loads(RESULTS_JSON.read_bytes())))
        return 0
    result = run(args)
    runs = orjson.loads(RESULTS_JSON.read_bytes()) if args.append and RESULTS_JSON.exists() else []
    runs.append(result)
    RESULTS_JSON.write_bytes(orjson.dumps(runs, option=orjson.OPT_INDENT_2))
    RESULTS_MD.write_text(render(runs))
    print(render([result]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
