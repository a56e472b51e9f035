// The models by name, as --model names them.
#ifndef DISTTRAIN_TRAINER_MODELS_MODEL_FACTORY_H_
#define DISTTRAIN_TRAINER_MODELS_MODEL_FACTORY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/models/model.h"

namespace disttrain::trainer {

// "toy", "softmax" or "mlp" (with hidden layers of the widths in `hidden`, at least one).
// InvalidArgument for anything else.
absl::StatusOr<std::unique_ptr<Model>> MakeModel(const std::string& name, int input_dim,
                                                 int classes, const std::vector<int>& hidden);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_MODELS_MODEL_FACTORY_H_
