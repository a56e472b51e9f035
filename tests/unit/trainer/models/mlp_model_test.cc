#include "trainer/models/mlp_model.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/models/model_factory.h"

namespace disttrain::trainer {
namespace {

std::vector<std::string> Names(const Model& m) {
  std::vector<std::string> names;
  for (const VariableSpec& v : m.Variables()) names.push_back(v.name);
  return names;
}

TEST(MlpModelTest, OneHiddenLayerKeepsItsCheckpointNames) {
  MlpModel one(784, 10, {100});
  EXPECT_THAT(Names(one), ::testing::ElementsAre("hidden/kernel", "hidden/bias", "output/kernel",
                                                 "output/bias"));
  EXPECT_EQ(one.Variables()[0].size, 784u * 100);
  EXPECT_EQ(one.Variables()[2].size, 100u * 10);
  EXPECT_EQ(one.name(), "mlp");
  MlpModel softmax(784, 10, {});
  EXPECT_THAT(Names(softmax), ::testing::ElementsAre("softmax/kernel", "softmax/bias"));
}

TEST(MlpModelTest, DeeperLayersAreNumberedFromTheInputSide) {
  MlpModel deep(784, 10, {64, 32, 16});
  EXPECT_THAT(Names(deep), ::testing::ElementsAre("hidden/kernel", "hidden/bias", "hidden_1/kernel",
                                                  "hidden_1/bias", "hidden_2/kernel",
                                                  "hidden_2/bias", "output/kernel", "output/bias"));
  std::vector<size_t> sizes;
  for (const VariableSpec& v : deep.Variables()) sizes.push_back(v.size);
  EXPECT_THAT(sizes,
              ::testing::ElementsAre(784u * 64, 64u, 64u * 32, 32u, 32u * 16, 16u, 16u * 10, 10u));
}

TEST(MlpModelTest, DeeperModelStartsWithItsFirstLayerAsTheShallowOneDoes) {
  // The seed draws the first kernel first whatever follows it.
  const Params shallow = MlpModel(6, 3, {4}).Initialize(7);
  const Params deep = MlpModel(6, 3, {4, 5}).Initialize(7);
  EXPECT_EQ(deep[0], shallow[0]);
  EXPECT_EQ(deep[1], std::vector<float>(4, 0.0f));
}

TEST(MlpModelTest, TwoHiddenLayerGradientsMatchFiniteDifferences) {
  const MlpModel model(6, 3, {5, 4});
  Params p = model.Initialize(11);
  for (std::vector<float>& v : p) {
    for (size_t i = 0; i < v.size(); ++i) v[i] += 0.05f * static_cast<float>(i % 3);  // biases too
  }
  std::vector<float> x = {0.1f, 0.9f, 0.f,  0.5f, 0.3f, 0.7f, 0.2f, 0.f,  0.8f,
                          0.4f, 0.6f, 0.1f, 0.5f, 0.5f, 0.1f, 0.f,  0.9f, 0.3f};
  std::vector<int32_t> y = {2, 0, 1};
  Batch b{x.data(), y.data(), 3, 6};
  Params g;
  model.LossAndGradient(p, b, &g);
  ASSERT_EQ(g.size(), 6u);
  const float eps = 1e-3f;
  int checked = 0;
  for (size_t v = 0; v < p.size(); ++v) {
    for (size_t i = 0; i < p[v].size(); ++i) {
      Params plus = p, minus = p, unused;
      plus[v][i] += eps;
      minus[v][i] -= eps;
      const float numeric =
          (model.LossAndGradient(plus, b, &unused) - model.LossAndGradient(minus, b, &unused)) /
          (2 * eps);
      EXPECT_NEAR(g[v][i], numeric, 2e-3) << "variable " << v << " element " << i;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6 * 5 + 5 + 5 * 4 + 4 + 4 * 3 + 3);
}

TEST(ModelTest, MlpGradientsMatchFiniteDifferences) {
  auto model = MakeModel("mlp", 6, 3, {4});
  ASSERT_TRUE(model.ok());
  Params p = (*model)->Initialize(7);
  std::vector<float> x = {0.1f, 0.9f, 0.f, 0.5f, 0.3f, 0.7f, 0.2f, 0.f, 0.8f, 0.4f, 0.6f, 0.1f};
  std::vector<int32_t> y = {2, 0};
  Batch b{x.data(), y.data(), 2, 6};
  Params g;
  (*model)->LossAndGradient(p, b, &g);
  const float eps = 1e-3f;
  for (size_t v = 0; v < p.size(); ++v) {
    for (size_t i = 0; i < p[v].size(); i += 3) {
      Params plus = p, minus = p, unused;
      plus[v][i] += eps;
      minus[v][i] -= eps;
      const float numeric = ((*model)->LossAndGradient(plus, b, &unused) -
                             (*model)->LossAndGradient(minus, b, &unused)) /
                            (2 * eps);
      EXPECT_NEAR(g[v][i], numeric, 2e-3) << "variable " << v << " element " << i;
    }
  }
}

}  // namespace
}  // namespace disttrain::trainer
