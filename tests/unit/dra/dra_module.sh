# Sourced by the scripts beside it: a writable private copy of upstream's k8s.io/dynamic-resource-allocation
# at $dra_version (v0.36.3 unless the caller set it; from the Go module cache) in $work, removed when the
# script exits.
dra_version="${dra_version:-v0.36.3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
dra_module="$(cd /tmp && go mod download -json "k8s.io/dynamic-resource-allocation@$dra_version" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
cp -r "$dra_module/." "$work/" && chmod -R u+w "$work"
