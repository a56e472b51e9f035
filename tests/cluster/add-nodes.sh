#!/usr/bin/env bash
# Registers the simulated nodes of the local cluster: DISTTRAIN_NODES (default 4) nodes with
# 64 CPUs, 512 GiB, 8 nvidia.com/gpu and room for 3000 pods each, and waits until they are Ready.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$here/lib.sh"

nodes=${DISTTRAIN_NODES:-4}
manifest=""
for ((i = 0; i < nodes; i++)); do
  manifest+="
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations:
    kwok.x-k8s.io/node: fake
  labels:
    kubernetes.io/hostname: kwok-node-$i
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
    nvidia.com/gpu.present: \"true\"
status:
  allocatable: {cpu: \"64\", memory: 512Gi, pods: \"3000\", nvidia.com/gpu: \"8\"}
  capacity: {cpu: \"64\", memory: 512Gi, pods: \"3000\", nvidia.com/gpu: \"8\"}
---"
done
kubectl --kubeconfig "$KUBECONFIG_FILE" apply -f - >/dev/null <<<"$manifest"
if ! kubectl --kubeconfig "$KUBECONFIG_FILE" wait --for=condition=Ready node -l type=kwok \
    --timeout=60s >/dev/null; then
  log "simulated nodes did not become Ready"
  report_components
  exit 1
fi
log "$nodes simulated GPU nodes are Ready"
