#!/usr/bin/env bash
# Stops the real node and leaves nothing behind: no process, mount, network namespace, bridge,
# iptables chain (the kubelet is told to make none), cgroup or sysctl change. Each step is best
# effort (the node may be half up); the checks at the end say what, if anything, is left.
#
#   node-down.sh
set -uo pipefail
shopt -s globstar

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
source "$here/../lib.sh"
source "$here/lib.sh"

[[ -d $NODE_DIR ]] || { rm -f "$NODE_STATUS"; exit 0; }

stop_process() {  # stop_process NAME: SIGTERM, up to 10 s, then SIGKILL
  local pid
  pid=$(node_pid "$1") || { rm -f "$PIDS_DIR/$1.pid"; return 0; }
  kill "$pid" 2>/dev/null
  for _ in $(seq 100); do node_pid "$1" >/dev/null || break; sleep 0.1; done
  node_pid "$1" >/dev/null && kill -9 "$pid" 2>/dev/null
  rm -f "$PIDS_DIR/$1.pid"
}

# 1. Pods deleted through the API server while the kubelet still runs, so it stops them cleanly.
if node_pid kubelet >/dev/null && kubectl_q get --raw /readyz; then
  kubectl --kubeconfig "$KUBECONFIG_FILE" delete pods --all-namespaces --field-selector "spec.nodeName=$NODE_NAME" \
    --grace-period=5 --timeout=40s --wait=true >/dev/null 2>&1
  kubectl --kubeconfig "$KUBECONFIG_FILE" delete node "$NODE_NAME" --timeout=10s >/dev/null 2>&1
fi
# 2. The kubelet, then whatever containers are left (their shims name our containerd socket).
stop_process kubelet
if node_pid containerd >/dev/null; then
  for id in $(ctr --address "$CONTAINERD_SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
    ctr --address "$CONTAINERD_SOCK" -n k8s.io tasks kill -s SIGKILL "$id" >/dev/null 2>&1
  done
fi
shims=$(pgrep -f -- "-address $CONTAINERD_SOCK" || true)
[[ -n $shims ]] && kill -9 $shims 2>/dev/null
# 3. Processes still in the kubelet's pod cgroups.
for procs in /sys/fs/cgroup/*/kubepods/**/cgroup.procs /sys/fs/cgroup/*/kubepods/cgroup.procs; do
  [[ -f $procs ]] && xargs -r kill -9 <"$procs" 2>/dev/null
done
stop_process containerd
stop_process coredns
# 4. Mounts under the node's directory (deepest first), then the pods' network namespaces.
for _ in 1 2 3; do
  mounts=$(awk -v d="$NODE_DIR/" 'index($2, d) == 1 {print $2}' /proc/self/mounts | sort -r)
  [[ -z $mounts ]] && break
  for m in $mounts; do umount -l "$m" 2>/dev/null; done
done
for ns in /run/netns/cni-*; do
  [[ -e $ns ]] || continue
  umount -l "$ns" 2>/dev/null
  rm -f "$ns"
done
# 5. The bridge, the kubelet's cgroups, the forwarding sysctl, the pods' log links.
ip link show "$NODE_BRIDGE" >/dev/null 2>&1 && ip link delete "$NODE_BRIDGE"
for hierarchy in /sys/fs/cgroup/*/; do
  [[ -d $hierarchy/kubepods ]] || continue
  find "$hierarchy/kubepods" -depth -type d -exec rmdir {} + 2>/dev/null
done
sysctl_left=()
if [[ -f $NODE_DIR/sysctl.orig ]]; then
  while read -r key value; do
    echo "$value" >"/proc/sys/$key" 2>/dev/null
    [[ $(cat "/proc/sys/$key") == "$value" ]] || sysctl_left+=("$key")
  done <"$NODE_DIR/sysctl.orig"
  rm -f "$NODE_DIR/sysctl.orig"
fi
find /var/log/containers -maxdepth 1 -type l -lname "$NODE_DIR/*" -delete 2>/dev/null
rm -rf "$NODE_DIR/containerd/state" "$NODE_DIR/kubelet" "$NODE_DIR/cni/ipam" "$NODE_DIR/pod-logs" "$NODE_DIR/pids"
rm -f "$NODE_STATUS"

# 6. What is left, if anything.
left=()
pgrep -f -- "$NODE_DIR/" >/dev/null && left+=("processes: $(pgrep -f -a -- "$NODE_DIR/" | head -3 | tr '\n' ';')")
awk -v d="$NODE_DIR/" 'index($2, d) == 1' /proc/self/mounts | grep -q . && left+=("mounts under $NODE_DIR")
ip link show "$NODE_BRIDGE" >/dev/null 2>&1 && left+=("bridge $NODE_BRIDGE")
compgen -G "/sys/fs/cgroup/*/kubepods" >/dev/null && left+=("kubepods cgroups")
compgen -G "/run/netns/cni-*" >/dev/null && left+=("network namespaces in /run/netns")
((${#sysctl_left[@]})) && left+=("kernel settings not restored: ${sysctl_left[*]}")
if ((${#left[@]})); then
  log "real node teardown left: ${left[*]}"
  exit 1
fi
log "real node $NODE_NAME is down"
