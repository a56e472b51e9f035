// The deep part's MLP: its gradients (of the variables and of the inputs) against finite
// differences of its output.
#include "trainer/models/dense_tower.h"

#include <random>

#include "gtest/gtest.h"

namespace disttrain::trainer {
namespace {

TEST(DenseTowerTest, NamesItsLayersAsTheMlpDoes) {
  DenseTower t("deep", 6, {4, 3});
  std::vector<VariableSpec> v = t.Variables();
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[0].name, "deep/hidden/kernel");
  EXPECT_EQ(v[0].size, 24u);
  EXPECT_EQ(v[2].name, "deep/hidden_1/kernel");
  EXPECT_EQ(v[4].name, "deep/output/kernel");
  EXPECT_EQ(v[5].size, 1u);
}

TEST(DenseTowerTest, GradientsMatchFiniteDifferences) {
  DenseTower t("deep", 5, {4, 3});
  std::mt19937_64 rng(3);
  Params p;
  t.Initialize(&rng, &p);
  for (auto& v : p)
    for (float& x : v) x += std::uniform_real_distribution<float>(-0.3f, 0.3f)(rng);
  const int n = 3;
  std::vector<float> x(n * 5);
  for (float& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  const std::vector<float> dlogits = {0.5f, -1.0f, 0.25f};
  // Loss = sum_i dlogits_i * logit_i, so d(loss)/d(logit_i) = dlogits_i.
  auto loss = [&](const Params& q, const std::vector<float>& in) {
    std::vector<const std::vector<float>*> ptrs;
    for (const auto& v : q) ptrs.push_back(&v);
    std::vector<float> logits(n);
    DenseTower fresh("deep", 5, {4, 3});
    fresh.Forward(ptrs, in.data(), n, logits.data());
    double l = 0;
    for (int i = 0; i < n; ++i) l += dlogits[i] * logits[i];
    return l;
  };
  std::vector<const std::vector<float>*> ptrs;
  for (const auto& v : p) ptrs.push_back(&v);
  std::vector<float> logits(n), dx(n * 5);
  t.Forward(ptrs, x.data(), n, logits.data());
  Params g = ZerosLike(p);
  std::vector<std::vector<float>*> gptrs;
  for (auto& v : g) gptrs.push_back(&v);
  t.Backward(ptrs, x.data(), dlogits.data(), n, gptrs, dx.data());
  const float h = 1e-3f;
  for (size_t v = 0; v < p.size(); ++v) {
    for (size_t k = 0; k < p[v].size(); ++k) {
      Params up = p, down = p;
      up[v][k] += h;
      down[v][k] -= h;
      EXPECT_NEAR(g[v][k], (loss(up, x) - loss(down, x)) / (2 * h), 2e-3) << v << "/" << k;
    }
  }
  for (size_t k = 0; k < x.size(); ++k) {
    std::vector<float> up = x, down = x;
    up[k] += h;
    down[k] -= h;
    EXPECT_NEAR(dx[k], (loss(p, up) - loss(p, down)) / (2 * h), 2e-3) << "input " << k;
  }
}

}  // namespace
}  // namespace disttrain::trainer
