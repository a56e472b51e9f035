#include "trainer/embedding/table_config.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace disttrain::trainer::embedding {

absl::StatusOr<RowOptimizerKind> ParseRowOptimizer(absl::string_view name) {
  if (name == "sgd") return RowOptimizerKind::kSgd;
  if (name == "adagrad") return RowOptimizerKind::kAdagrad;
  if (name == "ftrl") return RowOptimizerKind::kFtrl;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown optimizer \"", name, "\" (want sgd, adagrad or ftrl)"));
}

absl::string_view RowOptimizerName(RowOptimizerKind kind) {
  switch (kind) {
    case RowOptimizerKind::kSgd:
      return "sgd";
    case RowOptimizerKind::kAdagrad:
      return "adagrad";
    case RowOptimizerKind::kFtrl:
      return "ftrl";
  }
  return "?";
}

absl::StatusOr<Eviction> ParseEviction(absl::string_view name) {
  if (name == "lru") return Eviction::kLru;
  if (name == "lfu") return Eviction::kLfu;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown eviction \"", name, "\" (want lru or lfu)"));
}

absl::string_view EvictionName(Eviction eviction) {
  return eviction == Eviction::kLru ? "lru" : "lfu";
}

absl::Status ValidateTableConfig(const TableConfig& c) {
  auto bad = [&c](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("table \"", c.name, "\": ", what));
  };
  if (c.name.empty()) return absl::InvalidArgumentError("a table needs a name");
  if (c.dim < 1 || c.dim > 4096) return bad(absl::StrCat("dim ", c.dim, " is not in 1..4096"));
  if (!std::isfinite(c.learning_rate) || c.learning_rate <= 0)
    return bad("learning_rate must be positive");
  if (!std::isfinite(c.initial_accumulator) || c.initial_accumulator < 0)
    return bad("initial_accumulator must not be negative");
  if (c.optimizer == RowOptimizerKind::kAdagrad && c.initial_accumulator == 0)
    return bad("adagrad needs a positive initial_accumulator");
  if (!std::isfinite(c.l1) || c.l1 < 0 || !std::isfinite(c.l2) || c.l2 < 0)
    return bad("l1 and l2 must not be negative");
  if (!std::isfinite(c.beta) || c.beta < 0) return bad("beta must not be negative");
  if (!std::isfinite(c.init_stddev) || c.init_stddev < 0)
    return bad("init_stddev must not be negative");
  return absl::OkStatus();
}

int StatePerValue(RowOptimizerKind kind) {
  switch (kind) {
    case RowOptimizerKind::kSgd:
      return 0;
    case RowOptimizerKind::kAdagrad:
      return 1;
    case RowOptimizerKind::kFtrl:
      return 2;  // z and n
  }
  return 0;
}

}  // namespace disttrain::trainer::embedding
