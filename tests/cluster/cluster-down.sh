#!/usr/bin/env bash
# Stops the local control plane and every process it started.
#
#   [DISTTRAIN_LANE=L] tests/cluster/cluster-down.sh [--fixture]
#
# With --fixture it stops only a cluster that cluster-up.sh --fixture started.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/lib.sh"

if [[ ${1:-} == --fixture && ! -f $CLUSTER_DIR/fixture-owned ]]; then
  log "leaving cluster $CLUSTER_NAME running: the test fixture did not start it"
  exit 0
fi

# The real node first, while the API server can still delete its pods. If it leaves something
# behind, the control plane is still stopped and this script then fails saying so.
node_down=0
[[ -z $LANE ]] && { "$here/node/node-down.sh" || node_down=$?; }

# Every step is best effort (the cluster may be half up or already gone); the pgrep check below
# is what guarantees that nothing is left running.
if [[ -d $KWOK_WORKDIR/clusters/$CLUSTER_NAME ]] && command -v kwokctl >/dev/null; then
  kwokctl delete cluster --name "$CLUSTER_NAME" --kubeconfig "$KUBECONFIG_FILE" >/dev/null 2>&1 || true
fi
# Whatever kwokctl could not stop (a crashed delete, a missing workdir) is found by its command
# line, which always names this cluster's work directory.
pids=$(pgrep -f -- "$KWOK_WORKDIR/" || true)
if [[ -n $pids ]]; then
  kill $pids 2>/dev/null || true
  for _ in $(seq 50); do pgrep -f -- "$KWOK_WORKDIR/" >/dev/null || break; sleep 0.1; done
  pids=$(pgrep -f -- "$KWOK_WORKDIR/" || true)
  [[ -n $pids ]] && kill -9 $pids 2>/dev/null || true
fi
rm -rf "$KWOK_WORKDIR/clusters/$CLUSTER_NAME" "$KUBECONFIG_FILE" "$CLUSTER_DIR/fixture-owned" "$CLUSTER_DIR/ready"
if ((node_down)); then
  log "cluster $CLUSTER_NAME is down, but the real node's teardown left something behind (see above)"
  exit 1
fi
log "cluster $CLUSTER_NAME is down"
