#!/usr/bin/env bash
# Builds Kueue's manager (sigs.k8s.io/kueue/cmd/kueue) from the Go module proxy, cached by version
# outside the repository like the cluster's other tools, with the CRDs and webhook manifests of
# the same module, and prints the folder that holds them:
#
#   <dir>/kueue                  the manager binary
#   <dir>/crd/*.yaml             Kueue's CRDs (config/components/crd/bases)
#   <dir>/webhook-manifests.yaml its webhook configurations (config/components/webhook)
#   <dir>/rbac/*.yaml            its manager's ClusterRole and Secrets Role (config/components/rbac)
#
#   tests/cluster/tools/build-kueue.sh        (version: KUEUE_VERSION in versions.env)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
version=$KUEUE_VERSION
dir=${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}/tools/kueue-$version
module=sigs.k8s.io/kueue
# One build at a time: a second caller (a suite that needs it while make test's background build
# is making it) waits here, then finds it cached.
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
# copy_rbac DIR: the manager's own RBAC rules, which a suite running Kueue as its ServiceAccount
# applies (tests/e2e/kueue_process.py).
copy_rbac() {
  local src
  src=$(GOTOOLCHAIN=local GOFLAGS= go mod download -json "$module@$version" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
  mkdir -p "$1/rbac"
  cp "$src/config/components/rbac/role.yaml" "$src/config/components/rbac/manager_secrets_role.yaml" "$1/rbac/"
  chmod -R u+w "$1/rbac"
}
if [[ -x $dir/kueue && -f $dir/webhook-manifests.yaml ]]; then
  # A cache from before the RBAC files were kept gets them without a rebuild.
  [[ -f $dir/rbac/role.yaml ]] || copy_rbac "$dir"
  echo "$dir"
  exit 0
fi
command -v go >/dev/null || { echo "build-kueue: Go is required; run make tools first" >&2; exit 1; }
tmp="$dir.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp/crd"
start=$SECONDS
echo "build-kueue: building $module $version (once; 2-8 min on 2 cores)" >&2
GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS= GOBIN="$tmp" \
  go install -ldflags "-s -w" "$module/cmd/kueue@$version"
src=$(GOTOOLCHAIN=local GOFLAGS= go mod download -json "$module@$version" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
cp "$src"/config/components/crd/bases/*.yaml "$tmp/crd/"
cp "$src/config/components/webhook/manifests.yaml" "$tmp/webhook-manifests.yaml"
copy_rbac "$tmp"
chmod -R u+w "$tmp"
rm -rf "$dir"
mv "$tmp" "$dir"
echo "build-kueue: built in $((SECONDS - start)) s" >&2
echo "$dir"
