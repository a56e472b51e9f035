// The Distributed TensorFlow guide's toy problem: variables a, b in R^2, initialised to 0,
// loss mean((a + b - 100)^2). Plain SGD drives a + b to 100; its closed form makes it a
// deterministic check of the whole pipeline.
#include "trainer/models/toy_model.h"

namespace disttrain::trainer {

std::vector<VariableSpec> ToyModel::Variables() const { return {{"a", 2}, {"b", 2}}; }

Params ToyModel::Initialize(uint64_t) const { return {{0, 0}, {0, 0}}; }

float ToyModel::LossAndGradient(const Params& p, const Batch&, Params* grads) const {
  *grads = ZerosLike(p);
  float loss = 0;
  for (int i = 0; i < 2; ++i) {
    const float r = p[0][i] + p[1][i] - 100.0f;
    loss += r * r / 2;
    // d/da_i of (1/2) * sum_i r_i^2 is r_i, and the same for b.
    (*grads)[0][i] = r;
    (*grads)[1][i] = r;
  }
  return loss;
}

EvalResult ToyModel::Evaluate(const Params& p, const Batch& b) const {
  Params g;
  return {LossAndGradient(p, b, &g), 0};
}

}  // namespace disttrain::trainer
