#include "trainer/kernels/axpy.h"

#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "trainer/kernels/update_kernels.h"

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

// Values whose products need rounding, so a fused multiply-add would give other bits.
std::vector<float> Noise(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(gen);
  return v;
}

// The plain loop each kernel must match bit for bit, whatever vector width the machine picks
// (cpu_clones.h): a multiply rounded, then an add rounded (volatile keeps them apart).
float MulAdd(float alpha, float x, float y) {
  volatile float product = alpha * x;
  return y + product;
}

TEST(AxpyTest, EveryVariantMatchesThePlainLoopBitForBit) {
  const float alpha = -0.3f;
  for (size_t n : {size_t{1}, size_t{7}, size_t{16}, size_t{33}, size_t{100003}}) {
    const std::vector<float> x = Noise(n, 1), y = Noise(n, 2);
    std::vector<float> expected(n);
    for (size_t i = 0; i < n; ++i) expected[i] = MulAdd(alpha, x[i], y[i]);

    std::vector<float> in_place = y;
    Axpy(alpha, x, in_place);
    EXPECT_EQ(in_place, expected) << n << " values";
    std::vector<float> out(n);
    AxpyTo(alpha, x, y, out);
    EXPECT_EQ(out, expected) << n << " values";
    // x as raw bytes at an odd address, as they lie in a network buffer.
    std::vector<std::byte> raw(n * sizeof(float) + 1);
    std::memcpy(raw.data() + 1, x.data(), n * sizeof(float));
    std::vector<float> from_bytes = y;
    Axpy(alpha, raw.data() + 1, from_bytes);
    EXPECT_EQ(from_bytes, expected) << n << " values";
    std::vector<float> out_from_bytes(n);
    AxpyTo(alpha, raw.data() + 1, y, out_from_bytes);
    EXPECT_EQ(out_from_bytes, expected) << n << " values";
  }
}

TEST(AdagradTest, MatchesThePlainLoopBitForBit) {
  const size_t n = 100003;
  const float lr = 0.05f;
  const std::vector<float> g = Noise(n, 3), in = Noise(n, 4);
  std::vector<float> acc(n, 0.1f), out(n), expected_acc = acc, expected(n);
  for (size_t i = 0; i < n; ++i) {
    volatile float square = g[i] * g[i];
    expected_acc[i] = expected_acc[i] + square;
    volatile float step = lr * g[i] / std::sqrt(expected_acc[i]);
    expected[i] = in[i] - step;
  }
  AdagradTo(lr, g, acc, in, out);
  EXPECT_EQ(acc, expected_acc);
  EXPECT_EQ(out, expected);
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
