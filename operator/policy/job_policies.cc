#include "operator/policy/job_policies.h"

#include "absl/strings/str_cat.h"

namespace disttrain::policy {

std::optional<std::string> SuccessMessage(
    const api::DistributedTraining& job,
    const std::function<bool(api::ReplicaType, int)>& succeeded) {
  const auto& specs = job.spec.replica_specs;
  auto replicas = [&](api::ReplicaType t) {
    auto it = specs.find(t);
    return it == specs.end() ? 0 : it->second.replicas;
  };
  if (job.spec.success_policy == api::SuccessPolicy::kAllWorkers) {
    const int workers = replicas(api::ReplicaType::kWorker);
    for (int i = 0; i < workers; ++i) {
      if (!succeeded(api::ReplicaType::kWorker, i)) return std::nullopt;
    }
    return absl::StrCat("all ", workers, " workers succeeded");
  }
  if (replicas(api::ReplicaType::kChief) > 0) {
    if (succeeded(api::ReplicaType::kChief, 0)) return std::string("the chief succeeded");
    return std::nullopt;
  }
  if (succeeded(api::ReplicaType::kWorker, 0)) return std::string("worker 0 succeeded");
  return std::nullopt;
}

bool DeleteOnFinish(api::CleanPodPolicy policy, const PodState& pod) {
  if (pod.terminating) return false;
  switch (policy) {
    case api::CleanPodPolicy::kNone:
      return false;
    case api::CleanPodPolicy::kAll:
      return true;
    case api::CleanPodPolicy::kRunning:
      return pod.phase != PodPhase::kSucceeded && pod.phase != PodPhase::kFailed;
  }
  return false;
}

namespace {

bool Ended(const PodState& pod) {
  return pod.phase == PodPhase::kSucceeded || pod.phase == PodPhase::kFailed;
}

// The evaluator's reprieve after success, from completionTime.
absl::Time FinalEvaluationDeadline(const api::DistributedTraining& job,
                                   const api::JobStatus& status, absl::Time now) {
  return status.completion_time.value_or(now) +
         absl::Seconds(job.spec.run_policy.final_evaluation_grace_period_seconds);
}

}  // namespace

FinishCleanup CleanupOnFinish(const api::DistributedTraining& job, const api::JobStatus& status,
                              const PodState& pod, absl::Time now) {
  if (!DeleteOnFinish(job.spec.run_policy.clean_pod_policy, pod)) return {};
  if (pod.type != api::ReplicaType::kEvaluator || Ended(pod) || !IsTrue(status, kSucceeded))
    return {true, std::nullopt};
  const absl::Time deadline = FinalEvaluationDeadline(job, status, now);
  if (now >= deadline) return {true, std::nullopt};
  return {false, deadline - now};
}

std::optional<EvaluationOutcome> FinalEvaluation(const api::DistributedTraining& job,
                                                 const api::JobStatus& status,
                                                 const PodState& evaluator, absl::Time now) {
  if (!IsTrue(status, kSucceeded) || evaluator.type != api::ReplicaType::kEvaluator) return {};
  const std::optional<api::JobResult>& r = status.result;
  const std::optional<int64_t> final_step = r ? r->global_step : std::nullopt;
  const std::optional<int64_t> evaluated = r ? r->evaluated_step : std::nullopt;
  if (evaluator.phase == PodPhase::kFailed) {
    return EvaluationOutcome{false, "EvaluatorFailed",
                             absl::StrCat("the evaluator failed before evaluating the final "
                                          "checkpoint: exit code ",
                                          evaluator.exit_code.value_or(-1))};
  }
  if (evaluator.phase == PodPhase::kSucceeded) {
    if (evaluated && (!final_step || *evaluated >= *final_step)) {
      return EvaluationOutcome{
          true, "FinalCheckpointEvaluated",
          absl::StrCat("the evaluator evaluated the final checkpoint (step ", *evaluated, ")")};
    }
    return EvaluationOutcome{
        false, "FinalCheckpointNotEvaluated",
        absl::StrCat(
            "the evaluator exited without evaluating the final checkpoint",
            final_step ? absl::StrCat(" (step ", *final_step, ")") : "",
            evaluated ? absl::StrCat("; its last evaluation is of step ", *evaluated) : "")};
  }
  if (evaluator.terminating || now < FinalEvaluationDeadline(job, status, now) ||
      job.spec.run_policy.clean_pod_policy == api::CleanPodPolicy::kNone) {
    return {};
  }
  return EvaluationOutcome{
      false, "EvaluationTimedOut",
      absl::StrCat("the evaluator did not finish evaluating the final checkpoint within "
                   "runPolicy.finalEvaluationGracePeriodSeconds (",
                   job.spec.run_policy.final_evaluation_grace_period_seconds,
                   " s); it is deleted")};
}

namespace {

TimeCheck Check(std::optional<int64_t> seconds, std::optional<absl::Time> from, absl::Time now) {
  if (!seconds || !from) return {};
  absl::Time due = *from + absl::Seconds(*seconds);
  if (now >= due) return {true, std::nullopt};
  return {false, due - now};
}

}  // namespace

TimeCheck CheckDeadline(const api::DistributedTraining& job, absl::Time now) {
  return Check(job.spec.run_policy.active_deadline_seconds, job.status.start_time, now);
}

TimeCheck CheckTtl(const api::DistributedTraining& job, absl::Time now) {
  return Check(job.spec.run_policy.ttl_seconds_after_finished, job.status.completion_time, now);
}

}  // namespace disttrain::policy
