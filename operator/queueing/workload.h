// The Kueue Workload of a DistributedTraining: Kueue's contract for a job type it does not
// compile in ("external framework"): the job's controller creates one Workload per job, owned by
// it, with one PodSet per role, and follows its admission (admission.h) and writes the job side
// of its status (workload_status.h). Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_QUEUEING_WORKLOAD_H_
#define DISTTRAIN_OPERATOR_QUEUEING_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "operator/api/types.h"

namespace disttrain::queueing {

// The job's labels Kueue users write, and what Kueue's own job controllers put on a Workload.
inline constexpr char kQueueNameLabel[] = "kueue.x-k8s.io/queue-name";
inline constexpr char kPriorityClassLabel[] = "kueue.x-k8s.io/priority-class";
inline constexpr char kJobUidLabel[] = "kueue.x-k8s.io/job-uid";
// The kind of the job a Workload is for (DistributedTraining, TFJob): each front watches its own.
inline constexpr char kJobKindLabel[] = "disttrain.io/job-kind";
// Set by MultiKueue on a job it copies to a worker cluster: the Workload already exists there.
inline constexpr char kPrebuiltWorkloadLabel[] = "kueue.x-k8s.io/prebuilt-workload-name";
// spec.managedBy of a job that MultiKueue dispatches to a worker cluster (the manager's copy).
inline constexpr char kMultiKueueManager[] = "kueue.x-k8s.io/multikueue";
inline constexpr char kResourceInUseFinalizer[] = "kueue.x-k8s.io/resource-in-use";
// On the Workload: a digest of its PodSets as built from the job, to tell when the job's spec
// changed in a way Kueue must admit again (replicas, resources, the pod templates).
inline constexpr char kPodSetsDigestAnnotation[] = "disttrain.io/podsets-digest";
// On the Workload: the job's metadata.generation it was built from. While the job's generation,
// queue and priority class are those the Workload has, it stands for the job without rebuilding.
inline constexpr char kJobGenerationAnnotation[] = "disttrain.io/job-generation";

// The LocalQueue the job is sent to ("" when it is not sent to Kueue).
std::string QueueName(const api::DistributedTraining& job);

// Kueue's own name for the Workload of a job (jobframework's GetWorkloadNameForOwnerWithGVK):
// "distributedtraining-<job>-<first 5 hex digits of sha1(kind\ngroup\nname\nuid)>", the prefix
// cut to 247 characters.
std::string WorkloadName(const api::DistributedTraining& job);

// The Workload MultiKueue made for a job it copied to this (worker) cluster
// (kueue.x-k8s.io/prebuilt-workload-name), "" when none: the job controller adopts it instead of
// creating its own.
std::string PrebuiltWorkloadName(const api::DistributedTraining& job);

// The name of the job's Workload: the prebuilt one, else WorkloadName.
std::string JobWorkloadName(const api::DistributedTraining& job);

// One role of the job as Kueue counts it.
struct PodSetInput {
  std::string name;  // the role: "chief", "ps", "worker", "evaluator"
  int32_t count = 0;
  nlohmann::json pod;  // one replica's pod as the operator creates it
  // The fewest pods the role can run with (Kueue's partial admission: it admits between
  // min_count and count when count does not fit); 0 or count: all of them. One PodSet at most.
  int32_t min_count = 0;
  // The PodSet's topologyRequest (topology.h: TopologyRequest), when the role asks for one.
  std::optional<nlohmann::json> topology_request;
};

// The WorkloadPriorityClass named by the job's kueue.x-k8s.io/priority-class label.
struct Priority {
  std::string class_name;
  int32_t value = 0;
};

// The Workload to create for `job`: owned by it (controller reference), labelled with its UID,
// name and the operator's managed-by label, Kueue's in-use finalizer, queueName from the job's
// label, the priority when given, and one PodSet per role with replicas (count, and a template
// holding the pod's scheduling-relevant spec: containers with their requests, init containers,
// node selector, affinity, tolerations, priority class, overhead), and minCount where a role can
// run with fewer (the Worker role of a job with an elasticPolicy).
// The job's Workload.
nlohmann::json BuildWorkload(const api::DistributedTraining& job,
                             const std::vector<PodSetInput>& pod_sets,
                             const std::optional<Priority>& priority);

// Whether `existing` was built from this generation of the job, its queue and priority class
// (then it stands for the job; else Matches/SamePodSets decide, from a Workload built anew).
bool BuiltFrom(const nlohmann::json& existing, const api::DistributedTraining& job);

// What the operator caches of a Workload: its metadata, queue, activity, priority and status;
// not its PodSets' templates (the digest annotation stands for them).
nlohmann::json ProjectWorkload(nlohmann::json workload);

// Whether a Workload changed in a way that calls for a pass of its job: Kueue's decision (quota
// reserved, admitted, evicted, finished, requeued, the admission), its activity or deletion.
// Not what the operator itself writes (PodsReady, reclaimablePods, Finished with reason
// Succeeded or Failed) nor its finalizers (the operator removes its own in the pass that
// writes Finished, or from a Workload being deleted, whose deletion then queues the pass).
// A Workload MultiKueue dispatched (status.clusterName set) is finished by MultiKueue, with the
// worker's reason: that Finished queues a pass (its finalizer is the operator's to remove).
bool DecisionChanged(const nlohmann::json& old_workload, const nlohmann::json& new_workload);

// Whether an existing Workload still stands for the job: same PodSets (by digest), queue and
// priority class. A Workload that does not is replaced, as Kueue's job controllers do.
bool Matches(const nlohmann::json& existing, const nlohmann::json& wanted);
// Whether only the PodSets match: what counts once quota is reserved (Kueue refuses a change of
// queueName then, and a new priority class only matters for a Workload still waiting).
bool SamePodSets(const nlohmann::json& existing, const nlohmann::json& wanted);

// How a prebuilt Workload's PodSets differ from those the job needs (names, counts,
// minCounts), "" when they agree: Kueue's own job controllers refuse one that does not
// ("out of sync").
std::string PodSetsDiffer(const nlohmann::json& prebuilt, const nlohmann::json& wanted);

// The merge patch that makes a prebuilt Workload the job's as if the operator had built it
// `wanted`: the job as its controller owner, the labels and annotations of `wanted` (so the
// operator's informer sees it and BuiltFrom holds), Kueue's in-use finalizer. Error when another
// controller owns it.
absl::StatusOr<nlohmann::json> AdoptPatch(const nlohmann::json& prebuilt,
                                          const nlohmann::json& wanted);

}  // namespace disttrain::queueing

#endif  // DISTTRAIN_OPERATOR_QUEUEING_WORKLOAD_H_
