#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/testing/rounding_noise.h"
#include "trainer/kernels/axpy.h"

namespace disttrain::kernels {
namespace {

using testing::Noise;

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

}  // namespace
}  // namespace disttrain::kernels
