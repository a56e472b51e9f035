#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/testing/rounding_noise.h"
#include "trainer/kernels/update_kernels.h"

namespace disttrain::kernels {
namespace {

using testing::Noise;

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

}  // namespace
}  // namespace disttrain::kernels
