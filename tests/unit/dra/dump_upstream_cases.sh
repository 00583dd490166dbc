#!/usr/bin/env bash
# Regenerate data/upstream_allocator_cases-<version>.jsonl.gz: run upstream's allocator test table
# (dynamic-resource-allocation v0.36.3, or v0.37.2 with `--version 1.37`; incubating allocator) with a
# hook that records each case's inputs and the allocator's outputs. Needs Go; works on a private copy
# of the module.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
case "${1:-} ${2:-1.36}" in
  " 1.36" | "--version 1.36") dra_version=v0.36.3 ;;
  "--version 1.37") dra_version=v0.37.2 ;;
  *) echo "usage: $0 [--version 1.36|1.37]" >&2; exit 2 ;;
esac
source "$here"/dra_module.sh
testing="$work/structured/internal/allocatortesting"
cp "$here/upstream/allocator_dump.go.txt" "$testing/dump.go"
python3 - "$testing/allocator_testing.go" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
anchor = "\t\t\tg.Expect(results).To(gomega.ConsistOf(tc.expectResults...))\n"
assert anchor in text, "upstream test runner changed: update the hook"
hook = "\t\t\tdumpCase(name, tc, allocatedState, unwrap(claimsToAllocate...), results, err)\n"
open(path, "w").write(text.replace(anchor, hook + anchor, 1))
PY
out="$work/cases.jsonl"
(cd "$work" && DRA_DUMP="$out" nice -n 10 go test ./structured/internal/incubating/ -run TestAllocator -count=1)
gzip -9 -c "$out" > "$here/data/upstream_allocator_cases-$dra_version.jsonl.gz"
echo "$(wc -l < "$out") cases"
