// Labels and annotations the operator puts on what it creates: part of the user-facing API
// (`kubectl get pods -l disttrain.io/job-name=dist`).
#ifndef DISTTRAIN_OPERATOR_API_LABELS_H_
#define DISTTRAIN_OPERATOR_API_LABELS_H_

namespace disttrain::api {

inline constexpr char kLabelJobName[] = "disttrain.io/job-name";
inline constexpr char kLabelReplicaType[] = "disttrain.io/replica-type";
inline constexpr char kLabelReplicaIndex[] = "disttrain.io/replica-index";
// Present, with value "chief", on the pod whose success decides the job (chief, else worker 0).
inline constexpr char kLabelJobRole[] = "disttrain.io/job-role";
// Every object the operator creates carries it, so informers can select exactly those.
inline constexpr char kLabelManagedBy[] = "app.kubernetes.io/managed-by";
inline constexpr char kManagedByValue[] = "disttrain-operator";

// Gang scheduling: Volcano reads the annotation, scheduler-plugins' coscheduling the label.
inline constexpr char kVolcanoGroupAnnotation[] = "scheduling.k8s.io/group-name";
inline constexpr char kCoschedulingGroupLabel[] = "scheduling.x-k8s.io/pod-group";

}  // namespace disttrain::api

#endif  // DISTTRAIN_OPERATOR_API_LABELS_H_
