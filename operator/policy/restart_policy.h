// Restarts and backoffLimit: how many restarts a job has used and whether one more fits. The
// only place that reads backoffLimit. Pure functions; thread-safe.
//
// A job's restarts = the pods the operator replaced (each counts 1 plus the in-place restarts
// it had, kept in status.replicaStatuses[*].pastRestarts) + the in-place restarts (container
// restartCount) of its current pods. A pod whose replacement is under way is listed in
// status.restartingPods: its restarts are already in pastRestarts and count only there. A worker
// pod set aside (elastic_policy.h) has its restarts in its setAside entry, out of backoffLimit.
// Every sum of restarts the operator makes is one of the functions below.
#ifndef DISTTRAIN_OPERATOR_POLICY_RESTART_POLICY_H_
#define DISTTRAIN_OPERATOR_POLICY_RESTART_POLICY_H_

#include <cstdint>
#include <vector>

#include "operator/api/types.h"
#include "operator/policy/pod_state.h"

namespace disttrain::policy {

struct RestartTally {
  int32_t past = 0;      // replaced pods, from the status
  int32_t in_place = 0;  // restartCount of current pods that are not being replaced
  int32_t total() const { return past + in_place; }
};

// `current` are the job's pods as cached; pods listed in status.restartingPods or set aside are
// skipped.
RestartTally CountRestarts(const api::JobStatus& status, const std::vector<PodState>& current);

// The in-place restarts of `pod` that count as its own now: 0 while it is being replaced or set
// aside (they are counted in pastRestarts, or in its setAside entry).
int32_t LiveRestarts(const api::JobStatus& status, const PodState& pod);

// What replacing `pod` adds to its role's pastRestarts: the replacement, and its in-place
// restarts.
int32_t ReplacementRestarts(const PodState& pod);

// status.replicaStatuses[*].restarts: the role's pastRestarts, the LiveRestarts of its current
// pods (`live`) and the restarts of its workers set aside.
int32_t RoleRestarts(const api::ReplicaStatus& role, int32_t live);

// The inverse of RoleRestarts: the live restarts a written role status recorded.
int32_t RecordedLiveRestarts(const api::ReplicaStatus& role);

// True when the pod is listed in status.restartingPods.
bool IsBeingReplaced(const api::JobStatus& status, const PodState& pod);

// True when the pod is the one a worker's status.replicaStatuses.Worker.setAside entry names
// (elastic_policy.h): being deleted, its restarts counted in that entry.
bool IsSetAside(const api::JobStatus& status, const PodState& pod);

// backoffLimit (the default when unset).
int32_t BackoffLimit(const api::DistributedTraining& job);

// Whether `tally` plus `more` restarts stays within backoffLimit (restarts == limit is allowed,
// one more is not: backoffLimit 0 means no restart at all).
bool WithinBackoffLimit(const api::DistributedTraining& job, const RestartTally& tally,
                        int32_t more = 0);

// Whether containers restarted in place since `before` was written: the in-place restarts it
// recorded (restarts - pastRestarts, per role) are fewer than `tally.in_place`.
bool RestartedInPlaceSince(const api::JobStatus& before, const RestartTally& tally);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_RESTART_POLICY_H_
