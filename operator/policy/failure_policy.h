// What a failed pod means for its job. Pure functions; thread-safe.
//
//   role       restartPolicy        failed pod ->
//   PS         any                  recreate (the chief restores from its checkpoint)
//   Evaluator  ExitCode, retryable  recreate; otherwise leave it failed: never fails the job
//              OnFailure/Always     recreate (the kubelet gave up on it, e.g. evicted)
//   Chief,     ExitCode             retryable -> recreate; permanent -> fail the job
//   Worker     OnFailure/Always     recreate (the kubelet restarts in place; a Failed phase
//                                   means it could not, e.g. eviction)
//              Never                fail the job
// Every recreation counts against backoffLimit, but that of a pod OOM-killed below
// runPolicy.oomPolicy's maxMemory, which comes back with more memory (oom_policy.h), whatever
// the restart policy, also after the kubelet restarted it in place. A worker of an elastic job
// whose failure would end the job is set aside instead when it may be (elastic_policy.h).
#ifndef DISTTRAIN_OPERATOR_POLICY_FAILURE_POLICY_H_
#define DISTTRAIN_OPERATOR_POLICY_FAILURE_POLICY_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "operator/api/types.h"
#include "operator/policy/oom_policy.h"
#include "operator/policy/pod_state.h"
#include "operator/policy/running_policy.h"

namespace disttrain::policy {

enum class FailureAction { kRecreate, kFailJob, kLeaveFailed };

// Exit codes >= 128 (killed by a signal: 137 OOM kill, 143 SIGTERM) and pods the node gave up
// on (Evicted, OOMKilled, UnexpectedAdmissionError) are worth retrying; 1, 2, 126, 127 and the
// like are bugs or bad configuration and are not.
bool IsRetryable(const PodState& pod);

FailureAction OnPodFailed(api::ReplicaType type, api::RestartPolicy policy, const PodState& pod);

// What one pass does about the job's ended pods, decided from the job, its status and its pods;
// the reconciler applies it (status, events, deletes). Pods are visited in (role, index) order;
// the first failure that ends the job stops the visit, and what was decided before it stands.
struct FailureDecision {
  // Pods to delete: new restarts, and pods counted by an earlier pass whose delete has not been
  // seen (`deleting` false for them), in visiting order.
  std::vector<PodState> replace;
  // Replicas that succeeded and are not yet in their role's succeededIndexes.
  std::vector<std::pair<api::ReplicaType, int>> succeeded;
  // Failed pods to recreate: each counts 1 + its restartCount against backoffLimit, goes into
  // status.restartingPods, and is said in the Restarting condition and event.
  struct Restart {
    api::ReplicaType type;
    std::string uid;
    int32_t counted = 0;
    std::string message;
  };
  std::vector<Restart> restarts;
  // The job fails: the reason (<Role>Failed, BackoffLimitExceeded) and message.
  struct Failure {
    std::string reason, message;
  };
  std::optional<Failure> fail;
  // Workers of an elastic job set aside (their pods are in `replace`): the new or updated entries
  // of status.replicaStatuses.Worker.setAside.
  std::vector<api::SetAsideReplica> set_aside;
  // Replicas OOM-killed under runPolicy.oomPolicy (their pods are in `replace`): recreated with
  // more memory, not counted against backoffLimit (oom_policy.h).
  std::vector<MemoryGrowth> grown;
};

// `deleting(uid)`: this process deleted the pod and has not seen it gone.
FailureDecision DecideFailures(const api::DistributedTraining& job, const api::JobStatus& status,
                               const PodsByReplica& pods,
                               absl::FunctionRef<bool(const std::string& uid)> deleting,
                               absl::Time now);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_FAILURE_POLICY_H_
