#include "trainer/models/model.h"

namespace disttrain::trainer {

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
