#include "trainer/models/dense_tower.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "trainer/kernels/cpu_clones.h"

namespace disttrain::trainer {
namespace {

// out[n x cols] = x[n x rows] * w[rows x cols] + bias
DISTTRAIN_CPU_CLONES void TowerAffine(const float* x, int n, int rows, const float* w,
                                      const float* bias, int cols, float* out) {
  for (int i = 0; i < n; ++i) {
    float* o = out + static_cast<size_t>(i) * cols;
    std::copy(bias, bias + cols, o);
    const float* xi = x + static_cast<size_t>(i) * rows;
    for (int k = 0; k < rows; ++k) {
      const float v = xi[k];
      if (v == 0) continue;
      const float* wk = w + static_cast<size_t>(k) * cols;
      for (int j = 0; j < cols; ++j) o[j] += v * wk[j];
    }
  }
}

// g[rows x cols] += sum_i a_i (outer) d_i; gb += sum_i d_i
DISTTRAIN_CPU_CLONES void TowerAddOuter(const float* a, const float* d, int n, int rows, int cols,
                                        float* g, float* gb) {
  for (int i = 0; i < n; ++i) {
    const float* ai = a + static_cast<size_t>(i) * rows;
    const float* di = d + static_cast<size_t>(i) * cols;
    for (int j = 0; j < cols; ++j) gb[j] += di[j];
    for (int k = 0; k < rows; ++k) {
      const float v = ai[k];
      if (v == 0) continue;
      float* gk = g + static_cast<size_t>(k) * cols;
      for (int j = 0; j < cols; ++j) gk[j] += v * di[j];
    }
  }
}

// dx[n x rows] = d[n x cols] * w^T
DISTTRAIN_CPU_CLONES void TowerBackInput(const float* d, const float* w, int n, int rows, int cols,
                                         float* dx) {
  for (int i = 0; i < n; ++i) {
    const float* di = d + static_cast<size_t>(i) * cols;
    float* o = dx + static_cast<size_t>(i) * rows;
    for (int k = 0; k < rows; ++k) {
      const float* wk = w + static_cast<size_t>(k) * cols;
      float s = 0;
      for (int j = 0; j < cols; ++j) s += wk[j] * di[j];
      o[k] = s;
    }
  }
}

std::string TowerLayerName(int layer, int hidden_layers) {
  if (layer == hidden_layers) return "output";
  return layer == 0 ? "hidden" : absl::StrCat("hidden_", layer);
}

}  // namespace

DenseTower::DenseTower(std::string prefix, int input_width, std::vector<int> hidden)
    : prefix_(std::move(prefix)) {
  widths_.push_back(input_width);
  widths_.insert(widths_.end(), hidden.begin(), hidden.end());
  widths_.push_back(1);
}

std::vector<VariableSpec> DenseTower::Variables() const {
  std::vector<VariableSpec> v;
  const int layers = static_cast<int>(widths_.size()) - 1;
  for (int l = 0; l < layers; ++l) {
    const std::string name = absl::StrCat(prefix_, "/", TowerLayerName(l, layers - 1));
    v.push_back({name + "/kernel", static_cast<size_t>(widths_[l]) * widths_[l + 1]});
    v.push_back({name + "/bias", static_cast<size_t>(widths_[l + 1])});
  }
  return v;
}

void DenseTower::Initialize(std::mt19937_64* rng, Params* out) const {
  for (size_t l = 0; l + 1 < widths_.size(); ++l) {
    std::vector<float> kernel(static_cast<size_t>(widths_[l]) * widths_[l + 1]);
    const float limit = std::sqrt(6.0f / (widths_[l] + widths_[l + 1]));
    std::uniform_real_distribution<float> dist(-limit, limit);
    for (float& x : kernel) x = dist(*rng);
    out->push_back(std::move(kernel));
    out->emplace_back(widths_[l + 1], 0.0f);
  }
}

void DenseTower::Forward(const std::vector<const std::vector<float>*>& p, const float* x, int n,
                         float* logits) {
  const int layers = static_cast<int>(widths_.size()) - 1;
  acts_.resize(layers - 1);
  const float* in = x;
  for (int l = 0; l < layers; ++l) {
    const bool last = l == layers - 1;
    float* out = logits;
    if (!last) {
      acts_[l].assign(static_cast<size_t>(n) * widths_[l + 1], 0);
      out = acts_[l].data();
    }
    TowerAffine(in, n, widths_[l], p[2 * l]->data(), p[2 * l + 1]->data(), widths_[l + 1], out);
    if (!last) {
      for (size_t i = 0; i < acts_[l].size(); ++i) out[i] = std::max(out[i], 0.0f);
      in = out;
    }
  }
}

void DenseTower::Backward(const std::vector<const std::vector<float>*>& p, const float* x,
                          const float* dlogits, int n,
                          const std::vector<std::vector<float>*>& grads, float* dx) {
  const int layers = static_cast<int>(widths_.size()) - 1;
  std::vector<float> d(dlogits, dlogits + n), dprev;
  for (int l = layers - 1; l >= 0; --l) {
    const float* a = l == 0 ? x : acts_[l - 1].data();
    const int rows = widths_[l], cols = widths_[l + 1];
    TowerAddOuter(a, d.data(), n, rows, cols, grads[2 * l]->data(), grads[2 * l + 1]->data());
    if (l == 0 && dx == nullptr) break;
    dprev.assign(static_cast<size_t>(n) * rows, 0);
    TowerBackInput(d.data(), p[2 * l]->data(), n, rows, cols, l == 0 ? dx : dprev.data());
    if (l == 0) break;
    for (size_t i = 0; i < dprev.size(); ++i)
      if (a[i] <= 0) dprev[i] = 0;  // through the ReLU that made this layer's input
    d.swap(dprev);
  }
}

}  // namespace disttrain::trainer
