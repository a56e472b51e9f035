#include "trainer/worker/step_reporter.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/log.h"
#include "trainer/events.h"

namespace disttrain::trainer {

StepReporter::StepReporter(Config config, TrainerMetrics* metrics,
                           std::unique_ptr<EventWriter> summaries, const Clock* clock)
    : config_(std::move(config)),
      metrics_(metrics),
      summaries_(std::move(summaries)),
      clock_(clock) {
  if (config_.target_steps > 0) {
    metrics_->target_steps->Set({}, static_cast<double>(config_.target_steps));
  }
}

double StepReporter::ExamplesPerGlobalStep() const {
  const int live = live_replicas_ > 0 ? live_replicas_ : config_.tf_config_replicas;
  const int64_t commits = !config_.sync
                              ? 1
                              : (config_.replicas_to_aggregate > 0
                                     ? std::min<int64_t>(config_.replicas_to_aggregate, live)
                                     : live);
  return static_cast<double>(config_.batches_per_commit * commits * config_.batch_size);
}

void StepReporter::Record(int64_t step, float loss) {
  const int64_t batches = config_.batches_per_commit;
  metrics_->global_step->Set({}, static_cast<double>(step));
  metrics_->examples_per_global_step->Set({}, ExamplesPerGlobalStep());
  metrics_->loss->Set({}, loss);
  metrics_->local_steps->Add({}, static_cast<double>(batches));
  local_steps_ += batches;
  const absl::Time now = clock_->Now();
  if (rate_since_ == absl::InfiniteFuture()) {
    rate_since_ = summary_since_ = now;
    rate_local_steps_ = local_steps_;
    summary_step_ = step;
  }
  if (const double seconds = absl::ToDoubleSeconds(now - rate_since_);
      seconds >= 1 || (!rate_window_closed_ && seconds > 0)) {
    metrics_->examples_per_second->Set(
        {}, static_cast<double>((local_steps_ - rate_local_steps_) * config_.batch_size) / seconds);
    if (seconds >= 1) {
      rate_since_ = now;
      rate_local_steps_ = local_steps_;
      rate_window_closed_ = true;
    }
  }
  if (config_.log_every <= 0 || step % config_.log_every != 0) return;
  EmitEvent({{"event", "step"}, {"task", config_.task}, {"global_step", step}, {"loss", loss}});
  if (summaries_ == nullptr) return;
  std::vector<std::pair<std::string, float>> scalars = {{"loss", loss}};
  if (const double seconds = absl::ToDoubleSeconds(now - summary_since_);
      seconds > 0 && step > summary_step_) {
    // The live replicas are the count the servers reply, TF_CONFIG's before the first reply.
    const double steps_per_second = static_cast<double>(step - summary_step_) / seconds;
    scalars.emplace_back("global_step/sec", static_cast<float>(steps_per_second));
    scalars.emplace_back("examples/sec",
                         static_cast<float>(steps_per_second * ExamplesPerGlobalStep()));
  }
  summary_since_ = now;
  summary_step_ = step;
  if (absl::Status s = summaries_->WriteScalars(step, scalars, now); !s.ok()) {
    LogWarning("stopped writing summaries", {{"error", s.ToString()}});
    summaries_.reset();
  }
}

}  // namespace disttrain::trainer
