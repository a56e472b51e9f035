#include "trainer/worker/ps_copy.h"

#include <algorithm>
#include <utility>

namespace disttrain::trainer {

PsCopy::PsCopy(Pull pull, absl::Duration interval, const Clock* clock)
    : pull_(std::move(pull)), interval_(interval), clock_(clock) {}

PsCopy::~PsCopy() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void PsCopy::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

std::optional<PsCopy::Copy> PsCopy::Latest() const {
  absl::MutexLock lock(&mu_);
  return latest_;
}

int64_t PsCopy::copies() const {
  absl::MutexLock lock(&mu_);
  return copies_;
}

int64_t PsCopy::failures() const {
  absl::MutexLock lock(&mu_);
  return failures_;
}

void PsCopy::Loop() {
  Params params;
  while (true) {
    const absl::Time start = clock_->Now();
    absl::StatusOr<int64_t> step = pull_(&params);
    const absl::Duration took = clock_->Now() - start;
    {
      absl::MutexLock lock(&mu_);
      if (step.ok()) {
        if (latest_.has_value()) {
          latest_->global_step = *step;
          std::swap(latest_->params, params);  // the old copy's buffers serve the next pull
          latest_->taken = start;
        } else {
          latest_ = Copy{*step, std::move(params), start};
          params = Params();
        }
        ++copies_;
      } else {
        ++failures_;
      }
      const absl::Duration wait = std::max(interval_, 10 * took) - took;
      if (mu_.AwaitWithTimeout(absl::Condition(&stop_), std::max(wait, absl::ZeroDuration())))
        return;
    }
  }
}

}  // namespace disttrain::trainer
