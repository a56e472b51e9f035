#!/usr/bin/env bash
# Starts the local control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler
# and kwok (simulated nodes and pods), all on loopback ports that are free, as processes of this
# user. Writes the admin kubeconfig to build/cluster/kubeconfig.
#
#   [DISTTRAIN_LANE=L] tests/cluster/cluster-up.sh [--fixture]
#
# With DISTTRAIN_LANE=L it starts lane L's control plane instead, in build/cluster-L, with
# simulated nodes only (the one real node belongs to the default lane).
#
# Idempotent: on a cluster that is already up it returns at once. With --fixture (ctest's
# cluster fixture) it records whether it started the cluster, so cluster-down.sh --fixture stops
# only a cluster the fixture started.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/lib.sh"

fixture=0
[[ ${1:-} == --fixture ]] && fixture=1

if cluster_healthy; then
  # Images rebuilt since the real node started would otherwise run stale there.
  [[ -z $LANE ]] && "$here/node/node-up.sh" import
  log "cluster $CLUSTER_NAME is already up (kubeconfig $KUBECONFIG_FILE)"
  exit 0
fi

start=$SECONDS
"$here/tools/build-tools.sh" "$root" --only cluster

# A half-started or crashed cluster from an earlier run is removed first.
if [[ -d $KWOK_WORKDIR/clusters/$CLUSTER_NAME ]]; then
  log "removing a stale cluster $CLUSTER_NAME"
  "$here/cluster-down.sh" >/dev/null 2>&1 || true
fi
mkdir -p "$CLUSTER_DIR"
rm -f "$KUBECONFIG_FILE" "$CLUSTER_DIR/fixture-owned" "$CLUSTER_DIR/ready"

# The real node's bridge comes first: the API server also listens on its address so that pods on
# the real node (the operator's, with in-cluster config) reach it.
source "$here/node/lib.sh"
[[ -z $LANE ]] && "$here/node/node-up.sh" prepare
api_patches=""
if [[ -z $LANE ]] && ip link show "$NODE_BRIDGE" >/dev/null 2>&1; then
  api_patches="
  kubeApiserverCertSANs: [$NODE_IP]"
fi

config="$CLUSTER_DIR/kwokctl.yaml"
cat >"$config" <<YAML
apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  runtime: binary
  kubeApiserverBinary: $TOOLS_BIN/kube-apiserver
  kubeControllerManagerBinary: $TOOLS_BIN/kube-controller-manager
  kubeSchedulerBinary: $TOOLS_BIN/kube-scheduler
  kubectlBinary: $TOOLS_BIN/kubectl
  etcdBinary: $TOOLS_BIN/etcd
  kwokControllerBinary: $TOOLS_BIN/kwok
  kubeVersion: $KUBERNETES_VERSION
  bindAddress: 127.0.0.1
  disableQPSLimits: true
  kubeAuthorization: true$api_patches
  # kube-scheduler's own gang scheduling (Kubernetes 1.36 alpha): the Workload API served, its
  # admission and PodGroup finalizer controller on, the GangScheduling plugin in the scheduler.
  # Inert for pods that name no scheduling group (tests/e2e/gang_test.py uses it).
  kubeFeatureGates: GenericWorkload=true,GangScheduling=true
  kubeRuntimeConfig: scheduling.k8s.io/v1alpha2=true
# One instance each: without leader election they survive an API-server restart (with it they
# exit when they cannot renew their lease, and nothing here would restart them).
componentsPatches:
- name: kube-controller-manager
  extraArgs:
  - key: leader-elect
    value: "false"
  # Kubernetes' own node-loss timing (kwokctl sets 3m20s and 25s): a node whose heartbeats stop is
  # NotReady after 40 s (tests/e2e/lost_node_test.py). kwok renews its nodes' leases every 10 s.
  - key: node-monitor-grace-period
    value: 40s
  - key: node-monitor-period
    value: 5s
- name: kube-scheduler
  extraArgs:
  - key: leader-elect
    value: "false"
# kwok simulates only the nodes annotated as fake; the real node belongs to its kubelet.
- name: kwok-controller
  extraArgs:
  - key: manage-all-nodes
    value: "false"
  - key: manage-nodes-with-annotation-selector
    value: kwok.x-k8s.io/node=fake
  - key: node-lease-duration-seconds
    value: "40"
YAML
if [[ -n $api_patches ]]; then
  cat >>"$config" <<YAML
- name: kube-apiserver
  extraArgs:
  - key: bind-address
    value: 0.0.0.0
  - key: advertise-address
    value: $NODE_IP
  - key: kubelet-preferred-address-types
    value: InternalIP,Hostname
YAML
fi
echo --- >>"$config"
cat "$here/kwok/stages.yaml" >>"$config"

log "starting cluster $CLUSTER_NAME (logs in $KWOK_WORKDIR/clusters/$CLUSTER_NAME/logs)"
# One creation at a time across lanes: kwokctl picks free ports when it creates a cluster, and two
# creations at once could pick the same ones.
mkdir -p "$root/build"
exec 8>"$root/build/.cluster-create.lock"
flock 8
if ! kwokctl create cluster --name "$CLUSTER_NAME" --config "$config" \
    --kubeconfig "$KUBECONFIG_FILE" --wait 0s --timeout 120s >"$CLUSTER_DIR/create.log" 2>&1; then
  log "kwokctl create cluster failed:"
  tail -n 30 "$CLUSTER_DIR/create.log" >&2
  report_components
  exit 1
fi

if ! wait_for "the API server to be ready" 60 kubectl_q get --raw /readyz; then
  report_components
  exit 1
fi
# The kwok controller binds its port only once the API server answers: hold the lock until every
# port kwokctl picked is taken, or the next lane's creation may pick one of them again (seen: a
# lane's kwok failing with "bind: address already in use").
ports=$(awk '$1 == "port:" {print $2}' "$KWOK_WORKDIR/clusters/$CLUSTER_NAME/kwok.yaml" | sort -u)
if [[ -z $ports ]]; then  # an empty list would wait for nothing and let the next creation race
  log "no component ports in $KWOK_WORKDIR/clusters/$CLUSTER_NAME/kwok.yaml"
  report_components
  exit 1
fi
all_listening() {
  local p
  for p in $ports; do
    [[ -n $(ss -Hltn "sport = :$p") ]] || return 1
  done
}
if ! wait_for "every component to listen on its port ($(echo $ports))" 60 all_listening; then
  report_components
  exit 1
fi
flock -u 8
for component in $COMPONENTS; do
  if ! component_running "$component"; then
    log "component $component is not running"
    report_components
    exit 1
  fi
done

"$here/add-nodes.sh"
# A real node that fails to start is reported by its suites; the simulated ones still run.
if [[ -z $LANE ]]; then
  "$here/node/node-up.sh" start || log "the real node did not start: $(cat "$NODE_STATUS" 2>/dev/null)"
else
  echo "unavailable: lane $LANE has simulated nodes only" >"$CLUSTER_DIR/real-node"
fi

((fixture)) && touch "$CLUSTER_DIR/fixture-owned"
touch "$CLUSTER_DIR/ready"
log "cluster $CLUSTER_NAME is up in $((SECONDS - start)) s; kubeconfig: $KUBECONFIG_FILE"
log "try: kubectl --kubeconfig $KUBECONFIG_FILE get nodes"
