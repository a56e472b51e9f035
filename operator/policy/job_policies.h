// The pure decisions of the job lifecycle, each table-tested: success, cleanup and time.
// Thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_JOB_POLICIES_H_
#define DISTTRAIN_OPERATOR_POLICY_JOB_POLICIES_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "operator/api/types.h"
#include "operator/policy/conditions.h"
#include "operator/policy/pod_state.h"

namespace disttrain::policy {

// Success (spec.successPolicy): "" -> the chief succeeded, or worker 0 when there is no chief;
// AllWorkers -> every worker succeeded. Returns the message for the Succeeded condition, or
// nullopt while the job has not succeeded. `succeeded(type, index)` says whether that replica
// has succeeded (now or before its pod was removed).
std::optional<std::string> SuccessMessage(
    const api::DistributedTraining& job,
    const std::function<bool(api::ReplicaType, int)>& succeeded);

// Cleanup (spec.runPolicy.cleanPodPolicy) once the job has finished: Running deletes every pod
// that has not finished (parameter servers first of all), All deletes every pod and its Service,
// None none. Services of Running-cleaned pods hold no resources and go with the job.
bool DeleteOnFinish(api::CleanPodPolicy policy, const PodState& pod);

// Whether cleanup deletes `pod` of a finished job now (DeleteOnFinish), and when to look again:
// the evaluator of a succeeded job is kept while it runs, for up to
// runPolicy.finalEvaluationGracePeriodSeconds after completionTime, to evaluate the final
// checkpoint (parameter servers and workers go at once).
struct FinishCleanup {
  bool remove = false;
  std::optional<absl::Duration> requeue_after;
};
FinishCleanup CleanupOnFinish(const api::DistributedTraining& job, const api::JobStatus& status,
                              const PodState& pod, absl::Time now);

// The Evaluated condition of a succeeded job, decided from its evaluator pod and the result
// so far; nullopt while the evaluator may still evaluate (or the job has none).
struct EvaluationOutcome {
  bool evaluated = false;
  std::string reason, message;
};
std::optional<EvaluationOutcome> FinalEvaluation(const api::DistributedTraining& job,
                                                 const api::JobStatus& status,
                                                 const PodState& evaluator, absl::Time now);

// activeDeadlineSeconds, counted from status.startTime. `exceeded` or, before that, the wait
// until it will be (so a delayed requeue fires it with no other event).
struct TimeCheck {
  bool due = false;
  std::optional<absl::Duration> requeue_after;
};
TimeCheck CheckDeadline(const api::DistributedTraining& job, absl::Time now);
// ttlSecondsAfterFinished, counted from status.completionTime.
TimeCheck CheckTtl(const api::DistributedTraining& job, absl::Time now);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_JOB_POLICIES_H_
