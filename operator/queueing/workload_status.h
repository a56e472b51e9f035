// The job side of a Workload's status, as Kueue's own job controllers write it: PodsReady once
// every replica runs, reclaimablePods as roles finish early, Finished when the job ends, and the
// release of the quota of an evicted Workload once its pods are gone. Pure functions;
// thread-safe.
#ifndef DISTTRAIN_OPERATOR_QUEUEING_WORKLOAD_STATUS_H_
#define DISTTRAIN_OPERATOR_QUEUEING_WORKLOAD_STATUS_H_

#include <map>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace disttrain::queueing {

struct JobSide {
  // Evicted (preempted, deactivated, ...) and none of the job's pods is left: the quota it held
  // is given back and the Workload queued again (Kueue's UnsetQuotaReservationWithCondition and
  // Requeued, which no one but the job's controller writes).
  bool release_quota = false;
  // True: every replica's pod runs (Kueue's waitForPodsReady waits for it).
  std::optional<bool> pods_ready;
  // Pods of a PodSet no longer needed (workers that succeeded, parameter servers torn down):
  // their quota goes back before the job ends. Counts only ever grow while quota is reserved.
  std::map<std::string, int> reclaimable;
  struct Finish {
    bool succeeded = false;
    std::string message;
  };
  std::optional<Finish> finished;
};

// The merge patch of the Workload's status subresource that records `want`, or nullopt when its
// status already does. A merge patch replaces the conditions list whole, so the patch carries
// the Workload's resourceVersion: a write by Kueue in between makes it fail with 409 Conflict
// and the job's pass is retried from the newer Workload.
std::optional<nlohmann::json> JobSideStatusPatch(const nlohmann::json& workload,
                                                 const JobSide& want, absl::Time now);

// The JSON patch that removes Kueue's resource-in-use finalizer where `workload` has it (a
// test of that entry, then its removal: it holds whatever else was written since, even the
// operator's own status write in the same pass, and fails if the list moved), or nullopt when
// the Workload does not carry it.
std::optional<nlohmann::json> RemoveFinalizerPatch(const nlohmann::json& workload);

}  // namespace disttrain::queueing

#endif  // DISTTRAIN_OPERATOR_QUEUEING_WORKLOAD_STATUS_H_
