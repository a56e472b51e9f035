#include "trainer/wire/shard_plan.h"

#include <numeric>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

TEST(ShardPlanTest, BalancesBytesAndSplitsLargeVariables) {
  std::vector<VariableSpec> vars = {{"big", 1000}, {"mid", 300}, {"small", 10}, {"tiny", 2}};
  std::vector<Shard> plan = PlanShards(vars, 3);
  std::vector<size_t> load = ElementsPerPs(plan, 3);
  EXPECT_EQ(std::accumulate(load.begin(), load.end(), size_t{0}), 1312u);
  for (size_t l : load) EXPECT_LE(l, 1312u / 3 + 300) << "no server holds far more than its share";
  // Every element of every variable is in exactly one shard.
  for (int v = 0; v < 4; ++v) {
    std::vector<int> covered(vars[v].size, 0);
    for (const Shard& s : plan) {
      if (s.variable != v) continue;
      for (size_t i = 0; i < s.size; ++i) ++covered[s.offset + i];
    }
    EXPECT_THAT(covered, ::testing::Each(1)) << vars[v].name;
  }
  int big_parts = 0;
  for (const Shard& s : plan) big_parts += s.variable == 0;
  EXPECT_GE(big_parts, 3) << "a variable larger than a server's share is split";
  EXPECT_EQ(PlanShards(vars, 3)[1].ps, plan[1].ps) << "deterministic";
}

}  // namespace
}  // namespace disttrain::trainer
