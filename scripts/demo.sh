#!/usr/bin/env bash
# The demo (make demo runs it after building the images and starting the local cluster):
# installs the CRD, runs the operator, applies the quickstart job (a chief, 2 parameter servers,
# workers and an evaluator) and watches it reach Succeeded with its parameter servers gone, its
# progress and ETA moving on the way (read every 5 s here; 30 s by default).
#
# With the cluster's real node up, the job is examples/quickstart-real-node.yaml: real pods of the
# trainer image train Fashion-MNIST and the demo shows the accuracy the evaluator reached. Without
# it, the demo says why and runs examples/quickstart.yaml on the simulated (kwok) nodes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PATH="$root/build/tools/bin:$PATH"
export KUBECONFIG="$root/build/cluster/kubeconfig"
demo_dir="$root/build/demo"
mkdir -p "$demo_dir"

say() { printf '\n\033[1mdemo: %s\033[0m\n' "$*"; }

real_node=$(cat "$root/build/cluster/real-node" 2>/dev/null || echo "unavailable: no status")
if [[ $real_node == up ]]; then
  example="$root/examples/quickstart-real-node.yaml"
  timeout=600
  # A fresh checkpoint directory: the chief would otherwise restore the last run's final step.
  rm -rf /var/tmp/disttrain-quickstart
  install -d -m 1777 /var/tmp/disttrain-quickstart
else
  say "no real node here ($real_node): running the simulated quickstart on kwok nodes"
  example="$root/examples/quickstart.yaml"
  timeout=120
fi

say "installing the DistributedTraining CRD"
kubectl apply -f "$root/crds/"
kubectl wait --for=condition=Established crd/distributedtrainings.disttrain.io --timeout=60s >/dev/null

say "starting the operator (log: build/demo/operator.log)"
"$root/build/bin/disttrain-operator" --kubeconfig "$KUBECONFIG" \
  --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address 127.0.0.1:0 \
  --progress-interval-seconds 5 >"$demo_dir/operator.log" 2>&1 &
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
say "kubectl apply -f ${example#"$root/"}"
kubectl apply -f "$example"

say "kubectl get distributedtrainings -o wide -w   (State: Created -> Running -> Succeeded; PROGRESS and ETA move while it trains)"
kubectl get distributedtrainings -o wide -w &
watcher=$!
evaluator_log="$demo_dir/evaluator.log"
: >"$evaluator_log"
if [[ $real_node == up ]]; then
  # The evaluator's lines, kept even after the operator deletes its pod at the end.
  for _ in $(seq 120); do kubectl get pod dist-evaluator-0 >/dev/null 2>&1 && break; sleep 0.5; done
  kubectl wait --for=condition=Ready pod/dist-evaluator-0 --timeout=300s >/dev/null
  kubectl logs -f dist-evaluator-0 >"$evaluator_log" 2>&1 &
fi
kubectl wait --for=jsonpath='{.status.state}'=Succeeded distributedtraining/dist --timeout=${timeout}s >/dev/null
sleep 1
kill "$watcher" 2>/dev/null || true
watcher=""
if [[ $real_node == up ]]; then
  say "what the chief and the evaluator reported (real training on the real node)"
  kubectl logs dist-chief-0 | grep '"event":"done"' || true  # shown when present; the test suites assert it
  # The evaluator's pod is kept when it finished first (it exits after the final checkpoint);
  # otherwise cleanup deleted it and the followed log has its lines.
  kubectl logs dist-evaluator-0 >>"$evaluator_log" 2>/dev/null || true
  grep '"event":"eval"' "$evaluator_log" | awk '!seen[$0]++' | tail -n 3
fi

say "the job's pods: the chief completed; parameter servers, workers and evaluator are deleted"
kubectl get pods -l disttrain.io/job-name=dist
if ! kubectl wait --for=delete pod -l disttrain.io/job-name=dist,disttrain.io/replica-type=ps --timeout=60s >/dev/null; then
  echo "demo: FAILED: parameter servers are still there" >&2
  exit 1
fi
say "and once their pods terminated, the parameter servers are gone:"
kubectl get pods -l disttrain.io/job-name=dist
say "kubectl describe distributedtraining dist (events)"
kubectl describe distributedtraining dist | sed -n '/^Events:/,$p'
say "kubectl get dtr -o wide   (the result: final step, loss, test accuracy when the evaluator reported it)"
kubectl get dtr dist -o wide
say "kubectl dtr status dist   (the kubectl plugin, build/bin/kubectl-dtr)"
PATH="$root/build/bin:$PATH" kubectl dtr status dist
say "done. The cluster keeps running: export KUBECONFIG=$KUBECONFIG PATH=$root/build/tools/bin:\$PATH; make cluster-down stops it."
