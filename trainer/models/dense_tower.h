// The deep part of the recommendation models (Wide & Deep, DeepFM): a ReLU MLP from a batch of
// input rows to one logit each, with its backward pass down to the inputs (the embeddings the
// inputs were made of get their gradients from it). Variables "<prefix>/hidden/kernel",
// "<prefix>/hidden/bias", "<prefix>/hidden_<l>/...", then "<prefix>/output/kernel" and
// "<prefix>/output/bias", Glorot-uniform kernels and zero biases, as MlpModel names and
// initialises its layers. Thread-compatible: a tower keeps the last forward pass's activations.
#ifndef DISTTRAIN_TRAINER_MODELS_DENSE_TOWER_H_
#define DISTTRAIN_TRAINER_MODELS_DENSE_TOWER_H_

#include <random>
#include <string>
#include <vector>

#include "trainer/models/model.h"

namespace disttrain::trainer {

class DenseTower {
 public:
  DenseTower(std::string prefix, int input_width, std::vector<int> hidden);

  int input_width() const { return widths_.front(); }
  // The tower's variables, input side first: kernel then bias per layer.
  std::vector<VariableSpec> Variables() const;
  void Initialize(std::mt19937_64* rng, Params* out) const;

  // `params` points at the tower's variables (Variables() order); `x` is n rows of
  // input_width(). Writes n logits.
  void Forward(const std::vector<const std::vector<float>*>& params, const float* x, int n,
               float* logits);
  // After Forward on the same batch: `dlogits` is d(loss)/d(logit) per row. Adds the variables'
  // gradients to `grads` (Variables() order) and writes d(loss)/d(x) (n x input_width()) to
  // `dx` when it is not null.
  void Backward(const std::vector<const std::vector<float>*>& params, const float* x,
                const float* dlogits, int n, const std::vector<std::vector<float>*>& grads,
                float* dx);

 private:
  const std::string prefix_;
  std::vector<int> widths_;               // input, hidden..., 1
  std::vector<std::vector<float>> acts_;  // per hidden layer: n x width, after ReLU
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_MODELS_DENSE_TOWER_H_
