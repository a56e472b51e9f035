// Cluster-wide settings that shape the objects built for a job (operator flags).
#ifndef DISTTRAIN_OPERATOR_POLICY_BUILD_OPTIONS_H_
#define DISTTRAIN_OPERATOR_POLICY_BUILD_OPTIONS_H_

#include <string>

namespace disttrain::policy {

enum class GangScheduler {
  kVolcano,           // scheduling.volcano.sh/v1beta1 PodGroup
  kSchedulerPlugins,  // scheduling.x-k8s.io/v1alpha1 PodGroup (coscheduling)
  // kube-scheduler's own gangs (Kubernetes >= 1.36, alpha: feature gates GenericWorkload and
  // GangScheduling): a scheduling.k8s.io/v1alpha2 Workload and PodGroup, and each pod's
  // spec.schedulingGroup.
  kKubernetes,
};

struct BuildOptions {
  // Appended to TF_CONFIG's hosts when set: <job>-<role>-<i>.<job>.<ns>.svc.<cluster_domain>.
  std::string cluster_domain;
  GangScheduler gang_scheduler = GangScheduler::kVolcano;
  // A job without spec.networkPolicy.enabled gets a NetworkPolicy (--network-policy).
  bool network_policy = true;
  // The operator's own namespace when it runs in the cluster and reads jobs' progress from their
  // pods' /metrics (--progress-interval-seconds): a job's NetworkPolicy lets that namespace's
  // pods reach the metrics ports. Empty: none added.
  std::string progress_reader_namespace;
};

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_BUILD_OPTIONS_H_
