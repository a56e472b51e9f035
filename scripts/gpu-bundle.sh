#!/usr/bin/env bash
# Packs the gpu tests for a GPU machine that has only a driver: build/gpu-bundle/ holds
# cuda_kernels_test (CUDA runtime linked statically), the shared libraries it needs from this
# machine and the Fashion-MNIST training files. Run there:
#   cd build/gpu-bundle && DISTTRAIN_FASHION_MNIST_DIR=$PWD/fmnist LD_LIBRARY_PATH=$PWD/lib ./cuda_kernels_test
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
make --no-print-directory cuda >/dev/null
out=build/gpu-bundle
rm -rf "$out" && mkdir -p "$out/lib" "$out/fmnist"
cp build/cuda/bin/cuda_kernels_test "$out/"
ldd build/cuda/bin/cuda_kernels_test | awk '/=>/ {print $3}' |
  grep -v -E '/(libc|libm|libdl|librt|libpthread|ld-linux[^/]*)\.so' | xargs -I{} cp -L {} "$out/lib/"
cp /usr/share/datasets/fashion-mnist/train-* "$out/fmnist/"
du -sh "$out"
