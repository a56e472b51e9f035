#include "trainer/kernels/axpy.h"

#include <numeric>
#include <vector>

#include "gtest/gtest.h"

namespace disttrain::kernels {
namespace {

TEST(AxpyTest, AddsScaledInputElementwise) {
  std::vector<float> x = {1, 2, 3, 4, 5};
  std::vector<float> y = {10, 20, 30, 40, 50};
  Axpy(-0.5f, x, y);
  EXPECT_EQ(y, (std::vector<float>{9.5f, 19, 28.5f, 38, 47.5f}));
}

TEST(AxpyTest, EmptySpansAreANoOp) {
  std::vector<float> x, y;
  Axpy(2.0f, x, y);
  EXPECT_TRUE(y.empty());
}

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
