#!/usr/bin/env bash
# The checks `make test` runs besides ctest's suites (`make sanitize`):
#   1. every C++ unit suite under AddressSanitizer + UndefinedBehaviorSanitizer (build/asan);
#   2. the operator runtime's concurrent parts (work queue, informer, store, controller, leader
#      election, REST client, event recorder: operator_runtime_test), the reconciler, and the
#      trainer's shard store, membership, schemes, pushes, embedding tables and ParallelFor's
#      thread pool (axpy_test) under ThreadSanitizer (build/tsan, linked with an Abseil built with TSan);
#   3. a clang build of every library with -Wthread-safety as errors, so the ABSL_GUARDED_BY
#      annotations are checked (build/thread-safety).
# Each build tree is configured once and then rebuilt incrementally.
#
#   scripts/sanitize.sh [--build-only]
#
# --build-only builds the three trees and runs nothing: `make test` runs it at the lowest CPU
# priority beside its ctest phases, then runs this script again (nothing left to build) to run
# the suites at normal priority once the cluster's suites are done (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=0
case ${1:-} in
  --build-only) build_only=1 ;;
  "") ;;
  *) echo "sanitize: unknown argument '$1' (usage: scripts/sanitize.sh [--build-only])" >&2; exit 2 ;;
esac

log() { echo "sanitize: $*" >&2; }
configure() { [[ -f build/$1/build.ninja ]] || cmake --preset "$1" >/dev/null; }

unit_targets=(common_test operator_api_test operator_runtime_test operator_reconciler_test axpy_test
              trainer_unit_test parameter_server_test membership_test shard_store_test push_test wire_test
              ps_client_test schemes_test embedding_test trainer_data_test sparse_models_test
              sparse_training_test)

log "ASan + UBSan: building ${#unit_targets[@]} unit suites"
configure asan
cmake --build build/asan --target "${unit_targets[@]}"
((build_only)) || ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0" \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir build/asan -L unit -E '^[^.]*$' -j2 --output-on-failure  # GoogleTest cases: Suite.Name

log "TSan: the operator runtime, the reconciler, the trainer's shard store, membership and thread pool"
# Against an Abseil built with TSan (Debian's prebuilt one hides absl::Mutex from TSan). The
# trainer's gRPC suites (parameter_server_test, ps_client_test) are not here: Debian's gRPC links
# Debian's own uninstrumented Abseil, whose Mutex internals then race in every report.
absl_tsan=$(scripts/build-absl-tsan.sh)
[[ -f build/tsan/build.ninja ]] || cmake --preset tsan -DCMAKE_PREFIX_PATH="$absl_tsan" >/dev/null
tsan_suites=(operator_runtime_test operator_reconciler_test shard_store_test membership_test schemes_test
             push_test axpy_test embedding_test)
cmake --build build/tsan --target "${tsan_suites[@]}"
# Each suite has 600 s (the slowest takes about 20 s here): a hang fails the run with its name
# instead of running out CI's time.
((build_only)) || for suite in "${tsan_suites[@]}"; do
  rc=0
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp" \
    timeout 600 build/tsan/bin/$suite --gtest_brief=1 || rc=$?
  if ((rc == 124)); then log "TSan: $suite ran past 600 s and was stopped"; fi
  if ((rc != 0)); then exit "$rc"; fi
done

log "clang -Wthread-safety: every library"
configure thread-safety
cmake --build build/thread-safety --target disttrain_common disttrain_api disttrain_kube disttrain_runtime \
  disttrain_reconciler disttrain_operator_cli disttrain_trainer_lib
if ((build_only)); then log "all three trees built"; else log "all checks passed"; fi
