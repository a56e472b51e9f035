# The verbs a user expects. Every target installs what it is missing first, so `make demo` and
# `make test` work on a fresh machine.
SHELL := /bin/bash
.DEFAULT_GOAL := build

PRESET ?= dev
BUILD_DIR := $(CURDIR)/build
SCALE_JOBS ?= 10000
TOOLS_BIN := $(BUILD_DIR)/tools/bin
KUBECONFIG_FILE := $(BUILD_DIR)/cluster/kubeconfig
export PATH := $(TOOLS_BIN):$(PATH)
# When the outermost make started, so that `make test` reports its whole wall time, prerequisites
# included (scripts/test.sh); a sub-make inherits the first value.
ifndef DISTTRAIN_MAKE_START
export DISTTRAIN_MAKE_START := $(shell date +%s)
endif

.PHONY: test-prereqs lane-fetch cuda-build deps tools tools-cluster kueue peer configure build bins images test unit check e2e sanitize demo demo-images cluster-up cluster-down release-bins bench bench-tf bench-sparse bench-recsys bench-kueue bench-network-policy bench-tls bench-peer bench-scale bench-startup bench-lost-node bench-chaos bench-progress bench-ps-copy bench-schemes cuda format clean help

help: ## List the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

deps: ## Install the Debian packages the build, tests and demo need (idempotent).
	@scripts/install-deps.sh

tools: ## Build (or reuse from the cache) the pinned Kubernetes tools into build/tools/bin.
	@tests/cluster/tools/build-tools.sh

# What the local cluster runs (the control plane, kubelet, etcd, kwok, CoreDNS): helm and
# toxiproxy, which only the packaging and fault suites use, are left out.
tools-cluster:
	@tests/cluster/tools/build-tools.sh --only cluster

kueue: ## Build (or reuse from the cache) Kueue's manager for the queueing suites into build/tools/kueue.
	@mkdir -p $(BUILD_DIR)/tools && ln -sfn "$$(tests/cluster/tools/build-kueue.sh)" $(BUILD_DIR)/tools/kueue

peer: tools ## Build (or reuse from the cache) Kubeflow's training-operator for the TFJob suites and bench-peer.
	@bench/peer/build-peer.sh >/dev/null

configure: deps
	@if [[ ! -f $(BUILD_DIR)/build.ninja ]]; then cmake --preset $(PRESET); fi

build: configure ## Build build/bin/disttrain-operator and build/bin/disttrain-trainer.
	@cmake --build $(BUILD_DIR)

# The binaries alone, without the test suites and benchmarks (what `make demo` runs).
bins: configure
	@cmake --build $(BUILD_DIR) --target disttrain-operator disttrain-trainer kubectl-dtr

images: deps ## Build the operator and trainer images with buildah into build/images/ (docker archives).
	@scripts/images.sh

# After its prerequisites, scripts/test.sh runs the suites without a cluster (two at a time), then
# the cluster's suites one at a time, while Kueue, the peer, kube-router and the sanitizer and
# CUDA trees build beside them at the lowest CPU priority; then it runs the sanitizer suites and
# the gpu tests. Every part always
# runs; `make test` fails if any failed.
test: test-prereqs ## Run every test suite (unit, e2e against a local cluster, sanitizers, CUDA compile).
	@scripts/test.sh

# What the ctest phases need first, in three lanes side by side on a cold machine: the dev C++
# tree, the cluster's Go tools, and the downloads (the tests' venv, the CUDA wheels) with the
# images. On 2 cores the lanes overlap one lane's downloads and single-threaded links with
# another's compiles. Kueue, the peer and kube-router, which only some cluster suites need, build
# beside the tests (scripts/test.sh). Everything is cached, so a warm machine passes through in
# seconds.
test-prereqs: deps
	@$(MAKE) --no-print-directory -j3 build tools-cluster lane-fetch
lane-fetch:
	@tests/python/venv.sh >/dev/null && scripts/cuda-toolkit.sh >/dev/null
	@$(MAKE) --no-print-directory images

cuda: cuda-build ## Compile the CUDA kernels (nvcc from PyPI's wheels) and run the gpu tests: "Not Run" without a CUDA device.
	@ctest --test-dir $(BUILD_DIR)/cuda --output-on-failure -L gpu

