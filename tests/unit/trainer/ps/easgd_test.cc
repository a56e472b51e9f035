// The server half of elastic averaging (aeasgd, aeamsgd).
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/scheme_fixture.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

using ::testing::ElementsAre;
using testing::Values;

TEST(ServerRuleTest, ElasticAddsTheDifference) {
  ShardStore store({{"w/0", {1, 2}}}, 0, 1);
  auto rule = MakeEasgd();
  rule->Apply(0, DensePush({{"w/0", {0.5f, -1}}}), &store);
  EXPECT_THAT(Values(store), ElementsAre(1.5f, 1.0f));
}

}  // namespace
}  // namespace disttrain::trainer
