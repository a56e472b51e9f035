// The Kueue gate's MultiKueue ends (kueue_gate.h): in the manager cluster a job with
// spec.managedBy kueue.x-k8s.io/multikueue gets its Workload and nothing else (Forward); in a
// worker cluster the copy MultiKueue made adopts the Workload MultiKueue prebuilt for it (Adopt).
// See docs/kueue.md#multikueue-and-specmanagedby.
#include <functional>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "operator/controller/internal/kueue_pass.h"
#include "operator/controller/internal/reconcile_pass.h"
#include "operator/controller/kueue_gate.h"
#include "operator/kube/errors.h"
#include "operator/policy/conditions.h"
#include "operator/queueing/admission.h"
#include "operator/queueing/workload.h"

namespace disttrain::controller {

using ::disttrain::policy::FindCondition;
using ::disttrain::policy::IsFinished;
using ::disttrain::policy::kCreated;
using ::disttrain::policy::SetCondition;

using nlohmann::json;
using queueing::QueueReason;
using queueing::WorkloadState;
using Pass = ReconcilePass;

void KueuePass::Forward(Pass& p) {
  // A change Kueue must admit again (replicas, resources, queue) replaces the Workload, as
  // Kueue's own job controllers do for a job MultiKueue dispatches: MultiKueue deletes the
  // worker's copy with the old Workload and dispatches the job as it is now with the new one
  // (its adapter never updates a copy, so a kept Workload would leave the worker running the
  // old spec).
  if (workload_ != nullptr) {
    const WorkloadState st = queueing::ReadWorkload(*workload_);
    if (!st.finished && StandsForJob(p, st) == false) {
      Delete(p, *workload_, "the job's replicas, resources or queue changed");
      workload_ = nullptr;
      replacing_ = true;  // the next Workload once this one is gone
      p.Requeue(absl::Seconds(1));
    }
  }
  bool created = false;
  if (workload_ == nullptr && !replacing_) {
    std::optional<json> wanted;
    if (BuildWanted(p, &wanted) && Create(p, *wanted)) {
      created = true;
      p.Did("CreatedWorkload", absl::StrCat("created Kueue Workload ", workload_name_,
                                            " for MultiKueue to dispatch the job to a worker "
                                            "cluster; no pod runs in this one"));
    }
  }
  SayWhyDispatchWaits(p, created);
}

void KueuePass::SayWhyDispatchWaits(Pass& p, bool just_created) {
  // Once the Workload is admitted (a worker's copy reserved the quota) MultiKueue mirrors that
  // copy's status into the job, the end included; a pass from a stale cache cannot overwrite
  // the mirror (the status write is conditional on the job's resourceVersion).
  if (IsFinished(p.status)) return;
  queueing::Waiting why;
  if (workload_ != nullptr) {
    const WorkloadState st = queueing::ReadWorkload(*workload_);
    if (st.finished || (st.admitted && !st.evicted)) return;
    why = queueing::WhyWaiting(st, workload_name_, queueing::QueueName(p.job));
  } else if (replacing_) {
    why = {QueueReason::kWorkloadReplaced,
           absl::StrCat("the job changed, so Kueue admits it again: Workload ", workload_name_,
                        " is replaced")};
  } else if (just_created) {
    why = queueing::WhyWaiting({}, workload_name_, queueing::QueueName(p.job));
  } else {
    return;  // its create failed: retried, or the job failed with Kueue's answer
  }
  if (!FindCondition(p.status, kCreated)) {
    SetCondition(&p.status, kCreated, true, "JobCreated", "the job was accepted", p.now);
  }
  Hold(p, why, /*quiet=*/just_created);
  // An evicted copy's counts, mirrored before MultiKueue deleted it: no pod runs now.
  p.status.replica_statuses.clear();
  deps_.actions->UpdateCounts(p);
}

bool KueuePass::Adopt(Pass& p, const std::string& name, const std::function<bool()>& build_wanted,
                      const std::optional<json>& wanted) {
  const std::string& ns = p.job.metadata.namespace_name;
  // Not in the cache until adopted (the informer watches the operator's own Workloads).
  absl::StatusOr<json> prebuilt = deps_.client->Get(kube::kWorkloads, ns, name);
  if (kube::IsNotFound(prebuilt.status())) {
    p.Requeue(KueueGate::kRetry);
    Hold(p, {QueueReason::kWaitingForWorkload,
             absl::StrCat("waiting for the prebuilt Workload ", name, " (label ",
                          queueing::kPrebuiltWorkloadLabel, ") to exist")});
    return false;
  }
  if (!prebuilt.ok()) {
    p.Error("FailedGetWorkload", prebuilt.status());
    return false;
  }
  if (!build_wanted()) return false;
  if (std::string differ = queueing::PodSetsDiffer(*prebuilt, *wanted); !differ.empty()) {
    deps_.actions->Finish(
        p, false, "WorkloadOutOfSync",
        absl::StrCat("the prebuilt Workload ", name, " does not match the job: ", differ));
    return false;
  }
  absl::StatusOr<json> patch = queueing::AdoptPatch(*prebuilt, *wanted);
  if (!patch.ok()) {
    p.Requeue(KueueGate::kRetry);
    Hold(p, {QueueReason::kWorkloadNotAdoptable, std::string(patch.status().message())});
    return false;
  }
  if (absl::Status s =
          deps_.client->Patch(kube::kWorkloads, ns, name, kube::PatchType::kMerge, *patch);
      !s.ok()) {
    p.Error("FailedUpdateWorkload", s);
    return false;
  }
  p.Did("AdoptedWorkload", absl::StrCat("adopted the prebuilt Workload ", name));
  p.Requeue(absl::Seconds(1));  // the informer shows it now; its add queues no pass
  Hold(p,
       {QueueReason::kWaitingForAdmission,
        absl::StrCat("waiting for Kueue to admit the prebuilt Workload ", name)},
       /*quiet=*/true);
  return false;
}

}  // namespace disttrain::controller
