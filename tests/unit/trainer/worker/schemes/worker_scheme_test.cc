// MakeWorkerScheme picks each scheme's worker half: trained against its server half
// (MakeUpdateRule), the degenerate cases must match another scheme exactly.
#include "trainer/worker/schemes/worker_scheme.h"

#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/scheme_fixture.h"
#include "trainer/ps/update_rule.h"

namespace disttrain::trainer {
namespace {

using testing::Config;
using ::testing::FloatEq;
using ::testing::Pointwise;
using testing::Toy;
using testing::Values;

// Two workers taking turns: each round pulls the store, runs its scheme and pushes the commit at
// the step it pulled. Returns the final values.
std::vector<float> Train(Scheme scheme, int local_steps, const std::vector<float>& rates = {},
                         float alpha = 0.5f) {
  SchemeConfig c = Config(scheme, local_steps);
  c.worker_learning_rates = rates;
  c.elastic_alpha = alpha;
  ShardStore store({{"w/0", {0.5f, -0.5f}}}, 0, 1);
  std::unique_ptr<UpdateRule> rule = MakeUpdateRule(c);
  std::vector<std::unique_ptr<WorkerScheme>> workers;
  std::vector<Toy> toys(2);
  for (int i = 0; i < 2; ++i) workers.push_back(MakeWorkerScheme(c, i));
  Params commit;
  for (int round = 0; round < 12; ++round) {
    const int w = round % 2;
    const int64_t step = store.global_step();
    workers[w]->Round({Values(store)}, toys[w].Fn(), &commit);
    rule->Apply(step, DensePush({{"w/0", commit[0]}}), &store);
  }
  return Values(store);
}

TEST(DegenerateSchemeTest, DownpourSgdWithLambdaOneIsAsyncSgd) {
  EXPECT_EQ(Train(Scheme::kDownpourSgd, 1), Train(Scheme::kHogwild, 1));
  EXPECT_NE(Train(Scheme::kDownpourSgd, 2), Train(Scheme::kHogwild, 1)) << "the check can fail";
}

TEST(DegenerateSchemeTest, AgnWithLambdaOneIsAsyncSgd) {
  EXPECT_EQ(Train(Scheme::kAgn, 1), Train(Scheme::kHogwild, 1));
  EXPECT_NE(Train(Scheme::kAgn, 3), Train(Scheme::kHogwild, 1));
}

TEST(DegenerateSchemeTest, SagnWithLambdaOneIsSync) {
  EXPECT_EQ(Train(Scheme::kSagn, 1), Train(Scheme::kSync, 1));
}

TEST(DegenerateSchemeTest, SyncWithEqualWorkerRatesIsSync) {
  EXPECT_EQ(Train(Scheme::kSync, 1, {0.25f, 0.25f}), Train(Scheme::kSync, 1));
  EXPECT_NE(Train(Scheme::kSync, 1, {0.25f, 0.125f}), Train(Scheme::kSync, 1));
}

TEST(DegenerateSchemeTest, SyncWithPerWorkerRatesAppliesEachWorkersRate) {
  // One aggregated step: theta - (r0 g0 + r1 g1) / 2 with g_i = theta - t_i.
  SchemeConfig c = Config(Scheme::kSync);
  c.worker_learning_rates = {0.5f, 0.125f};
  ShardStore store({{"w/0", {0, 0}}}, 0, 1);
  auto rule = MakeUpdateRule(c);
  Toy toy0, toy1;
  toy1.batches = 1;
  Params commit;
  MakeWorkerScheme(c, 0)->Round({{0, 0}}, toy0.Fn(), &commit);  // g0 = (-1, 2)
  rule->Apply(0, DensePush({{"w/0", commit[0]}}), &store);
  MakeWorkerScheme(c, 1)->Round({{0, 0}}, toy1.Fn(), &commit);  // g1 = (-3, -0.5)
  rule->Apply(0, DensePush({{"w/0", commit[0]}}), &store);
  EXPECT_THAT(Values(store),
              Pointwise(FloatEq(), std::vector<float>{(0.5f + 0.375f) / 2, (-1 + 0.0625f) / 2}));
}

TEST(DegenerateSchemeTest, ElasticAveragingWithAlphaZeroNeverMovesTheServers) {
  EXPECT_EQ(Train(Scheme::kAeasgd, 2, {}, 0.0f), (std::vector<float>{0.5f, -0.5f}));
  EXPECT_EQ(Train(Scheme::kAeamsgd, 2, {}, 0.0f), (std::vector<float>{0.5f, -0.5f}));
  EXPECT_NE(Train(Scheme::kAeasgd, 2, {}, 0.5f), (std::vector<float>{0.5f, -0.5f}));
}

TEST(DegenerateSchemeTest, DynSgdWithoutStalenessIsAsyncSgd) {
  // Taking turns, every push is computed at the server's current step: staleness 0.
  EXPECT_EQ(Train(Scheme::kDynSgd, 1), Train(Scheme::kHogwild, 1));
}

}  // namespace
}  // namespace disttrain::trainer
