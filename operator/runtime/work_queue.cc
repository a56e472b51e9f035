#include "operator/runtime/work_queue.h"

#include <algorithm>

namespace disttrain::runtime {

WorkQueue::WorkQueue(WorkQueueOptions options, Clock* clock, MetricsRegistry* metrics)
    : options_(std::move(options)), clock_(clock) {
  if (metrics != nullptr) {
    depth_ = metrics->Gauge("workqueue_depth", "Current depth of workqueue", {"name"});
    adds_ = metrics->Counter("workqueue_adds_total", "Total number of adds handled by workqueue",
                             {"name"});
    retries_ = metrics->Counter("workqueue_retries_total",
                                "Total number of retries handled by workqueue", {"name"});
    queue_duration_ =
        metrics->Histogram("workqueue_queue_duration_seconds",
                           "How long in seconds an item stays in workqueue before being requested",
                           {"name"}, MetricsRegistry::DurationBuckets());
    work_duration_ =
        metrics->Histogram("workqueue_work_duration_seconds",
                           "How long in seconds processing an item from workqueue takes", {"name"},
                           MetricsRegistry::DurationBuckets());
    // Series exist at 0 from the start, as client-go's queue metrics do.
    depth_->Set({options_.name}, 0);
    adds_->Add({options_.name}, 0);
    retries_->Add({options_.name}, 0);
  }
  if (options_.start_timer) timer_ = std::thread([this] { TimerLoop(); });
}

WorkQueue::~WorkQueue() {
  ShutDown();
  if (timer_.joinable()) timer_.join();
}

void WorkQueue::UpdateDepth() {
  if (depth_) depth_->Set({options_.name}, static_cast<double>(queue_.size()));
}

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_) return;
  if (adds_) adds_->Add({options_.name}, 1);
  if (dirty_.count(key)) return;
  dirty_.insert(key);
  added_at_.emplace(key, clock_->Now());
  if (processing_.count(key)) return;
  queue_.push_back(key);
  UpdateDepth();
}

void WorkQueue::Add(const std::string& key) {
  absl::MutexLock lock(&mu_);
  AddLocked(key);
}

void WorkQueue::AddUrgent(const std::string& key) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return;
  if (adds_) adds_->Add({options_.name}, 1);
  if (processing_.count(key)) {
    dirty_.insert(key);
    added_at_.emplace(key, clock_->Now());
    urgent_.insert(key);
    return;
  }
  if (dirty_.count(key)) {
    queue_.erase(std::find(queue_.begin(), queue_.end(), key));
  } else {
    dirty_.insert(key);
    added_at_.emplace(key, clock_->Now());
  }
  queue_.push_front(key);
  UpdateDepth();
}

void WorkQueue::AddAfter(const std::string& key, absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return;
  if (delay <= absl::ZeroDuration()) {
    AddLocked(key);
    return;
  }
  // Queued already (or to be queued again when its worker is done): that pass comes sooner and
  // sees the same state; one that wants a later pass asks for it again.
  if (dirty_.count(key)) return;
  absl::Time ready = clock_->Now() + delay;
  auto it = waiting_.find(key);
  if (it == waiting_.end() || ready < it->second) waiting_[key] = ready;
  timer_wakeup_ = true;
}

void WorkQueue::AddRateLimited(const std::string& key) {
  absl::Duration delay;
  {
    absl::MutexLock lock(&mu_);
    int failures = failures_[key]++;
    delay = options_.base_backoff * (int64_t{1} << std::min(failures, 30));
    delay = std::min(delay, options_.max_backoff);
    if (retries_) retries_->Add({options_.name}, 1);
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) {
  absl::MutexLock lock(&mu_);
  failures_.erase(key);
}

int WorkQueue::NumRequeues(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

std::optional<std::string> WorkQueue::Get() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](WorkQueue* q)
           ABSL_NO_THREAD_SAFETY_ANALYSIS { return !q->queue_.empty() || q->shutting_down_; },
      this));
  if (queue_.empty()) return std::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  UpdateDepth();
  processing_.insert(key);
  dirty_.erase(key);
  const absl::Time now = clock_->Now();
  if (auto it = added_at_.find(key); it != added_at_.end()) {
    if (queue_duration_)
      queue_duration_->Observe({options_.name}, absl::ToDoubleSeconds(now - it->second));
    added_at_.erase(it);
  }
  started_at_[key] = now;
  return key;
}

void WorkQueue::Done(const std::string& key) {
  absl::MutexLock lock(&mu_);
  processing_.erase(key);
  if (auto it = started_at_.find(key); it != started_at_.end()) {
    if (work_duration_) {
      work_duration_->Observe({options_.name}, absl::ToDoubleSeconds(clock_->Now() - it->second));
    }
    started_at_.erase(it);
  }
  const bool urgent = urgent_.erase(key) > 0;
  if (dirty_.count(key) && !shutting_down_) {
    if (urgent) {
      queue_.push_front(key);
    } else {
      queue_.push_back(key);
    }
    UpdateDepth();
  }
}

void WorkQueue::ShutDown() {
  absl::MutexLock lock(&mu_);
  shutting_down_ = true;
  timer_wakeup_ = true;
}

bool WorkQueue::ShuttingDown() {
  absl::MutexLock lock(&mu_);
  return shutting_down_;
}

int WorkQueue::Len() {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(queue_.size());
}

absl::Duration WorkQueue::ProcessDue(absl::Time now) {
  absl::MutexLock lock(&mu_);
  absl::Duration next = absl::InfiniteDuration();
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (it->second <= now) {
      AddLocked(it->first);
      it = waiting_.erase(it);
    } else {
      next = std::min(next, it->second - now);
      ++it;
    }
  }
  return next;
}

void WorkQueue::TimerLoop() {
  while (true) {
    absl::Duration wait = ProcessDue(clock_->Now());
    absl::MutexLock lock(&mu_);
    if (shutting_down_) return;
    mu_.AwaitWithTimeout(absl::Condition(&timer_wakeup_), std::min(wait, absl::Seconds(1)));
    timer_wakeup_ = false;
    if (shutting_down_) return;
  }
}

}  // namespace disttrain::runtime
