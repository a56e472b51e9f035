// Exponential backoff that starts over after a healthy period: Next() is the wait before the
// next try (initial, 2x, 4x, ... up to max); Reset() after a try that went well, so one bad
// moment in a long healthy run costs the initial wait, not the cap. Not thread-safe.
#ifndef DISTTRAIN_OPERATOR_RUNTIME_BACKOFF_H_
#define DISTTRAIN_OPERATOR_RUNTIME_BACKOFF_H_

#include <algorithm>

#include "absl/time/time.h"

namespace disttrain::runtime {

class Backoff {
 public:
  Backoff(absl::Duration initial, absl::Duration max)
      : initial_(initial), max_(max), next_(initial) {}

  absl::Duration Next() {
    const absl::Duration wait = next_;
    next_ = std::min(next_ * 2, max_);
    return wait;
  }
  void Reset() { next_ = initial_; }

 private:
  const absl::Duration initial_, max_;
  absl::Duration next_;
};

}  // namespace disttrain::runtime

#endif  // DISTTRAIN_OPERATOR_RUNTIME_BACKOFF_H_
