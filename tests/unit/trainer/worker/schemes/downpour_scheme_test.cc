// DOWNPOUR's worker: λ local steps (Adagrad, or SGD for downpour-sgd), the summed gradients pushed.
#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/scheme_fixture.h"
#include "trainer/worker/schemes/worker_scheme.h"

namespace disttrain::trainer {
namespace {

using testing::Config;
using ::testing::ElementsAre;
using ::testing::FloatEq;
using testing::Toy;

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

}  // namespace
}  // namespace disttrain::trainer
