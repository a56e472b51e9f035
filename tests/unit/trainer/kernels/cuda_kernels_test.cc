// The CUDA kernels against the CPU ones they replace (label gpu). Built only when the build has
// a CUDA compiler. On a machine without a CUDA device the binary prints why and exits 77, which
// ctest reports as "Not Run" (SKIP_RETURN_CODE), never as passed.
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

TEST(CudaKernelsTest, MlpLossAndGradientMatchTheCpuModelOnFashionMnist) {
  const char* dir = std::getenv("DISTTRAIN_FASHION_MNIST_DIR");  // default: the Debian package's
  absl::StatusOr<Dataset> data = LoadFashionMnist(dir ? dir : "", "train");
  if (!data.ok()) {  // a GPU machine without the Debian dataset package: random images instead
    std::printf("Fashion-MNIST unavailable (%s); comparing on random images\n",
                data.status().ToString().c_str());
    data = Dataset{Random(256 * 784, 9, 0, 1), std::vector<int32_t>(256), 256, 784, 10};
    for (int i = 0; i < 256; ++i) data->y[i] = i % 10;
  }
  auto model = MakeModel("mlp", data->dim, data->classes, {100});
  ASSERT_TRUE(model.ok());
  const Params params = (*model)->Initialize(7);
  const int n = 64;
  Batch batch = data->Rows(128, n);
  Params cpu_grads;
  const float cpu_loss = (*model)->LossAndGradient(params, batch, &cpu_grads);
  Params gpu_grads = ZerosLike(params);
  const float* p[4] = {params[0].data(), params[1].data(), params[2].data(), params[3].data()};
  float* g[4] = {gpu_grads[0].data(), gpu_grads[1].data(), gpu_grads[2].data(),
                 gpu_grads[3].data()};
  absl::StatusOr<float> gpu_loss =
      kernels::CudaMlpLossAndGradient({data->dim, 100, data->classes}, p, batch.x, batch.y, n, g);
  ASSERT_TRUE(gpu_loss.ok()) << gpu_loss.status();
  EXPECT_NEAR(*gpu_loss, cpu_loss, 1e-4 * cpu_loss);
  const char* names[4] = {"hidden/kernel", "hidden/bias", "output/kernel", "output/bias"};
  for (int v = 0; v < 4; ++v) ExpectClose(gpu_grads[v], cpu_grads[v], 1e-4f, names[v]);
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
