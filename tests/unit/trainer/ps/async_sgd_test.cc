// Asynchronous SGD, the server rule of hogwild, downpour-sgd and agn.
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/testing/scheme_fixture.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

using testing::Grad;
using testing::Values;

TEST(UpdateRuleTest, AsyncAppliesEveryPushAtOnce) {
  ShardStore store({{"w/0", {1, 1}}}, 0, 1);
  auto rule = MakeAsyncSgd(0.5f);
  rule->Apply(0, DensePush(Grad(2)), &store);
  rule->Apply(0, DensePush(Grad(2)), &store);  // a stale step is still applied
  EXPECT_EQ(Values(store), (std::vector<float>{-1, -1}));
  EXPECT_EQ(store.global_step(), 2);
}

}  // namespace
}  // namespace disttrain::trainer
