// What a pass reports about a job beside its lifecycle: why it waits (the Waiting condition), how
// far it is (status.progress), whether its final checkpoint was evaluated (Evaluated), and its
// series on the operator's /metrics (job_metrics.h). Split from job_reconciler.cc, which holds the
// pass and its lifecycle decisions.
#include <optional>
#include <string>

#include "operator/controller/internal/reconcile_pass.h"
#include "operator/controller/job_reconciler.h"
#include "operator/policy/conditions.h"
#include "operator/policy/job_policies.h"
#include "operator/policy/running_policy.h"
#include "operator/policy/waiting_reason.h"
#include "operator/progress/estimate.h"
#include "operator/progress/scrape_target.h"

namespace disttrain::controller {

using ::disttrain::api::ReplicaType;
using ::disttrain::policy::AddCondition;
using ::disttrain::policy::CountReadiness;
using ::disttrain::policy::EvaluationOutcome;
using ::disttrain::policy::FinalEvaluation;
using ::disttrain::policy::FindCondition;
using ::disttrain::policy::IsFinished;
using ::disttrain::policy::IsTrue;
using ::disttrain::policy::kEvaluated;
using ::disttrain::policy::SetCondition;

void JobReconciler::UpdateWaiting(Pass& p) {
  std::optional<policy::WaitingReason> why;
  const bool finished = IsFinished(p.status);
  if (!finished && !p.job.spec.run_policy.suspend) {
    auto succeeded = [&](ReplicaType t, int i) { return p.Remembered(t, i); };
    why = policy::FindWaitingReason(p.job, p.status, p.pods,
                                    CountReadiness(p.job, p.pods, succeeded));
  }
  if (why) {
    SetCondition(&p.status, policy::kWaiting, true, why->reason, why->message, p.now);
  } else if (IsTrue(p.status, policy::kWaiting)) {
    SetCondition(&p.status, policy::kWaiting, false,
                 finished                        ? "JobEnded"
                 : p.job.spec.run_policy.suspend ? "Suspended"
                                                 : "NothingHoldsIt",
                 finished                        ? "the job ended"
                 : p.job.spec.run_policy.suspend ? "the job is suspended"
                                                 : "nothing holds the job back any more",
                 p.now);
  }
}

void JobReconciler::TrackProgress(Pass& p) {
  if (deps_.progress == nullptr) return;
  const std::string key = runtime::ObjectKey(*p.object);
  const bool finished = IsFinished(p.status);
  deps_.progress->Track(key, finished || p.job.spec.run_policy.suspend
                                 ? std::nullopt
                                 : progress::ChooseScrapeTarget(p.job, p.pods));
  // None read yet by this process (it just started): the written one stays.
  if (std::optional<api::JobProgress> latest = deps_.progress->Latest(key)) {
    p.status.progress = *std::move(latest);
  }
  if (finished && p.status.progress) {
    p.status.progress = progress::FinishProgress(
        *p.status.progress, IsTrue(p.status, policy::kSucceeded) && p.status.result
                                ? p.status.result->global_step
                                : std::nullopt);
  }
}

void JobReconciler::TrackFinalEvaluation(Pass& p) {
  if (FindCondition(p.status, kEvaluated)) return;  // decided once
  auto it = p.pods.find({ReplicaType::kEvaluator, 0});
  if (it == p.pods.end()) return;
  std::optional<EvaluationOutcome> o = FinalEvaluation(p.job, p.status, it->second, p.now);
  if (!o) return;
  AddCondition(&p.status, kEvaluated, o->evaluated, o->reason, o->message, p.now);
  if (o->evaluated) {
    p.Note(o->reason, o->message);
  } else {
    p.Warn(o->reason, o->message);
  }
}

void JobReconciler::RecordMetrics(Pass& p) {
  if (deps_.job_metrics == nullptr) return;
  deps_.job_metrics->Record(
      deps_.api->kind->kind, p.object->value("/metadata/namespace"_json_pointer, ""),
      p.object->value("/metadata/name"_json_pointer, ""), p.job, p.status, p.pods, p.now);
}

void JobReconciler::ForgetMetrics(const std::string& key) {
  if (deps_.job_metrics == nullptr) return;
  const size_t slash = key.find('/');
  deps_.job_metrics->Forget(deps_.api->kind->kind, key.substr(0, slash), key.substr(slash + 1));
}

}  // namespace disttrain::controller
