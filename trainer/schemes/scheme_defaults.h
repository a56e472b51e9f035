// Per-scheme defaults of the flags whose good value depends on the training scheme: what a scheme
// trains with when the command line leaves --steps or --learning-rate unset (a flag the user sets
// always wins; TrainerOptions applies them, trainer/options.h). Every scheme reaches 0.84-0.87
// test accuracy on Fashion-MNIST with its defaults (docs/notes/trainer-schemes.md has the runs).
// Pure; thread-safe.
#ifndef DISTTRAIN_TRAINER_SCHEMES_SCHEME_DEFAULTS_H_
#define DISTTRAIN_TRAINER_SCHEMES_SCHEME_DEFAULTS_H_

#include <cstdint>
#include <string>

#include "trainer/schemes/scheme.h"

namespace disttrain::trainer {

// The defaults of the schemes that need no others.
inline constexpr int64_t kDefaultSteps = 1000;
inline constexpr double kDefaultLearningRate = 0.1;

struct SchemeDefaults {
  int64_t steps = kDefaultSteps;                // global steps (commits, or synchronous steps)
  double learning_rate = kDefaultLearningRate;  // η
};

// `scheme`'s defaults when it trains with `num_replicas` training replicas.
SchemeDefaults DefaultsFor(Scheme scheme, int num_replicas);

// The schemes whose defaults differ from kDefaultSteps and kDefaultLearningRate, for --help.
std::string SchemeDefaultsHelp();

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_SCHEMES_SCHEME_DEFAULTS_H_
