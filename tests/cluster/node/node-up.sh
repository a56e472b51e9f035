#!/usr/bin/env bash
# Starts the local cluster's one real node next to the kwok nodes: containerd + runc, a CNI
# bridge on a private /24 local to this machine, CoreDNS serving cluster names from the API
# server, and a kubelet built from the same Kubernetes module as the control plane. Imports the
# images under build/images/ (make images) and a locally built pause image. Called by
# cluster-up.sh after the control plane is up (and `prepare` before it, for the bridge).
#
#   node-up.sh prepare   create the bridge (the API server listens on its address for pods)
#   node-up.sh start     start containerd, CoreDNS and the kubelet; wait for the node to be Ready
#
# build/cluster/real-node says how it went: "up"; "unavailable: why" where this machine cannot
# run a real node (not root, packages missing), and the real-node suites then report themselves
# as not run; "failed: why" where it could but did not start, and those suites fail.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
source "$here/../lib.sh"
source "$here/lib.sh"

step=${1:?usage: node-up.sh prepare|start|import}

if why=$(real_node_unavailable) && [[ -n $why ]]; then
  echo "unavailable: $why" >"$NODE_STATUS"
  log "no real node: $why"
  exit 0
fi
mkdir -p "$NODE_DIR" "$PIDS_DIR" "$NODE_DIR/logs"

# alive_or_report NAME: true while process NAME lives; else prints its log tail and records why.
alive_or_report() {
  local name=$1
  node_pid "$name" >/dev/null && return 0
  log "$name exited; last lines of $NODE_DIR/logs/$name.log:"
  tail -n 30 "$NODE_DIR/logs/$name.log" | sed 's/^/    /' >&2
  echo "failed: $name did not start (see $NODE_DIR/logs/$name.log)" >"$NODE_STATUS"
  return 1
}

start_process() {  # start_process NAME COMMAND...: in the background, logging, pid recorded
  local name=$1; shift
  "$@" >>"$NODE_DIR/logs/$name.log" 2>&1 &
  echo $! >"$PIDS_DIR/$name.pid"
}

prepare() {
  if ! ip link show "$NODE_BRIDGE" >/dev/null 2>&1; then
    ip link add "$NODE_BRIDGE" type bridge
    ip addr add "$NODE_IP/24" dev "$NODE_BRIDGE"
  fi
  ip link set "$NODE_BRIDGE" up
  # The bridge plugin turns forwarding on and the kubelet sets a few kernel tunables;
  # node-down.sh puts back what was there before.
  if [[ ! -f $NODE_DIR/sysctl.orig ]]; then
    local key
    for key in net/ipv4/ip_forward $KUBELET_SYSCTLS; do
      echo "$key $(cat "/proc/sys/$key")"
    done >"$NODE_DIR/sysctl.orig"
  fi
}

pause_image() {
  local archive="$root/build/images/pause.tar"
  [[ -f $archive ]] && return 0
  mkdir -p "$root/build/images" "$NODE_DIR/pause"
  cc -static -O2 -o "$NODE_DIR/pause/pause" "$here/pause.c"
  local ctr
  ctr=$(buildah from scratch)
  buildah copy --quiet "$ctr" "$NODE_DIR/pause/pause" /pause >/dev/null
  buildah config --entrypoint '["/pause"]' --user 65535:65535 "$ctr"
  buildah commit --quiet --rm "$ctr" localhost/disttrain/pause:1 >/dev/null
  buildah push --quiet localhost/disttrain/pause:1 "docker-archive:$archive:localhost/disttrain/pause:1" >/dev/null
}

