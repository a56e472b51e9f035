// The training schemes' update rules against hand-computed updates on tiny tensors, and the
// degenerate cases that must match another scheme exactly.
#include <cmath>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/ps/update_rule.h"
#include "trainer/schemes/scheme.h"
#include "trainer/worker/schemes/worker_scheme.h"

namespace disttrain::trainer {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::Pointwise;

std::vector<float> Values(const ShardStore& store) {
  ShardStore::BlockRef b = store.Read(0);
  return std::vector<float>(b->values.get(), b->values.get() + b->size);
}

// A quadratic toy objective per batch k: loss = |theta - t_k|^2 / 2, gradient theta - t_k, the
// targets cycling through `targets`. Counts the batches drawn.
struct Toy {
  std::vector<std::vector<float>> targets = {{1, -2}, {3, 0.5f}, {-1, 4}};
  int batches = 0;
  WorkerScheme::GradientFn Fn() {
    return [this](const Params& at, Params* g) {
      const std::vector<float>& t = targets[batches++ % targets.size()];
      g->assign(1, std::vector<float>(at[0].size()));
      float loss = 0;
      for (size_t i = 0; i < at[0].size(); ++i) {
        (*g)[0][i] = at[0][i] - t[i];
        loss += 0.5f * (*g)[0][i] * (*g)[0][i];
      }
      return loss;
    };
  }
};

SchemeConfig Config(Scheme scheme, int local_steps = 1) {
  SchemeConfig c;
  c.scheme = scheme;
  c.learning_rate = 0.25f;
  c.local_steps = local_steps;
  c.replicas_to_aggregate = 2;
  return c;
}

// ---- server rules ----

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

TEST(ServerRuleTest, ElasticAddsTheDifference) {
  ShardStore store({{"w/0", {1, 2}}}, 0, 1);
  auto rule = MakeElastic();
  rule->Apply(0, DensePush({{"w/0", {0.5f, -1}}}), &store);
  EXPECT_THAT(Values(store), ElementsAre(1.5f, 1.0f));
}

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

// ---- worker schemes ----

TEST(WorkerSchemeTest, GradientSchemePushesTheGradientTimesItsWeight) {
  Toy toy;
  Params commit;
  EXPECT_FLOAT_EQ(MakeGradientScheme(1.0f)->Round({{2, 2}}, toy.Fn(), &commit), 0.5f + 8);
  EXPECT_THAT(commit[0], ElementsAre(1.0f, 4.0f));
  MakeGradientScheme(0.5f)->Round({{2, 2}}, toy.Fn(), &commit);  // target {3, 0.5}
  EXPECT_THAT(commit[0], ElementsAre(-0.5f, 0.75f));
}

TEST(WorkerSchemeTest, DownpourSgdSumsTheGradientsOfLambdaLocalSgdSteps) {
  Toy toy;
  Params commit;
  auto scheme = MakeDownpourScheme(Config(Scheme::kDownpourSgd, 3), /*adagrad=*/false);
  scheme->Round({{0, 0}}, toy.Fn(), &commit);
  // theta0 = 0: g1 = (-1, 2); theta1 = 0 - 0.25 g1 = (0.25, -0.5); g2 = theta1 - (3, 0.5) =
  // (-2.75, -1); theta2 = (0.9375, -0.25); g3 = theta2 - (-1, 4) = (1.9375, -4.25).
  EXPECT_THAT(commit[0], ElementsAre(-1 - 2.75f + 1.9375f, 2 - 1 - 4.25f));
  EXPECT_EQ(toy.batches, 3);
  EXPECT_EQ(scheme->local_steps(), 3);
}

TEST(WorkerSchemeTest, DownpourTakesLocalAdagradStepsAndKeepsItsAccumulators) {
  Toy toy;
  Params commit;
  auto scheme = MakeDownpourScheme(Config(Scheme::kDownpour, 2), /*adagrad=*/true);
  scheme->Round({{0, 0}}, toy.Fn(), &commit);
  // g1 = (-1, 2); acc = (1.1, 4.1); theta1 = -0.25 g1 / sqrt(acc); g2 = theta1 - (3, 0.5).
  const float t0 = 0.25f / std::sqrt(1.1f), t1 = -0.5f / std::sqrt(4.1f);
  EXPECT_THAT(commit[0], ElementsAre(FloatEq(-1 + t0 - 3), FloatEq(2 + t1 - 0.5f)));
  // The next round's first local step divides by the accumulators of both earlier gradients.
  toy.batches = 0;
  scheme->Round({{0, 0}}, toy.Fn(), &commit);
  const float acc0 = 1.1f + (t0 - 3) * (t0 - 3) + 1;
  EXPECT_THAT(commit[0][0], FloatEq(-1 + 0.25f / std::sqrt(acc0) - 3));
}

TEST(WorkerSchemeTest, AgnCommitsTheAccumulatedGradientDividedByLambda) {
  Toy toy;
  Params commit;
  MakeAgnScheme(Config(Scheme::kAgn, 2))->Round({{0, 0}}, toy.Fn(), &commit);
  // g1 = (-1, 2); theta1 = (0.25, -0.5); g2 = (-2.75, -1); commit = (g1 + g2) / 2.
  EXPECT_THAT(commit[0], ElementsAre(-1.875f, 0.5f));
}

TEST(WorkerSchemeTest, ElasticPushesAlphaTimesTheDistanceAndMovesTheWorkerBack) {
  Toy toy;
  Params commit;
  SchemeConfig c = Config(Scheme::kAeasgd, 1);
  c.elastic_alpha = 0.5f;
  auto scheme = MakeElasticScheme(c);
  scheme->Round({{0, 0}}, toy.Fn(), &commit);
  EXPECT_THAT(commit[0], ElementsAre(0.0f, 0.0f)) << "x starts at the center";
  // x = 0 - 0.25 * (0 - (1, -2)) = (0.25, -0.5). Pulled center (1, 1): E = 0.5 (x - center).
  scheme->Round({{1, 1}}, toy.Fn(), &commit);
  EXPECT_THAT(commit[0], ElementsAre(-0.375f, -0.75f));
  // x - E = (0.625, 0.25), then a local step towards (3, 0.5): x = (1.21875, 0.3125).
  scheme->Round({{1.21875f, 0.3125f}}, toy.Fn(), &commit);
  EXPECT_THAT(commit[0], ElementsAre(0.0f, 0.0f)) << "x equals the center: no elastic force";
}

TEST(WorkerSchemeTest, ElasticAlphaFollowsTheLiveReplicasUnlessGiven) {
  // Workers scaled in (issue #37): p alpha stays under 1 for the replicas pulling on the center.
  Toy toy;
  Params commit;
  SchemeConfig c = Config(Scheme::kAeasgd, 1);
  c.learning_rate = 0.25f;
  c.elastic_alpha = DefaultElasticAlpha(0.25, 1);  // min(5 * 0.25, 0.9 / 1) = 0.9
  c.elastic_alpha_follows = true;
  auto scheme = MakeElasticScheme(c);
  scheme->Round({{0, 0}}, toy.Fn(), &commit);  // x = (0.25, -0.5)
  scheme->SetLiveReplicas(3);                  // alpha = 0.3
  scheme->Round({{1, 1}}, toy.Fn(), &commit);
  EXPECT_THAT(commit[0], ElementsAre(0.3f * (0.25f - 1), 0.3f * (-0.5f - 1)));
  c.elastic_alpha_follows = false;  // --elastic-alpha 0.9 given: kept
  auto given = MakeElasticScheme(c);
  Toy fresh;
  given->Round({{0, 0}}, fresh.Fn(), &commit);
  given->SetLiveReplicas(3);
  given->Round({{1, 1}}, fresh.Fn(), &commit);
  EXPECT_THAT(commit[0], ElementsAre(0.9f * (0.25f - 1), 0.9f * (-0.5f - 1)));
}

TEST(WorkerSchemeTest, EamsgdTakesNesterovStepsAtTheLookAheadPoint) {
  Toy toy;
  Params commit;
  SchemeConfig c = Config(Scheme::kAeamsgd, 2);
  c.elastic_alpha = 0.5f;
  c.momentum = 0.5f;
  auto scheme = MakeElasticScheme(c);
  scheme->Round({{0, 0}}, toy.Fn(), &commit);
  // Step 1: v = 0, g(x) = (-1, 2), v = (0.25, -0.5), x = (0.25, -0.5).
  // Step 2: look = x + 0.5 v = (0.375, -0.75); g = look - (3, 0.5) = (-2.625, -1.25);
  //         v = 0.5 v - 0.25 g = (0.78125, 0.0625); x = (1.03125, -0.4375).
  scheme->Round({{0, 0}}, toy.Fn(), &commit);
  EXPECT_THAT(commit[0], ElementsAre(0.515625f, -0.21875f));
}

// ---- degenerate cases, through both halves ----

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
