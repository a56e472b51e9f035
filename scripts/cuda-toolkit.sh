#!/usr/bin/env bash
# Prints the path of a CUDA compiler toolkit assembled from NVIDIA's PyPI wheels (nvcc, its
# nvvm back end and crt headers, the runtime and CCCL headers, cuBLAS), installing it on first use
# into
#   ${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}/cuda-<version>/
# Enough to compile and link the trainer's CUDA kernels on a machine without a GPU (no driver is
# needed to compile). The wheels are fetched with the test venv's pip (tests/python/venv.sh).
# .complete lists the wheels installed, so a cache made before a wheel was added gets just that
# wheel on the next run.
set -euo pipefail

CUDA_WHEELS_VERSION=${CUDA_WHEELS_VERSION:-13.0}
# wheel==version, all of one CUDA release (13.0 Update 1/2); they unpack into one tree,
# nvidia/cu13/. cuBLAS 13.0.2 is 13.0 Update 1's; the binaries link its libcublas.so.13, which any
# cuBLAS 13 on the GPU machine provides (the library is 0.5 GB: it is not bundled).
wheels=(nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88
        nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85 nvidia-cublas==13.0.2.14)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}
dir="$cache/cuda-$CUDA_WHEELS_VERSION"
root="$dir/nvidia/cu13"
missing() {
  local w
  for w in "${wheels[@]}"; do
    grep -qxF "$w" "$dir/.complete" 2>/dev/null || echo "$w"
  done
}
if [[ -z $(missing) ]]; then
  echo "$root"
  exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.cuda.lock"
flock 9
mapfile -t todo < <(missing)
if [[ ${#todo[@]} -eq 0 ]]; then
  echo "$root"
  exit 0
fi
venv=$("$here/../tests/python/venv.sh")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$venv/bin/python" -m pip download --quiet --no-deps -d "$tmp/wheels" "${todo[@]}" >&2; then
  echo "cuda-toolkit.sh: cannot download the CUDA wheels (${todo[*]}) from PyPI" >&2
  exit 1
fi
mkdir -p "$dir"
for w in "$tmp"/wheels/*.whl; do "$venv/bin/python" -m zipfile -e "$w" "$dir"; done
chmod +x "$root"/bin/* "$root"/nvvm/bin/*
ln -sfn lib "$root/lib64"                          # nvcc.profile links from lib64
ln -sfn libcudart.so.13 "$root/lib/libcudart.so"  # the wheels ship only the sonames
ln -sfn libcublas.so.13 "$root/lib/libcublas.so"
"$root/bin/nvcc" --version >&2
printf '%s\n' "${wheels[@]}" >"$dir/.complete"
echo "$root"
