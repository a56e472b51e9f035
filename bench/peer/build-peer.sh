#!/usr/bin/env bash
# Builds the peer operator, Kubeflow's training-operator (its manager, cmd/training-operator.v1),
# from the Go module proxy, cached by version outside the repository like the cluster's tools,
# and prints the folder holding the binary, the TFJob CRD and TensorFlow example manifests
# (examples/) from the same module.
#
#   bench/peer/build-peer.sh        (version: TRAINING_OPERATOR_VERSION in versions.env)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../../tests/cluster/tools/versions.env
source "$here/../../tests/cluster/tools/versions.env"
version=$TRAINING_OPERATOR_VERSION
dir=${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}/tools/training-operator-$version
module=github.com/kubeflow/training-operator
# One build at a time: a second caller (a suite that needs it while make test's background build
# is making it) waits here, then finds it cached.
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
# The TensorFlow example manifests of the same module, for the suites that apply them unchanged.
examples() {
  local src
  src=$(GOFLAGS= go mod download -json "$module@$version" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  mkdir -p "$1/examples"
  cp "$src/examples/tensorflow/distribution_strategy/multi_worker_tfjob.yaml" \
     "$src/examples/tensorflow/simple.yaml" "$1/examples/"
  chmod u+w "$1"/examples/*.yaml
}
if [[ -x $dir/training-operator && -f $dir/kubeflow.org_tfjobs.yaml ]]; then
  [[ -f $dir/examples/multi_worker_tfjob.yaml ]] || examples "$dir"
  echo "$dir"
  exit 0
fi
command -v go >/dev/null || { echo "build-peer: Go is required; run make tools first" >&2; exit 1; }
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
examples "$tmp"
rm -rf "$dir"
mv "$tmp" "$dir"
echo "build-peer: built in $((SECONDS - start)) s" >&2
echo "$dir"
