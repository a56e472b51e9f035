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

void Expectations::PodGroupDeleted(const std::string& key, const std::string& uid) {
  absl::MutexLock lock(&mu_);
  Entry(key, uid).pod_group_deleted = true;
}

bool Expectations::IsPodGroupDeleted(const std::string& key, const std::string& uid) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(key);
  return it != jobs_.end() && it->second.uid == uid && it->second.pod_group_deleted;
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

}  // namespace disttrain::controller
