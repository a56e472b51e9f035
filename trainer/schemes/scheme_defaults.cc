#include "trainer/schemes/scheme_defaults.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace disttrain::trainer {
namespace {

// The schemes whose defaults differ from kDefaultSteps and kDefaultLearningRate.
struct Row {
  Scheme scheme;
  int64_t steps;
  double learning_rate;
  bool rate_over_replicas;  // η is learning_rate / training replicas
};

// Measured with 1 ps, 2 workers and an evaluator on 2 loaded cores (docs/notes/trainer-schemes.md).
// At 1,000 steps and η = 0.1 the other schemes ended at 0.81-0.87 (most 0.84-0.87, 5 runs each),
// hogwild and dynsgd at 0.79-0.83: they compute one batch per commit, where sync computes n and the
// local-step schemes λ = 4.
// - hogwild: 4,000 commits, the batches the local-step schemes compute in their 1,000. η / n, the
//   guide's scaling for n asynchronous workers: a larger η does not make up for fewer commits
//   (2 workers, 1,000 commits: η = 0.2 ended at 0.73-0.76, 0.3 at 0.26-0.66), and at 4,000 commits
//   η = 0.05 ended at 0.845-0.855 (13 runs) where η = 0.1 spread over 0.818-0.860 (5).
// - dynsgd: η unscaled, since its 1 / (staleness + 1) is its own scaling for n workers. Its
//   damped commits learn less each: 6,000 ended at 0.841-0.859 in 32 of 33 runs (one 0.820),
//   4,000 at 0.833-0.845 (5); η = 0.05 learned slower (8,000 commits: 0.835-0.851, 20 runs).
constexpr Row kRows[] = {
    {Scheme::kHogwild, 4000, kDefaultLearningRate, true},
    {Scheme::kDynSgd, 6000, kDefaultLearningRate, false},
};

}  // namespace

SchemeDefaults DefaultsFor(Scheme scheme, int num_replicas) {
  for (const Row& r : kRows) {
    if (r.scheme != scheme) continue;
    return {.steps = r.steps,
            .learning_rate = r.rate_over_replicas ? r.learning_rate / std::max(1, num_replicas)
                                                  : r.learning_rate};
  }
  return {};
}

std::string SchemeDefaultsHelp() {
  std::vector<std::string> parts;
  for (const Row& r : kRows) {
    parts.push_back(absl::StrCat(SchemeName(r.scheme), " ", r.steps, " steps at ", r.learning_rate,
                                 r.rate_over_replicas ? " / training replicas" : ""));
  }
  return absl::StrCat(absl::StrJoin(parts, ", "), "; the others ", kDefaultSteps, " at ",
                      kDefaultLearningRate);
}

}  // namespace disttrain::trainer
