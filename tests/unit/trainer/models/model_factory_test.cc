#include "trainer/models/model_factory.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

using ::testing::HasSubstr;

TEST(ModelFactoryTest, MlpBuildsTheLayersOfHidden) {
  absl::StatusOr<std::unique_ptr<Model>> m = MakeModel("mlp", 784, 10, {128, 64});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)->Variables().size(), 6u);
  EXPECT_FALSE(MakeModel("mlp", 784, 10, {}).ok());
  EXPECT_FALSE(MakeModel("mlp", 784, 10, {100, 0}).ok());
}

TEST(ModelFactoryTest, ToyAndSoftmaxNeedNoHiddenLayers) {
  absl::StatusOr<std::unique_ptr<Model>> toy = MakeModel("toy", 784, 10, {});
  ASSERT_TRUE(toy.ok());
  absl::StatusOr<std::unique_ptr<Model>> softmax = MakeModel("softmax", 784, 10, {});
  ASSERT_TRUE(softmax.ok());
  EXPECT_EQ((*softmax)->Variables().size(), 2u);  // one kernel, one bias
}

TEST(ModelFactoryTest, AnUnknownModelIsAnError) {
  auto m = MakeModel("resnet", 784, 10, {});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("is not toy, softmax or mlp"));
}

}  // namespace
}  // namespace disttrain::trainer
