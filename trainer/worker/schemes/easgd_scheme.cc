// Asynchronous Elastic Averaging SGD (arXiv 1412.6651, Algorithms 1 and 2). The worker keeps its
// own variables x across rounds. Every τ local steps it reads the center variable θ (the pull),
// computes the elastic difference E = α (x - θ), moves x <- x - E and pushes E, which the servers
// add (θ <- θ + E). The local steps are SGD (aeasgd) or Nesterov momentum (aeamsgd):
// v <- δ v - η g(x + δ v), x <- x + v. With α = 0 the servers never move.
#include "trainer/worker/schemes/worker_scheme.h"

namespace disttrain::trainer {
namespace {

class EasgdScheme : public WorkerScheme {
 public:
  explicit EasgdScheme(const SchemeConfig& c)
      : lr_(c.learning_rate),
        tau_(c.local_steps),
        alpha_(c.elastic_alpha),
        delta_(c.momentum),
        alpha_follows_(c.elastic_alpha_follows) {}

  float Round(const Params& pulled, const GradientFn& gradient, Params* commit) override {
    if (x_.empty()) {
      x_ = pulled;
      v_ = ZerosLike(pulled);
    }
    commit->resize(x_.size());
    for (size_t v = 0; v < x_.size(); ++v) {
      (*commit)[v].resize(x_[v].size());
      for (size_t i = 0; i < x_[v].size(); ++i) {
        const float e = alpha_ * (x_[v][i] - pulled[v][i]);
        (*commit)[v][i] = e;
        x_[v][i] -= e;
      }
    }
    double loss = 0;
    for (int k = 0; k < tau_; ++k) {
      if (delta_ > 0) {
        look_ = x_;
        AddScaled(&look_, delta_, v_);
        loss += gradient(look_, &g_);
        for (size_t v = 0; v < x_.size(); ++v) {
          for (size_t i = 0; i < x_[v].size(); ++i) {
            v_[v][i] = delta_ * v_[v][i] - lr_ * g_[v][i];
            x_[v][i] += v_[v][i];
          }
        }
      } else {
        loss += gradient(x_, &g_);
        AddScaled(&x_, -lr_, g_);
      }
    }
    return static_cast<float>(loss / tau_);
  }
  int local_steps() const override { return tau_; }
  void Reset() override { x_.clear(); }
  // Workers scaled in: p α stays under 1 for the p replicas now pulling on the center.
  void SetLiveReplicas(int live) override {
    if (alpha_follows_) alpha_ = DefaultElasticAlpha(lr_, live);
  }

 private:
  const float lr_;
  const int tau_;
  float alpha_;
  const float delta_;
  const bool alpha_follows_;
  Params x_, v_, look_, g_;
};

}  // namespace

std::unique_ptr<WorkerScheme> MakeEasgdScheme(const SchemeConfig& config) {
  return std::make_unique<EasgdScheme>(config);
}

}  // namespace disttrain::trainer
