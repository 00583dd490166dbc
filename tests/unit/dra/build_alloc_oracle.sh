#!/usr/bin/env bash
# Build upstream/allocoracle (upstream's structured allocator) against dynamic-resource-allocation
# v0.36.3 (default) or, with `--version 1.37`, v0.37.2, and cache it at
# ${EXTENDER_K8S_CACHE:-$HOME/.cache/extender-k8s}/v1.3x.y/bin/dra-allocoracle.
# Rebuilt only when the Go source or the Go version changes. Prints the binary's path.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
minor=1.36
if [[ "${1:-}" == "--version" ]]; then
  minor="${2:?--version needs 1.36 or 1.37}"
fi
case "$minor" in
  1.36) k8s=v1.36.3 dra_version=v0.36.3 ;;
  1.37) k8s=v1.37.2 dra_version=v0.37.2 ;;
  *) echo "build_alloc_oracle.sh: unsupported version $minor (1.36 or 1.37)" >&2; exit 2 ;;
esac
src="$here/upstream/allocoracle/main.go.txt"
cache="${EXTENDER_K8S_CACHE:-$HOME/.cache/extender-k8s}/$k8s"
bin="$cache/bin/dra-allocoracle"
stamp="$bin.sha256"
if ! command -v go >/dev/null 2>&1; then
  echo "build_alloc_oracle.sh: 'go' not found" >&2
  exit 127
fi
hash="$({ go version; cat "$src"; } | sha256sum | cut -d' ' -f1)"
mkdir -p "$cache/bin"
exec 9>"$cache/bin/.dra-allocoracle.lock"
flock 9
if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$hash" ]]; then
  echo "$bin"
  exit 0
fi
source "$here"/dra_module.sh
mkdir -p "$work/cmd/allocoracle"
cp "$src" "$work/cmd/allocoracle/main.go"
(cd "$work" && nice -n 10 go build -buildvcs=false -trimpath -o "$bin.tmp" ./cmd/allocoracle)
mv -f "$bin.tmp" "$bin"
echo "$hash" >"$stamp"
echo "$bin"
