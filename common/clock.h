// Time as a dependency, for the operator and the trainer alike: production code reads RealClock,
// tests drive a FakeClock.
#ifndef DISTTRAIN_COMMON_CLOCK_H_
#define DISTTRAIN_COMMON_CLOCK_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace disttrain {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

class RealClock : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  static Clock* Get() {
    static RealClock clock;
    return &clock;
  }
};

// A clock that moves only when told. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000)) : now_(start) {}
  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_;
};

}  // namespace disttrain

#endif  // DISTTRAIN_COMMON_CLOCK_H_
