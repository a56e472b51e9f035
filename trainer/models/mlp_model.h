// Softmax regression (no hidden layer) and a ReLU MLP of one or more hidden layers, both trained
// with softmax cross-entropy. Thread-safe.
//
// Variables, input side first: "hidden/kernel", "hidden/bias" for the first hidden layer,
// "hidden_<l>/kernel", "hidden_<l>/bias" for hidden layer l >= 1 (Keras's numbering of a
// repeated layer name), then "output/kernel", "output/bias"; softmax regression has only
// "softmax/kernel", "softmax/bias". A one-hidden-layer model has the names and the initial values
// it had before deeper models existed, so its checkpoints restore.
#ifndef DISTTRAIN_TRAINER_MODELS_MLP_MODEL_H_
#define DISTTRAIN_TRAINER_MODELS_MLP_MODEL_H_

#include <vector>

#include "trainer/models/model.h"

namespace disttrain::trainer {

class MlpModel : public Model {
 public:
  // `hidden`: the hidden layers' widths; empty is softmax regression.
  MlpModel(int input_dim, int classes, std::vector<int> hidden);
  std::string name() const override { return hidden_.empty() ? "softmax" : "mlp"; }
  std::vector<VariableSpec> Variables() const override;
  Params Initialize(uint64_t seed) const override;
  float LossAndGradient(const Params& params, const Batch& batch, Params* grads) const override;
  EvalResult Evaluate(const Params& params, const Batch& batch) const override;

 private:
  // Logits (n x out) for the batch, and the activations of every hidden layer (n x width each).
  void Forward(const Params& p, const Batch& b, std::vector<std::vector<float>>* hidden,
               std::vector<float>* logits) const;

  const int in_, out_;
  const std::vector<int> hidden_;
  std::vector<int> widths_;  // in_, hidden_..., out_: layer l maps widths_[l] to widths_[l + 1]
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_MODELS_MLP_MODEL_H_
