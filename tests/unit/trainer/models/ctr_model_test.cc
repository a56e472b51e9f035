// The click-through models: each one's gradients (dense variables and embedding rows) against
// finite differences of its loss, the factorization machine's interaction term against the
// pairwise sum it stands for, and the models a layout cannot have refused.
#include "trainer/models/ctr_model.h"

#include <cmath>
#include <random>

#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

// Two tables of width 3, three fields (one multi-valued), two dense inputs, four examples.
struct Fixture {
  FeatureLayout layout;
  SparseBatch batch;
  BatchRows rows;
  Fixture() {
    layout.tables = {"a", "b"};
    layout.dims = {3, 3};
    layout.fields = {
        {"f0", 0, Pooling::kMean}, {"f1", 1, Pooling::kSum}, {"f2", 0, Pooling::kMean}};
    layout.dense_width = 2;
    std::vector<Example> ex = {
        {1, {0.5f, -1.0f}, {1, 5, 2, 3}, {1, 2, 4}},
        {0, {1.0f, 0.0f}, {2, 6, 7}, {1, 3, 3}},  // f2 empty
        {1, {-0.5f, 2.0f}, {1, 5, 1}, {1, 2, 3}},
        {0, {0.0f, 0.5f}, {3, 5, 6, 2}, {1, 3, 4}},
    };
    BatchBuilder(layout).Build(ex, &batch);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    rows.emb.resize(2);
    rows.wide.resize(2);
    for (int t = 0; t < 2; ++t) {
      rows.emb[t].resize(batch.table_ids[t].size() * 3);
      rows.wide[t].resize(batch.table_ids[t].size());
      for (float& x : rows.emb[t]) x = u(rng);
      for (float& x : rows.wide[t]) x = u(rng);
    }
  }
};

double Loss(CtrModel& m, const Params& p, const SparseBatch& b, const BatchRows& r) {
  std::vector<float> probs;
  m.Predict(p, b, r, &probs);
  return LogLoss(probs, b.labels);
}

class CtrModelGradientTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CtrModelGradientTest, GradientsMatchFiniteDifferences) {
  Fixture f;
  absl::StatusOr<std::unique_ptr<CtrModel>> m = CtrModel::Make(GetParam(), f.layout, {4});
  ASSERT_TRUE(m.ok()) << m.status();
  Params p = (*m)->Initialize(5);
  std::mt19937_64 rng(2);
  for (auto& v : p)
    for (float& x : v) x += std::uniform_real_distribution<float>(-0.2f, 0.2f)(rng);
  Params dg;
  BatchRows rg;
  const float loss = (*m)->LossAndGradient(p, f.batch, f.rows, &dg, &rg);
  EXPECT_NEAR(loss, Loss(**m, p, f.batch, f.rows), 1e-5);
  const double h = 1e-3;
  for (size_t v = 0; v < p.size(); ++v) {
    for (size_t k = 0; k < p[v].size(); ++k) {
      Params up = p, down = p;
      up[v][k] += h;
      down[v][k] -= h;
      const double fd =
          (Loss(**m, up, f.batch, f.rows) - Loss(**m, down, f.batch, f.rows)) / (2 * h);
      EXPECT_NEAR(dg[v][k], fd, 1e-3) << (*m)->Variables()[v].name << "[" << k << "]";
    }
  }
  auto check_rows = [&](std::vector<std::vector<float>> BatchRows::*which, const char* what) {
    for (size_t t = 0; t < (f.rows.*which).size(); ++t) {
      for (size_t k = 0; k < (f.rows.*which)[t].size(); ++k) {
        BatchRows up = f.rows, down = f.rows;
        (up.*which)[t][k] += h;
        (down.*which)[t][k] -= h;
        const double fd = (Loss(**m, p, f.batch, up) - Loss(**m, p, f.batch, down)) / (2 * h);
        EXPECT_NEAR((rg.*which)[t][k], fd, 1e-3) << what << " table " << t << " [" << k << "]";
      }
    }
  };
  check_rows(&BatchRows::wide, "wide");
  if ((*m)->uses_embeddings()) check_rows(&BatchRows::emb, "embedding");
}

INSTANTIATE_TEST_SUITE_P(EveryModel, CtrModelGradientTest,
                         ::testing::Values("lr", "fm", "deepfm", "widedeep"));

TEST(CtrModelTest, TheInteractionTermIsThePairwiseSum) {
  // One example, three single-id fields, no dense input: fm's logit minus the wide part must be
  // sum_{f<g} <e_f, e_g>.
  FeatureLayout layout;
  layout.tables = {"t"};
  layout.dims = {2};
  layout.fields = {{"a", 0, Pooling::kMean}, {"b", 0, Pooling::kMean}, {"c", 0, Pooling::kMean}};
  SparseBatch b;
  BatchBuilder(layout).Build({{1, {}, {10, 11, 12}, {1, 2, 3}}}, &b);
  BatchRows r;
  r.emb = {{1, 2, 3, -1, 0.5f, 0.25f}};
  r.wide = {{0, 0, 0}};
  absl::StatusOr<std::unique_ptr<CtrModel>> fm = CtrModel::Make("fm", layout, {});
  std::vector<float> p;
  (*fm)->Predict((*fm)->Initialize(1), b, r, &p);
  const double pairwise = (1 * 3 + 2 * -1) + (1 * 0.5 + 2 * 0.25) + (3 * 0.5 + -1 * 0.25);
  EXPECT_NEAR(std::log(p[0] / (1 - p[0])), pairwise, 1e-5);
}

TEST(CtrModelTest, RefusesWhatTheLayoutCannotHave) {
  FeatureLayout layout;
  layout.tables = {"a", "b"};
  layout.dims = {8, 16};
  layout.fields = {{"x", 0, Pooling::kMean}, {"y", 1, Pooling::kMean}};
  EXPECT_EQ(CtrModel::Make("deepfm", layout, {8}).status().message(),
            "deepfm needs every table to have the same dim: \"a\" has 8, \"b\" 16");
  EXPECT_TRUE(CtrModel::Make("widedeep", layout, {8}).ok()) << "the MLP takes any widths";
  EXPECT_EQ(CtrModel::Make("dlrm", layout, {}).status().message(),
            "unknown model \"dlrm\" (want lr, fm, deepfm or widedeep)");
  absl::StatusOr<std::unique_ptr<CtrModel>> wd = CtrModel::Make("widedeep", layout, {8});
  std::vector<VariableSpec> v = (*wd)->Variables();
  EXPECT_EQ(v[0].name, "bias");
  EXPECT_EQ(v[1].name, "deep/hidden/kernel");
  EXPECT_EQ(v[1].size, 24u * 8) << "the MLP's input: both fields' embeddings";
}

TEST(CtrModelTest, LogLossClampsCertainty) {
  EXPECT_NEAR(LogLoss({0.5f}, {1}), std::log(2.0), 1e-6);
  EXPECT_LT(LogLoss({1.0f}, {0}), 17) << "a certain wrong answer costs a bounded amount";
}

}  // namespace
}  // namespace disttrain::trainer
