// One gradient per round (hogwild, sync, dynsgd), weighted.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/testing/scheme_fixture.h"
#include "trainer/worker/schemes/worker_scheme.h"

namespace disttrain::trainer {
namespace {

using ::testing::ElementsAre;
using testing::Toy;

TEST(WorkerSchemeTest, GradientSchemePushesTheGradientTimesItsWeight) {
  Toy toy;
  Params commit;
  EXPECT_FLOAT_EQ(MakeGradientScheme(1.0f)->Round({{2, 2}}, toy.Fn(), &commit), 0.5f + 8);
  EXPECT_THAT(commit[0], ElementsAre(1.0f, 4.0f));
  MakeGradientScheme(0.5f)->Round({{2, 2}}, toy.Fn(), &commit);  // target {3, 0.5}
  EXPECT_THAT(commit[0], ElementsAre(-0.5f, 0.75f));
}

}  // namespace
}  // namespace disttrain::trainer
