// The seam between a job's reconcile pass and a queue that decides when the job may run (Kueue:
// kueue_gate.h; none: NoQueueGate). The pass enters the gate once it has read the job and its
// pods, and calls what Enter returns at fixed points:
//
//   Enter           observe: what the queue holds for the job (Kueue: its Workloads)
//   Suspend/Admit   before any pod is made: give the admission back, or whether pods may run
//   ShapePod        each pod the pass creates: what the admission puts on it
//   AfterWrite      after the job's status write: the queue's side of the job (Kueue: the
//                   Workload's status and finalizer)
//   Forward         instead of all of the above, for a job another controller runs elsewhere
//                   that still has its queue entry here (MultiKueue's manager cluster)
//
// and a deleted job's key goes to JobGone. What a gate may do to the job itself (finish it,
// delete its pods) goes through PassActions, which the reconciler provides. Gates are
// thread-safe; a QueuePass lives on its pass's thread.
#ifndef DISTTRAIN_OPERATOR_CONTROLLER_QUEUE_GATE_H_
#define DISTTRAIN_OPERATOR_CONTROLLER_QUEUE_GATE_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "operator/api/types.h"
#include "operator/policy/pod_state.h"

namespace disttrain::controller {

struct ReconcilePass;  // internal/reconcile_pass.h

// What a queue gate may do to the job of a pass (JobReconciler does it).
class PassActions {
 public:
  virtual ~PassActions() = default;
  virtual void Finish(ReconcilePass& p, bool succeeded, const std::string& reason,
                      const std::string& message) = 0;
  // Fails the job as invalid (its spec cannot be built).
  virtual void FailInvalid(ReconcilePass& p, const absl::Status& why) = 0;
  // Deletes this very pod with its grace period (its Service stays).
  virtual absl::Status DeletePod(ReconcilePass& p, const policy::PodState& pod) = 0;
  // Whether this process deleted the pod (its deletion not seen yet).
  virtual bool Deleted(const std::string& uid) = 0;
  // The status's per-role counts from the pods the pass read.
  virtual void UpdateCounts(ReconcilePass& p) = 0;
};

// One job's pass through a queue.
class QueuePass {
 public:
  virtual ~QueuePass() = default;
  // The job is suspended: the queue takes its admission back. False when a write failed.
  virtual bool Suspend(ReconcilePass& p) = 0;
  // The job is not suspended (a suspended one was just resumed): whether its pods may run now.
  // False: it waits, its Queued condition says why and its pods are stopped, or it was
  // finished (e.g. the queue refused it).
  virtual bool Admit(ReconcilePass& p) = 0;
  // Before the pass creates a pod of `type`: what the admission puts on it. An error means the
  // pod could never run where it was admitted (the pass fails the job with it).
  virtual absl::Status ShapePod(api::ReplicaType type, nlohmann::json* pod) const = 0;
  // After the job's status write (whether or not anything was written).
  virtual void AfterWrite(ReconcilePass& p) = 0;
  // The job runs elsewhere (ReconcilePass::runs_elsewhere): keep its queue entry and say why it
  // waits; no pod runs here.
  virtual void Forward(ReconcilePass& p) = 0;
};

class QueueGate {
 public:
  virtual ~QueueGate() = default;
  // Whether a job another controller manages (spec.managedBy `managed_by`) still has its queue
  // entry made here: its pass only Forwards.
  virtual bool Serves(const api::DistributedTraining& job) const = 0;
  virtual std::unique_ptr<QueuePass> Enter(ReconcilePass& p) = 0;
  // The job under `key` ("namespace/name") is gone: what the queue still held for it is let go.
  // A requeue-after while that waits for its pods to go.
  virtual std::optional<absl::Duration> JobGone(const std::string& key) = 0;
};

// No queue: every job is admitted at once, its pods as built.
class NoQueueGate : public QueueGate {
 public:
  bool Serves(const api::DistributedTraining&) const override { return false; }
  std::unique_ptr<QueuePass> Enter(ReconcilePass& p) override;
  std::optional<absl::Duration> JobGone(const std::string&) override { return std::nullopt; }
};

// The pass of a job no queue holds.
std::unique_ptr<QueuePass> Unqueued();

}  // namespace disttrain::controller

#endif  // DISTTRAIN_OPERATOR_CONTROLLER_QUEUE_GATE_H_
