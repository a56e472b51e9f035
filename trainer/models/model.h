// A trainable model: named float32 variables, seeded initial values, loss and gradients for a
// batch, and evaluation. Implementations are stateless and thread-safe.
#ifndef DISTTRAIN_TRAINER_MODELS_MODEL_H_
#define DISTTRAIN_TRAINER_MODELS_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace disttrain::trainer {

struct VariableSpec {
  std::string name;
  size_t size = 0;
};

// Whether two variable lists have the same names and sizes in the same order (a checkpoint of
// this model, not of another one).
bool SameVariables(const std::vector<VariableSpec>& a, const std::vector<VariableSpec>& b);

// Values of every variable, in Variables() order.
using Params = std::vector<std::vector<float>>;

// A batch of examples: `n` rows of `dim` features, and their labels.
struct Batch {
  const float* x = nullptr;
  const int32_t* y = nullptr;
  int n = 0;
  int dim = 0;
};

struct EvalResult {
  double loss = 0;
  double accuracy = 0;
  // Click-through models (trainer/models/ctr_model.h): the ROC AUC and the log loss (the loss)
  // instead of an accuracy.
  std::optional<double> auc;
  int64_t examples = 0;
};

class Model {
 public:
  virtual ~Model() = default;
  virtual std::string name() const = 0;
  virtual std::vector<VariableSpec> Variables() const = 0;
  virtual Params Initialize(uint64_t seed) const = 0;
  // Mean loss over the batch; `grads` gets d(loss)/d(variable), shaped like `params`.
  virtual float LossAndGradient(const Params& params, const Batch& batch, Params* grads) const = 0;
  // Loss and accuracy over a batch (accuracy 0 for models without classes).
  virtual EvalResult Evaluate(const Params& params, const Batch& batch) const = 0;
  // True when the model learns from data (the toy problem has none).
  virtual bool needs_data() const { return true; }
};

Params ZerosLike(const Params& params);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_MODELS_MODEL_H_
