// The Distributed TensorFlow guide's toy problem over a, b in R^2: loss sum((a + b - 100)^2) / 2.
#include "trainer/models/toy_model.h"

#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

TEST(ToyModelTest, StartsAtZeroAndNeedsNoData) {
  ToyModel toy;
  EXPECT_EQ(toy.Initialize(/*seed=*/7), (Params{{0, 0}, {0, 0}}));
  EXPECT_FALSE(toy.needs_data());
  ASSERT_EQ(toy.Variables().size(), 2u);
  EXPECT_EQ(toy.Variables()[1].name, "b");
}

TEST(ToyModelTest, TheGradientOfBothVariablesIsTheResidual) {
  ToyModel toy;
  Params grads;
  // Residuals a + b - 100: (1 + 2 - 100, 60 + 50 - 100) = (-97, 10).
  const float loss = toy.LossAndGradient({{1, 60}, {2, 50}}, Batch{}, &grads);
  EXPECT_FLOAT_EQ(loss, (97.0f * 97 + 10 * 10) / 2);
  EXPECT_EQ(grads, (Params{{-97, 10}, {-97, 10}}));
  EXPECT_DOUBLE_EQ(toy.Evaluate({{1, 60}, {2, 50}}, Batch{}).loss, loss);
}

}  // namespace
}  // namespace disttrain::trainer
