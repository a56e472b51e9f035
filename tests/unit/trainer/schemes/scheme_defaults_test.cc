// The per-scheme defaults of --steps and --learning-rate.
#include "trainer/schemes/scheme_defaults.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

using ::testing::HasSubstr;

TEST(SchemeDefaultsTest, HogwildTrainsFourTimesTheCommitsAtTheRateOverTheReplicas) {
  for (int replicas : {1, 2, 4}) {
    SchemeDefaults d = DefaultsFor(Scheme::kHogwild, replicas);
    EXPECT_EQ(d.steps, 4000) << replicas;
    EXPECT_DOUBLE_EQ(d.learning_rate, 0.1 / replicas) << replicas;
  }
}

TEST(SchemeDefaultsTest, DynSgdTrainsLongerAtTheUnscaledRate) {
  SchemeDefaults d = DefaultsFor(Scheme::kDynSgd, 2);
  EXPECT_EQ(d.steps, 6000);
  EXPECT_DOUBLE_EQ(d.learning_rate, 0.1);
}

TEST(SchemeDefaultsTest, EveryOtherSchemeKeepsTheCommonDefaults) {
  for (Scheme s : {Scheme::kDownpour, Scheme::kDownpourSgd, Scheme::kAgn, Scheme::kSync,
                   Scheme::kSagn, Scheme::kAeasgd, Scheme::kAeamsgd}) {
    SchemeDefaults d = DefaultsFor(s, 2);
    EXPECT_EQ(d.steps, kDefaultSteps) << SchemeName(s);
    EXPECT_DOUBLE_EQ(d.learning_rate, kDefaultLearningRate) << SchemeName(s);
  }
}

TEST(SchemeDefaultsTest, HelpNamesEverySchemeWithItsOwnDefaults) {
  EXPECT_EQ(SchemeDefaultsHelp(),
            "hogwild 4000 steps at 0.1 / training replicas, dynsgd 6000 steps at 0.1; the others "
            "1000 at 0.1");
}

}  // namespace
}  // namespace disttrain::trainer
