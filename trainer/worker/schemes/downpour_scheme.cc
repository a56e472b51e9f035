// DOWNPOUR as the Distributed TensorFlow Guide runs it: from the pulled variables the worker takes
// λ local steps with its own Adagrad (downpour) or plain SGD (downpour-sgd, the guide's
// DOWNPOUR-Easy), summing the raw gradients; the sum is the commit, which the servers apply with
// their Adagrad (downpour) or SGD (downpour-sgd). With λ = 1 downpour-sgd is asynchronous SGD.
// The local Adagrad accumulators live as long as the worker, as the guide's local optimizer's.
#include <cmath>

#include "trainer/worker/schemes/worker_scheme.h"

namespace disttrain::trainer {
namespace {

class Downpour : public WorkerScheme {
 public:
  Downpour(const SchemeConfig& c, bool adagrad)
      : lr_(c.learning_rate),
        lambda_(c.local_steps),
        adagrad_(adagrad),
        initial_(c.adagrad_initial_accumulator) {}

  float Round(const Params& pulled, const GradientFn& gradient, Params* commit) override {
    local_ = pulled;
    if (adagrad_ && acc_.empty()) {
      for (const std::vector<float>& v : pulled) acc_.emplace_back(v.size(), initial_);
    }
    // The last local step's variables would be replaced by the next pull; its gradient still
    // counts in the Adagrad accumulators.
    return SumLocalGradients(lambda_, gradient, &local_, &g_, commit,
                             [&](const Params& g, bool last) {
                               if (adagrad_) {
                                 for (size_t v = 0; v < g.size(); ++v) {
                                   for (size_t i = 0; i < g[v].size(); ++i) {
                                     acc_[v][i] += g[v][i] * g[v][i];
                                     if (!last)
                                       local_[v][i] -= lr_ * g[v][i] / std::sqrt(acc_[v][i]);
                                   }
                                 }
                               } else if (!last) {
                                 AddScaled(&local_, -lr_, g);
                               }
                             });
  }
  int local_steps() const override { return lambda_; }
  void Reset() override { acc_.clear(); }

 private:
  const float lr_;
  const int lambda_;
  const bool adagrad_;
  const float initial_;
  Params local_, g_, acc_;
};

}  // namespace

std::unique_ptr<WorkerScheme> MakeDownpourScheme(const SchemeConfig& config, bool adagrad) {
  return std::make_unique<Downpour>(config, adagrad);
}

}  // namespace disttrain::trainer
