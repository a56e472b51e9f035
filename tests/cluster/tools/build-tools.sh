#!/usr/bin/env bash
# Builds the pinned upstream Kubernetes tools from the Go module proxy, caches them by version
# outside the repository, and links them into build/tools/bin.
#
#   tests/cluster/tools/build-tools.sh [REPO_ROOT] [--only TOOL...]
#
# TOOL: kubernetes (the control plane, kubectl and the kubelet), etcd, kwok, coredns (what the
# local cluster runs: `--only cluster` names these four), helm, toxiproxy (what only the packaging
# and fault suites use). Default: every tool. Each tool builds under a lock of its own, so a suite
# that asks for a tool another process is building waits for that build instead of repeating it.
#
# Cache: ${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}/tools/<tool>-<version>/.
# A cached tool is reused as is; a cold build of everything takes 25-45 minutes on 2 cores. The
# tools build side by side (the Kubernetes chain, then one job per other tool), so one tool's
# module downloads and single-threaded link overlap another's compiles.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
if [[ $# -gt 0 && $1 != --only ]]; then root=$1; shift; fi
wanted=(kubernetes etcd kwok coredns helm toxiproxy)
if [[ ${1:-} == --only ]]; then
  shift
  wanted=()
  for t in "$@"; do
    if [[ $t == cluster ]]; then wanted+=(kubernetes etcd kwok coredns); else wanted+=("$t"); fi
  done
fi
want() { local t; for t in "${wanted[@]}"; do [[ $t == "$1" ]] && return 0; done; return 1; }
# shellcheck source=versions.env
source "$here/versions.env"

cache=${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}/tools
bin="$root/build/tools/bin"
mkdir -p "$cache" "$bin"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
command -v go >/dev/null || { echo "build-tools: Go is required (https://go.dev/dl); not found on PATH" >&2; exit 1; }

log() { echo "build-tools: $*" >&2; }

# build_into DIR NAME... -- COMMAND...: runs COMMAND unless every NAME exists in DIR, atomically.
build_into() {
  local dir=$1; shift
  local names=()
  while [[ $1 != -- ]]; do names+=("$1"); shift; done
  shift
  local n ok=1
  for n in "${names[@]}"; do [[ -x $dir/$n ]] || ok=0; done
  if ((ok)); then return 0; fi
  # One build of a tool at a time (make test's background lane and a suite may ask at once);
  # whoever waited finds it built.
  exec {lock}>"$dir.lock"
  flock "$lock"
  ok=1
  for n in "${names[@]}"; do [[ -x $dir/$n ]] || ok=0; done
  if ((ok)); then flock -u "$lock"; return 0; fi
  local tmp="$dir.tmp.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  local start=$SECONDS
  log "building ${names[*]} into $dir"
  OUT="$tmp" "$@"
  for n in "${names[@]}"; do [[ -x $tmp/$n ]] || { log "$n was not produced"; exit 1; }; done
  rm -rf "$dir"; mv "$tmp" "$dir"
  flock -u "$lock"
  log "built ${names[*]} in $((SECONDS - start)) s"
}

k8s_dir="$cache/kubernetes-$KUBERNETES_VERSION"
k8s_minor=${KUBERNETES_VERSION#v1.}; k8s_minor=${k8s_minor%%.*}
build_kubernetes() {
  local pkg=k8s.io/component-base/version
  (cd "$here/kubernetes" && go build -o "$OUT/" -ldflags "-s -w \
      -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor \
      -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
}

etcd_dir="$cache/etcd-$ETCD_VERSION"
build_etcd() {
  (cd "$here/etcd" && go build -o "$OUT/etcd" -ldflags "-s -w" go.etcd.io/etcd/server/v3)
}

kwok_dir="$cache/kwok-$KWOK_VERSION"
build_kwok() {
  GOBIN="$OUT" GOFLAGS= go install -ldflags "-s -w" \
    "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" "sigs.k8s.io/kwok/cmd/kwokctl@$KWOK_VERSION"
}

helm_dir="$cache/helm-$HELM_VERSION"
build_helm() {
  GOBIN="$OUT" GOFLAGS= go install -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
      -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$k8s_minor \
      -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$k8s_minor" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
}

# The real node's kubelet, from the same pinned module as the control plane; a cache of its own
# so that adding it did not invalidate the control plane's.
kubelet_dir="$cache/kubelet-$KUBERNETES_VERSION"
build_kubelet() {
  local pkg=k8s.io/component-base/version
  (cd "$here/kubernetes" && go build -o "$OUT/" -ldflags "-s -w \
      -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor \
      -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z" \
    k8s.io/kubernetes/cmd/kubelet)
}

# The real node's cluster DNS (tools/coredns/main.go links only the plugins it uses).
coredns_dir="$cache/coredns-$COREDNS_VERSION"
build_coredns() {
  (cd "$here/coredns" && go build -o "$OUT/coredns" -ldflags "-s -w" .)
}

# The fault-injecting TCP proxy of the fault suite (its server only: the suite uses its REST API).
toxiproxy_dir="$cache/toxiproxy-$TOXIPROXY_VERSION"
build_toxiproxy() {
  GOBIN="$OUT" GOFLAGS= go install -ldflags "-s -w" "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION"
  mv "$OUT/server" "$OUT/toxiproxy-server"
}

# The kubelet comes after the control plane: it reuses that build's compiled packages.
build_kubernetes_then_kubelet() {
  build_into "$k8s_dir" kube-apiserver kube-controller-manager kube-scheduler kubectl -- build_kubernetes
  build_into "$kubelet_dir" kubelet -- build_kubelet
}
pids=() names=()
run_bg() { local name=$1; shift; ("$@") & pids+=($!); names+=("$name"); }
# The standard library first, once: tools built side by side from a cold cache would each
# compile it again (the cache keeps what a finished build compiled, not what one under way is).
missing=0
want kubernetes && [[ ! -x $k8s_dir/kube-apiserver || ! -x $kubelet_dir/kubelet ]] && missing=1
for t in etcd kwok coredns helm toxiproxy; do
  d=${t}_dir
  want "$t" && ! compgen -G "${!d}/*" >/dev/null && missing=1
done
if ((missing)); then
  start=$SECONDS
  go build std
  log "standard library compiled in $((SECONDS - start)) s"
fi
want kubernetes && run_bg kubernetes build_kubernetes_then_kubelet
want etcd && run_bg etcd build_into "$etcd_dir" etcd -- build_etcd
want kwok && run_bg kwok build_into "$kwok_dir" kwok kwokctl -- build_kwok
want helm && run_bg helm build_into "$helm_dir" helm -- build_helm
want coredns && run_bg coredns build_into "$coredns_dir" coredns -- build_coredns
want toxiproxy && run_bg toxiproxy build_into "$toxiproxy_dir" toxiproxy-server -- build_toxiproxy
failed=()
for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${names[$i]}"); done
if ((${#failed[@]})); then log "failed: ${failed[*]} (its go output is above)"; exit 1; fi

dirs=()
want kubernetes && dirs+=("$k8s_dir" "$kubelet_dir")
for t in etcd kwok helm coredns toxiproxy; do d=${t}_dir; want "$t" && dirs+=("${!d}"); done
for d in "${dirs[@]}"; do
  for f in "$d"/*; do ln -sfn "$f" "$bin/$(basename "$f")"; done
done
log "tools ready in $bin"
