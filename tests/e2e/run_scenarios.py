"""Many generated scenarios through the real kube-scheduler v1.36.3, compared with explain and simulate.

    python tests/e2e/run_scenarios.py --count 700              # seeds 0..699, then a tally
    python tests/e2e/run_scenarios.py --seed 42 --count 1 -v   # one seed, every disagreement
    python tests/e2e/run_scenarios.py --seeds 3,76,512          # these seeds
    python tests/e2e/run_scenarios.py --select deallocatable=20,priorities=40,dra=40,any=20

Starts etcd, kube-apiserver and kube-scheduler (built by tests/k8s/build) in a work directory of its own
(``--workdir``, kept for the logs). Prints one line per scenario that disagrees, then how many scenarios
ended each way (bound, unschedulable, scheduler-error, deallocated-then-bound, preempted-then-bound, ...)
and how many agreed. Exit status 0 when every one agreed. See tests/e2e/generated.py for what is compared.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parents[1]))  # the repository root: the extender package

from controlplane import running_control_plane  # noqa: E402
from generated import PREDICATES, Compared, Runner, features, select, start_scheduler  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--count", type=int, default=100, help="number of seeds (default 100)")
    ap.add_argument("--seeds", help="these seeds, comma-separated (e.g. the disagreeing ones of a run)")
    ap.add_argument("--select", help="instead of consecutive seeds, the first ones of each category, e.g. "
                                     f"deallocatable=5,priorities=10 (categories: {', '.join(PREDICATES)})")
    ap.add_argument("--workdir", help="where the control plane and its logs go (default: a new temporary one)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every disagreement")
    args = ap.parse_args(argv)

    feats = features()
    if args.seeds:
        seeds = [int(s) for s in args.seeds.split(",")]
    elif args.select:
        wanted = {k: int(v) for k, v in (item.split("=") for item in args.select.split(","))}
        seeds = select(itertools.count(args.seed), wanted, feats, {k: PREDICATES[k] for k in wanted})
    else:
        seeds = list(range(args.seed, args.seed + args.count))
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="extender-scenarios-"))
    print(f"{len(seeds)} scenarios; control plane and logs in {workdir}", flush=True)
    kinds: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    failing: list[int] = []
    started = time.monotonic()
    with running_control_plane(workdir / "controlplane") as cp:
        kube = cp.client()
        scheduler = start_scheduler(cp, workdir / "kube-scheduler")
        runner = Runner(cp, kube, scheduler, feats)
        try:
            for i, seed in enumerate(seeds, 1):
                try:
                    compared = runner.run(seed)
                except Exception as err:  # the harness's own trouble (an object the apiserver refuses...)
                    compared = Compared(seed, "harness-error", [f"{type(err).__name__}: {err}"])
                kinds[compared.kind] += 1
                agreed[compared.kind] += compared.ok
                if not compared.ok:
                    failing.append(seed)
                    shown = compared.problems if args.verbose else compared.problems[:2]
                    print(f"seed {seed} ({compared.kind}): " + "; ".join(shown), flush=True)
                if i % 25 == 0:
                    print(f"... {i}/{len(seeds)} in {time.monotonic() - started:.0f}s", flush=True)
        finally:
            scheduler.stop()
            kube.close()
    print(f"{sum(agreed.values())}/{sum(kinds.values())} scenarios agreed in {time.monotonic() - started:.0f}s")
    for kind, count in sorted(kinds.items()):
        print(f"  {kind:<28} {agreed[kind]}/{count}")
    if failing:
        print(f"disagreeing seeds: {' '.join(map(str, failing))}")
    return 0 if not failing else 1


if __name__ == "__main__":
    raise SystemExit(main())
