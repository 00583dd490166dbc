#!/usr/bin/env bash
# Regenerate data/cel_expected.json: evaluate data/cel_inputs.json with upstream's
# dynamic-resource-allocation/cel (v0.36.3) through upstream/celoracle. Needs Go.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here"/dra_module.sh
mkdir -p "$work/cmd/celoracle"
cp "$here/upstream/celoracle/main.go.txt" "$work/cmd/celoracle/main.go"
(cd "$work" && nice -n 10 go build -o "$work/celoracle" ./cmd/celoracle)
"$work/celoracle" < "$here/data/cel_inputs.json" > "$here/data/cel_expected.json"
# Upstream's own cel/compile_test.go scenarios, evaluated the same way.
cp "$here/upstream/cel_compile_dump_test.go.txt" "$work/cel/dump_test.go"
(cd "$work" && DRA_CEL_DUMP="$here/data/upstream_cel_scenarios.jsonl" nice -n 10 go test ./cel/ -run TestDumpScenarios -count=1 >/dev/null)