cuda-build: deps
	@tk=$$(scripts/cuda-toolkit.sh) && if [[ ! -f $(BUILD_DIR)/cuda/build.ninja ]]; then \
	  cmake -S . -B $(BUILD_DIR)/cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DDISTTRAIN_ENABLE_CUDA=ON \
	    -DCMAKE_CUDA_COMPILER=$$tk/bin/nvcc -DCUDAToolkit_ROOT=$$tk >/dev/null; fi
	@cmake --build $(BUILD_DIR)/cuda --target cuda_kernels_test disttrain-trainer gpu_compute_bench

unit: build ## Run the unit suites only (no cluster).
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -L unit -j2

check: unit ## The fast inner loop: build, then the unit suites and the format and layout checks (docs/development.md).

e2e: build tools kueue peer images ## Run the end-to-end suites against the local cluster.
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -L e2e -j3

sanitize: deps ## Unit suites under ASan+UBSan, the operator runtime under TSan, clang -Wthread-safety.
	@scripts/sanitize.sh

cluster-up: deps tools-cluster ## Start the local control plane; kubeconfig in build/cluster/kubeconfig.
	@tests/cluster/cluster-up.sh

cluster-down: ## Stop the local control plane and every process it started.
	@tests/cluster/cluster-down.sh

# Only what the demo runs: the binaries (no test suites), the operator and trainer images (not
# the TensorFlow example's), and the cluster's tools (no helm, no toxiproxy).
demo: bins demo-images cluster-up ## Build, start the local cluster and run the main example job.
	@scripts/demo.sh
demo-images: deps
	@scripts/images.sh operator trainer

release-bins: deps
	@if [[ ! -f $(BUILD_DIR)/release/build.ninja ]]; then cmake --preset release >/dev/null; fi
	@cmake --build $(BUILD_DIR)/release --target trainer_bench disttrain-trainer >/dev/null

bench: build cluster-up release-bins bench-tf ## Run the benchmarks; each prints JSON lines (see docs/development.md).
	@$(BUILD_DIR)/release/bin/trainer_bench --only transport,memory,update
	@py=$$(tests/python/venv.sh)/bin/python && $$py bench/ps_scaling.py --bin $(BUILD_DIR)/release/bin
	@python3 bench/operator_scale.py 100
	@python3 bench/informer_bench.py 5000
	@$(MAKE) --no-print-directory bench-schemes

bench-schemes: release-bins ## Every training scheme with 1, 2 and 4 workers on Fashion-MNIST: plot and table (docs/trainer.md).
	@py=$$(tests/python/venv.sh)/bin/python && $$py bench/schemes.py --bin $(BUILD_DIR)/release/bin --write-docs

bench-sparse: release-bins ## Embedding tables: row updates per ps core, memory per row, the capacity bound (docs/trainer.md).
	@cmake --build $(BUILD_DIR)/release --target sparse_bench >/dev/null
	@$(BUILD_DIR)/release/bin/sparse_bench --trainer $(BUILD_DIR)/release/bin/disttrain-trainer

bench-recsys: release-bins ## DeepFM on MovieLens against TensorFlow's ParameterServerStrategy; synthetic Criteo scaling (docs/trainer.md).
	@py=$$(tests/python/venv.sh)/bin/python && $$py bench/recsys_bench.py --bin $(BUILD_DIR)/release/bin --runs 3

bench-ps-copy: release-bins ## The chief's copy of the parameter servers: push latency, step rate and memory with it and without (docs/trainer.md).
	@python3 bench/ps_copy_bench.py --bin $(BUILD_DIR)/release/bin --runs 3

bench-tls: release-bins ## Push+pull with and without mutual TLS at 1/16/64 MiB, then again with AES-NI hidden from OpenSSL.
	@$(BUILD_DIR)/release/bin/trainer_bench --only tls
	@OPENSSL_ia32cap="~0x200000200000000" $(BUILD_DIR)/release/bin/trainer_bench --only tls

