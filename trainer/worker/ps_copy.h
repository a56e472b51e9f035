// The chief's copy of what the parameter servers hold: every dense variable and the global step,
// pulled on a thread of its own (over connections of its own) every `interval`, so that a
// parameter server that dies is restored from a copy at most about `interval` old rather than
// from the last checkpoint on disk (replica.cc's InitializeOrRestore). The checkpoint stays the
// fallback: when the chief itself restarts, its copy is gone.
//
// Cost: one pull of the whole model per interval (the parameter servers serve it as they serve a
// worker's pull) and the model's size in the chief's memory. A pull never takes more than a tenth
// of the time: the next one starts `interval` or 10 x the last pull's duration after it,
// whichever is later, so a large model is copied less often rather than loading the servers.
//
// Thread-safe.
#ifndef DISTTRAIN_TRAINER_WORKER_PS_COPY_H_
#define DISTTRAIN_TRAINER_WORKER_PS_COPY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "trainer/models/model.h"

namespace disttrain::trainer {

class PsCopy {
 public:
  // Reads every variable into its argument and returns their global step (PsClient::PullAll).
  using Pull = std::function<absl::StatusOr<int64_t>(Params*)>;

  struct Copy {
    int64_t global_step = 0;
    Params params;
    absl::Time taken;  // when the pull that read it started
  };

  // `clock` outlives the copy; it times the pulls and the copies, the waits are real.
  PsCopy(Pull pull, absl::Duration interval, const Clock* clock = RealClock::Get());
  ~PsCopy();  // stops the thread
  PsCopy(const PsCopy&) = delete;
  PsCopy& operator=(const PsCopy&) = delete;

  // Starts pulling; once is enough (later calls do nothing).
  void Start();
  // The newest complete copy; nullopt before the first pull succeeded. A failed pull (a server
  // gone) keeps the last good one.
  std::optional<Copy> Latest() const;
  // Copies taken so far and pulls that failed (tests, logs).
  int64_t copies() const;
  int64_t failures() const;

 private:
  void Loop();

  const Pull pull_;
  const absl::Duration interval_;
  const Clock* const clock_;
  mutable absl::Mutex mu_;
  std::optional<Copy> latest_ ABSL_GUARDED_BY(mu_);
  int64_t copies_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WORKER_PS_COPY_H_
