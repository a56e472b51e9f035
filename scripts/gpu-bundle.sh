#!/usr/bin/env bash
# Packs the GPU checks (issue #38) for a GPU machine that has a driver, python3 and cuBLAS 13 but
# none of this build's libraries. build/gpu-bundle/ holds
#   bin/    cuda_kernels_test, disttrain-trainer (Release) and gpu_compute_bench, built with CUDA
#           (runtime linked statically), stripped
#   lib/    the shared libraries they need from this machine (ldd), but not libcublas/libcublasLt:
#           0.6 GB; run.sh finds the GPU machine's own (python site-packages, /usr/local/cuda)
#   bench/  gpu_bench.py
#   fmnist/ the Fashion-MNIST training and test files
#   run.sh  cuda_kernels_test, then the bench; everything into $OUT
#   bin-base/  only with GPU_BUNDLE_BASE=DIR (a folder holding another build's disttrain-trainer
#           and gpu_compute_bench, e.g. the previous commit's build/cuda/bin): run.sh then runs
#           the bench on those before each run on bin/, an A/B on the same GPU in one lease
# Run there:  OUT=/path/to/results build/gpu-bundle/run.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
make --no-print-directory cuda >/dev/null
out=build/gpu-bundle
bins=(cuda_kernels_test disttrain-trainer gpu_compute_bench)
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib" "$out/bench" "$out/fmnist"
for b in "${bins[@]}"; do
  cp "build/cuda/bin/$b" "$out/bin/"
  strip --strip-unneeded "$out/bin/$b"
done
# Every non-system library the binaries load, except cuBLAS (see above) and the C library's own
# (the GPU machine's glibc is newer than this one's, and backward compatible).
for b in "${bins[@]}"; do ldd "build/cuda/bin/$b"; done | awk '/=>/ && $3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*|libcublas|libcublasLt)\.so' |
  while read -r lib; do
    cp -L "$lib" "$out/lib/"
    chmod u+w "$out/lib/$(basename "$lib")"
    strip --strip-unneeded "$out/lib/$(basename "$lib")"
  done
if [[ -n ${GPU_BUNDLE_BASE:-} ]]; then
  mkdir -p "$out/bin-base"
  for b in disttrain-trainer gpu_compute_bench; do
    cp "$GPU_BUNDLE_BASE/$b" "$out/bin-base/"
    strip --strip-unneeded "$out/bin-base/$b"
  done
fi
cp bench/gpu_bench.py "$out/bench/"
cp scripts/gpu-bundle-run.sh "$out/run.sh"
cp /usr/share/datasets/fashion-mnist/{train,t10k}-*-ubyte.gz "$out/fmnist/"
size=$(du -sm "$out" | cut -f1)
echo "$out: ${size} MiB"
if ((size >= 60)); then
  echo "gpu-bundle.sh: the bundle is ${size} MiB, over the 60 MiB limit" >&2
  exit 1
fi
