#!/usr/bin/env bash
# Builds kube-router (github.com/cloudnativelabs/kube-router/v2/cmd/kube-router) from the Go
# module proxy, cached by version outside the repository like the cluster's other tools, and
# prints its path. It enforces NetworkPolicy beside the real node for the isolation suite; it is
# a test tool only (see KUBE_ROUTER_VERSION in versions.env), never part of the product.
#
#   tests/cluster/tools/build-kube-router.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
version=$KUBE_ROUTER_VERSION
dir=${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}/tools/kube-router-$version
# One build at a time: a second caller (a suite that needs it while make test's background build
# is making it) waits here, then finds it cached.
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
if [[ -x $dir/kube-router ]]; then
  echo "$dir/kube-router"
  exit 0
fi
command -v go >/dev/null || { echo "build-kube-router: Go is required; run make tools first" >&2; exit 1; }
tmp="$dir.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
start=$SECONDS
echo "build-kube-router: building kube-router $version (once; about 2 min on 2 cores)" >&2
GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS= GOBIN="$tmp" \
  go install -ldflags "-s -w" "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$version"
rm -rf "$dir"
mv "$tmp" "$dir"
echo "build-kube-router: built in $((SECONDS - start)) s" >&2
echo "$dir/kube-router"
