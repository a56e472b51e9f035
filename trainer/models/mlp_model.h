// Softmax regression (no hidden layer) and a one-hidden-layer ReLU MLP, both trained with
// softmax cross-entropy. Thread-safe.
#ifndef DISTTRAIN_TRAINER_MODELS_MLP_MODEL_H_
#define DISTTRAIN_TRAINER_MODELS_MLP_MODEL_H_

#include "trainer/models/model.h"

namespace disttrain::trainer {

class MlpModel : public Model {
 public:
  // hidden == 0 is softmax regression.
  MlpModel(int input_dim, int classes, int hidden)
      : in_(input_dim), out_(classes), hidden_(hidden) {}
  std::string name() const override { return hidden_ == 0 ? "softmax" : "mlp"; }
  std::vector<VariableSpec> Variables() const override;
  Params Initialize(uint64_t seed) const override;
  float LossAndGradient(const Params& params, const Batch& batch, Params* grads) const override;
  EvalResult Evaluate(const Params& params, const Batch& batch) const override;

 private:
  // Logits (n x out) for the batch; with a hidden layer also its activations (n x hidden).
  void Forward(const Params& p, const Batch& b, std::vector<float>* hidden,
               std::vector<float>* logits) const;

  const int in_, out_, hidden_;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_MODELS_MLP_MODEL_H_
