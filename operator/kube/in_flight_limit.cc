#include "operator/kube/in_flight_limit.h"

namespace disttrain::kube {

void InFlightLimit::Acquire() {
  absl::MutexLock lock(&mu_);
  if (limit_ > 0 && in_flight_ >= limit_) {
    ++waiting_;
    mu_.Await(absl::Condition(
        +[](InFlightLimit* l)
             ABSL_EXCLUSIVE_LOCKS_REQUIRED(l->mu_) { return l->in_flight_ < l->limit_; },
        this));
    --waiting_;
  }
  ++in_flight_;
}

bool InFlightLimit::TryAcquire() {
  absl::MutexLock lock(&mu_);
  if (limit_ > 0 && (in_flight_ >= limit_ || waiting_ > 0)) return false;
  ++in_flight_;
  return true;
}

void InFlightLimit::Release() {
  absl::MutexLock lock(&mu_);
  --in_flight_;
}

int InFlightLimit::in_flight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

int InFlightLimit::waiting() const {
  absl::MutexLock lock(&mu_);
  return waiting_;
}

}  // namespace disttrain::kube
