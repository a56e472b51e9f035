// The job's conditions and state machine (docs/state-machine.md):
//
//   Created --all pods running--> Running --a pod is restarted--> Restarting --running again-->
//   Running
//      \                            |                                 |
//       +-------------------------> Succeeded / Failed  <-------------+
//   Suspended while spec.runPolicy.suspend is true (from any non-final state; resuming goes
//   back to Created until the pods run again).
//   Queued while a job sent to Kueue (label kueue.x-k8s.io/queue-name) waits for its Workload to
//   be admitted, first or again after an eviction: no pod exists (operator/queueing).
//
// `state` is the single current one: Failed > Succeeded > Suspended > Queued > Restarting >
// Running > Created. Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_CONDITIONS_H_
#define DISTTRAIN_OPERATOR_POLICY_CONDITIONS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "operator/api/types.h"

namespace disttrain::policy {

inline constexpr char kCreated[] = "Created";
inline constexpr char kRunning[] = "Running";
inline constexpr char kRestarting[] = "Restarting";
inline constexpr char kSucceeded[] = "Succeeded";
inline constexpr char kFailed[] = "Failed";
inline constexpr char kSuspended[] = "Suspended";
// True while the job waits for Kueue to admit its Workload; reason and message are Kueue's (or
// Preempted/Evicted with the eviction's message).
inline constexpr char kQueued[] = "Queued";
// Not a state: True while the API server refuses to create the job's pods or Services for a
// reason that retrying alone will not fix (quota, a missing PriorityClass, RBAC) or that has
// persisted; its message is the API server's. As ReplicaSet's ReplicaFailure/FailedCreate.
inline constexpr char kReplicaFailure[] = "ReplicaFailure";
// Not a state: how the final evaluation of a succeeded job with an evaluator ended. True once
// the evaluator exited having evaluated the chief's last step; False when it ran out of
// runPolicy.finalEvaluationGracePeriodSeconds, failed, or exited before that step.
inline constexpr char kEvaluated[] = "Evaluated";

// Sets condition `type`. lastTransitionTime moves only when the status flips; reason and message
// follow the latest call. A False condition that never existed is not added.
void SetCondition(api::JobStatus* status, absl::string_view type, bool value,
                  absl::string_view reason, absl::string_view message, absl::Time now);
// As SetCondition, but a False condition is added too: for outcomes (Evaluated) whose False is
// news.
void AddCondition(api::JobStatus* status, absl::string_view type, bool value,
                  absl::string_view reason, absl::string_view message, absl::Time now);
const api::Condition* FindCondition(const api::JobStatus& status, absl::string_view type);
bool IsTrue(const api::JobStatus& status, absl::string_view type);
bool IsFinished(const api::JobStatus& status);
// The current state by the precedence above ("" when no condition holds).
std::string CurrentState(const api::JobStatus& status);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_CONDITIONS_H_
