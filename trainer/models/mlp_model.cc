#include "trainer/models/mlp_model.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "trainer/kernels/cpu_clones.h"

namespace disttrain::trainer {
namespace {

// out[n x cols] = x[n x rows] * w[rows x cols] + bias
DISTTRAIN_CPU_CLONES void Affine(const float* x, int n, int rows, const float* w, const float* bias,
                                 int cols, float* out) {
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

// g[rows x cols] += a[rows] (outer) d[cols]: one example's contribution to a kernel's gradient.
DISTTRAIN_CPU_CLONES void AddOuter(const float* a, int rows, const float* d, int cols, float* g) {
  for (int k = 0; k < rows; ++k) {
    if (a[k] == 0) continue;
    float* row = g + static_cast<size_t>(k) * cols;
    for (int j = 0; j < cols; ++j) row[j] += a[k] * d[j];
  }
}

// Softmax in place per row; returns the summed cross-entropy and turns `logits` into
// d(loss)/d(logits) (probabilities minus one-hot) when `labels` is set.
double SoftmaxCrossEntropy(float* logits, int n, int classes, const int32_t* labels, int* correct) {
  double loss = 0;
  for (int i = 0; i < n; ++i) {
    float* row = logits + static_cast<size_t>(i) * classes;
    const float max = *std::max_element(row, row + classes);
    const int predicted = static_cast<int>(std::max_element(row, row + classes) - row);
    if (correct && predicted == labels[i]) ++*correct;
    double sum = 0;
    for (int j = 0; j < classes; ++j) sum += std::exp(row[j] - max);
    const double log_sum = std::log(sum) + max;
    loss += log_sum - row[labels[i]];
    for (int j = 0; j < classes; ++j) row[j] = static_cast<float>(std::exp(row[j] - log_sum));
    row[labels[i]] -= 1.0f;
  }
  return loss;
}

// dprev[i][k] = a[i][k] > 0 ? sum_j w[k][j] d[i][j] : 0: the gradient through a layer and the
// ReLU that made its input `a`. Plain loops in a fixed order (not cloned: a sum the compiler must
// not reorder), the same bits as before deeper models.
void BackThroughRelu(const float* a, const float* w, const float* d, int n, int rows, int cols,
                     float* dprev) {
  for (int i = 0; i < n; ++i) {
    const float* di = d + static_cast<size_t>(i) * cols;
    float* dp = dprev + static_cast<size_t>(i) * rows;
    const float* ai = a + static_cast<size_t>(i) * rows;
    for (int k = 0; k < rows; ++k) {
      if (ai[k] <= 0) continue;
      const float* wk = w + static_cast<size_t>(k) * cols;
      float s = 0;
      for (int j = 0; j < cols; ++j) s += wk[j] * di[j];
      dp[k] = s;
    }
  }
}

std::string LayerName(int layer, int hidden_layers) {
  if (hidden_layers == 0) return "softmax";
  if (layer == hidden_layers) return "output";
  return layer == 0 ? "hidden" : absl::StrCat("hidden_", layer);
}

}  // namespace

MlpModel::MlpModel(int input_dim, int classes, std::vector<int> hidden)
    : in_(input_dim), out_(classes), hidden_(std::move(hidden)) {
  widths_.push_back(in_);
  widths_.insert(widths_.end(), hidden_.begin(), hidden_.end());
  widths_.push_back(out_);
}

std::vector<VariableSpec> MlpModel::Variables() const {
  std::vector<VariableSpec> v;
  const int layers = static_cast<int>(hidden_.size());
  for (int l = 0; l <= layers; ++l) {
    const std::string name = LayerName(l, layers);
    v.push_back({name + "/kernel", size_t(widths_[l]) * widths_[l + 1]});
    v.push_back({name + "/bias", size_t(widths_[l + 1])});
  }
  return v;
}

Params MlpModel::Initialize(uint64_t seed) const {
  std::mt19937_64 rng(seed);
  Params p;
  for (size_t l = 0; l + 1 < widths_.size(); ++l) {
    std::vector<float> kernel(size_t(widths_[l]) * widths_[l + 1]);
    const float limit = std::sqrt(6.0f / (widths_[l] + widths_[l + 1]));  // Glorot uniform
    std::uniform_real_distribution<float> dist(-limit, limit);
    for (float& x : kernel) x = dist(rng);
    p.push_back(std::move(kernel));
    p.emplace_back(widths_[l + 1], 0.0f);
  }
  return p;
}

void MlpModel::Forward(const Params& p, const Batch& b, std::vector<std::vector<float>>* hidden,
                       std::vector<float>* logits) const {
  hidden->resize(hidden_.size());
  const float* in = b.x;
  for (size_t l = 0; l < hidden_.size(); ++l) {
    std::vector<float>& h = (*hidden)[l];
    h.assign(static_cast<size_t>(b.n) * hidden_[l], 0);
    Affine(in, b.n, widths_[l], p[2 * l].data(), p[2 * l + 1].data(), hidden_[l], h.data());
    for (float& x : h) x = std::max(x, 0.0f);
    in = h.data();
  }
  const size_t last = hidden_.size();
  logits->assign(static_cast<size_t>(b.n) * out_, 0);
  Affine(in, b.n, widths_[last], p[2 * last].data(), p[2 * last + 1].data(), out_, logits->data());
}

float MlpModel::LossAndGradient(const Params& p, const Batch& b, Params* grads) const {
  *grads = ZerosLike(p);
  std::vector<std::vector<float>> hidden;
  std::vector<float> d;
  Forward(p, b, &hidden, &d);
  const double loss = SoftmaxCrossEntropy(d.data(), b.n, out_, b.y, nullptr);
  const float scale = 1.0f / b.n;
  for (float& x : d) x *= scale;

  // From the output layer back to the first: `d` is d(loss)/d(the layer's output).
  std::vector<float> dprev;
  for (int l = static_cast<int>(hidden_.size()); l >= 0; --l) {
    const float* a = l == 0 ? b.x : hidden[l - 1].data();  // the layer's input
    const int rows = widths_[l], cols = widths_[l + 1];
    std::vector<float>& gw = (*grads)[2 * l];
    std::vector<float>& gb = (*grads)[2 * l + 1];
    for (int i = 0; i < b.n; ++i) {
      const float* di = d.data() + static_cast<size_t>(i) * cols;
      for (int j = 0; j < cols; ++j) gb[j] += di[j];
      AddOuter(a + static_cast<size_t>(i) * rows, rows, di, cols, gw.data());
    }
    if (l == 0) break;
    dprev.assign(static_cast<size_t>(b.n) * rows, 0);
    BackThroughRelu(a, p[2 * l].data(), d.data(), b.n, rows, cols, dprev.data());
    d.swap(dprev);
  }
  return static_cast<float>(loss / b.n);
}

EvalResult MlpModel::Evaluate(const Params& p, const Batch& b) const {
  std::vector<std::vector<float>> hidden;
  std::vector<float> logits;
  Forward(p, b, &hidden, &logits);
  int correct = 0;
  const double loss = SoftmaxCrossEntropy(logits.data(), b.n, out_, b.y, &correct);
  return {loss / std::max(1, b.n), static_cast<double>(correct) / std::max(1, b.n)};
}

}  // namespace disttrain::trainer
