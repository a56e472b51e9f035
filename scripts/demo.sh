#!/usr/bin/env bash
# The demo (make demo runs it after building and starting the local cluster): installs the CRD,
# runs the operator, applies examples/quickstart.yaml (a chief, 2 parameter servers, 3 workers
# and an evaluator; the simulated chief finishes after 8 s) and watches the job reach Succeeded
# with its parameter servers gone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$root/build/tools/bin:$PATH"
export KUBECONFIG="$root/build/cluster/kubeconfig"
demo_dir="$root/build/demo"
mkdir -p "$demo_dir"

say() { printf '\n\033[1mdemo: %s\033[0m\n' "$*"; }

say "installing the DistributedTraining CRD"
kubectl apply -f "$root/crds/"
kubectl wait --for=condition=Established crd/distributedtrainings.disttrain.io --timeout=60s >/dev/null

say "starting the operator (log: build/demo/operator.log)"
"$root/build/bin/disttrain-operator" --kubeconfig "$KUBECONFIG" \
  --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 127.0.0.1:0 >"$demo_dir/operator.log" 2>&1 &
operator=$!
watcher=""
# Best-effort teardown on exit: the watcher or operator may already be gone.
cleanup() {
  [[ -n $watcher ]] && kill "$watcher" 2>/dev/null || true
  kill "$operator" 2>/dev/null || true
  wait "$operator" 2>/dev/null || true
}
trap cleanup EXIT

kubectl delete distributedtraining dist --ignore-not-found --wait=true >/dev/null
say "kubectl apply -f examples/quickstart.yaml"
kubectl apply -f "$root/examples/quickstart.yaml"

say "kubectl get distributedtrainings -w   (State: Created -> Running -> Succeeded)"
kubectl get distributedtrainings -w &
watcher=$!
kubectl wait --for=jsonpath='{.status.state}'=Succeeded distributedtraining/dist --timeout=120s >/dev/null
sleep 1
kill "$watcher" 2>/dev/null || true
watcher=""

say "the job's pods: the chief completed; parameter servers, workers and evaluator were deleted"
kubectl get pods -l disttrain.io/job-name=dist
if kubectl get pods -l disttrain.io/job-name=dist,disttrain.io/replica-type=ps -o name | grep -q .; then
  echo "demo: FAILED: parameter servers are still there" >&2
  exit 1
fi
say "kubectl describe distributedtraining dist (events)"
kubectl describe distributedtraining dist | sed -n '/^Events:/,$p'
say "done. The cluster keeps running: export KUBECONFIG=$KUBECONFIG PATH=$root/build/tools/bin:\$PATH; make cluster-down stops it."
