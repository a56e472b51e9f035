#include "operator/controller/job_policies.h"

#include "absl/strings/str_cat.h"

namespace disttrain::controller {

std::optional<std::string> SuccessMessage(
    const api::DistributedTraining& job,
    const std::function<bool(api::ReplicaType, int)>& succeeded) {
  const auto& specs = job.spec.replica_specs;
  auto replicas = [&](api::ReplicaType t) {
    auto it = specs.find(t);
    return it == specs.end() ? 0 : it->second.replicas;
  };
  if (job.spec.success_policy == api::SuccessPolicy::kAllWorkers) {
    const int workers = replicas(api::ReplicaType::kWorker);
    for (int i = 0; i < workers; ++i) {
      if (!succeeded(api::ReplicaType::kWorker, i)) return std::nullopt;
    }
    return absl::StrCat("all ", workers, " workers succeeded");
  }
  if (replicas(api::ReplicaType::kChief) > 0) {
    if (succeeded(api::ReplicaType::kChief, 0)) return std::string("the chief succeeded");
    return std::nullopt;
  }
  if (succeeded(api::ReplicaType::kWorker, 0)) return std::string("worker 0 succeeded");
  return std::nullopt;
}

bool DeleteOnFinish(api::CleanPodPolicy policy, const PodState& pod) {
  if (pod.terminating) return false;
  switch (policy) {
    case api::CleanPodPolicy::kNone:
      return false;
    case api::CleanPodPolicy::kAll:
      return true;
    case api::CleanPodPolicy::kRunning:
      return pod.phase != PodPhase::kSucceeded && pod.phase != PodPhase::kFailed;
  }
  return false;
}

namespace {

TimeCheck Check(std::optional<int64_t> seconds, std::optional<absl::Time> from, absl::Time now) {
  if (!seconds || !from) return {};
  absl::Time due = *from + absl::Seconds(*seconds);
  if (now >= due) return {true, std::nullopt};
  return {false, due - now};
}

}  // namespace

TimeCheck CheckDeadline(const api::DistributedTraining& job, absl::Time now) {
  return Check(job.spec.run_policy.active_deadline_seconds, job.status.start_time, now);
}

TimeCheck CheckTtl(const api::DistributedTraining& job, absl::Time now) {
  return Check(job.spec.run_policy.ttl_seconds_after_finished, job.status.completion_time, now);
}

int32_t TotalRestarts(const api::JobStatus& status) {
  int32_t total = 0;
  for (const auto& [type, rs] : status.replica_statuses) total += rs.restarts;
  return total;
}

}  // namespace disttrain::controller
