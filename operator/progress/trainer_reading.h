// What the operator reads from a training pod's /metrics (Prometheus text format) to tell a job's
// progress: disttrain-trainer's gauges, which any image may serve under the same names
// (docs/user-guide.md#progress). Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_PROGRESS_TRAINER_READING_H_
#define DISTTRAIN_OPERATOR_PROGRESS_TRAINER_READING_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace disttrain::progress {

// The gauges, unlabelled.
inline constexpr char kGlobalStep[] = "disttrain_trainer_global_step";
inline constexpr char kTargetSteps[] = "disttrain_trainer_target_steps";
inline constexpr char kExamplesPerGlobalStep[] = "disttrain_trainer_examples_per_global_step";

struct TrainerReading {
  absl::Time time;
  int64_t global_step = 0;
  std::optional<int64_t> target_steps;      // absent, or 0: not said
  std::optional<double> examples_per_step;  // absent, or 0: not said

  bool operator==(const TrainerReading&) const = default;
};

// NotFound when the text has no global step (an image that serves other metrics, or a trainer
// that has not stepped yet); InvalidArgument when a value is not a number or is negative.
absl::StatusOr<TrainerReading> ReadTrainerMetrics(std::string_view text, absl::Time time);

}  // namespace disttrain::progress

#endif  // DISTTRAIN_OPERATOR_PROGRESS_TRAINER_READING_H_
