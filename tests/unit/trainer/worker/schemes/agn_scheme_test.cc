// AGN's worker (agn, sagn): λ local SGD steps, their summed gradients / λ pushed.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/scheme_fixture.h"
#include "trainer/worker/schemes/worker_scheme.h"

namespace disttrain::trainer {
namespace {

using testing::Config;
using ::testing::ElementsAre;
using testing::Toy;

TEST(WorkerSchemeTest, AgnCommitsTheAccumulatedGradientDividedByLambda) {
  Toy toy;
  Params commit;
  MakeAgnScheme(Config(Scheme::kAgn, 2))->Round({{0, 0}}, toy.Fn(), &commit);
  // g1 = (-1, 2); theta1 = (0.25, -0.5); g2 = (-2.75, -1); commit = (g1 + g2) / 2.
  EXPECT_THAT(commit[0], ElementsAre(-1.875f, 0.5f));
}

}  // namespace
}  // namespace disttrain::trainer
