// The CUDA entry points in a build without CUDA kernels (nocuda.cc) say so; with them, they
// match the CPU kernels.
#include <numeric>
#include <vector>

#include "gtest/gtest.h"
#include "trainer/kernels/axpy.h"

namespace disttrain::kernels {
namespace {

TEST(CudaAxpyTest, MatchesTheCpuKernelOrSaysWhyItCannotRun) {
  std::vector<float> x(100003);
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<float> cpu(x.size(), 1.0f);
  std::vector<float> gpu = cpu;
  Axpy(0.25f, x, cpu);
  absl::Status s = CudaAxpy(0.25f, x, gpu);
  if (CudaAvailable()) {
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(gpu, cpu);
  } else {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_FALSE(s.message().empty());
  }
}

}  // namespace
}  // namespace disttrain::kernels
