#!/usr/bin/env bash
# `make test` once its prerequisites are built (make test-prereqs): every suite, with the builds
# the ctest phases do not need moved beside them.
#
#   1. In the background, at the lowest CPU priority (nice 19, two compile jobs): Kueue, the peer
#      (Kubeflow's training-operator) and kube-router, which only some cluster suites need (a
#      suite that starts before its tool is built waits for that build: the build scripts take a
#      lock); then the ASan, TSan and clang trees (scripts/sanitize.sh --build-only) and the CUDA
#      tree (make cuda-build). Its output goes to build/checks.log.
#   2. ctest, the suites without a cluster, two at a time (the trainer's process suites one at a
#      time: tests/CMakeLists.txt).
#   3. ctest, the cluster's suites, one at a time.
#   4. Once the background builds are done: the sanitizer suites (scripts/sanitize.sh, nothing
#      left to build) and the gpu tests (make cuda), at normal priority, with nothing beside them.
#
# The cluster's suites wait on pods and controllers more than they compute, so the background
# compiles fill the idle CPU; at nice 19 they give way whenever a suite wants both cores. The
# sanitizer suites run after the cluster's suites, not beside them, because several of them time
# real waits. Every step always runs; the script fails if any step failed, and says which.
set -uo pipefail
cd "$(dirname "$0")/.."

build=build
log=$build/checks.log
mkdir -p "$build"

# Its own process group, so an interrupted `make test` stops the compiles too.
setsid bash -c 'export CMAKE_BUILD_PARALLEL_LEVEL=2; rc=0
  nice -n 19 make --no-print-directory kueue peer || rc=1
  nice -n 19 tests/cluster/tools/build-kube-router.sh >/dev/null || rc=1
  nice -n 19 scripts/sanitize.sh --build-only || rc=1
  nice -n 19 make --no-print-directory cuda-build || rc=1
  exit $rc' >"$log" 2>&1 &
checks=$!
trap 'kill -- -$checks 2>/dev/null' EXIT
echo "make test: Kueue, the peer, kube-router and the sanitizer and CUDA trees build in the background (log: $log)"

results=()
current="" current_start=0 current_pid=""
summary() {
  echo "make test:"
  for r in "${results[@]}"; do echo "  $r"; done
}
# A run stopped from outside (CI's time limit, ^C) still says where it was and what had passed;
# a log cut to its tail otherwise shows only the last suite's output.
stopped() {
  echo "make test: stopped by a signal $SECONDS s in, $((SECONDS - current_start)) s into: ${current:-the background builds}"
  [[ -n $current_pid ]] && kill "$current_pid" 2>/dev/null
  summary
  exit 143
}
trap stopped TERM INT
step() {  # step NAME COMMAND...: runs COMMAND and records NAME's result
  current=$1 current_start=$SECONDS; shift
  echo "make test: $current: started $SECONDS s in"
  # In the background and waited for, so that a signal reaches the trap at once.
  "$@" & current_pid=$!
  if wait "$current_pid"; then results+=("passed  $current ($((SECONDS - current_start)) s)")
  else results+=("FAILED  $current ($((SECONDS - current_start)) s)"); fi
  current="" current_pid=""
}
ctest_args=(--test-dir "$build" --output-on-failure --timeout 1800)
step "suites without a cluster" ctest "${ctest_args[@]}" -LE e2e -j2
step "cluster suites" ctest "${ctest_args[@]}" -L e2e

start=$SECONDS
wait "$checks"
bg=$?
echo "make test: background builds ended (exit $bg) $((SECONDS - start)) s after the cluster suites"
# A failed background build shows again below: the steps that need it build it in the foreground.
cat "$log"
step "sanitizers (ASan+UBSan, TSan, clang -Wthread-safety)" scripts/sanitize.sh
step "CUDA compile and gpu tests" make --no-print-directory cuda

summary
rc=0
for r in "${results[@]}"; do [[ $r == passed* ]] || rc=1; done
exit $rc
