// ROC AUC: the probability that a positive scores above a negative, ties counted half.
#include "trainer/metrics/auc.h"

#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

TEST(AucTest, OrdersTiesAndTheDegenerateCases) {
  EXPECT_DOUBLE_EQ(*Auc({0.1f, 0.9f}, {0, 1}), 1.0);
  EXPECT_DOUBLE_EQ(*Auc({0.9f, 0.1f}, {0, 1}), 0.0);
  EXPECT_DOUBLE_EQ(*Auc({0.5f, 0.5f}, {0, 1}), 0.5) << "a tie counts half";
  EXPECT_FALSE(Auc({0.2f, 0.3f}, {1, 1}).has_value()) << "no negative: no AUC";
  EXPECT_FALSE(Auc({}, {}).has_value());
}

TEST(AucTest, CountsEveryPositiveNegativePair) {
  // Positives 0.8, 0.4, 0.4; negatives 0.4, 0.3, 0.9. Pairs (P above N, ties half):
  // 0.8 beats 0.4 and 0.3 (2), 0.4 ties 0.4 and beats 0.3 (1.5) twice: 5 of 9.
  EXPECT_NEAR(*Auc({0.8f, 0.4f, 0.4f, 0.4f, 0.3f, 0.9f}, {1, 1, 1, 0, 0, 0}), 5.0 / 9.0, 1e-12);
}

}  // namespace
}  // namespace disttrain::trainer
