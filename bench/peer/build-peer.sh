#!/usr/bin/env bash
# Builds the peer operator, Kubeflow's training-operator (its manager, cmd/training-operator.v1),
# from the Go module proxy, cached by version outside the repository like the cluster's tools,
# and prints the folder holding the binary and the TFJob CRD from the same module.
#
#   bench/peer/build-peer.sh        (version: TRAINING_OPERATOR_VERSION in versions.env)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../tests/cluster/tools/versions.env
source "$here/../../tests/cluster/tools/versions.env"
version=$TRAINING_OPERATOR_VERSION
dir=${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}/tools/training-operator-$version
if [[ -x $dir/training-operator && -f $dir/kubeflow.org_tfjobs.yaml ]]; then
  echo "$dir"
  exit 0
fi
command -v go >/dev/null || { echo "build-peer: Go is required; run make tools first" >&2; exit 1; }
module=github.com/kubeflow/training-operator
tmp="$dir.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
start=$SECONDS
echo "build-peer: building $module $version (once; 3-8 min on 2 cores)" >&2
GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS= GOBIN="$tmp" \
  go install -ldflags "-s -w" "$module/cmd/training-operator.v1@$version"
mv "$tmp/training-operator.v1" "$tmp/training-operator"
src=$(GOFLAGS= go mod download -json "$module@$version" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
cp "$src/manifests/base/crds/kubeflow.org_tfjobs.yaml" "$tmp/"
chmod u+w "$tmp"/*.yaml
rm -rf "$dir"
mv "$tmp" "$dir"
echo "build-peer: built in $((SECONDS - start)) s" >&2
echo "$dir"
