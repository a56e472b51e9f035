#include "trainer/models/model.h"

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

Params ZerosLike(const Params& params) {
  Params out;
  out.reserve(params.size());
  for (const auto& v : params) out.emplace_back(v.size(), 0.0f);
  return out;
}

bool SameVariables(const std::vector<VariableSpec>& a, const std::vector<VariableSpec>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].size != b[i].size) return false;
  }
  return true;
}

}  // namespace disttrain::trainer
