#include "operator/policy/restart_policy.h"

#include <algorithm>

#include "operator/api/defaults.h"

namespace disttrain::policy {

bool IsBeingReplaced(const api::JobStatus& status, const PodState& pod) {
  const auto& uids = status.restarting_pods;
  return std::find(uids.begin(), uids.end(), pod.uid) != uids.end();
}

bool IsSetAside(const api::JobStatus& status, const PodState& pod) {
  auto role = status.replica_statuses.find(api::ReplicaType::kWorker);
  if (pod.type != api::ReplicaType::kWorker || role == status.replica_statuses.end()) return false;
  for (const api::SetAsideReplica& e : role->second.set_aside) {
    if (e.index == pod.index) return e.pod_uid == pod.uid;
  }
  return false;
}

RestartTally CountRestarts(const api::JobStatus& status, const std::vector<PodState>& current) {
  RestartTally tally;
  for (const auto& [type, rs] : status.replica_statuses) tally.past += rs.past_restarts;
  for (const PodState& pod : current) tally.in_place += LiveRestarts(status, pod);
  return tally;
}

int32_t LiveRestarts(const api::JobStatus& status, const PodState& pod) {
  return IsBeingReplaced(status, pod) || IsSetAside(status, pod) ? 0 : pod.restart_count;
}

int32_t ReplacementRestarts(const PodState& pod) { return 1 + pod.restart_count; }

namespace {

int32_t SetAsideRestarts(const api::ReplicaStatus& role) {
  int32_t n = 0;
  for (const api::SetAsideReplica& e : role.set_aside) n += e.restarts;
  return n;
}

}  // namespace

int32_t RoleRestarts(const api::ReplicaStatus& role, int32_t live) {
  return role.past_restarts + live + SetAsideRestarts(role);
}

int32_t RecordedLiveRestarts(const api::ReplicaStatus& role) {
  return role.restarts - role.past_restarts - SetAsideRestarts(role);
}

int32_t BackoffLimit(const api::DistributedTraining& job) {
  return job.spec.run_policy.backoff_limit.value_or(api::kDefaultBackoffLimit);
}

bool WithinBackoffLimit(const api::DistributedTraining& job, const RestartTally& tally,
                        int32_t more) {
  return tally.total() + more <= BackoffLimit(job);
}

bool RestartedInPlaceSince(const api::JobStatus& before, const RestartTally& tally) {
  int32_t recorded = 0;
  for (const auto& [type, rs] : before.replica_statuses) recorded += RecordedLiveRestarts(rs);
  return tally.in_place > recorded;
}

}  // namespace disttrain::policy
