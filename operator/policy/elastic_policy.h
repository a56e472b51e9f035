// Elastic jobs that run on with fewer workers instead of failing. Pure functions; thread-safe.
//
// A worker of a job with an elasticPolicy whose failure would end the job (restartPolicy Never,
// a permanent exit under ExitCode, or a restart past backoffLimit, in place or not) is set aside
// instead, as long as minReplicas workers remain without it: the operator deletes its pod, lists
// it in status.replicaStatuses.Worker.setAside, and creates it again at its retryTime (30 s after
// the first time, doubling each time after, at most 10 min), which grows the job back. The
// restarts of a pod set aside are kept out of backoffLimit. A worker that decides success (worker
// 0 of a job without a chief, any worker under successPolicy AllWorkers) is never set aside.
#ifndef DISTTRAIN_OPERATOR_POLICY_ELASTIC_POLICY_H_
#define DISTTRAIN_OPERATOR_POLICY_ELASTIC_POLICY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "operator/api/types.h"
#include "operator/policy/pod_state.h"
#include "operator/policy/running_policy.h"

namespace disttrain::policy {

inline constexpr absl::Duration kFirstSetAsideWait = absl::Seconds(30);
inline constexpr absl::Duration kLongestSetAsideWait = absl::Minutes(10);

// The Worker role's set-aside entry for `index`, or nullptr.
const api::SetAsideReplica* FindSetAside(const api::JobStatus& status, int index);

// Workers set aside and not yet due to be created again.
int WaitingSetAside(const api::JobStatus& status, absl::Time now);

// When worker `index` is due to be created again, while it is set aside and not yet due.
std::optional<absl::Time> SetAsideUntil(const api::JobStatus& status, int index, absl::Time now);

// Whether worker `index` may be set aside now, when `also` other workers are set aside in the
// same pass (not yet in `status`).
bool MaySetAside(const api::DistributedTraining& job, const api::JobStatus& status, int index,
                 int also, absl::Time now);

// The entry of `pod` set aside now because of `why` (its earlier entry updated, or a new one),
// `also` other workers being set aside in the same pass.
api::SetAsideReplica SetAside(const api::DistributedTraining& job, const api::JobStatus& status,
                              const PodState& pod, const std::string& why, int also,
                              absl::Time now);

// The job's restarts exceed backoffLimit by `over` through restarts in place: the workers that,
// set aside (those restarted most first), bring it back within, or nothing when they cannot.
std::vector<PodState> SetAsideToFitBackoff(const api::DistributedTraining& job,
                                           const api::JobStatus& status, const PodsByReplica& pods,
                                           int32_t over, absl::Time now);

// Why a failure that ends the job could not be set aside: "" without an elasticPolicy.
std::string WhyNotSetAside(const api::DistributedTraining& job, api::ReplicaType type, int index);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_ELASTIC_POLICY_H_
