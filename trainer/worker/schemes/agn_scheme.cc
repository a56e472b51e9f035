// Accumulated Gradient Normalization (AGN, arXiv 1710.02368): λ local SGD steps from the pulled
// variables, then the accumulated gradient normalised by the window, sum(g) / λ, is committed and
// the servers apply it with SGD (agn, asynchronous) or aggregate it synchronously (sagn). The
// commit's size no longer grows with λ, which keeps many workers stable. λ = 1 is async SGD.
#include "trainer/worker/schemes/worker_scheme.h"

namespace disttrain::trainer {
namespace {

class Agn : public WorkerScheme {
 public:
  explicit Agn(const SchemeConfig& c) : lr_(c.learning_rate), lambda_(c.local_steps) {}

  float Round(const Params& pulled, const GradientFn& gradient, Params* commit) override {
    local_ = pulled;
    const float loss =
        SumLocalGradients(lambda_, gradient, &local_, &g_, commit, [&](const Params& g, bool last) {
          if (!last) AddScaled(&local_, -lr_, g);
        });
    if (lambda_ > 1) {
      const float inv = 1.0f / static_cast<float>(lambda_);
      for (std::vector<float>& v : *commit) {
        for (float& x : v) x *= inv;
      }
    }
    return loss;
  }
  int local_steps() const override { return lambda_; }

 private:
  const float lr_;
  const int lambda_;
  Params local_, g_;
};

}  // namespace

std::unique_ptr<WorkerScheme> MakeAgnScheme(const SchemeConfig& config) {
  return std::make_unique<Agn>(config);
}

}  // namespace disttrain::trainer
