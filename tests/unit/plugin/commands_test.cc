#include "plugin/commands.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::plugin {
namespace {

using ::testing::HasSubstr;

TEST(CommandsTest, AJobIsNamedAsKubectlNamesItsType) {
  Target t;
  for (const char* ref : {"mnist", "dtr/mnist", "distributedtraining/mnist",
                          "DistributedTrainings.disttrain.io/mnist"}) {
    ASSERT_TRUE(ParseJobRef(ref, &t).ok()) << ref;
    EXPECT_EQ(t.kind, &api::kDistributedTrainingKind) << ref;
    EXPECT_EQ(t.job, "mnist");
  }
  for (const char* ref : {"tfjob/mnist", "tfjobs/mnist", "TFJob.kubeflow.org/mnist"}) {
    ASSERT_TRUE(ParseJobRef(ref, &t).ok()) << ref;
    EXPECT_EQ(t.kind, &api::kTfJobKind) << ref;
    EXPECT_EQ(t.job, "mnist");
  }
  EXPECT_THAT(ParseJobRef("pytorchjob/mnist", &t).message(),
              HasSubstr("unknown job type \"pytorchjob\": want NAME, dtr/NAME or tfjob/NAME"));
  EXPECT_THAT(ParseJobRef("tfjob/", &t).message(), HasSubstr("no job name"));
}

}  // namespace
}  // namespace disttrain::plugin
