#include "operator/kube/rate_limiter.h"

#include <algorithm>

#include "absl/time/clock.h"

namespace disttrain::kube {

RateLimiter::RateLimiter(double qps, int burst)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(std::max(1, burst)) {}

absl::Duration RateLimiter::Reserve(absl::Time now) {
  if (qps_ <= 0) return absl::ZeroDuration();
  absl::MutexLock lock(&mu_);
  if (last_ != absl::InfinitePast() && now > last_) {
    tokens_ = std::min(burst_, tokens_ + absl::ToDoubleSeconds(now - last_) * qps_);
  }
  if (now > last_ || last_ == absl::InfinitePast()) last_ = now;
  tokens_ -= 1;  // may go negative: the debt is the wait
  if (tokens_ >= 0) return absl::ZeroDuration();
  return absl::Seconds(-tokens_ / qps_);
}

void RateLimiter::Wait() {
  absl::Duration d = Reserve(absl::Now());
  if (d > absl::ZeroDuration()) absl::SleepFor(d);
}

}  // namespace disttrain::kube
