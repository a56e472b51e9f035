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
// Every recreation counts against backoffLimit.
#ifndef DISTTRAIN_OPERATOR_POLICY_FAILURE_POLICY_H_
#define DISTTRAIN_OPERATOR_POLICY_FAILURE_POLICY_H_

#include "operator/api/types.h"
#include "operator/policy/pod_state.h"

namespace disttrain::policy {

enum class FailureAction { kRecreate, kFailJob, kLeaveFailed };

// Exit codes >= 128 (killed by a signal: 137 OOM kill, 143 SIGTERM) and pods the node gave up
// on (Evicted, OOMKilled, UnexpectedAdmissionError) are worth retrying; 1, 2, 126, 127 and the
// like are bugs or bad configuration and are not.
bool IsRetryable(const PodState& pod);

FailureAction OnPodFailed(api::ReplicaType type, api::RestartPolicy policy, const PodState& pod);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_FAILURE_POLICY_H_
