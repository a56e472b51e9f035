#include "operator/progress/estimate.h"

#include <cmath>

namespace disttrain::progress {

api::JobProgress EstimateProgress(const TrainerReading& latest,
                                  const std::optional<TrainerReading>& before) {
  api::JobProgress p;
  p.global_step = latest.global_step;
  p.target_steps = latest.target_steps;
  p.observe_time = absl::FromUnixSeconds(absl::ToUnixSeconds(latest.time));
  if (!before) return p;
  const double seconds = absl::ToDoubleSeconds(latest.time - before->time);
  const int64_t steps = latest.global_step - before->global_step;
  if (seconds < 1 || steps < 0) return p;
  const double rate = static_cast<double>(steps) / seconds;
  p.steps_per_second = rate;
  if (latest.examples_per_step) p.examples_per_second = rate * *latest.examples_per_step;
  if (!p.target_steps) return p;
  const int64_t left = *p.target_steps - p.global_step;
  if (left <= 0) {
    p.estimated_completion_time = p.observe_time;
  } else if (rate > 0) {
    const double eta = std::ceil(static_cast<double>(left) / rate);
    // A rate so slow that the end is centuries away tells nothing: none.
    if (eta < 1e9) p.estimated_completion_time = p.observe_time + absl::Seconds(eta);
  }
  return p;
}

api::JobProgress FinishProgress(api::JobProgress progress, std::optional<int64_t> final_step) {
  if (final_step) progress.global_step = *final_step;
  progress.steps_per_second.reset();
  progress.examples_per_second.reset();
  progress.estimated_completion_time.reset();
  return progress;
}

}  // namespace disttrain::progress
