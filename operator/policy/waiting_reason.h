// Why a job that has not ended is not running: one reason, the first that holds of
//
//   Queued            Kueue has not admitted its Workload (the Queued condition's message)
//   FailedCreate      the API server refuses its pods or Services: a ResourceQuota, Pod
//                     Security, a webhook (the ReplicaFailure condition's message)
//   Unschedulable     the scheduler cannot place a pod, a gang's pods included (its message);
//   SchedulingGated   or a pod waits for its scheduling gates to be removed
//   ErrImagePull,     a container cannot start: its image cannot be pulled, its config
//   ImagePullBackOff, refers to a missing Secret or ConfigMap, ... (the kubelet's reason and
//   ...               message)
//   WaitingForMinWorkers  an elastic job runs fewer than elasticPolicy.minReplicas workers
//
// written as the condition Waiting (True with that reason; False once none holds), which
// `kubectl dtr status` prints. Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_WAITING_REASON_H_
#define DISTTRAIN_OPERATOR_POLICY_WAITING_REASON_H_

#include <optional>
#include <string>

#include "operator/api/types.h"
#include "operator/policy/running_policy.h"

namespace disttrain::policy {

inline constexpr char kWaiting[] = "Waiting";

struct WaitingReason {
  std::string reason;
  std::string message;

  bool operator==(const WaitingReason&) const = default;
};

// The reason `job` waits, or nullopt when nothing holds it (its pods run, or are starting as
// they should). `readiness` counts its pods (CountReadiness).
std::optional<WaitingReason> FindWaitingReason(const api::DistributedTraining& job,
                                               const api::JobStatus& status,
                                               const PodsByReplica& pods,
                                               const Readiness& readiness);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_WAITING_REASON_H_
