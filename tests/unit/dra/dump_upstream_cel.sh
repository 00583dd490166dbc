#!/usr/bin/env bash
# Regenerate data/cel_expected-<version>.json: evaluate data/cel_inputs.json with upstream's
# dynamic-resource-allocation/cel (v0.36.3, or v0.37.2 with `--version 1.37`) through
# upstream/celoracle, and data/upstream_cel_scenarios-<version>.jsonl from upstream's own
# cel/compile_test.go scenarios. Needs Go.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
case "${1:-} ${2:-1.36}" in
  " 1.36" | "--version 1.36") dra_version=v0.36.3 ;;
  "--version 1.37") dra_version=v0.37.2 ;;
  *) echo "usage: $0 [--version 1.36|1.37]" >&2; exit 2 ;;
esac
source "$here"/dra_module.sh
mkdir -p "$work/cmd/celoracle"
cp "$here/upstream/celoracle/main.go.txt" "$work/cmd/celoracle/main.go"
(cd "$work" && nice -n 10 go build -o "$work/celoracle" ./cmd/celoracle)
"$work/celoracle" < "$here/data/cel_inputs.json" > "$here/data/cel_expected-$dra_version.json"
# Upstream's own cel/compile_test.go scenarios, evaluated the same way.
cp "$here/upstream/cel_compile_dump_test.go.txt" "$work/cel/dump_test.go"
if [[ "$dra_version" == v0.37.2 ]]; then
  # v0.37.2's table names the scenario's features instead of a list-type switch.
  sed -i 's/(scenario.enableListTypeAttributes != nil \&\& \*scenario.enableListTypeAttributes)/(scenario.features != nil \&\& scenario.features.EnableListTypeAttributes)/' \
    "$work/cel/dump_test.go"
fi
(cd "$work" && DRA_CEL_DUMP="$here/data/upstream_cel_scenarios-$dra_version.jsonl" nice -n 10 go test ./cel/ -run TestDumpScenarios -count=1 >/dev/null)
