#!/usr/bin/env bash
# The demo: runs after `make build cluster-up` (the Makefile's demo target).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$root/build/tools/bin:$PATH"
kubeconfig="$root/build/cluster/kubeconfig"

echo "demo: the local cluster is up:"
kubectl --kubeconfig "$kubeconfig" get nodes
echo
echo "demo: the operator cannot run jobs yet (it is built issue by issue), so the demo stops here."
echo "demo: explore with: export KUBECONFIG=$kubeconfig PATH=$root/build/tools/bin:\$PATH"
echo "demo: stop the cluster with: make cluster-down"
