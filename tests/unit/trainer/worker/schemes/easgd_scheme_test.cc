// The worker half of elastic averaging (aeasgd; aeamsgd with Nesterov momentum).
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/scheme_fixture.h"
#include "trainer/worker/schemes/worker_scheme.h"

namespace disttrain::trainer {
namespace {

using testing::Config;
using ::testing::ElementsAre;
using testing::Toy;

TEST(WorkerSchemeTest, ElasticPushesAlphaTimesTheDistanceAndMovesTheWorkerBack) {
  Toy toy;
  Params commit;
  SchemeConfig c = Config(Scheme::kAeasgd, 1);
  c.elastic_alpha = 0.5f;
  auto scheme = MakeEasgdScheme(c);
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
  auto scheme = MakeEasgdScheme(c);
  scheme->Round({{0, 0}}, toy.Fn(), &commit);  // x = (0.25, -0.5)
  scheme->SetLiveReplicas(3);                  // alpha = 0.3
  scheme->Round({{1, 1}}, toy.Fn(), &commit);
  EXPECT_THAT(commit[0], ElementsAre(0.3f * (0.25f - 1), 0.3f * (-0.5f - 1)));
  c.elastic_alpha_follows = false;  // --elastic-alpha 0.9 given: kept
  auto given = MakeEasgdScheme(c);
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
  auto scheme = MakeEasgdScheme(c);
  scheme->Round({{0, 0}}, toy.Fn(), &commit);
  // Step 1: v = 0, g(x) = (-1, 2), v = (0.25, -0.5), x = (0.25, -0.5).
  // Step 2: look = x + 0.5 v = (0.375, -0.75); g = look - (3, 0.5) = (-2.625, -1.25);
  //         v = 0.5 v - 0.25 g = (0.78125, 0.0625); x = (1.03125, -0.4375).
  scheme->Round({{0, 0}}, toy.Fn(), &commit);
  EXPECT_THAT(commit[0], ElementsAre(0.515625f, -0.21875f));
}

}  // namespace
}  // namespace disttrain::trainer
