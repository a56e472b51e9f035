// The TF_CONFIG each replica of a job receives. Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_TF_CONFIG_BUILDER_H_
#define DISTTRAIN_OPERATOR_POLICY_TF_CONFIG_BUILDER_H_

#include <optional>
#include <string>
#include <string_view>

#include "common/tf_config.h"
#include "nlohmann/json.hpp"
#include "operator/api/types.h"
#include "operator/policy/build_options.h"

namespace disttrain::policy {

inline constexpr int kDefaultPort = 2222;
inline constexpr char kPortName[] = "tfjob-port";

// The main container of a pod template: the one named "tensorflow" or "trainer", else the first.
// Returns its index in spec.containers, or -1 when there is none.
int MainContainerIndex(const nlohmann::json& pod_template);

// The containerPort of a role's main container port called `name`, else `fallback`.
int MainContainerPort(const api::ReplicaSpec& spec, std::string_view name, int fallback);

// The port of a role: the main container's port named "tfjob-port", else 2222.
int ReplicaPort(const api::ReplicaSpec& spec);

// TF_CONFIG for replica `index` of `type`, or nullopt when the whole job has exactly one replica
// (TF Estimator breaks on a one-node TF_CONFIG). The evaluator is listed in `cluster` only when
// spec.tfConfig.evaluatorInCluster is true.
std::optional<TfConfig> BuildTfConfig(const api::DistributedTraining& job, api::ReplicaType type,
                                      int index, const BuildOptions& options);

// The TF_CONFIG text replica `index` of `type` receives: BuildTfConfig's, or with
// spec.tfConfig sparse_workers (TFJob's enableDynamicWorker) TensorFlow's sparse cluster spec: a
// worker sees the ps tasks and itself ({"cluster":{"worker":{"1":host},"ps":[...]},"task":{...}},
// as the training-operator writes it), the chief the same with its own role; a ps sees every ps,
// the chief and every worker up to elasticPolicy.maxReplicas (the training-operator gives it
// itself only, with which TensorFlow's parameter server cannot receive a worker's gradients:
// "No worker known as /job:worker/replica:0/task:1"); the evaluator nobody. nullopt when the job
// has one replica.
std::optional<std::string> TfConfigText(const api::DistributedTraining& job, api::ReplicaType type,
                                        int index, const BuildOptions& options);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_TF_CONFIG_BUILDER_H_
