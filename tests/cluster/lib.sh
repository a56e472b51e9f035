# Shared definitions of the local-cluster scripts. Source it; it sets no shell options.
# shellcheck shell=bash
: "${root:?lib.sh needs root set to the repository root}"
source "$root/tests/cluster/tools/versions.env"

# A lane is a control plane of its own, so that cluster suites run side by side (tests/CMakeLists.txt):
# the default lane (empty) has the real node; lane L is build/cluster-L, simulated nodes only.
LANE=${DISTTRAIN_LANE:-}
CLUSTER_NAME=${DISTTRAIN_CLUSTER_NAME:-disttrain${LANE:+-$LANE}}
CLUSTER_DIR="$root/build/cluster${LANE:+-$LANE}"
KUBECONFIG_FILE="$CLUSTER_DIR/kubeconfig"
TOOLS_BIN="$root/build/tools/bin"
export KWOK_WORKDIR="$CLUSTER_DIR/kwok"
export PATH="$TOOLS_BIN:$PATH"
COMPONENTS="etcd kube-apiserver kube-controller-manager kube-scheduler kwok-controller"

log() { echo "cluster: $*" >&2; }

kubectl_q() { kubectl --kubeconfig "$KUBECONFIG_FILE" --request-timeout=5s "$@" >/dev/null 2>&1; }

# component_running NAME: the component's recorded process is alive (not a zombie).
component_running() {
  local pidfile="$KWOK_WORKDIR/clusters/$CLUSTER_NAME/pids/$1.pid" pid
  [[ -f $pidfile ]] || return 1
  pid=$(cat "$pidfile")
  [[ -r /proc/$pid/stat && $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]
}

# Up means: cluster-up.sh finished (it writes the ready marker last), every component's process is
# alive and the API server answers /readyz.
cluster_healthy() {
  [[ -f $KUBECONFIG_FILE && -f $CLUSTER_DIR/ready ]] || return 1
  local c
  for c in $COMPONENTS; do component_running "$c" || return 1; done
  if [[ $(cat "$CLUSTER_DIR/real-node" 2>/dev/null) == up ]]; then
    local p pid
    for p in containerd coredns kubelet; do
      pid=$(cat "$CLUSTER_DIR/node/pids/$p.pid" 2>/dev/null) || return 1
      [[ -r /proc/$pid/stat && $(awk '{print $3}' "/proc/$pid/stat") != Z ]] || return 1
    done
  fi
  kubectl_q get --raw /readyz
}

# wait_for WHAT SECONDS COMMAND...: polls COMMAND until it succeeds; says what timed out.
wait_for() {
  local what=$1 limit=$2; shift 2
  local deadline=$((SECONDS + limit))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      log "timed out after ${limit} s waiting for $what"
      return 1
    fi
    sleep 0.5
  done
}

# Prints, for every component, whether it runs and the tail of the log of those that do not.
report_components() {
  local c logfile
  for c in $COMPONENTS; do
    logfile="$KWOK_WORKDIR/clusters/$CLUSTER_NAME/logs/$c.log"
    if component_running "$c"; then
      log "  $c: running"
    else
      log "  $c: NOT running; last lines of $logfile:"
      tail -n 20 "$logfile" 2>/dev/null | sed 's/^/      /' >&2 || log "      (no log)"
    fi
  done
}

# free_port: a TCP port free on loopback now.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
