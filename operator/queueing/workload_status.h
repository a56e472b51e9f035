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
#include "operator/queueing/admission.h"

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

// What the job's pass knows after its status write, for the job side of its Workload.
struct JobSideFacts {
  WorkloadState workload;  // the job's own Workload, as cached
  // MultiKueue's manager copy: MultiKueue mirrors the rest from the worker's copy.
  bool runs_elsewhere = false;
  bool job_finished = false, job_succeeded = false;
  std::string finish_message;  // the Succeeded or Failed condition's
  bool pods_live = false;      // a pod of the job is pending, running, unknown or terminating
  bool keeps_pods = false;     // cleanPodPolicy None: its pods stay on purpose
  bool release_quota = false;  // held or suspended, and no pod is left
  bool admitted = false;       // the pass ran the job under Kueue's admission
  // Every replica runs; nullopt when PodsReady is not written (--kueue-pods-ready=false).
  std::optional<bool> pods_ready;
  std::map<std::string, int> reclaimable;  // succeeded pods by PodSet
};

struct JobSideDecision {
  // The Workload is Finished and still has Kueue's in-use finalizer: it goes.
  bool release_finalizer = false;
  // What its status is to record (JobSideStatusPatch), if anything; a finished job's finalizer
  // goes once the write succeeded.
  std::optional<JobSide> write;
};

// The job side of a Workload, as Kueue's own job controllers decide it: a Finished Workload only
// loses its finalizer; a manager copy gives back the quota of an evicted Workload at once (no pod
// runs there); a finished job marks it Finished once its pods are gone (at once with
// cleanPodPolicy None); a held or suspended job with no pod left gives its quota back; an
// admitted job reports PodsReady and its reclaimable pods.
JobSideDecision DecideJobSide(const JobSideFacts& facts);

// The JSON patch that removes Kueue's resource-in-use finalizer where `workload` has it (a
// test of that entry, then its removal: it holds whatever else was written since, even the
// operator's own status write in the same pass, and fails if the list moved), or nullopt when
// the Workload does not carry it.
std::optional<nlohmann::json> RemoveFinalizerPatch(const nlohmann::json& workload);

}  // namespace disttrain::queueing

#endif  // DISTTRAIN_OPERATOR_QUEUEING_WORKLOAD_STATUS_H_
