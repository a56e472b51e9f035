// The MLP's GPU compute alone against a whole call of the tower's CUDA context (bench/gpu_bench.py
// compares both with a worker's step): for each --hidden and --batch-size, one JSON line with
//   compute_ms  device time of the forward and backward pass on resident variables and batch
//   call_ms     wall time of CudaMlp::LossAndGradient: upload, compute, download
// Random inputs; built only with CUDA. Exits 77 without a CUDA device, 2 on bad flags.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/flags.h"
#include "nlohmann/json.hpp"
#include "trainer/kernels/axpy.h"
#include "trainer/kernels/mlp_kernels.h"
#include "trainer/models/model.h"
#include "trainer/models/model_factory.h"
#include "trainer/options.h"

namespace {

using namespace disttrain;           // NOLINT: a bench's main
using namespace disttrain::trainer;  // NOLINT

absl::Status Bench(const std::vector<int>& hidden, const std::string& hidden_flag, int n,
                   int iterations) {
  absl::StatusOr<std::unique_ptr<Model>> model = MakeModel("mlp", 784, 10, hidden);
  if (!model.ok()) return model.status();
  const Params params = (*model)->Initialize(1);
  Params grads = ZerosLike(params);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> pixel(0, 1);
  std::vector<float> x(static_cast<size_t>(n) * 784);
  std::vector<int32_t> y(n);
  for (float& v : x) v = pixel(rng);
  for (int i = 0; i < n; ++i) y[i] = i % 10;
  absl::StatusOr<std::unique_ptr<kernels::CudaMlp>> mlp =
      kernels::CudaMlp::Create(0, {784, hidden, 10}, n);
  if (!mlp.ok()) return mlp.status();
  std::vector<const float*> p;
  std::vector<float*> g;
  for (size_t v = 0; v < params.size(); ++v) {
    p.push_back(params[v].data());
    g.push_back(grads[v].data());
  }
  for (int i = 0; i < 3; ++i) {  // cuBLAS loads its kernels on first use
    if (absl::StatusOr<float> l = (*mlp)->LossAndGradient(p, x.data(), y.data(), n, g); !l.ok())
      return l.status();
  }
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    if (absl::StatusOr<float> l = (*mlp)->LossAndGradient(p, x.data(), y.data(), n, g); !l.ok())
      return l.status();
  }
  const double call_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
      iterations;
  absl::StatusOr<double> compute_ms = (*mlp)->TimeCompute(iterations);
  if (!compute_ms.ok()) return compute_ms.status();
  size_t floats = 0;
  for (const std::vector<float>& v : params) floats += v.size();
  std::cout << nlohmann::json{{"bench", "gpu_compute"},
                              {"hidden", hidden_flag},
                              {"batch_size", n},
                              {"variables_mib", floats * 4.0 / (1 << 20)},
                              {"compute_ms", *compute_ms},
                              {"call_ms", call_ms},
                              {"compute_examples_per_second", n / *compute_ms * 1e3},
                              {"call_examples_per_second", n / call_ms * 1e3}}
                   .dump()
            << std::endl;
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  std::string hidden_list = "100;2048,2048";  // configurations separated by ';'
  std::string batches = "64;512";
  int64_t iterations = 50;
  FlagSet flags("gpu_compute_bench [--hidden '100;2048,2048'] [--batch-size '64;512']");
  flags.String("hidden", &hidden_list, "--hidden of each configuration, separated by ';'.");
  flags.String("batch-size", &batches, "Batch size of each configuration, separated by ';'.");
  flags.Int("iterations", &iterations, "Timed calls per configuration.");
  absl::StatusOr<std::vector<std::string>> rest =
      flags.Parse(std::vector<std::string>(argv + 1, argv + argc));
  if (!rest.ok()) {
    std::cerr << "gpu_compute_bench: " << rest.status().message() << "\n";
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return kExitOk;
  }
  std::vector<std::string> h = absl::StrSplit(hidden_list, ';');
  std::vector<std::string> b = absl::StrSplit(batches, ';');
  if (h.size() != b.size() || iterations < 1) {
    std::cerr << "gpu_compute_bench: --hidden and --batch-size list as many configurations\n";
    return kExitUsage;
  }
  if (!kernels::CudaAvailable()) {
    std::printf("not run: no CUDA device is visible on this machine\n");
    return 77;
  }
  for (size_t i = 0; i < h.size(); ++i) {
    absl::StatusOr<std::vector<int>> hidden = ParseHiddenLayers(h[i]);
    int n = 0;
    if (!hidden.ok() || !absl::SimpleAtoi(b[i], &n) || n < 1) {
      std::cerr << "gpu_compute_bench: bad configuration \"" << h[i] << "\" / \"" << b[i] << "\"\n";
      return kExitUsage;
    }
    if (absl::Status s = Bench(*hidden, h[i], n, static_cast<int>(iterations)); !s.ok()) {
      std::cerr << "gpu_compute_bench: " << s << "\n";
      return kExitFailure;
    }
  }
  return kExitOk;
}
