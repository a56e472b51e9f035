# Shared definitions of the real-node scripts (node-up.sh, node-down.sh). Source after
# tests/cluster/lib.sh; sets no shell options.
# shellcheck shell=bash
NODE_DIR="$CLUSTER_DIR/node"
NODE_NAME=${DISTTRAIN_NODE_NAME:-disttrain-real-node}
# A private /24 that exists only on this machine: the pods' bridge; its .1 is the node's address,
# where the kubelet, CoreDNS and (for pods) the API server listen.
NODE_BRIDGE=${DISTTRAIN_NODE_BRIDGE:-dtbr0}
NODE_SUBNET_PREFIX=${DISTTRAIN_NODE_SUBNET_PREFIX:-10.77.0}
NODE_IP="$NODE_SUBNET_PREFIX.1"
NODE_SUBNET="$NODE_SUBNET_PREFIX.0/24"
CONTAINERD_SOCK="$NODE_DIR/containerd/containerd.sock"
NODE_STATUS="$CLUSTER_DIR/real-node"  # "up" or "unavailable: why"
# The label and taint that keep ordinary (kwok) test pods off the real node: pods that should run
# for real select the label and tolerate the taint.
NODE_LABEL=disttrain.io/real-node
PIDS_DIR="$NODE_DIR/pids"

# real_node_unavailable: prints why this machine cannot run the real node, or nothing.
real_node_unavailable() {
  [[ ${DISTTRAIN_REAL_NODE:-1} == 0 ]] && { echo "DISTTRAIN_REAL_NODE=0"; return; }
  [[ $(id -u) -eq 0 ]] || { echo "not root (the kubelet, containerd and the pod network need root)"; return; }
  local bin
  for bin in containerd runc ctr; do
    command -v "$bin" >/dev/null || { echo "$bin is not installed (make deps installs it)"; return; }
  done
  [[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local ]] ||
    { echo "the CNI plugins are not installed (containernetworking-plugins)"; return; }
  [[ -x $TOOLS_BIN/kubelet && -x $TOOLS_BIN/coredns ]] || { echo "kubelet or coredns is not built (make tools)"; return; }
  command -v unshare >/dev/null && unshare --net true 2>/dev/null ||
    { echo "network namespaces cannot be created here"; return; }
  [[ -d /sys/fs/cgroup/memory || -f /sys/fs/cgroup/cgroup.controllers ]] || { echo "no usable cgroup hierarchy"; return; }
}

# node_pid NAME: the recorded pid of a node process, if it is alive.
node_pid() {
  local f="$PIDS_DIR/$1.pid" pid
  [[ -f $f ]] || return 1
  pid=$(cat "$f")
  [[ -r /proc/$pid/stat && $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]] && echo "$pid"
}

real_node_up() { [[ -f $NODE_STATUS && $(cat "$NODE_STATUS") == up ]]; }

# Kernel settings the kubelet sets at start (its setupKernelTunables); node-up.sh saves the values
# before, node-down.sh writes them back.
KUBELET_SYSCTLS="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes"
