// Where the operator reads a job's progress: the /metrics of the task that stops the training
// (the chief, or worker 0 without a chief), once its pod runs and has an IP. The port is the main
// container's port named "metrics", else disttrain-trainer's 9095. Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_PROGRESS_SCRAPE_TARGET_H_
#define DISTTRAIN_OPERATOR_PROGRESS_SCRAPE_TARGET_H_

#include <optional>
#include <string>

#include "operator/api/types.h"
#include "operator/policy/running_policy.h"

namespace disttrain::progress {

struct ScrapeTarget {
  std::string pod_uid;  // a new pod (a restarted chief) is read afresh
  std::string url;      // "http://10.1.2.3:9095/metrics"

  bool operator==(const ScrapeTarget&) const = default;
};

// nullopt when there is nothing to read now: the pod is not running (yet), has no IP, or is
// being deleted.
std::optional<ScrapeTarget> ChooseScrapeTarget(const api::DistributedTraining& job,
                                               const policy::PodsByReplica& pods);

}  // namespace disttrain::progress

#endif  // DISTTRAIN_OPERATOR_PROGRESS_SCRAPE_TARGET_H_
