#include "trainer/models/mlp_model.h"

#include <algorithm>
#include <cmath>
#include <random>

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

}  // namespace

std::vector<VariableSpec> MlpModel::Variables() const {
  if (hidden_ == 0) return {{"softmax/kernel", size_t(in_) * out_}, {"softmax/bias", size_t(out_)}};
  return {{"hidden/kernel", size_t(in_) * hidden_},
          {"hidden/bias", size_t(hidden_)},
          {"output/kernel", size_t(hidden_) * out_},
          {"output/bias", size_t(out_)}};
}

Params MlpModel::Initialize(uint64_t seed) const {
  std::mt19937_64 rng(seed);
  Params p;
  for (const VariableSpec& v : Variables()) {
    std::vector<float> values(v.size, 0.0f);
    if (v.name.find("kernel") != std::string::npos) {
      const bool first = v.name.rfind(hidden_ == 0 ? "softmax" : "hidden", 0) == 0;
      const int fan_in = first ? in_ : hidden_;
      const int fan_out = (first && hidden_ > 0) ? hidden_ : out_;
      const float limit = std::sqrt(6.0f / (fan_in + fan_out));  // Glorot uniform
      std::uniform_real_distribution<float> dist(-limit, limit);
      for (float& x : values) x = dist(rng);
    }
    p.push_back(std::move(values));
  }
  return p;
}

void MlpModel::Forward(const Params& p, const Batch& b, std::vector<float>* hidden,
                       std::vector<float>* logits) const {
  logits->assign(static_cast<size_t>(b.n) * out_, 0);
  if (hidden_ == 0) {
    Affine(b.x, b.n, in_, p[0].data(), p[1].data(), out_, logits->data());
    return;
  }
  hidden->assign(static_cast<size_t>(b.n) * hidden_, 0);
  Affine(b.x, b.n, in_, p[0].data(), p[1].data(), hidden_, hidden->data());
  for (float& h : *hidden) h = std::max(h, 0.0f);
  Affine(hidden->data(), b.n, hidden_, p[2].data(), p[3].data(), out_, logits->data());
}

float MlpModel::LossAndGradient(const Params& p, const Batch& b, Params* grads) const {
  *grads = ZerosLike(p);
  std::vector<float> hidden, dlogits;
  Forward(p, b, &hidden, &dlogits);
  const double loss = SoftmaxCrossEntropy(dlogits.data(), b.n, out_, b.y, nullptr);
  const float scale = 1.0f / b.n;
  for (float& d : dlogits) d *= scale;

  // The last layer: input is x (softmax) or the hidden activations (mlp).
  const float* last_in = hidden_ == 0 ? b.x : hidden.data();
  const int last_dim = hidden_ == 0 ? in_ : hidden_;
  std::vector<float>& gw = (*grads)[hidden_ == 0 ? 0 : 2];
  std::vector<float>& gb = (*grads)[hidden_ == 0 ? 1 : 3];
  for (int i = 0; i < b.n; ++i) {
    const float* d = dlogits.data() + static_cast<size_t>(i) * out_;
    const float* a = last_in + static_cast<size_t>(i) * last_dim;
    for (int j = 0; j < out_; ++j) gb[j] += d[j];
    AddOuter(a, last_dim, d, out_, gw.data());
  }
  if (hidden_ == 0) return static_cast<float>(loss / b.n);

  // Back through the output layer and the ReLU into the hidden layer.
  std::vector<float> dhidden(static_cast<size_t>(b.n) * hidden_, 0);
  const std::vector<float>& w2 = p[2];
  for (int i = 0; i < b.n; ++i) {
    const float* d = dlogits.data() + static_cast<size_t>(i) * out_;
    float* dh = dhidden.data() + static_cast<size_t>(i) * hidden_;
    const float* h = hidden.data() + static_cast<size_t>(i) * hidden_;
    for (int k = 0; k < hidden_; ++k) {
      if (h[k] <= 0) continue;
      const float* w = w2.data() + static_cast<size_t>(k) * out_;
      float s = 0;
      for (int j = 0; j < out_; ++j) s += w[j] * d[j];
      dh[k] = s;
    }
  }
  std::vector<float>& gw1 = (*grads)[0];
  std::vector<float>& gb1 = (*grads)[1];
  for (int i = 0; i < b.n; ++i) {
    const float* dh = dhidden.data() + static_cast<size_t>(i) * hidden_;
    const float* x = b.x + static_cast<size_t>(i) * in_;
    for (int j = 0; j < hidden_; ++j) gb1[j] += dh[j];
    AddOuter(x, in_, dh, hidden_, gw1.data());
  }
  return static_cast<float>(loss / b.n);
}

EvalResult MlpModel::Evaluate(const Params& p, const Batch& b) const {
  std::vector<float> hidden, logits;
  Forward(p, b, &hidden, &logits);
  int correct = 0;
  const double loss = SoftmaxCrossEntropy(logits.data(), b.n, out_, b.y, &correct);
  return {loss / std::max(1, b.n), static_cast<double>(correct) / std::max(1, b.n)};
}

}  // namespace disttrain::trainer
