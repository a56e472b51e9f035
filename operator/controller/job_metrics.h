// Each job's own series beside controller-runtime's, for the alerts that need a job's state
// (deploy/prometheus/disttrain-alerts.yaml): since when and why it waits, its restarts by role,
// and the pods an ended job still keeps that its cleanPodPolicy removes. A pass sets them from the
// status it wrote; they go with the job. Labelled job_namespace and job_name, not namespace and
// job: Prometheus sets those two on every series it scrapes (the operator pod's namespace, the
// scrape job).
//
// Thread-safe (the registry's families are).
#ifndef DISTTRAIN_OPERATOR_CONTROLLER_JOB_METRICS_H_
#define DISTTRAIN_OPERATOR_CONTROLLER_JOB_METRICS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/metrics.h"
#include "operator/api/types.h"
#include "operator/policy/running_policy.h"

namespace disttrain::controller {

inline constexpr char kJobWaitingSince[] = "disttrain_job_waiting_since_timestamp_seconds";
inline constexpr char kJobRestarts[] = "disttrain_job_restarts_total";
inline constexpr char kJobPodsAfterEnd[] = "disttrain_job_pods_after_end";

class JobMetrics {
 public:
  explicit JobMetrics(MetricsRegistry* metrics);

  // `kind`: DistributedTraining or TFJob. `job` may be one that failed validation (its spec
  // then names no roles).
  void Record(absl::string_view kind, const std::string& namespace_name, const std::string& name,
              const api::DistributedTraining& job, const api::JobStatus& status,
              const policy::PodsByReplica& pods, absl::Time now);
  void Forget(absl::string_view kind, const std::string& namespace_name, const std::string& name);

 private:
  MetricFamily* waiting_since_;
  MetricFamily* restarts_;
  MetricFamily* pods_after_end_;
};

}  // namespace disttrain::controller

#endif  // DISTTRAIN_OPERATOR_CONTROLLER_JOB_METRICS_H_
