#!/usr/bin/env bash
# Installs every Debian package the build, the tests and the demo need. Idempotent: a
# second run that finds everything present does nothing and returns in well under a second.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git curl ca-certificates
  # Compiles every build tree through ccache (cmake/Ccache.cmake).
  ccache
  libcpprest-dev libboost-dev libssl-dev
  nlohmann-json3-dev libyaml-cpp-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev
  dataset-fashion-mnist
  python3 python3-yaml openssl procps iproute2 clang-format
  # make sanitize: clang for -Wthread-safety (ASan, UBSan and TSan come with gcc).
  clang
  # The local cluster's real node and its images (tests/cluster/node, scripts/images.sh).
  containerd runc containernetworking-plugins buildah mmdebstrap
  # kube-router's NetworkPolicy firewall beside the real node (tests/e2e/isolation_test.py).
  ipset iptables
  # The alert rules' checks (promtool, ctest prometheus_rules) and the Prometheus that
  # tests/e2e/monitoring_realnode_test.py scrapes the operator and a job with.
  prometheus
  # make bench-peer's flame graph of the operator.
  linux-perf
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
