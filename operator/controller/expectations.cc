#include "operator/controller/expectations.h"

namespace disttrain::controller {

void Expectations::Deleting(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  deleting_.insert(pod_uid);
}

bool Expectations::IsDeleting(const std::string& pod_uid) const {
  absl::MutexLock lock(&mu_);
  return deleting_.count(pod_uid) > 0;
}

void Expectations::PodGone(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  deleting_.erase(pod_uid);
}

void Expectations::Creating(const std::string& object_key, absl::Time now) {
  absl::MutexLock lock(&mu_);
  creating_[object_key] = now;
  // An object whose creation the informer never shows (created, then deleted before a relist)
  // would stay: every so often, entries older than any limit in use go.
  if (++creates_since_sweep_ < 4096) return;
  creates_since_sweep_ = 0;
  std::erase_if(creating_, [&](const auto& e) { return now - e.second > absl::Minutes(10); });
}

bool Expectations::IsCreating(const std::string& object_key, absl::Time now, absl::Duration limit) {
  absl::MutexLock lock(&mu_);
  auto it = creating_.find(object_key);
  if (it == creating_.end()) return false;
  if (now - it->second < limit) return true;
  creating_.erase(it);
  return false;
}

void Expectations::Seen(const std::string& object_key) {
  absl::MutexLock lock(&mu_);
  creating_.erase(object_key);
}

Expectations::Job& Expectations::Entry(const std::string& key, const std::string& uid) {
  Job& job = jobs_[key];
  if (job.uid != uid) job = Job{uid};
  return job;
}

void Expectations::PruneIfEmpty(const std::string& key) {
  auto it = jobs_.find(key);
  if (it != jobs_.end() && it->second.empty()) jobs_.erase(it);
}

int Expectations::CreateFailed(const std::string& key, const std::string& uid) {
  absl::MutexLock lock(&mu_);
  return ++Entry(key, uid).create_failures;
}

void Expectations::CreatedAll(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return;
  it->second.create_failures = 0;
  PruneIfEmpty(key);
}

void Expectations::WroteStatus(const std::string& key, const std::string& uid,
                               const std::string& rv, absl::Time when) {
  absl::MutexLock lock(&mu_);
  Job& job = Entry(key, uid);
  job.replaced_rv = rv;
  job.replaced_at = when;
  job.counts_waiting.reset();
}

bool Expectations::BehindOwnWrite(const std::string& key, const std::string& cached_rv,
                                  absl::Time now, absl::Duration limit) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(key);
  if (it == jobs_.end() || it->second.replaced_rv.empty()) return false;
  if (it->second.replaced_rv == cached_rv && now - it->second.replaced_at < limit) return true;
  it->second.replaced_rv.clear();  // caught up (or waited long enough)
  PruneIfEmpty(key);
  return false;
}

void Expectations::FirstWriteWaits(const std::string& key, const std::string& uid,
                                   absl::Time started) {
  absl::MutexLock lock(&mu_);
  Entry(key, uid).first_pass = started;
}

absl::Time Expectations::FirstPassTime(const std::string& key, const std::string& uid,
                                       absl::Time now) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(key);
  if (it == jobs_.end() || it->second.uid != uid || !it->second.first_pass) return now;
  return *it->second.first_pass;
}

void Expectations::FirstWriteDone(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return;
  it->second.first_pass.reset();
  PruneIfEmpty(key);
}

absl::Time Expectations::CountsWaitSince(const std::string& key, const std::string& uid,
                                         absl::Time now) {
  absl::MutexLock lock(&mu_);
  Job& job = Entry(key, uid);
  if (!job.counts_waiting) job.counts_waiting = now;
  return *job.counts_waiting;
}

void Expectations::CountsCurrent(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(key);
  if (it == jobs_.end() || !it->second.counts_waiting) return;
  it->second.counts_waiting.reset();
  PruneIfEmpty(key);
}

void Expectations::PodGroupBehind(const std::string& key, const std::string& uid, bool behind) {
  absl::MutexLock lock(&mu_);
  if (!behind && !jobs_.contains(key)) return;
  Entry(key, uid).pod_group_behind = behind;
  PruneIfEmpty(key);
}

bool Expectations::IsPodGroupBehind(const std::string& key, const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(key);
  return it != jobs_.end() && it->second.uid == uid && it->second.pod_group_behind;
}

void Expectations::PodGroupDeleted(const std::string& key, const std::string& uid) {
  absl::MutexLock lock(&mu_);
  Entry(key, uid).pod_group_deleted = true;
}

bool Expectations::IsPodGroupDeleted(const std::string& key, const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(key);
  return it != jobs_.end() && it->second.uid == uid && it->second.pod_group_deleted;
}

void Expectations::WorkloadReleased(const std::string& key, const std::string& uid,
                                    const std::string& workload_uid) {
  absl::MutexLock lock(&mu_);
  Entry(key, uid).released_workload = workload_uid;
}

bool Expectations::IsWorkloadReleased(const std::string& key, const std::string& uid,
                                      const std::string& workload_uid) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(key);
  return it != jobs_.end() && it->second.uid == uid && !workload_uid.empty() &&
         it->second.released_workload == workload_uid;
}

void Expectations::JobGone(const std::string& key) {
  absl::MutexLock lock(&mu_);
  jobs_.erase(key);
}

size_t Expectations::jobs() const {
  absl::MutexLock lock(&mu_);
  return jobs_.size();
}

size_t Expectations::pods() const {
  absl::MutexLock lock(&mu_);
  return deleting_.size();
}

size_t Expectations::creating() const {
  absl::MutexLock lock(&mu_);
  return creating_.size();
}

}  // namespace disttrain::controller