bench-tf: release-bins ## Push+pull through TensorFlow's own parameter server and ours, side by side.
	@py=$$(tests/python/venv.sh)/bin/python && $$py bench/compare_tensorflow.py --trainer-bench $(BUILD_DIR)/release/bin/trainer_bench --runs 5

bench-kueue: tools kueue cluster-up ## Kueue support's cost and speed: 100 queued jobs against 100 without Kueue (docs/operations.md).
	@if [[ ! -f $(BUILD_DIR)/release/build.ninja ]]; then cmake --preset release >/dev/null; fi
	@cmake --build $(BUILD_DIR)/release --target disttrain-operator >/dev/null
	@DISTTRAIN_BIN=$(BUILD_DIR)/release/bin python3 bench/kueue_bench.py 100 3 20

bench-network-policy: build tools cluster-up ## A job's start with and without its NetworkPolicy (docs/operations.md).
	@python3 bench/network_policy_bench.py 10 3

bench-peer: tools peer cluster-up ## Our operator against Kubeflow's training-operator and a bare client (docs/operations.md).
	@if [[ ! -f $(BUILD_DIR)/release/build.ninja ]]; then cmake --preset release >/dev/null; fi
	@cmake --build $(BUILD_DIR)/release --target disttrain-operator bare_client >/dev/null
	@python3 bench/peer/peer_bench.py --bin $(BUILD_DIR)/release/bin --runs 3 --write-docs \
	  --only disttrain,disttrain-apf,peer-defaults,peer-matched,bare-same,bare-client --flamegraph docs/operator-flamegraph.svg

bench-lost-node: build tools peer cluster-up ## A node lost under a job: pods replaced, ours (30 s, 300 s) against the peer (docs/operations.md; ~20 min).
	@python3 bench/lost_node.py --runs 3 --long-runs 1

bench-chaos: build images tools kueue peer cluster-up ## Goodput under a chaos schedule (ps SIGKILL, worker OOM kill, Kueue eviction) on the real node, ours against the peer (docs/operations.md; as root).
	@python3 bench/chaos_bench.py --runs 3

bench-startup: tools peer cluster-up ## apply to every pod Running: a 7-pod job beside 0 and 100 running jobs (p50, p99) and one of 1,101 pods, ours and training-operator v1.9's, the operator's share and the control plane's CPU (docs/operations.md).
	@if [[ ! -f $(BUILD_DIR)/release/build.ninja ]]; then cmake --preset release >/dev/null; fi
	@cmake --build $(BUILD_DIR)/release --target disttrain-operator >/dev/null
	@DISTTRAIN_BIN=$(BUILD_DIR)/release/bin python3 bench/startup_bench.py --others 0,100 --runs 20 \
	  --contenders disttrain,peer-defaults,peer-matched --big

bench-progress: tools cluster-up ## status.progress's cost: operator CPU and status writes per job, 100 training jobs, progress off/30 s/5 s (docs/operations.md; ~55 min, as root).
	@if [[ ! -f $(BUILD_DIR)/release/build.ninja ]]; then cmake --preset release >/dev/null; fi
	@cmake --build $(BUILD_DIR)/release --target disttrain-operator >/dev/null
	@python3 bench/progress_bench.py --bin $(BUILD_DIR)/release/bin --runs 3 --window 120

bench-scale: tools peer cluster-up ## 10,000 jobs x 7 pods on 40 simulated nodes, the bare client on the same jobs, the peer on 1,000 (docs/operations.md; hours here).
	@if [[ ! -f $(BUILD_DIR)/release/build.ninja ]]; then cmake --preset release >/dev/null; fi
	@cmake --build $(BUILD_DIR)/release --target disttrain-operator bare_client >/dev/null
	@python3 bench/peer/peer_bench.py --bin $(BUILD_DIR)/release/bin --scale 7 --scale-jobs $(SCALE_JOBS) \
	  --scale-nodes 40 --scale-with bare-same,peer --scale-peer-jobs 1000

format: ## Format the C++ sources with clang-format.
	@git ls-files '*.cc' '*.h' '*.cu' | xargs clang-format -i

clean: cluster-down ## Remove the build tree (the tool cache outside the repo is kept).
	@rm -rf $(BUILD_DIR)
