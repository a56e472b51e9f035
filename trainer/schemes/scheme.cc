#include "trainer/schemes/scheme.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"

namespace disttrain::trainer {
namespace {

constexpr std::array<std::pair<const char*, Scheme>, 9> kNames = {{
    {"hogwild", Scheme::kHogwild},
    {"downpour", Scheme::kDownpour},
    {"downpour-sgd", Scheme::kDownpourSgd},
    {"agn", Scheme::kAgn},
    {"sync", Scheme::kSync},
    {"sagn", Scheme::kSagn},
    {"dynsgd", Scheme::kDynSgd},
    {"aeasgd", Scheme::kAeasgd},
    {"aeamsgd", Scheme::kAeamsgd},
}};

}  // namespace

const char* SchemeNames() {
  return "hogwild (or async), downpour, downpour-sgd, agn, sync, sagn, dynsgd, aeasgd, aeamsgd";
}

absl::StatusOr<Scheme> ParseScheme(std::string_view mode) {
  if (mode == "async") return Scheme::kHogwild;
  for (const auto& [name, scheme] : kNames) {
    if (mode == name) return scheme;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--mode must be one of ", SchemeNames(), "; got \"",
                   absl::string_view(mode.data(), mode.size()), "\""));
}

const char* SchemeName(Scheme scheme) {
  for (const auto& [name, s] : kNames) {
    if (s == scheme) return name;
  }
  return "unknown";
}

float DefaultElasticAlpha(double learning_rate, int replicas) {
  return static_cast<float>(std::min(5 * learning_rate, 0.9 / std::max(1, replicas)));
}

bool IsSynchronous(Scheme scheme) { return scheme == Scheme::kSync || scheme == Scheme::kSagn; }

bool HasLocalSteps(Scheme scheme) {
  switch (scheme) {
    case Scheme::kDownpour:
    case Scheme::kDownpourSgd:
    case Scheme::kAgn:
    case Scheme::kSagn:
    case Scheme::kAeasgd:
    case Scheme::kAeamsgd:
      return true;
    default:
      return false;
  }
}

}  // namespace disttrain::trainer
