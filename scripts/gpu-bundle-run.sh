#!/usr/bin/env bash
# run.sh of build/gpu-bundle (scripts/gpu-bundle.sh): on a GPU machine, runs cuda_kernels_test,
# then bench/gpu_bench.py, and writes into $OUT (default ./out):
#   env.txt                  GPU and driver (nvidia-smi), the cuBLAS found, ldd of the binaries
#   cuda_kernels_test.log    the test's output; .xml its GoogleTest report; its exit code in
#                            summary.json (77: no CUDA device visible)
#   bench.jsonl              the bench's JSON lines (bench/gpu_bench.py's docstring names each)
#   logs/*.log               every trainer run's command line and output
#   summary.json             exit codes of both steps and where cuBLAS came from
# Exit code: the test's when it failed, else the bench's.
# cuBLAS 13 is taken from $DISTTRAIN_CUBLAS_DIR, else the NVIDIA wheels of a python on the machine
# (/opt/torch/.venv first), else a CUDA install (/usr/local/cuda*), else ldconfig.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT/logs"

find_cublas() {
  local py dir
  if [[ -n ${DISTTRAIN_CUBLAS_DIR:-} && -e $DISTTRAIN_CUBLAS_DIR/libcublas.so.13 ]]; then
    echo "$DISTTRAIN_CUBLAS_DIR"
    return
  fi
  # CUDA 13 wheels install into nvidia/cu13/lib, CUDA 12's into nvidia/cublas/lib.
  for py in /opt/torch/.venv/bin/python python3 /opt/*/.venv/bin/python /opt/*/venv/bin/python; do
    [[ -x $py ]] || command -v "$py" >/dev/null 2>&1 || continue
    dir=$("$py" - 2>/dev/null <<'PY'
import os
try:
    import nvidia
except ImportError:
    raise SystemExit(1)
for root in list(nvidia.__path__):
    for sub in ("cu13/lib", "cublas/lib"):
        d = os.path.join(root, sub)
        if os.path.exists(os.path.join(d, "libcublas.so.13")):
            print(d)
            raise SystemExit(0)
raise SystemExit(1)
PY
    ) && { echo "$dir"; return; }
  done
  for dir in /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
             /opt/*/.venv/lib/python3*/site-packages/nvidia/cu13/lib /usr/local/lib/python3*/dist-packages/nvidia/cu13/lib; do
    [[ -e $dir/libcublas.so.13 ]] && { echo "$dir"; return; }
  done
  dir=$(ldconfig -p 2>/dev/null | awk '/libcublas\.so\.13 / {print $NF; exit}')
  [[ -n $dir ]] && dirname "$dir"
}

cublas=$(find_cublas || true)
export LD_LIBRARY_PATH="$here/lib${cublas:+:$cublas}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
{
  echo "# $(date -u +%FT%TZ) $(uname -a)"
  nvidia-smi 2>&1 || echo "nvidia-smi: not available"
  echo "# cuBLAS: ${cublas:-NOT FOUND}"
  echo "# LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  for b in "$here"/bin/*; do echo "# ldd $b"; ldd "$b"; done
} >"$OUT/env.txt" 2>&1
if [[ -z $cublas ]]; then
  echo "run.sh: libcublas.so.13 not found (set DISTTRAIN_CUBLAS_DIR)" | tee -a "$OUT/env.txt" >&2
fi

DISTTRAIN_FASHION_MNIST_DIR="$here/fmnist" timeout 150 "$here/bin/cuda_kernels_test" \
  --gtest_output="xml:$OUT/cuda_kernels_test.xml" >"$OUT/cuda_kernels_test.log" 2>&1
test_rc=$?
echo "cuda_kernels_test: exit $test_rc" >&2
tail -n 5 "$OUT/cuda_kernels_test.log" >&2

# GPU_BENCH_REPEAT runs of the bench (medians; default 1): run k writes bench.jsonl (k = 1) or
# bench-k.jsonl and logs/ or logs/run-k/, with GPU_BENCH_ARGS_REPEAT (default GPU_BENCH_ARGS)
# from k = 2; none starts once GPU_BENCH_DEADLINE seconds have passed since run.sh began.
# With bin-base/ in the bundle each run k first runs the same bench on those binaries
# (bench-base.jsonl or bench-base-k.jsonl, logs/base or logs/run-k/base): an interleaved A/B.
bench_rc=0
for ((k = 1; k <= ${GPU_BENCH_REPEAT:-1}; k++)); do
  if ((k > 1 && SECONDS >= ${GPU_BENCH_DEADLINE:-100000})); then
    echo "gpu_bench: run $k not started ($SECONDS s passed)" >&2
    break
  fi
  jsonl=$OUT/bench.jsonl logs=$OUT/logs args=${GPU_BENCH_ARGS:-}
  if ((k > 1)); then
    jsonl=$OUT/bench-$k.jsonl logs=$OUT/logs/run-$k args=${GPU_BENCH_ARGS_REPEAT:-$args}
  fi
  if [[ -d $here/bin-base ]]; then
    base_jsonl=$OUT/bench-base.jsonl
    ((k > 1)) && base_jsonl=$OUT/bench-base-$k.jsonl
    mkdir -p "$logs/base"
    # shellcheck disable=SC2086  # the arguments are words
    timeout ${GPU_BENCH_TIMEOUT:-360} python3 "$here/bench/gpu_bench.py" --bin "$here/bin-base" \
      --data-dir "$here/fmnist" --logs "$logs/base" --out "$base_jsonl" $args \
      2>"$logs/base/gpu_bench.stderr"
    rc=$?
    echo "gpu_bench run $k, base: exit $rc ($SECONDS s)" >&2
    ((rc == 0)) || bench_rc=$rc
  fi
  mkdir -p "$logs"
  # shellcheck disable=SC2086  # the arguments are words
  timeout ${GPU_BENCH_TIMEOUT:-360} python3 "$here/bench/gpu_bench.py" --bin "$here/bin" --data-dir "$here/fmnist" \
    --logs "$logs" --out "$jsonl" $args 2>"$logs/gpu_bench.stderr"
  rc=$?
  echo "gpu_bench run $k: exit $rc ($SECONDS s)" >&2
  ((rc == 0)) || bench_rc=$rc
done
printf '{"cuda_kernels_test_exit": %d, "gpu_bench_exit": %d, "cublas_dir": "%s"}\n' \
  "$test_rc" "$bench_rc" "${cublas:-}" >"$OUT/summary.json"
cat "$OUT/summary.json" >&2
if ((test_rc != 0)); then exit "$test_rc"; fi
exit "$bench_rc"
