// What a chief or worker reports after each of its steps: the Prometheus gauges of
// trainer_metrics.h (global step, loss, local steps, and examples/s over windows of a second, with
// a live rate in the first second), the `step` event every --log-every steps, and on the chief
// the TensorBoard scalars loss, global_step/sec and examples/sec. Time comes from `clock`. Not
// thread-safe: the replica's loop owns it.
#ifndef DISTTRAIN_TRAINER_WORKER_STEP_REPORTER_H_
#define DISTTRAIN_TRAINER_WORKER_STEP_REPORTER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "common/clock.h"
#include "trainer/metrics/trainer_metrics.h"
#include "trainer/summary/event_writer.h"

namespace disttrain::trainer {

class StepReporter {
 public:
  struct Config {
    std::string task;                   // for the step event
    int64_t batch_size = 1;             // examples per batch
    int64_t batches_per_commit = 1;     // the scheme's local steps times the towers
    int64_t log_every = 0;              // a step event and summaries every N global steps; 0: never
    bool sync = false;                  // a global step aggregates one commit per live replica
    int64_t replicas_to_aggregate = 0;  // sync: at most this many (0: every live replica)
    int tf_config_replicas = 1;         // the live count until a server said otherwise
    int64_t target_steps = 0;           // the global step training stops at (0: not known)
  };
  // `summaries` (the chief's; may be null) is dropped after a failed write, with a warning.
  StepReporter(Config config, TrainerMetrics* metrics, std::unique_ptr<EventWriter> summaries,
               const Clock* clock = RealClock::Get());

  // The training replicas the servers count live (0: not heard yet).
  void SetLiveReplicas(int live) { live_replicas_ = live; }
  // After the step that computed at global step `step` with `loss`.
  void Record(int64_t step, float loss);

 private:
  // The training examples one global step stands for: a replica's commit, or in synchronous
  // schemes the aggregate of one commit per live replica (at most replicas-to-aggregate).
  double ExamplesPerGlobalStep() const;

  const Config config_;
  TrainerMetrics* const metrics_;
  std::unique_ptr<EventWriter> summaries_;
  const Clock* const clock_;
  int live_replicas_ = 0;
  int64_t local_steps_ = 0;
  // examples/s over windows of a second from rate_since_, and over the time since the first step
  // until the first window closes (so a scrape in the first second sees a live rate).
  absl::Time rate_since_ = absl::InfiniteFuture();
  int64_t rate_local_steps_ = 0;
  bool rate_window_closed_ = false;
  // global_step/sec since the last summary.
  absl::Time summary_since_ = absl::InfiniteFuture();
  int64_t summary_step_ = 0;
};

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_WORKER_STEP_REPORTER_H_
