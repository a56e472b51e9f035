// The toy problem of the Distributed TensorFlow guide (see toy_model.cc). Thread-safe.
#ifndef DISTTRAIN_TRAINER_MODELS_TOY_MODEL_H_
#define DISTTRAIN_TRAINER_MODELS_TOY_MODEL_H_

#include "trainer/models/model.h"

namespace disttrain::trainer {

class ToyModel : public Model {
 public:
  std::string name() const override { return "toy"; }
  std::vector<VariableSpec> Variables() const override;
  Params Initialize(uint64_t seed) const override;
  float LossAndGradient(const Params& params, const Batch& batch, Params* grads) const override;
  EvalResult Evaluate(const Params& params, const Batch& batch) const override;
  bool needs_data() const override { return false; }
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_MODELS_TOY_MODEL_H_
