#!/usr/bin/env bash
# `make test` once its prerequisites are built (make test-prereqs): every suite, with the builds
# the suites do not need at once moved beside them.
#
#   1. In the background, at the lowest CPU priority (nice 19, two compile jobs): helm and
#      toxiproxy, Kueue, the peer (Kubeflow's training-operator) and kube-router, which only some
#      cluster suites need (a suite that starts before its tool is built waits for that build: the
#      build scripts take a lock); then the ASan, TSan and clang trees (scripts/sanitize.sh
#      --build-only) and the CUDA tree (make cuda-build). Its output goes to build/checks.log.
#   2. ctest, every suite at once as far as they allow (-j5): the cluster suites in three lanes,
#      each lane a control plane of its own whose suites run one after another (tests/CMakeLists.txt),
#      beside the suites without a cluster; the suites that train hard (the real node's, the
#      trainer's process suites, the Python suites) one at a time, in the real node's lane.
#   3. Once the background builds are done: the sanitizer suites (scripts/sanitize.sh, nothing
#      left to build) and the gpu tests (make cuda), at normal priority, with nothing beside them.
#   4. One line that sums up the whole run, the last one: `tests: N passed, M failed, K skipped`,
#      counting every ctest test, every sanitizer case and the gpu tests (scripts/test_summary.py).
#
# The cluster suites wait on pods and controllers more than they compute, so the lanes and the
# background compiles fill the idle CPU; at nice 19 the compiles give way whenever a suite wants
# both cores. The sanitizer suites run after the rest, not beside it, because several of them time
# real waits. Every step always runs; the script fails if any step failed, and says which.
set -uo pipefail
cd "$(dirname "$0")/.."

build=build
log=$build/checks.log
logs=$build/test-logs
mkdir -p "$build" "$logs"
rm -f "$logs"/*.log "$logs/steps"

# A full disk fails suites far from its cause (a compile, an image import, etcd): said first.
free_gb=$(df -Pk . | awk 'NR == 2 {print int($4 / 1048576)}')
if ((free_gb < 20)); then
  echo "make test: only $free_gb GB free here; a run writes about 13 GB into build/ (the trees," \
    "the images, the real node's containerd) and may fail with \"No space left on device\""
fi

# Its own process group, so an interrupted `make test` stops the compiles too.
setsid bash -c 'export CMAKE_BUILD_PARALLEL_LEVEL=2; rc=0
  nice -n 19 tests/cluster/tools/build-tools.sh --only helm toxiproxy || rc=1
  nice -n 19 make --no-print-directory kueue peer || rc=1
  nice -n 19 tests/cluster/tools/build-kube-router.sh >/dev/null || rc=1
  nice -n 19 scripts/sanitize.sh --build-only || rc=1
  nice -n 19 make --no-print-directory cuda-build || rc=1
  exit $rc' >"$log" 2>&1 &
checks=$!
trap 'kill -- -$checks 2>/dev/null' EXIT
echo "make test: helm, toxiproxy, Kueue, the peer, kube-router and the sanitizer and CUDA trees build in the background (log: $log)"

results=()
current="" current_start=0 current_pid=""
summary() {
  local now
  now=$(date +%s)
  echo "make test: $((now - ${DISTTRAIN_MAKE_START:-$((now - SECONDS))})) s in all, prerequisites" \
    "included ($SECONDS s since they were built)"
  for r in "${results[@]}"; do echo "  $r"; done
  # What a reader of the log's tail needs first: the failed suites by name, and a full disk.
  sed -n '/^The following tests FAILED:/,/^Errors while running CTest/p' "$logs/ctest.log" \
    2>/dev/null | grep -E '^\s+[0-9]+ - ' | sed -E 's/^\s+/  failed: /'
  # ... and why: each failed test case with its exception, or the timeout.
  python3 scripts/test_summary.py --failures "$logs"
  if grep -qs "No space left on device" "$logs"/*.log "$log"; then
    echo "make test: the disk filled up during the run (\"No space left on device\" in the logs);" \
      "$(df -Ph . | awk 'NR == 2 {print $4}') free now"
  fi
  python3 scripts/test_summary.py "$logs"
}
# A run stopped from outside (CI's time limit, ^C) still says where it was and what had passed;
# a log cut to its tail otherwise shows only the last suite's output.
stopped() {
  echo "make test: stopped by a signal $SECONDS s in, $((SECONDS - current_start)) s into: ${current:-the background builds}"
  [[ -n $current_pid ]] && kill "$current_pid" 2>/dev/null
  [[ -n $current ]] && echo "failed $logs/stopped" >>"$logs/steps"
  summary
  exit 143
}
trap stopped TERM INT
step() {  # step NAME LOG COMMAND...: runs COMMAND, its output also in $logs/LOG, and records NAME's result
  current=$1 current_start=$SECONDS
  local out=$logs/$2
  shift 2
  echo "make test: $current: started $SECONDS s in"
  # In the background and waited for, so that a signal reaches the trap at once.
  ("$@" 2>&1 | tee "$out") & current_pid=$!
  if wait "$current_pid"; then
    results+=("passed  $current ($((SECONDS - current_start)) s)")
    echo "passed $out" >>"$logs/steps"
  else
    results+=("FAILED  $current ($((SECONDS - current_start)) s)")
    echo "failed $out" >>"$logs/steps"
  fi
  current="" current_pid=""
}
step "every ctest suite (unit, trainer processes, three cluster lanes)" ctest.log \
  ctest --test-dir "$build" --output-on-failure --timeout 1800 -j5

start=$SECONDS
wait "$checks"
bg=$?
echo "make test: background builds ended (exit $bg) $((SECONDS - start)) s after the suites"
# A failed background build shows again below: the steps that need it build it in the foreground.
cat "$log"
step "sanitizers (ASan+UBSan, TSan, clang -Wthread-safety)" sanitize.log scripts/sanitize.sh
step "CUDA compile and gpu tests" gpu.log make --no-print-directory cuda

summary
rc=0
for r in "${results[@]}"; do [[ $r == passed* ]] || rc=1; done
exit $rc
