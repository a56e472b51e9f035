// Kueue's topology-aware scheduling as a job's pods ask for it: the annotations of a role's pod
// template (a level's node label to stay within, or none), the PodSet's topologyRequest they
// become, and what a pod Kueue places by topology carries for Kueue's TopologyUngater to find it.
// Facts and sources: docs/notes/kueue-topology.md. Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_QUEUEING_TOPOLOGY_H_
#define DISTTRAIN_OPERATOR_QUEUEING_TOPOLOGY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace disttrain::queueing {

// Topology-aware scheduling: a role's pod template asks with one of the three topology
// annotations (a level's node label, or "true"); podset-group-name holds two roles to one domain
// (docs/notes/kueue-topology.md).
inline constexpr char kRequiredTopology[] = "kueue.x-k8s.io/podset-required-topology";
inline constexpr char kPreferredTopology[] = "kueue.x-k8s.io/podset-preferred-topology";
inline constexpr char kUnconstrainedTopology[] = "kueue.x-k8s.io/podset-unconstrained-topology";
inline constexpr char kPodSetGroupName[] = "kueue.x-k8s.io/podset-group-name";
inline constexpr char kSliceRequiredTopology[] = "kueue.x-k8s.io/podset-slice-required-topology";
inline constexpr char kSliceSize[] = "kueue.x-k8s.io/podset-slice-size";
// What a pod placed by topology carries for Kueue's TopologyUngater to find it.
inline constexpr char kTopologyGate[] = "kueue.x-k8s.io/topology";
inline constexpr char kWorkloadAnnotation[] = "kueue.x-k8s.io/workload";

// The topology a PodSet asks Kueue for (PodSet.topologyRequest), from the topology annotations
// of its pods (kRequiredTopology, ...) as Kueue's own job integrations read them:
// the first of required, preferred, unconstrained; the group name with required or preferred;
// slices when both slice annotations are set; `index_label` the label that numbers the pods.
// nullopt when the pod asks for none. InvalidArgument, naming the annotation, for a request
// Kueue's job webhooks would refuse (two kinds at once, unconstrained not "true" or "false", one
// slice annotation without the other, a slice size outside 1..count, a group without required
// or preferred).
absl::StatusOr<std::optional<nlohmann::json>> TopologyRequest(const nlohmann::json& pod,
                                                              int32_t count,
                                                              const std::string& index_label);

}  // namespace disttrain::queueing

#endif  // DISTTRAIN_OPERATOR_QUEUEING_TOPOLOGY_H_
