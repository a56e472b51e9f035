// The Pod of one replica of a job, built from the role's template. Pure function; thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_POD_BUILDER_H_
#define DISTTRAIN_OPERATOR_POLICY_POD_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "operator/api/types.h"
#include "operator/policy/build_options.h"

namespace disttrain::policy {

// Something of the user's template the operator replaced: the job's Warning event (its reason)
// and render's warning line (its message).
struct BuildWarning {
  std::string reason;  // TFConfigReplaced, HostnameReplaced
  std::string message;
};

struct BuiltPod {
  nlohmann::json pod;
  std::vector<BuildWarning> warnings;
};

// Builds replica `index` of role `type`:
// - every field of the template is kept; name, namespace, disttrain.io labels and the owner
//   reference are set; restartPolicy follows the role's policy (ExitCode -> Never);
// - the main container gets TF_CONFIG (replacing one the user set, with a warning) and, when it
//   requests no nvidia.com/gpu, CUDA_VISIBLE_DEVICES="" and NVIDIA_VISIBLE_DEVICES=void, each
//   unless the user set it; a GPU request passes through to the pod untouched;
// - with spec.tls, the pod mounts the job's CA and its own certificate and key read-only at
//   /etc/disttrain/tls (tls_secret_builder.h) and the main container gets DISTTRAIN_TLS_DIR;
// - with runPolicy.nodeLossTolerationSeconds (AddNodeLossTolerations), NoExecute tolerations
//   of a lost node for that long;
// - with a scheduling policy, the gang-scheduling annotation and label name the job's PodGroup,
//   and its priority class applies when the template sets none.
absl::StatusOr<BuiltPod> BuildPod(const api::DistributedTraining& job, api::ReplicaType type,
                                  int index, const BuildOptions& options);

// The taints the node lifecycle controller puts on a node that stopped reporting or is not
// ready; the taint manager evicts pods that do not tolerate them (without a toleration of their
// own, Kubernetes' DefaultTolerationSeconds admission gives pods 300 s).
inline constexpr char kUnreachableTaint[] = "node.kubernetes.io/unreachable";
inline constexpr char kNotReadyTaint[] = "node.kubernetes.io/not-ready";

// Adds to `pod_spec` a NoExecute toleration of `seconds` for each of the two taints, unless a
// toleration there already covers that taint (the user's choice wins).
void AddNodeLossTolerations(nlohmann::json& pod_spec, int64_t seconds);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_POD_BUILDER_H_
