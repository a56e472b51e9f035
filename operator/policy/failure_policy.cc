#include "operator/policy/failure_policy.h"

namespace disttrain::policy {

bool IsRetryable(const PodState& pod) {
  if (pod.reason == "Evicted" || pod.reason == "OOMKilled" ||
      pod.reason == "UnexpectedAdmissionError" || pod.reason == "Preempting" ||
      pod.reason == "Shutdown" || pod.reason == "Terminated") {
    return true;
  }
  return pod.exit_code && *pod.exit_code >= 128;
}

FailureAction OnPodFailed(api::ReplicaType type, api::RestartPolicy policy, const PodState& pod) {
  using api::RestartPolicy;
  if (type == api::ReplicaType::kPS) return FailureAction::kRecreate;
  const bool retry = policy == RestartPolicy::kOnFailure || policy == RestartPolicy::kAlways ||
                     (policy == RestartPolicy::kExitCode && IsRetryable(pod));
  if (retry) return FailureAction::kRecreate;
  if (type == api::ReplicaType::kEvaluator) return FailureAction::kLeaveFailed;
  return FailureAction::kFailJob;
}

}  // namespace disttrain::policy
