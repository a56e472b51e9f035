// One gradient per round (hogwild, sync, dynsgd): the gradient at the pulled variables, times a
// per-worker weight (sync with --worker-learning-rates; exactly the gradient otherwise).
#include "trainer/worker/schemes/worker_scheme.h"

namespace disttrain::trainer {
namespace {

class GradientScheme : public WorkerScheme {
 public:
  explicit GradientScheme(float scale) : scale_(scale) {}

  float Round(const Params& pulled, const GradientFn& gradient, Params* commit) override {
    const float loss = gradient(pulled, commit);
    if (scale_ != 1.0f) {
      for (std::vector<float>& v : *commit) {
        for (float& x : v) x *= scale_;
      }
    }
    return loss;
  }
  int local_steps() const override { return 1; }

 private:
  const float scale_;
};

}  // namespace

std::unique_ptr<WorkerScheme> MakeGradientScheme(float scale) {
  return std::make_unique<GradientScheme>(scale);
}

}  // namespace disttrain::trainer
