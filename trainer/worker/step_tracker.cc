#include "trainer/worker/step_tracker.h"

namespace disttrain::trainer {

StepTracker::Call StepTracker::Begin() {
  Call call;
  call.push = pending_;
  call.step = grad_step_;
  call.min_step = sync_ ? want_ : 0;
  pushed_ = pending_;
  pending_ = false;
  return call;
}

StepTracker::Verdict StepTracker::Reply(int64_t global_step, bool dropped,
                                        const std::vector<std::string>& incarnations) {
  Verdict v;
  // A dropped push was stale: its step's aggregate is applied already, so the servers' step is
  // the one to train at; otherwise the next step is this push's aggregate.
  if (pushed_ && sync_) want_ = dropped ? global_step : grad_step_ + 1;
  pushed_ = false;
  // Waiting for the step after this replica's last push would wait for a gradient nobody
  // computes any more once a server was restored to an earlier step.
  if (incarnations != incarnations_) {
    v.new_incarnations = true;
    v.restarted = !incarnations_.empty();
    incarnations_ = incarnations;
    want_ = global_step;
  }
  v.step = global_step;
  v.train = !sync_ || global_step >= want_;
  return v;
}

void StepTracker::Computed(int64_t step) {
  pending_ = true;
  grad_step_ = step;
  want_ = step + 1;
}

void StepTracker::Reconnected() {
  pending_ = false;
  pushed_ = false;
  incarnations_.clear();
}

}  // namespace disttrain::trainer
