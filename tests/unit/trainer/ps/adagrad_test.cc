// Adagrad on the servers, DOWNPOUR's global optimiser.
#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/scheme_fixture.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatEq;
using testing::Values;

TEST(ServerRuleTest, AdagradScalesEachElementByItsAccumulatedSquares) {
  ShardStore store({{"w/0", {1, 1}}}, 0, 1);
  auto rule = MakeAdagrad(0.5f, 0.1f);
  rule->Apply(0, DensePush({{"w/0", {2, -1}}}), &store);
  // acc = 0.1 + g^2 = {4.1, 1.1}; theta = 1 - 0.5 * g / sqrt(acc)
  const float a0 = 1 - 0.5f * 2 / std::sqrt(4.1f), a1 = 1 + 0.5f / std::sqrt(1.1f);
  EXPECT_THAT(Values(store), ElementsAre(FloatEq(a0), FloatEq(a1)));
  rule->Apply(0, DensePush({{"w/0", {2, -1}}}), &store);  // acc = {8.1, 2.1}
  EXPECT_THAT(Values(store), ElementsAre(FloatEq(a0 - 0.5f * 2 / std::sqrt(8.1f)),
                                         FloatEq(a1 + 0.5f / std::sqrt(2.1f))));
  EXPECT_EQ(store.global_step(), 2);
}

TEST(ServerRuleTest, AdagradStartsAfreshForReinitialisedVariables) {
  auto rule = MakeAdagrad(0.5f, 0.1f);
  ShardStore old_store({{"w/0", {1, 1}}}, 0, 1);
  rule->Apply(0, DensePush({{"w/0", {2, 2}}}), &old_store);
  ShardStore restored({{"w/0", {1, 1}}}, 0, 1);
  rule->Apply(0, DensePush({{"w/0", {2, 2}}}), &restored);
  EXPECT_EQ(Values(restored), Values(old_store)) << "the accumulators start again at 0.1";
}

}  // namespace
}  // namespace disttrain::trainer
