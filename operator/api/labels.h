// Labels and annotations the operator puts on what it creates: part of the user-facing API
// (`kubectl get pods -l disttrain.io/job-name=dist`).
#ifndef DISTTRAIN_OPERATOR_API_LABELS_H_
#define DISTTRAIN_OPERATOR_API_LABELS_H_

#include "operator/api/job_kind.h"

namespace disttrain::api {

// A DistributedTraining's children's labels (job_kind.h holds TFJob's).
inline constexpr const char* kLabelJobName = kDistributedTrainingKind.labels.job_name;
inline constexpr const char* kLabelReplicaType = kDistributedTrainingKind.labels.replica_type;
inline constexpr const char* kLabelReplicaIndex = kDistributedTrainingKind.labels.replica_index;
// Present, with value "chief", on the pod whose success decides the job (chief, else worker 0).
inline constexpr const char* kLabelJobRole = kDistributedTrainingKind.labels.job_role;
// Every object the operator creates for a DistributedTraining carries it, so informers can
// select exactly those.
inline constexpr const char* kLabelManagedBy = kDistributedTrainingKind.labels.owner_key;
inline constexpr const char* kManagedByValue = kDistributedTrainingKind.labels.owner_value;

// Gang scheduling: Volcano reads the annotation, scheduler-plugins' coscheduling the label.
inline constexpr char kVolcanoGroupAnnotation[] = "scheduling.k8s.io/group-name";
inline constexpr char kCoschedulingGroupLabel[] = "scheduling.x-k8s.io/pod-group";

}  // namespace disttrain::api

#endif  // DISTTRAIN_OPERATOR_API_LABELS_H_
