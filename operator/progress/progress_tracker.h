// Reads the progress of every training job from its chief's /metrics, off the reconcile path:
// a job's reconcile pass says what to read (Track) and takes the latest progress (Latest) into
// the status it writes; the tracker reads each job at most once per interval, all jobs together
// at most `readings_per_second`, and, when a reading changes a job's progress, asks for a pass
// (the notify callback: the front's work queue). So the status writes progress adds are bounded
// by the same two figures, and the API server never sees the step rate. A target that fails (no
// answer yet: a trainer still starting; no step in its metrics) is read again after a backoff
// that doubles from the interval up to 4 intervals (at most 5 minutes).
//
// Thread-safe. Start() runs its own thread; the fetches run on the fetcher's (MetricsFetcher).
#ifndef DISTTRAIN_OPERATOR_PROGRESS_PROGRESS_TRACKER_H_
#define DISTTRAIN_OPERATOR_PROGRESS_PROGRESS_TRACKER_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/metrics.h"
#include "operator/api/types.h"
#include "operator/progress/scrape_target.h"
#include "operator/progress/trainer_reading.h"
#include "operator/runtime/runnable.h"

namespace disttrain::progress {

// GET of a /metrics page. `done` is called once, with the body or why there is none, on any
// thread, possibly before Fetch returns.
class MetricsFetcher {
 public:
  virtual ~MetricsFetcher() = default;
  virtual void Fetch(const std::string& url,
                     std::function<void(absl::StatusOr<std::string>)> done) = 0;
};

struct ProgressSettings {
  absl::Duration interval = absl::Seconds(30);  // between two readings of one job
  double readings_per_second = 10;              // of every job together
};

class ProgressTracker : public runtime::Runnable {
 public:
  static constexpr absl::Duration kMaxBackoff = absl::Minutes(5);
  static constexpr absl::Duration kTick = absl::Seconds(1);

  // `metrics` may be null.
  ProgressTracker(MetricsFetcher* fetcher, const Clock* clock, ProgressSettings settings,
                  MetricsRegistry* metrics);
  ~ProgressTracker() override;

  // What a job's pass found to read: nullopt stops reading it (its pods do not run, or it
  // ended), keeping its latest progress. A new target is read at the next tick.
  void Track(const std::string& job, std::optional<ScrapeTarget> target);
  // The job is gone.
  void Forget(const std::string& job);
  std::optional<api::JobProgress> Latest(const std::string& job) const;

  // Called with a job's key when a reading changed its progress. Set before Start.
  void SetNotify(std::function<void(const std::string&)> notify) { notify_ = std::move(notify); }

  // Reads what is due now, within the rate. The thread Start runs calls it every kTick; tests
  // call it directly.
  void Tick();

  void Start() override;
  // Stops the thread and waits for the fetches in flight.
  void Stop() override;

 private:
  struct Entry {
    std::optional<ScrapeTarget> target;
    std::optional<TrainerReading> last;
    std::optional<api::JobProgress> latest;
    absl::Time due;
    int failures = 0;
    bool in_flight = false;
  };
  void Done(const std::string& job, const ScrapeTarget& target, absl::StatusOr<std::string> body);
  void Failed(Entry& e, absl::Time now, const char* why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; }

  MetricsFetcher* const fetcher_;
  const Clock* const clock_;
  const ProgressSettings settings_;
  MetricFamily* readings_ = nullptr;
  std::function<void(const std::string&)> notify_;

  mutable absl::Mutex mu_;
  std::map<std::string, Entry> jobs_ ABSL_GUARDED_BY(mu_);
  double tokens_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_tick_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace disttrain::progress

#endif  // DISTTRAIN_OPERATOR_PROGRESS_PROGRESS_TRACKER_H_
