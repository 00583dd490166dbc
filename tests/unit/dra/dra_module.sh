# Sourced by the scripts beside it: a writable private copy of upstream's k8s.io/dynamic-resource-allocation
# v0.36.3 (from the Go module cache) in $work, removed when the script exits.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
dra_module="$(cd /tmp && go mod download -json k8s.io/dynamic-resource-allocation@v0.36.3 \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
cp -r "$dra_module/." "$work/" && chmod -R u+w "$work"
