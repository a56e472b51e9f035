// One reconcile pass of JobReconciler: what it read, the status it computes, and what it has
// to do or say once the status is written. Internal to the reconciler's .cc files; a pass lives
// on one worker thread.
#ifndef DISTTRAIN_OPERATOR_CONTROLLER_INTERNAL_RECONCILE_PASS_H_
#define DISTTRAIN_OPERATOR_CONTROLLER_INTERNAL_RECONCILE_PASS_H_

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "operator/api/types.h"
#include "operator/controller/queue_gate.h"
#include "operator/policy/pod_state.h"
#include "operator/policy/running_policy.h"
#include "operator/runtime/event_recorder.h"

namespace disttrain::controller {

struct ReconcilePass {
  const nlohmann::json* object = nullptr;  // the job as cached (the cache's immutable copy)
  api::DistributedTraining job;
  api::JobStatus original;  // the status as cached
  api::JobStatus status;    // the status this pass computes
  policy::PodsByReplica pods;
  std::set<std::string> services;
  struct Event {
    runtime::EventType type;
    std::string reason, message;
    // It tells of an API call this pass made (an object created or deleted, a failed request),
    // not of status news: recorded even when the status write then fails, as no later pass
    // makes that call again to tell of it (Did, DidWarn, Error).
    bool call = false;
  };
  std::vector<Event> events;
  std::vector<absl::Status> errors;  // API calls that failed in this pass
  std::vector<policy::PodState>
      replace;  // failed pods to delete once the status counts their restart
  std::optional<absl::Duration> requeue;
  absl::Time now;
  // When the job's first pass ran: `now`, unless that pass left its status write to this one
  // (JobReconciler::FirstWriteWaits). The Created condition and startTime take it.
  absl::Time started;
  // The job's pass through its queue (queue_gate.h): Unqueued when no queue holds it.
  std::unique_ptr<QueuePass> queue;
  // Another controller runs the job elsewhere; this cluster keeps its queue entry only
  // (QueueGate::Serves, QueuePass::Forward: MultiKueue's manager cluster).
  bool runs_elsewhere = false;
  bool created_pods = false;   // this pass created at least one pod
  bool entered_queue = false;  // this pass created the job's queue entry (its Kueue Workload)
  // The queue admitted the job before its status ever showed it queued: said once, with the
  // pods this pass creates ("Workload w admitted by ClusterQueue cq"), not in an event of its
  // own (an event is an API write).
  std::string admission_news;
  bool deleted = false;  // the job itself was deleted (TTL)
  // The job finished in this pass: its pods are cleaned up once the status saying so is
  // written. Deleting them first would, if the write failed, leave a job that the next pass
  // sees unfinished with its pods gone, and it would create them again.
  bool cleanup_after_write = false;

  void Requeue(std::optional<absl::Duration> d) {
    if (d && (!requeue || *d < *requeue)) requeue = *d;
  }
  void Warn(std::string reason, std::string message) {
    events.push_back({runtime::EventType::kWarning, std::move(reason), std::move(message)});
  }
  void Note(std::string reason, std::string message) {
    events.push_back({runtime::EventType::kNormal, std::move(reason), std::move(message)});
  }
  // An API call this pass made ("created pod x", "deleted Workload w"): told whether or not the
  // status write that follows lands.
  void Did(std::string reason, std::string message) {
    events.push_back({runtime::EventType::kNormal, std::move(reason), std::move(message), true});
  }
  void DidWarn(std::string reason, std::string message) {
    events.push_back({runtime::EventType::kWarning, std::move(reason), std::move(message), true});
  }
  // A failed API call: told as a Warning event, and the pass ends in an error (after its
  // status write) so the work queue retries it with backoff.
  void Error(std::string reason, absl::Status s) {
    DidWarn(std::move(reason), std::string(s.message()));
    errors.push_back(std::move(s));
  }
  api::ReplicaStatus& Role(api::ReplicaType t) { return status.replica_statuses[t]; }
  bool Remembered(api::ReplicaType t, int index) {
    const auto& idx = Role(t).succeeded_indexes;
    return std::find(idx.begin(), idx.end(), index) != idx.end();
  }
  std::vector<policy::PodState> PodList() const {
    std::vector<policy::PodState> out;
    for (const auto& [id, pod] : pods) out.push_back(pod);
    return out;
  }
};

}  // namespace disttrain::controller

#endif  // DISTTRAIN_OPERATOR_CONTROLLER_INTERNAL_RECONCILE_PASS_H_
