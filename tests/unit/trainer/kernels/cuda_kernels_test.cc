// The CUDA kernels against the CPU ones they replace (label gpu). Built only when the build has
// a CUDA compiler. On a machine without a CUDA device the binary prints why and exits 77, which
// ctest reports as "Not Run" (SKIP_RETURN_CODE), never as passed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "trainer/data/dataset.h"
#include "trainer/kernels/axpy.h"
#include "trainer/kernels/mlp_kernels.h"
#include "trainer/kernels/update_kernels.h"
#include "trainer/models/model.h"
#include "trainer/models/model_factory.h"

namespace disttrain::trainer {
namespace {

std::vector<float> Random(size_t n, uint64_t seed, float lo = -1, float hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

void ExpectClose(const std::vector<float>& gpu, const std::vector<float>& cpu, float rel,
                 const char* what) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (std::fabs(gpu[i] - cpu[i]) > rel * (1 + std::fabs(cpu[i])) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: gpu " << gpu[i] << " cpu " << cpu[i];
  }
  EXPECT_EQ(bad, 0u) << what;
}

TEST(CudaKernelsTest, AxpyMatchesTheCpu) {
  std::vector<float> x = Random(1 << 20, 1), cpu = Random(1 << 20, 2), gpu = cpu;
  kernels::Axpy(-0.25f, x, cpu);
  ASSERT_TRUE(kernels::CudaAxpy(-0.25f, x, gpu).ok());
  ExpectClose(gpu, cpu, 1e-6f, "axpy");
}

TEST(CudaKernelsTest, AdagradMatchesTheCpu) {
  const size_t n = 300007;
  std::vector<float> g = Random(n, 3), acc_cpu = Random(n, 4, 0.1f, 2), theta_cpu = Random(n, 5);
  std::vector<float> acc_gpu = acc_cpu, theta_gpu = theta_cpu;
  for (int step = 0; step < 3; ++step) {
    kernels::AdagradTo(0.1f, g, acc_cpu, theta_cpu, theta_cpu);
    ASSERT_TRUE(kernels::CudaAdagrad(0.1f, g, acc_gpu, theta_gpu).ok());
  }
  ExpectClose(acc_gpu, acc_cpu, 1e-6f, "accumulators");
  ExpectClose(theta_gpu, theta_cpu, 1e-5f, "variables");
}

Dataset FashionMnistOrRandom() {
  const char* dir = std::getenv("DISTTRAIN_FASHION_MNIST_DIR");  // default: the Debian package's
  absl::StatusOr<Dataset> data = LoadFashionMnist(dir ? dir : "", "train");
  if (data.ok()) return *std::move(data);
  // A GPU machine without the Debian dataset package: random images instead.
  std::printf("Fashion-MNIST unavailable (%s); comparing on random images\n",
              data.status().ToString().c_str());
  Dataset random{Random(4096 * 784, 9, 0, 1), std::vector<int32_t>(4096), 4096, 784, 10};
  for (int i = 0; i < 4096; ++i) random.y[i] = i % 10;
  return random;
}

std::vector<const float*> Pointers(const Params& p) {
  std::vector<const float*> out;
  for (const std::vector<float>& v : p) out.push_back(v.data());
  return out;
}

std::vector<float*> Pointers(Params* p) {
  std::vector<float*> out;
  for (std::vector<float>& v : *p) out.push_back(v.data());
  return out;
}

// One batch through the CPU model and the GPU context: the loss within `rel` of each other, every
// gradient element within rel * (1 + |cpu|).
void ExpectOneStepAgrees(const std::vector<int>& hidden, int n, float rel) {
  const Dataset data = FashionMnistOrRandom();
  auto model = MakeModel("mlp", data.dim, data.classes, hidden);
  ASSERT_TRUE(model.ok());
  const Params params = (*model)->Initialize(7);
  Batch batch = data.Rows(128, n);
  Params cpu_grads;
  const float cpu_loss = (*model)->LossAndGradient(params, batch, &cpu_grads);
  auto mlp = kernels::CudaMlp::Create(0, {data.dim, hidden, data.classes}, n);
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  Params gpu_grads = ZerosLike(params);
  absl::StatusOr<float> gpu_loss =
      (*mlp)->LossAndGradient(Pointers(params), batch.x, batch.y, n, Pointers(&gpu_grads));
  ASSERT_TRUE(gpu_loss.ok()) << gpu_loss.status();
  EXPECT_NEAR(*gpu_loss, cpu_loss, rel * cpu_loss);
  const std::vector<VariableSpec> names = (*model)->Variables();
  for (size_t v = 0; v < params.size(); ++v)
    ExpectClose(gpu_grads[v], cpu_grads[v], rel, names[v].name.c_str());
}

TEST(CudaKernelsTest, MlpLossAndGradientMatchTheCpuModelOnFashionMnist) {
  ExpectOneStepAgrees({100}, 64, 1e-4f);
}

TEST(CudaKernelsTest, DeeperAndWiderMlpMatchesTheCpuModel) {
  ExpectOneStepAgrees({512, 256}, 256, 1e-4f);
  ExpectOneStepAgrees({64, 64, 32}, 33, 1e-4f);  // a batch that fills no tile of cuBLAS's
}

// The context keeps its device buffers across calls: every step must see that step's variables
// and batch (none of the last one's), including a batch smaller than the one allocated for.
TEST(CudaKernelsTest, StepsWithResidentBuffersTrackTheCpuModel) {
  const Dataset data = FashionMnistOrRandom();
  const std::vector<int> hidden = {256, 128};
  auto model = MakeModel("mlp", data.dim, data.classes, hidden);
  ASSERT_TRUE(model.ok());
  Params cpu = (*model)->Initialize(3), gpu = cpu;
  const int n = 128;
  auto mlp = kernels::CudaMlp::Create(0, {data.dim, hidden, data.classes}, n);
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  Params cpu_grads, gpu_grads = ZerosLike(gpu);
  for (int step = 0; step < 20; ++step) {
    const int rows = step == 19 ? 50 : n;
    Batch batch = data.Rows(step * n, rows);
    const float cpu_loss = (*model)->LossAndGradient(cpu, batch, &cpu_grads);
    absl::StatusOr<float> gpu_loss =
        (*mlp)->LossAndGradient(Pointers(gpu), batch.x, batch.y, rows, Pointers(&gpu_grads));
    ASSERT_TRUE(gpu_loss.ok()) << gpu_loss.status();
    EXPECT_NEAR(*gpu_loss, cpu_loss, 1e-4 * cpu_loss) << "step " << step;
    for (size_t v = 0; v < cpu.size(); ++v) {
      kernels::Axpy(-0.1f, cpu_grads[v], cpu[v]);
      kernels::Axpy(-0.1f, gpu_grads[v], gpu[v]);
    }
  }
  for (size_t v = 0; v < cpu.size(); ++v) ExpectClose(gpu[v], cpu[v], 1e-4f, "variables");
  absl::StatusOr<double> ms = (*mlp)->TimeCompute(3);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_GT(*ms, 0);
}

// A staged batch (uploaded while the worker exchanges variables) gives exactly the gradients of
// the same batch copied in the call; the host's batch buffer may change once StageBatch returned;
// a staged batch serves one call; the context's one batch buffer takes no second batch (staged
// or copied) while one waits.
TEST(CudaKernelsTest, AStagedBatchGivesTheGradientsOfTheSameBatchCopiedInTheCall) {
  const Dataset data = FashionMnistOrRandom();
  const std::vector<int> hidden = {256, 128};
  auto model = MakeModel("mlp", data.dim, data.classes, hidden);
  ASSERT_TRUE(model.ok());
  const Params params = (*model)->Initialize(11);
  const int n = 96;
  auto mlp = kernels::CudaMlp::Create(0, {data.dim, hidden, data.classes}, n);
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  Params staged_grads = ZerosLike(params), copied_grads = ZerosLike(params);
  EXPECT_EQ(
      (*mlp)->LossAndGradientOfStaged(Pointers(params), Pointers(&staged_grads)).status().code(),
      absl::StatusCode::kFailedPrecondition);
  for (int step = 0; step < 3; ++step) {
    const Batch batch = data.Rows(200 + step * n, n);
    std::vector<float> x(batch.x, batch.x + size_t(n) * data.dim);
    std::vector<int32_t> y(batch.y, batch.y + n);
    ASSERT_TRUE((*mlp)->StageBatch(x.data(), y.data(), n).ok());
    std::fill(x.begin(), x.end(), 0.5f);  // the stage holds its own copy
    std::fill(y.begin(), y.end(), 3);
    absl::StatusOr<float> staged =
        (*mlp)->LossAndGradientOfStaged(Pointers(params), Pointers(&staged_grads));
    ASSERT_TRUE(staged.ok()) << staged.status();
    absl::StatusOr<float> copied =
        (*mlp)->LossAndGradient(Pointers(params), batch.x, batch.y, n, Pointers(&copied_grads));
    ASSERT_TRUE(copied.ok()) << copied.status();
    EXPECT_EQ(*staged, *copied) << "step " << step;
    for (size_t v = 0; v < params.size(); ++v) EXPECT_EQ(staged_grads[v], copied_grads[v]);
    EXPECT_EQ(
        (*mlp)->LossAndGradientOfStaged(Pointers(params), Pointers(&staged_grads)).status().code(),
        absl::StatusCode::kFailedPrecondition);
  }
  // One batch waits at most: a second stage, a plain call and TimeCompute (whose batch was
  // replaced) are refused, and the waiting batch is the one computed next.
  const Batch first = data.Rows(0, n), other = data.Rows(900, n);
  ASSERT_TRUE((*mlp)->TimeCompute(1).ok());
  EXPECT_EQ((*mlp)->StageBatch(other.x, other.y, n + 1).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE((*mlp)->StageBatch(first.x, first.y, n).ok());
  EXPECT_EQ((*mlp)->TimeCompute(1).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*mlp)->StageBatch(other.x, other.y, n).code(), absl::StatusCode::kFailedPrecondition);
  bool filled = false;
  EXPECT_EQ((*mlp)->StageBatchFilledBy(n, [&](float*, int32_t*) { filled = true; }).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(filled);
  EXPECT_EQ((*mlp)
                ->LossAndGradient(Pointers(params), other.x, other.y, n, Pointers(&copied_grads))
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
  Params cpu_grads;
  absl::StatusOr<float> waiting =
      (*mlp)->LossAndGradientOfStaged(Pointers(params), Pointers(&staged_grads));
  ASSERT_TRUE(waiting.ok());
  EXPECT_NEAR(*waiting, (*model)->LossAndGradient(params, first, &cpu_grads), 1e-4 * *waiting);
  absl::StatusOr<float> plain =
      (*mlp)->LossAndGradient(Pointers(params), other.x, other.y, n, Pointers(&copied_grads));
  ASSERT_TRUE(plain.ok());
  EXPECT_NEAR(*plain, (*model)->LossAndGradient(params, other, &cpu_grads), 1e-4 * *plain);
}

// The worker's way: the batch gathered straight into the staging buffer by a fill, staged
// before the variables arrive, then computed; every step's results are those of the same batch
// copied in a call.
TEST(CudaKernelsTest, ABatchFilledIntoTheStagingBufferGivesTheCopiedBatchsResults) {
  const Dataset data = FashionMnistOrRandom();
  const std::vector<int> hidden = {512, 512};
  auto model = MakeModel("mlp", data.dim, data.classes, hidden);
  ASSERT_TRUE(model.ok());
  const Params params = (*model)->Initialize(13);
  const int n = 256, steps = 6;
  auto mlp = kernels::CudaMlp::Create(0, {data.dim, hidden, data.classes}, n);
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  for (int k = 0; k < steps; ++k) {
    const int rows = k == steps - 1 ? 77 : n;
    const Batch b = data.Rows(k * n, rows);
    Params alone_grads = ZerosLike(params), grads = ZerosLike(params);
    absl::StatusOr<float> alone =
        (*mlp)->LossAndGradient(Pointers(params), b.x, b.y, rows, Pointers(&alone_grads));
    ASSERT_TRUE(alone.ok()) << alone.status();
    ASSERT_TRUE((*mlp)
                    ->StageBatchFilledBy(rows,
                                         [&](float* x, int32_t* y) {
                                           std::copy(b.x, b.x + size_t(rows) * data.dim, x);
                                           std::copy(b.y, b.y + rows, y);
                                         })
                    .ok());
    absl::StatusOr<float> l = (*mlp)->LossAndGradientOfStaged(Pointers(params), Pointers(&grads));
    ASSERT_TRUE(l.ok()) << l.status();
    EXPECT_EQ(*l, *alone) << "step " << k;
    for (size_t v = 0; v < params.size(); ++v) EXPECT_EQ(grads[v], alone_grads[v]) << k;
  }
}

TEST(CudaKernelsTest, RejectsABatchLargerThanAllocatedAndWrongVariables) {
  auto mlp = kernels::CudaMlp::Create(0, {4, {3}, 2}, 8);
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  Params p = {std::vector<float>(12), std::vector<float>(3), std::vector<float>(6),
              std::vector<float>(2)};
  Params g = ZerosLike(p);
  std::vector<float> x(9 * 4);
  std::vector<int32_t> y(9);
  EXPECT_EQ(
      (*mlp)->LossAndGradient(Pointers(p), x.data(), y.data(), 9, Pointers(&g)).status().code(),
      absl::StatusCode::kInvalidArgument);
  p.pop_back();
  EXPECT_EQ(
      (*mlp)->LossAndGradient(Pointers(p), x.data(), y.data(), 8, Pointers(&g)).status().code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace disttrain::trainer

int main(int argc, char** argv) {
  if (!disttrain::kernels::CudaAvailable()) {
    std::printf("not run: no CUDA device is visible on this machine\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
