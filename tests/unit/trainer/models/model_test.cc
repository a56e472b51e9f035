#include "trainer/models/model.h"

#include <vector>

#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

TEST(SameVariablesTest, NeedsTheSameNamesAndSizesInTheSameOrder) {
  const std::vector<VariableSpec> model = {{"hidden/kernel", 12}, {"hidden/bias", 3}};
  EXPECT_TRUE(SameVariables(model, {{"hidden/kernel", 12}, {"hidden/bias", 3}}));
  EXPECT_FALSE(SameVariables(model, {{"hidden/kernel", 12}, {"hidden/bias", 4}})) << "size";
  EXPECT_FALSE(SameVariables(model, {{"hidden/kernel", 12}, {"output/bias", 3}})) << "name";
  EXPECT_FALSE(SameVariables(model, {{"hidden/bias", 3}, {"hidden/kernel", 12}})) << "order";
  EXPECT_FALSE(SameVariables(model, {{"hidden/kernel", 12}})) << "count";
}

TEST(ZerosLikeTest, HasTheShapeOfItsArgumentAndOnlyZeros) {
  const Params zeros = ZerosLike({{1, 2, 3}, {}, {4}});
  EXPECT_EQ(zeros, (Params{{0, 0, 0}, {}, {0}}));
}

}  // namespace
}  // namespace disttrain::trainer
