"""Run many generated cases through the Karmada oracle and ours; print agreement and failing seeds.

    python tests/karmada/run_many.py --count 5000 --seed 0
    python tests/karmada/run_many.py --count 2000 --seed 0 --interfaces library,cli,http --every 10
    python tests/karmada/run_many.py --seed 123 --count 1 -v     # every difference of one seed
    python tests/karmada/run_many.py --seed 123 --dump           # the case as JSON (the oracle's input)
    python tests/karmada/run_many.py --place config/multicluster/{clusters,binding,policy}.yaml
                                                 # Karmada's and our answer for files (e.g. the examples)

Exit status: 0 when everything agrees, 1 otherwise, 2 when the oracle cannot be built.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[2]))  # the repository root: the extender package

import yaml
from karmada_cases import generate
from karmada_harness import OracleUnavailable, compare, normalize, oracle_path, ours_library, run_cases, run_oracle


def _documents(path: str) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for doc in yaml.safe_load_all(Path(path).read_text()):
        if isinstance(doc, dict) and isinstance(doc.get("items"), list):
            docs.extend(doc["items"])
        elif isinstance(doc, dict):
            docs.append(doc)
    return docs


def place(clusters: str, binding: str, policy: str) -> int:
    """Karmada's answer and ours for a case given as files."""
    pol = _documents(policy)[0]
    case = {"category": "files", "clusters": _documents(clusters), "binding": _documents(binding)[0],
            "placement": pol["spec"]["placement"] if "spec" in pol else pol}
    try:
        binary = oracle_path()
    except OracleUnavailable as err:
        print(f"run_many: oracle unavailable: {err}", file=sys.stderr)
        return 2
    karmada = run_oracle(binary, [case])[0]
    ours = ours_library(case)
    print("karmada:", json.dumps(normalize(karmada)))
    print("ours:   ", json.dumps(normalize(ours)))
    outcome = compare(0, "files", "library", karmada, ours)
    for d in outcome.diffs:
        print(f"  {d}")
    return 0 if outcome.agree else 1


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--count", type=int, default=1000, help="number of cases (default 1000)")
    ap.add_argument("--interfaces", default="library", help="library,cli,http,process (default library)")
    ap.add_argument("--every", type=int, default=1, help="run cli/http on every N-th seed (default 1)")
    ap.add_argument("--batch", type=int, default=500, help="cases per oracle process (default 500)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every difference")
    ap.add_argument("--max-seeds", type=int, default=50, help="failing seeds to list (default 50)")
    ap.add_argument("--dump", action="store_true", help="print the case of --seed as JSON and exit")
    ap.add_argument("--place", nargs=3, metavar=("CLUSTERS", "BINDING", "POLICY"),
                    help="YAML/JSON files: print Karmada's answer and ours, and exit (0 when they agree)")
    args = ap.parse_args(argv)
    if args.place:
        return place(*args.place)
    if args.dump:
        json.dump(generate(args.seed), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    try:
        binary = oracle_path()
    except OracleUnavailable as err:
        print(f"run_many: oracle unavailable: {err}", file=sys.stderr)
        return 2
    interfaces = tuple(i.strip() for i in args.interfaces.split(",") if i.strip())
    start = time.monotonic()
    outcomes = []
    for first in range(args.seed, args.seed + args.count, args.batch):
        last = min(first + args.batch, args.seed + args.count)
        outcomes.extend(run_cases(binary, range(first, last), interfaces=interfaces, every=args.every))
    elapsed = time.monotonic() - start
    total: Counter[tuple[str, str]] = Counter()
    agreed: Counter[tuple[str, str]] = Counter()
    for o in outcomes:
        total[(o.interface, o.category)] += 1
        agreed[(o.interface, o.category)] += o.agree
    print(f"{'interface':<10} {'category':<22} {'agree':>7} {'cases':>7}")
    for key in sorted(total):
        print(f"{key[0]:<10} {key[1]:<22} {agreed[key]:>7} {total[key]:>7}")
    for interface in interfaces:
        n = sum(v for k, v in total.items() if k[0] == interface)
        a = sum(v for k, v in agreed.items() if k[0] == interface)
        if n:
            print(f"{interface}: {a}/{n} agree ({100 * a / n:.2f}%), seeds {args.seed}..{args.seed + args.count - 1}")
    print(f"{elapsed:.1f}s")
    failing = sorted({o.seed for o in outcomes if not o.agree})
    if failing:
        shown = " ".join(map(str, failing[: args.max_seeds]))
        print(f"failing seeds ({len(failing)}): {shown}{' ...' if len(failing) > args.max_seeds else ''}")
        bad = [o for o in outcomes if not o.agree]
        for o in bad if args.verbose else bad[:3]:
            print(f"  seed {o.seed} [{o.category}/{o.interface}]")
            for d in o.diffs:
                print(f"    {d}")
    return 1 if failing else 0


if __name__ == "__main__":
    raise SystemExit(main())
