#include "trainer/models/model_factory.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "trainer/models/mlp_model.h"
#include "trainer/models/toy_model.h"

namespace disttrain::trainer {

absl::StatusOr<std::unique_ptr<Model>> MakeModel(const std::string& name, int input_dim,
                                                 int classes, const std::vector<int>& hidden) {
  if (name == "toy") return std::unique_ptr<Model>(new ToyModel());
  if (name == "softmax") return std::unique_ptr<Model>(new MlpModel(input_dim, classes, {}));
  if (name == "mlp") {
    if (hidden.empty() || *std::min_element(hidden.begin(), hidden.end()) <= 0)
      return absl::InvalidArgumentError("--hidden must list positive widths for --model mlp");
    return std::unique_ptr<Model>(new MlpModel(input_dim, classes, hidden));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--model \"", name, "\" is not toy, softmax or mlp"));
}

}  // namespace disttrain::trainer
