// Client-side request rate limit: a token bucket of `burst` tokens refilled at `qps` per second
// (client-go's --kube-api-qps / --kube-api-burst). Thread-safe.
#ifndef DISTTRAIN_OPERATOR_KUBE_RATE_LIMITER_H_
#define DISTTRAIN_OPERATOR_KUBE_RATE_LIMITER_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace disttrain::kube {

class RateLimiter {
 public:
  // qps <= 0 disables the limit.
  RateLimiter(double qps, int burst);

  // How long the caller must wait before its request, given the time now; takes a token.
  absl::Duration Reserve(absl::Time now);
  // Reserve(absl::Now()) and sleep it out.
  void Wait();

 private:
  const double qps_;
  const double burst_;
  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time last_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace disttrain::kube

#endif  // DISTTRAIN_OPERATOR_KUBE_RATE_LIMITER_H_
