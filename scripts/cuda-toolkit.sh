#!/usr/bin/env bash
# Prints the path of a CUDA compiler toolkit assembled from NVIDIA's PyPI wheels (nvcc, its
# nvvm back end and crt headers, the runtime and CCCL headers), installing it on first use into
#   ${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}/cuda-<version>/
# Enough to compile and link the trainer's CUDA kernels on a machine without a GPU (no driver is
# needed to compile). The wheels are fetched with the test venv's pip (tests/python/venv.sh).
set -euo pipefail

CUDA_WHEELS_VERSION=${CUDA_WHEELS_VERSION:-13.0}
# wheel==version, all of one CUDA release; they unpack into one tree, nvidia/cu13/.
wheels=(nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88
        nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${DISTTRAIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disttrain}
dir="$cache/cuda-$CUDA_WHEELS_VERSION"
root="$dir/nvidia/cu13"
if [[ -f $dir/.complete ]]; then
  echo "$root"
  exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.cuda.lock"
flock 9
if [[ -f $dir/.complete ]]; then
  echo "$root"
  exit 0
fi
venv=$("$here/../tests/python/venv.sh")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$venv/bin/python" -m pip download --quiet --no-deps -d "$tmp/wheels" "${wheels[@]}" >&2; then
  echo "cuda-toolkit.sh: cannot download the CUDA wheels (${wheels[*]}) from PyPI" >&2
  exit 1
fi
rm -rf "$dir" && mkdir -p "$dir"
for w in "$tmp"/wheels/*.whl; do "$venv/bin/python" -m zipfile -e "$w" "$dir"; done
chmod +x "$root"/bin/* "$root"/nvvm/bin/*
ln -sfn lib "$root/lib64"                          # nvcc.profile links from lib64
ln -sfn libcudart.so.13 "$root/lib/libcudart.so"  # the wheel ships only the soname
"$root/bin/nvcc" --version >&2
touch "$dir/.complete"
echo "$root"
