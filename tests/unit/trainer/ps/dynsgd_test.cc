// Dynamic SGD: asynchronous SGD scaled by the staleness of each push.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/scheme_fixture.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

using ::testing::ElementsAre;
using testing::Values;

TEST(ServerRuleTest, DynSgdDividesByStalenessPlusOne) {
  ShardStore store({{"w/0", {1, 1}}}, 0, 1);
  auto rule = MakeDynSgd(0.5f);
  rule->Apply(0, DensePush({{"w/0", {2, 2}}}), &store);  // fresh: 1 - 0.5 * 2 = 0
  EXPECT_THAT(Values(store), ElementsAre(0.0f, 0.0f));
  rule->Apply(0, DensePush({{"w/0", {2, 4}}}), &store);  // computed at step 0, server at 1: / 2
  EXPECT_THAT(Values(store), ElementsAre(-0.5f, -1.0f));
  rule->Apply(0, DensePush({{"w/0", {3, 3}}}), &store);  // staleness 2: / 3
  EXPECT_THAT(Values(store), ElementsAre(-1.0f, -1.5f));
  EXPECT_EQ(store.global_step(), 3);
}

}  // namespace
}  // namespace disttrain::trainer
