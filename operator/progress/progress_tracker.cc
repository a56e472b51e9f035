#include "operator/progress/progress_tracker.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "operator/progress/estimate.h"

namespace disttrain::progress {
namespace {

bool SameButTime(api::JobProgress a, const api::JobProgress& b) {
  a.observe_time = b.observe_time;
  return a == b;
}

}  // namespace

ProgressTracker::ProgressTracker(MetricsFetcher* fetcher, const Clock* clock,
                                 ProgressSettings settings, MetricsRegistry* metrics)
    : fetcher_(fetcher), clock_(clock), settings_(settings) {
  if (metrics != nullptr) {
    readings_ = metrics->Counter(
        "disttrain_progress_readings_total",
        "Readings of training jobs' progress from their chief's /metrics, by result: ok, "
        "unreachable (no answer), no_step (no disttrain_trainer_global_step), invalid.",
        {"result"});
  }
}

ProgressTracker::~ProgressTracker() { Stop(); }

void ProgressTracker::Track(const std::string& job, std::optional<ScrapeTarget> target) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) {
    if (!target) return;
    it = jobs_.emplace(job, Entry{}).first;
  }
  Entry& e = it->second;
  if (e.target == target) return;
  e.target = std::move(target);
  e.failures = 0;
  e.due = clock_->Now();
}

void ProgressTracker::Forget(const std::string& job) {
  absl::MutexLock lock(&mu_);
  jobs_.erase(job);
}

std::optional<api::JobProgress> ProgressTracker::Latest(const std::string& job) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return std::nullopt;
  return it->second.latest;
}

void ProgressTracker::Tick() {
  std::vector<std::pair<std::string, ScrapeTarget>> fetch;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_->Now();
    const double burst = std::max(1.0, settings_.readings_per_second);
    tokens_ = last_tick_ == absl::InfinitePast()
                  ? burst
                  : std::min(burst, tokens_ + absl::ToDoubleSeconds(now - last_tick_) *
                                                  settings_.readings_per_second);
    last_tick_ = now;
    std::vector<std::pair<absl::Time, const std::string*>> due;
    for (const auto& [job, e] : jobs_) {
      if (e.target && !e.in_flight && e.due <= now) due.emplace_back(e.due, &job);
    }
    std::sort(due.begin(), due.end());  // the longest waiting first
    for (const auto& [when, job] : due) {
      if (tokens_ < 1) break;
      tokens_ -= 1;
      Entry& e = jobs_.at(*job);
      e.in_flight = true;
      ++in_flight_;
      fetch.emplace_back(*job, *e.target);
    }
  }
  for (auto& entry : fetch) {
    // Named copies: clang does not capture structured bindings.
    const std::string& url = entry.second.url;
    fetcher_->Fetch(
        url, [this, job = entry.first, target = entry.second](absl::StatusOr<std::string> body) {
          Done(job, target, std::move(body));
        });
  }
}

void ProgressTracker::Failed(Entry& e, absl::Time now, const char* why) {
  if (readings_ != nullptr) readings_->Add({why}, 1);
  ++e.failures;
  const absl::Duration cap = std::min(4 * settings_.interval, kMaxBackoff);
  absl::Duration wait = settings_.interval;
  for (int i = 1; i < e.failures && wait < cap; ++i) wait *= 2;
  e.due = now + std::min(wait, cap);
}

void ProgressTracker::Done(const std::string& job, const ScrapeTarget& target,
                           absl::StatusOr<std::string> body) {
  bool changed = false;
  {
    absl::MutexLock lock(&mu_);
    --in_flight_;
    auto it = jobs_.find(job);
    // Forgotten, or told to read another pod while this one was read: dropped.
    if (it == jobs_.end() || !it->second.in_flight) return;
    Entry& e = it->second;
    e.in_flight = false;
    if (e.target != target) return;
    const absl::Time now = clock_->Now();
    if (!body.ok()) {
      Failed(e, now, "unreachable");
      return;
    }
    absl::StatusOr<TrainerReading> reading = ReadTrainerMetrics(*body, now);
    if (!reading.ok()) {
      Failed(e, now, absl::IsNotFound(reading.status()) ? "no_step" : "invalid");
      return;
    }
    if (readings_ != nullptr) readings_->Add({"ok"}, 1);
    e.failures = 0;
    e.due = now + settings_.interval;
    api::JobProgress progress = EstimateProgress(*reading, e.last);
    e.last = *reading;
    // A reading that only moves the observe time is no news: a stalled job is not rewritten.
    changed = !e.latest || !SameButTime(*e.latest, progress);
    e.latest = std::move(progress);
  }
  if (changed && notify_) notify_(job);
}

void ProgressTracker::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (thread_.joinable()) return;
    stopping_ = false;
  }
  thread_ = std::thread([this] {
    for (;;) {
      Tick();
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), kTick)) return;
    }
  });
}

void ProgressTracker::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &ProgressTracker::Idle));
}

}  // namespace disttrain::progress
