#include "operator/controller/job_metrics.h"

#include <map>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "operator/policy/conditions.h"
#include "operator/policy/job_policies.h"
#include "operator/policy/waiting_reason.h"

namespace disttrain::controller {

using Series = std::vector<std::pair<LabelValues, double>>;

JobMetrics::JobMetrics(MetricsRegistry* metrics)
    : waiting_since_(metrics->Gauge(
          kJobWaitingSince,
          "When a job that does not run began to wait (its Waiting condition's transition, "
          "Unix seconds), by the condition's reason; absent while nothing holds it.",
          {"job_namespace", "job_name", "kind", "reason"})),
      restarts_(metrics->Counter(
          kJobRestarts,
          "Restarts of a job's replicas by role, as its status counts them (pods restarted in "
          "place or recreated).",
          {"job_namespace", "job_name", "kind", "role"})),
      pods_after_end_(metrics->Gauge(
          kJobPodsAfterEnd,
          "Pods of an ended job that still hold their node's resources (pending, running or "
          "terminating) though its cleanPodPolicy removes them, by role.",
          {"job_namespace", "job_name", "kind", "role"})) {}

void JobMetrics::Record(absl::string_view kind, const std::string& namespace_name,
                        const std::string& name, const api::DistributedTraining& job,
                        const api::JobStatus& status, const policy::PodsByReplica& pods,
                        absl::Time now) {
  const LabelValues key = {namespace_name, name, std::string(kind)};
  auto labels = [&](absl::string_view last) {
    LabelValues l = key;
    l.emplace_back(last);
    return l;
  };
  Series waiting;
  if (const api::Condition* c = policy::FindCondition(status, policy::kWaiting);
      c != nullptr && c->status && c->last_transition_time != absl::InfinitePast()) {
    waiting.emplace_back(labels(c->reason),
                         absl::ToDoubleSeconds(c->last_transition_time - absl::UnixEpoch()));
  }
  waiting_since_->ReplaceSeries(key, waiting);

  Series restarts;
  for (const auto& [type, spec] : job.spec.replica_specs) {
    auto it = status.replica_statuses.find(type);
    restarts.emplace_back(labels(api::RoleName(job.spec, type)),
                          it == status.replica_statuses.end() ? 0 : it->second.restarts);
  }
  restarts_->ReplaceSeries(key, restarts);

  Series after_end;
  if (policy::IsFinished(status)) {
    std::map<api::ReplicaType, int> held;
    for (const auto& [id, pod] : pods) {
      if (pod.phase == policy::PodPhase::kSucceeded || pod.phase == policy::PodPhase::kFailed)
        continue;
      // Kept on purpose (cleanPodPolicy None, an evaluator's final evaluation): not counted.
      if (!policy::CleanupOnFinish(job, status, pod, now).remove) continue;
      ++held[pod.type];
    }
    for (const auto& [type, count] : held) {
      after_end.emplace_back(labels(api::RoleName(job.spec, type)), count);
    }
  }
  pods_after_end_->ReplaceSeries(key, after_end);
}

void JobMetrics::Forget(absl::string_view kind, const std::string& namespace_name,
                        const std::string& name) {
  const LabelValues key = {namespace_name, name, std::string(kind)};
  for (MetricFamily* f : {waiting_since_, restarts_, pods_after_end_}) f->ReplaceSeries(key, {});
}

}  // namespace disttrain::controller
