// MakeUpdateRule: each scheme's server rule.
#include "trainer/ps/update_rule.h"

#include <cmath>

#include "gtest/gtest.h"
#include "tests/unit/testing/scheme_fixture.h"

namespace disttrain::trainer {
namespace {

using testing::Config;
using testing::Values;

TEST(ServerRuleTest, EachSchemeGetsItsRule) {
  // Same push, different rules: SGD moves by lr * g, Adagrad by lr * g / sqrt(0.1 + g^2),
  // elastic by +g.
  auto after = [](Scheme s) {
    ShardStore store({{"w/0", {1, 1}}}, 0, 1);
    MakeUpdateRule(Config(s))->Apply(0, DensePush({{"w/0", {2, 2}}}), &store);
    return Values(store)[0];
  };
  EXPECT_EQ(after(Scheme::kHogwild), 0.5f);
  EXPECT_EQ(after(Scheme::kDownpourSgd), 0.5f);
  EXPECT_EQ(after(Scheme::kAgn), 0.5f);
  EXPECT_EQ(after(Scheme::kDynSgd), 0.5f);
  EXPECT_FLOAT_EQ(after(Scheme::kDownpour), 1 - 0.25f * 2 / std::sqrt(4.1f));
  EXPECT_EQ(after(Scheme::kAeasgd), 3.0f);
  EXPECT_EQ(after(Scheme::kAeamsgd), 3.0f);
  EXPECT_EQ(after(Scheme::kSync), 1.0f) << "waits for the second of two replicas";
  EXPECT_EQ(after(Scheme::kSagn), 1.0f);
}

}  // namespace
}  // namespace disttrain::trainer
