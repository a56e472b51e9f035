// Which API resource a request addresses, e.g. pods in core/v1 or distributedtrainings in
// disttrain.io/v1, and how its URLs are formed.
#ifndef DISTTRAIN_OPERATOR_KUBE_RESOURCE_H_
#define DISTTRAIN_OPERATOR_KUBE_RESOURCE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace disttrain::kube {

struct Resource {
  std::string group;    // "" for the core group
  std::string version;  // "v1"
  std::string plural;   // "pods"
  bool namespaced = true;

  std::string GroupVersion() const { return group.empty() ? version : group + "/" + version; }
  // "/api/v1/namespaces/ns/pods[/name][/subresource]"; an empty namespace lists across all.
  std::string Path(absl::string_view ns, absl::string_view name = "",
                   absl::string_view subresource = "") const;
};

inline const Resource kPods{"", "v1", "pods"};
inline const Resource kServices{"", "v1", "services"};
inline const Resource kEvents{"", "v1", "events"};
inline const Resource kNamespaces{"", "v1", "namespaces", false};
inline const Resource kLeases{"coordination.k8s.io", "v1", "leases"};
inline const Resource kNetworkPolicies{"networking.k8s.io", "v1", "networkpolicies"};
inline const Resource kSecrets{"", "v1", "secrets"};
inline const Resource kDistributedTrainings{"disttrain.io", "v1", "distributedtrainings"};
inline const Resource kTfJobs{"kubeflow.org", "v1", "tfjobs"};
inline const Resource kVolcanoPodGroups{"scheduling.volcano.sh", "v1beta1", "podgroups"};
inline const Resource kCoschedulingPodGroups{"scheduling.x-k8s.io", "v1alpha1", "podgroups"};
// Kubernetes' own Workload API (kube-scheduler's gang scheduling, 1.36 alpha).
inline const Resource kSchedulingWorkloads{"scheduling.k8s.io", "v1alpha2", "workloads"};
inline const Resource kSchedulingPodGroups{"scheduling.k8s.io", "v1alpha2", "podgroups"};
// Kueue (operator/queueing).
inline const Resource kWorkloads{"kueue.x-k8s.io", "v1beta2", "workloads"};
inline const Resource kResourceFlavors{"kueue.x-k8s.io", "v1beta2", "resourceflavors", false};
inline const Resource kWorkloadPriorityClasses{"kueue.x-k8s.io", "v1beta2",
                                               "workloadpriorityclasses", false};

}  // namespace disttrain::kube

#endif  // DISTTRAIN_OPERATOR_KUBE_RESOURCE_H_