start_containerd() {
  node_pid containerd >/dev/null && return 0
  mkdir -p "$NODE_DIR/containerd" "$NODE_DIR/cni/net.d" "$NODE_DIR/cni/ipam"
  rm -f "$CONTAINERD_SOCK" "$CONTAINERD_SOCK.ttrpc"
  cat >"$NODE_DIR/cni/net.d/10-disttrain.conflist" <<JSON
{"cniVersion": "0.4.0", "name": "disttrain",
 "plugins": [{"type": "bridge", "bridge": "$NODE_BRIDGE", "isGateway": true, "hairpinMode": true,
              "ipMasq": false,
              "ipam": {"type": "host-local", "dataDir": "$NODE_DIR/cni/ipam",
                       "ranges": [[{"subnet": "$NODE_SUBNET", "gateway": "$NODE_IP"}]]}}]}
JSON
  cat >"$NODE_DIR/containerd/config.toml" <<TOML
version = 2
root = "$NODE_DIR/containerd/root"
state = "$NODE_DIR/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$CONTAINERD_SOCK"
[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/disttrain/pause:1"
  # root here lacks CAP_SYS_RESOURCE: without this every sandbox fails to start.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NODE_DIR/cni/net.d"
TOML
  start_process containerd containerd --config "$NODE_DIR/containerd/config.toml"
  wait_for "containerd to answer" 30 ctr --address "$CONTAINERD_SOCK" version >/dev/null 2>&1 ||
    { alive_or_report containerd; exit 1; }
}

import_images() {
  local archive
  for archive in "$root"/build/images/*.tar; do
    [[ -f $archive ]] || continue
    local stamp="$NODE_DIR/containerd/imported-$(basename "$archive").stamp"
    [[ -f $stamp && $stamp -nt $archive ]] && continue
    ctr --address "$CONTAINERD_SOCK" -n k8s.io images import --no-unpack=false "$archive" >/dev/null
    touch "$stamp"
  done
}

start_coredns() {
  node_pid coredns >/dev/null && return 0
  local context ready_port
  context=$(kubectl --kubeconfig "$KUBECONFIG_FILE" config current-context)
  ready_port=$(free_port)
  echo "$ready_port" >"$NODE_DIR/coredns.ready-port"
  cat >"$NODE_DIR/Corefile" <<COREFILE
.:53 {
  bind $NODE_IP
  ready 127.0.0.1:$ready_port
  errors
  kubernetes cluster.local {
    kubeconfig $KUBECONFIG_FILE $context
    ttl 5
  }
  cache 5 {
    denial 100 1
  }
}
COREFILE
  start_process coredns "$TOOLS_BIN/coredns" -conf "$NODE_DIR/Corefile"
  wait_for "CoreDNS to be ready" 30 curl -sf "http://127.0.0.1:$ready_port/ready" -o /dev/null ||
    { alive_or_report coredns; exit 1; }
}

start_kubelet() {
  node_pid kubelet >/dev/null && return 0
  local healthz_port
  healthz_port=$(free_port)
  : >"$NODE_DIR/resolv.conf"  # no host search domains inside pods
  cat >"$NODE_DIR/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $healthz_port
# A loopback test node: the API server (kwokctl sets no kubelet client certificate) reads logs
# and stats anonymously.
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
resolvConf: $NODE_DIR/resolv.conf
failSwapOn: false
makeIPTablesUtilChains: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 200Mi, nodefs.available: 1%, imagefs.available: 1%}
podLogsDir: $NODE_DIR/pod-logs
maxPods: 40
serializeImagePulls: false
registerWithTaints:
- {key: $NODE_LABEL, value: "true", effect: NoSchedule}
YAML
  start_process kubelet "$TOOLS_BIN/kubelet" --config "$NODE_DIR/kubelet.yaml" \
    --kubeconfig "$KUBECONFIG_FILE" --root-dir "$NODE_DIR/kubelet" --hostname-override "$NODE_NAME" \
    --node-ip "$NODE_IP" --node-labels "$NODE_LABEL=true,type=real"
  wait_for "the kubelet to register $NODE_NAME" 60 kubectl_q get node "$NODE_NAME" ||
    { alive_or_report kubelet; exit 1; }
  if ! kubectl --kubeconfig "$KUBECONFIG_FILE" wait --for=condition=Ready "node/$NODE_NAME" --timeout=90s >/dev/null; then
    alive_or_report kubelet || exit 1
    log "node $NODE_NAME did not become Ready; last kubelet lines:"
    tail -n 30 "$NODE_DIR/logs/kubelet.log" >&2
    echo "failed: node $NODE_NAME did not become Ready (see $NODE_DIR/logs/kubelet.log)" >"$NODE_STATUS"
    exit 1
  fi
}

case $step in
  prepare) prepare ;;
  start)
    start=$SECONDS
    echo "failed: node-up.sh start did not finish" >"$NODE_STATUS"
    prepare
    pause_image
    start_containerd
    import_images
    start_coredns
    start_kubelet
    echo up >"$NODE_STATUS"
    log "real node $NODE_NAME is Ready at $NODE_IP in $((SECONDS - start)) s" ;;
  import)  # a running node: load the images rebuilt since it started (make images)
    if [[ $(cat "$NODE_STATUS" 2>/dev/null) == up ]]; then import_images; fi ;;
  *) echo "usage: node-up.sh prepare|start|import" >&2; exit 2 ;;
esac
