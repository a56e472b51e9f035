// The task's place in the cluster, derived from TF_CONFIG: parameter-server addresses, the
// training replicas (the chief first, then the workers) and this task's role. Pure; thread-safe.
#ifndef DISTTRAIN_TRAINER_CLUSTER_SPEC_H_
#define DISTTRAIN_TRAINER_CLUSTER_SPEC_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/tf_config.h"

namespace disttrain::trainer {

enum class Role { kPs, kChief, kWorker, kEvaluator };

struct ClusterSpec {
  std::vector<std::string> ps;        // host:port by ps index
  std::vector<std::string> replicas;  // training replicas: chief (if any), then workers
  Role role = Role::kWorker;
  int task_index = 0;
  // This task's rank among the training replicas (-1 for ps and evaluator).
  int replica_rank = -1;
  std::string own_address;  // "" for an evaluator kept out of the cluster
  bool has_chief_task = false;
  bool has_evaluator_task = false;  // TF_CONFIG lists an evaluator (it may also be kept out)

  // "chief-0", "worker-2", "ps-1", "evaluator-0".
  std::string TaskName() const;
  int num_replicas() const { return static_cast<int>(replicas.size()); }
  // The task names of the training replicas, in `replicas` order: "chief-0" (when the cluster
  // has a chief task), then "worker-0", "worker-1", ...
  std::vector<std::string> ReplicaNames() const;
};

// The chief is the "chief" task, or worker 0 when there is none. InvalidArgument when the
// cluster has no parameter server or no training replica.
absl::StatusOr<ClusterSpec> MakeClusterSpec(const TfConfig& config);

const char* RoleName(Role role);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_CLUSTER_SPEC_H_
