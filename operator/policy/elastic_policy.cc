#include "operator/policy/elastic_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "operator/api/codec.h"
#include "operator/api/names.h"
#include "operator/policy/restart_policy.h"

namespace disttrain::policy {
namespace {

const std::vector<api::SetAsideReplica>* Entries(const api::JobStatus& status) {
  auto it = status.replica_statuses.find(api::ReplicaType::kWorker);
  return it == status.replica_statuses.end() ? nullptr : &it->second.set_aside;
}

bool DecidesSuccess(const api::DistributedTraining& job, int index) {
  if (job.spec.success_policy == api::SuccessPolicy::kAllWorkers) return true;
  auto chief = job.spec.replica_specs.find(api::ReplicaType::kChief);
  const bool has_chief = chief != job.spec.replica_specs.end() && chief->second.replicas > 0;
  return !has_chief && index == 0;
}

int32_t Workers(const api::DistributedTraining& job) {
  auto it = job.spec.replica_specs.find(api::ReplicaType::kWorker);
  return it == job.spec.replica_specs.end() ? 0 : it->second.replicas;
}

absl::Duration WaitAfter(int32_t times) {
  absl::Duration wait = kFirstSetAsideWait;
  for (int32_t i = 1; i < times && wait < kLongestSetAsideWait; ++i) wait *= 2;
  return std::min(wait, kLongestSetAsideWait);
}

}  // namespace

const api::SetAsideReplica* FindSetAside(const api::JobStatus& status, int index) {
  const auto* entries = Entries(status);
  if (entries == nullptr) return nullptr;
  for (const api::SetAsideReplica& e : *entries) {
    if (e.index == index) return &e;
  }
  return nullptr;
}

int WaitingSetAside(const api::JobStatus& status, absl::Time now) {
  const auto* entries = Entries(status);
  if (entries == nullptr) return 0;
  return static_cast<int>(std::count_if(entries->begin(), entries->end(),
                                        [&](const auto& e) { return e.retry_time > now; }));
}

std::optional<absl::Time> SetAsideUntil(const api::JobStatus& status, int index, absl::Time now) {
  const api::SetAsideReplica* e = FindSetAside(status, index);
  if (e == nullptr || e->retry_time <= now) return std::nullopt;
  return e->retry_time;
}

bool MaySetAside(const api::DistributedTraining& job, const api::JobStatus& status, int index,
                 int also, absl::Time now) {
  if (!job.spec.elastic_policy || DecidesSuccess(job, index)) return false;
  const int others_waiting =
      WaitingSetAside(status, now) - (SetAsideUntil(status, index, now) ? 1 : 0);
  return Workers(job) - others_waiting - also - 1 >= job.spec.elastic_policy->min_replicas;
}

api::SetAsideReplica SetAside(const api::DistributedTraining& job, const api::JobStatus& status,
                              const PodState& pod, const std::string& why, int also,
                              absl::Time now) {
  api::SetAsideReplica e;
  if (const api::SetAsideReplica* before = FindSetAside(status, pod.index)) e = *before;
  e.index = pod.index;
  e.pod_uid = pod.uid;
  e.times += 1;
  e.restarts += pod.restart_count;
  const absl::Duration wait = WaitAfter(e.times);
  e.retry_time = now + wait;
  const int running_on = Workers(job) - WaitingSetAside(status, now) - also - 1 +
                         (SetAsideUntil(status, pod.index, now) ? 1 : 0);
  e.message = absl::StrCat(
      why, ": set aside (", e.times, e.times == 1 ? " time" : " times", "); the job runs on with ",
      running_on, " of ", Workers(job), " workers (elasticPolicy.minReplicas ",
      job.spec.elastic_policy->min_replicas, ") and creates ", pod.name, " again in ",
      absl::FormatDuration(wait), ", at ", api::FormatKubeTime(e.retry_time));
  return e;
}

std::vector<PodState> SetAsideToFitBackoff(const api::DistributedTraining& job,
                                           const api::JobStatus& status, const PodsByReplica& pods,
                                           int32_t over, absl::Time now) {
  std::vector<PodState> candidates;
  for (const auto& [id, pod] : pods) {
    if (id.first != api::ReplicaType::kWorker || pod.restart_count == 0 || pod.terminating ||
        IsBeingReplaced(status, pod) || IsSetAside(status, pod)) {
      continue;
    }
    candidates.push_back(pod);
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const PodState& a, const PodState& b) {
    return a.restart_count > b.restart_count;
  });
  std::vector<PodState> chosen;
  for (const PodState& pod : candidates) {
    if (over <= 0) break;
    if (!MaySetAside(job, status, pod.index, static_cast<int>(chosen.size()), now)) continue;
    chosen.push_back(pod);
    over -= pod.restart_count;
  }
  if (over > 0) chosen.clear();
  return chosen;
}

std::string WhyNotSetAside(const api::DistributedTraining& job, api::ReplicaType type, int index) {
  if (!job.spec.elastic_policy || type != api::ReplicaType::kWorker) return "";
  if (DecidesSuccess(job, index)) {
    return job.spec.success_policy == api::SuccessPolicy::kAllWorkers
               ? "; under successPolicy AllWorkers every worker must succeed, so none is set aside"
               : "; worker 0 decides the job's success (no chief), so it is never set aside";
  }
  return absl::StrCat("; setting it aside would leave fewer than elasticPolicy.minReplicas ",
                      job.spec.elastic_policy->min_replicas, " workers");
}

}  // namespace disttrain::policy
