"""Run many generated scenarios through the oracle and the engine; print the
agreement per plugin and the seeds that disagree.

    python tests/oracle/run_many.py --count 5000 --seed 0
    python tests/oracle/run_many.py --seed 123 --count 1 -v      # one seed, every mismatch
    python tests/oracle/run_many.py --seed 123 --dump             # the scenario as JSON
    python tests/oracle/run_many.py --count 2000 --profiles       # a random profile (weights, args) per seed
    python tests/oracle/run_many.py --count 300 --dra-scoring     # seeds whose pod requests a DRA-backed
                                                                  # extended resource, scored in devices
    python tests/oracle/run_many.py --count 500 --priorities      # seeds with priorities and budgets
                                                                  # (preemption's victims, PostFilter)
    python tests/oracle/run_many.py --version 1.37 --count 5000   # against kube-scheduler v1.37.2 (default 1.36)
    python tests/oracle/run_many.py --version 1.37 --feature-gates InPlacePodVerticalScalingSchedulerPreemption=true

Exit status: 0 when everything agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2]))  # the repository root: the extender package

from oracle_harness import VERSIONS, differential, scenario_features
from scenarios import dra_scoring_profile, generate, generate_profile, has_priorities, requests_dra_backed_resource


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--count", type=int, default=1000, help="number of scenarios (default 1000)")
    ap.add_argument("--features", default=os.environ.get("ORACLE_FEATURES"), help='e.g. "all,-sidecars"')
    ap.add_argument("--profiles", action="store_true", help="a random profile (weights, plugin args) per seed")
    ap.add_argument("--dra-scoring", action="store_true",
                    help="only seeds whose pod requests a DRA-backed extended resource, with a profile scoring it")
    ap.add_argument("--priorities", action="store_true",
                    help="only seeds whose pods have priorities (preemption's dry run has victims to weigh)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every mismatch")
    ap.add_argument("--max-seeds", type=int, default=50, help="failing seeds to list (default 50)")
    ap.add_argument("--dump", action="store_true", help="print the scenario of --seed as JSON and exit")
    ap.add_argument("--version", choices=sorted(VERSIONS), default=os.environ.get("ORACLE_VERSION", "1.36"),
                    help="the kube-scheduler release to compare with (default 1.36)")
    ap.add_argument("--feature-gates", default="", metavar="A=true,B=false",
                    help="feature gates for both the oracle and the engine, as kube-scheduler's --feature-gates")
    args = ap.parse_args(argv)

    gates = {k.strip(): v.strip().lower() == "true" for k, _, v in
             (item.partition("=") for item in args.feature_gates.split(",") if item.strip())}
    feats = scenario_features(args.features, version=args.version)
    version = args.version
    profile_for = dra_scoring_profile if args.dra_scoring else generate_profile if args.profiles else None
    if args.dump:
        sc = generate(args.seed, feats, version)
        if profile_for is not None:
            sc["profile"] = profile_for(args.seed)  # the engine's profile (the oracle gets it restricted)
        json.dump(sc, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0

    start = time.monotonic()
    seeds: list[int] | range = range(args.seed, args.seed + args.count)
    if args.dra_scoring or args.priorities:  # the first --count seeds from --seed on that qualify
        wanted = requests_dra_backed_resource if args.dra_scoring else has_priorities
        qualifying = (s for s in itertools.count(args.seed) if wanted(generate(s, feats, version)))
        seeds = list(itertools.islice(qualifying, args.count))
    stats = differential(seeds, lambda s: generate(s, feats, version), profile_for=profile_for, version=version,
                         feature_gates=gates)
    elapsed = time.monotonic() - start

    print(f"kube-scheduler {VERSIONS[version]}" + (f", feature gates {args.feature_gates}" if gates else ""))
    print(stats.table())
    print(f"{elapsed:.1f}s")
    for seed, err in stats.oracle_errors[: args.max_seeds]:
        print(f"oracle error, seed {seed}: {err}")
    if stats.failed_seeds:
        seeds = sorted(stats.failed_seeds)
        print(
            f"failing seeds ({len(seeds)}): {' '.join(map(str, seeds[: args.max_seeds]))}"
            + (" ..." if len(seeds) > args.max_seeds else "")
        )
        by_plugin: dict[str, list[int]] = {}
        for seed in seeds:
            for plugin in dict.fromkeys(m.plugin for m in stats.failed_seeds[seed]):
                by_plugin.setdefault(plugin, []).append(seed)
        for plugin, pseeds in sorted(by_plugin.items()):
            print(f"  {plugin}: {' '.join(map(str, pseeds[:15]))}" + (" ..." if len(pseeds) > 15 else ""))
        for seed in seeds[: 1 if not args.verbose else args.max_seeds]:
            mism = stats.failed_seeds[seed]
            for m in mism if args.verbose else mism[:3]:
                print(f"  {m}")
    return 0 if not stats.failed_seeds and not stats.oracle_errors else 1


if __name__ == "__main__":
    raise SystemExit(main())
