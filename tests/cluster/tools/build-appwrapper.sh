#!/usr/bin/env bash
# Builds the AppWrapper controller (github.com/project-codeflare/appwrapper/cmd) from the Go
# module proxy, cached by version outside the repository like the cluster's other tools, with
# the CRD of the same module, and prints the folder that holds them:
#
#   <dir>/appwrapper             the controller binary
#   <dir>/crd/*.yaml             AppWrapper's CRD (config/crd/bases)
#
#   tests/cluster/tools/build-appwrapper.sh   (version: APPWRAPPER_VERSION in versions.env)
#
# Only the one-off trial of the AppWrapper route uses it (docs/notes/kueue.md); no test does.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
version=$APPWRAPPER_VERSION
dir=${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}/tools/appwrapper-$version
if [[ -x $dir/appwrapper && -d $dir/crd ]]; then
  echo "$dir"
  exit 0
fi
command -v go >/dev/null || { echo "build-appwrapper: Go is required; run make tools first" >&2; exit 1; }
module=github.com/project-codeflare/appwrapper
tmp="$dir.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp/crd"
start=$SECONDS
echo "build-appwrapper: building $module $version (once; several minutes on 2 cores)" >&2
# `go install $module/cmd@$version` fails here: it asks the proxy for the module's version list
# (to look for a deprecation), which the proxy refuses with 403. So the module is downloaded by
# its exact version and built in place, its own go.mod and go.sum deciding every dependency.
src=$(GOTOOLCHAIN=local GOFLAGS= go mod download -json "$module@$version" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
[[ -n $src ]] || { echo "build-appwrapper: cannot download $module@$version" >&2; exit 1; }
(cd "$src" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly \
  go build -p "${BUILD_JOBS:-2}" -trimpath -ldflags "-s -w" -o "$tmp/appwrapper" ./cmd)
cp "$src"/config/crd/bases/*.yaml "$tmp/crd/"
chmod -R u+w "$tmp"
rm -rf "$dir"
mv "$tmp" "$dir"
echo "build-appwrapper: built in $((SECONDS - start)) s" >&2
echo "$dir"
