// A work queue of object keys with client-go's semantics:
// - a key is queued at most once (adds while queued are merged);
// - a key is handed to at most one worker at a time (adds while it is processed re-queue it
//   when the worker calls Done);
// - AddUrgent puts a key at the head of the queue (or, while it is processed, re-queues it at the
//   head on Done): changes that release resources, such as a chief's exit, must not wait behind
//   a backlog of jobs being created;
// - AddAfter delays an add with a real timer (and adds nothing for a key already queued, whose
//   pass comes sooner); AddRateLimited delays by a per-key exponential backoff
//   (base * 2^failures, capped) that Forget resets.
// Thread-safe. Metrics (optional) use workqueue_* names with label name=<queue name>.
#ifndef DISTTRAIN_OPERATOR_RUNTIME_WORK_QUEUE_H_
#define DISTTRAIN_OPERATOR_RUNTIME_WORK_QUEUE_H_

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/metrics.h"

namespace disttrain::runtime {

struct WorkQueueOptions {
  std::string name = "queue";
  absl::Duration base_backoff = absl::Milliseconds(5);
  absl::Duration max_backoff = absl::Seconds(300);
  // Run the timer thread that moves due delayed keys into the queue. Tests that drive time
  // with a FakeClock turn it off and call ProcessDue().
  bool start_timer = true;
};

class WorkQueue {
 public:
  WorkQueue(WorkQueueOptions options, Clock* clock, MetricsRegistry* metrics = nullptr);
  ~WorkQueue();

  void Add(const std::string& key);
  void AddUrgent(const std::string& key);
  void AddAfter(const std::string& key, absl::Duration delay);
  void AddRateLimited(const std::string& key);
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key);

  // Blocks until a key is ready; nullopt once the queue is shut down and drained of nothing.
  std::optional<std::string> Get();
  void Done(const std::string& key);

  // Stops handing out keys: Get() returns nullopt; keys being processed may still call Done.
  void ShutDown();
  bool ShuttingDown();

  int Len();
  // Moves delayed keys that are due at `now` into the queue; returns the wait until the next
  // one is due (InfiniteDuration when none).
  absl::Duration ProcessDue(absl::Time now);

 private:
  void AddLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TimerLoop();
  void UpdateDepth() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const WorkQueueOptions options_;
  Clock* const clock_;
  absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> dirty_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> processing_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> urgent_ ABSL_GUARDED_BY(mu_);  // processing; re-queue at the head
  std::map<std::string, absl::Time> added_at_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> started_at_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> waiting_ ABSL_GUARDED_BY(mu_);  // key -> ready time
  std::map<std::string, int> failures_ ABSL_GUARDED_BY(mu_);
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  bool timer_wakeup_ ABSL_GUARDED_BY(mu_) = false;
  std::thread timer_;

  MetricFamily* depth_ = nullptr;
  MetricFamily* adds_ = nullptr;
  MetricFamily* retries_ = nullptr;
  MetricFamily* queue_duration_ = nullptr;
  MetricFamily* work_duration_ = nullptr;
};

}  // namespace disttrain::runtime

#endif  // DISTTRAIN_OPERATOR_RUNTIME_WORK_QUEUE_H_
