// Each per-row optimiser against values computed by hand from its update rule.
#include "trainer/embedding/row_optimizer.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace disttrain::trainer::embedding {
namespace {

TableConfig Config(RowOptimizerKind kind) {
  TableConfig c;
  c.name = "t";
  c.dim = 2;
  c.optimizer = kind;
  c.learning_rate = 0.5f;
  c.initial_accumulator = 0.25f;
  return c;
}

TEST(RowOptimizerTest, SgdStepsAgainstTheGradient) {
  TableConfig c = Config(RowOptimizerKind::kSgd);
  float w[2] = {1, -1};
  const float g[2] = {0.2f, -0.4f};
  ApplyRowGradient(c, g, w, nullptr);
  EXPECT_FLOAT_EQ(w[0], 0.9f);   // 1 - 0.5 * 0.2
  EXPECT_FLOAT_EQ(w[1], -0.8f);  // -1 + 0.5 * 0.4
}

TEST(RowOptimizerTest, AdagradScalesByTheRootOfTheSummedSquares) {
  TableConfig c = Config(RowOptimizerKind::kAdagrad);
  float w[2] = {1, 1};
  float n[2];
  InitRowState(c, n);
  EXPECT_FLOAT_EQ(n[0], 0.25f);
  const float g[2] = {0.5f, 0.0f};
  ApplyRowGradient(c, g, w, n);
  // n = 0.25 + 0.25 = 0.5; w = 1 - 0.5 * 0.5 / sqrt(0.5) = 1 - 0.353553
  EXPECT_FLOAT_EQ(n[0], 0.5f);
  EXPECT_NEAR(w[0], 0.6464466f, 1e-6);
  EXPECT_FLOAT_EQ(w[1], 1.0f);
  ApplyRowGradient(c, g, w, n);
  // n = 0.75; w -= 0.25 / sqrt(0.75) = 0.288675
  EXPECT_NEAR(w[0], 0.6464466f - 0.2886751f, 1e-6);
}

TEST(RowOptimizerTest, FtrlFollowsMcMahansAlgorithmOne) {
  TableConfig c = Config(RowOptimizerKind::kFtrl);
  c.l1 = 0.1f;
  c.l2 = 0.2f;
  c.beta = 1.0f;
  c.initial_accumulator = 0.0f;
  float w[2] = {0, 0};
  float state[4];
  InitRowState(c, state);  // z = 0, n = 0
  const float g[2] = {0.6f, 0.08f};
  ApplyRowGradient(c, g, w, state);
  // Coordinate 0: n = 0.36, sigma = (0.6 - 0) / 0.5 = 1.2, z = 0.6 - 1.2 * 0 = 0.6;
  // |z| > l1: w = -(0.6 - 0.1) / ((1 + 0.6) / 0.5 + 0.2) = -0.5 / 3.4.
  EXPECT_FLOAT_EQ(state[0], 0.6f);
  EXPECT_FLOAT_EQ(state[2], 0.36f);
  EXPECT_NEAR(w[0], -0.5f / 3.4f, 1e-6);
  // Coordinate 1: z = 0.08 <= l1: w = 0 (the L1 term keeps rare features at zero).
  EXPECT_FLOAT_EQ(w[1], 0.0f);
  // A second step on coordinate 0 with g = -0.3: n' = 0.45, sigma = (sqrt(.45) - .6) / .5,
  // z = 0.6 - 0.3 - sigma * w.
  const float w0 = w[0];
  const float g2[2] = {-0.3f, 0.0f};
  ApplyRowGradient(c, g2, w, state);
  const float sigma = (std::sqrt(0.45f) - 0.6f) / 0.5f;
  const float z = 0.6f - 0.3f - sigma * w0;
  EXPECT_NEAR(state[0], z, 1e-6);
  EXPECT_NEAR(w[0], -(z - 0.1f) / ((1 + std::sqrt(0.45f)) / 0.5f + 0.2f), 1e-6);
}

}  // namespace
}  // namespace disttrain::trainer::embedding
