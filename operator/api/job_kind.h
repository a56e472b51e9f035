// The two APIs a job comes through, and what each puts on the objects made for it.
//
// A DistributedTraining (disttrain.io/v1) and a Kubeflow TFJob (kubeflow.org/v1) decode into the
// same internal job (types.h) and run through the same reconciler; they differ in the owner
// reference of their pods, Services, PodGroups and Workloads, and in the labels those carry. A
// TFJob's children carry exactly the training-operator's labels, so the Kubeflow SDK, pipelines
// and dashboards find them, and so pods it created are adopted unchanged. Constants; thread-safe.
#ifndef DISTTRAIN_OPERATOR_API_JOB_KIND_H_
#define DISTTRAIN_OPERATOR_API_JOB_KIND_H_

namespace disttrain::api {

struct ChildLabels {
  const char* job_name;
  const char* replica_type;  // the lower-case role
  const char* replica_index;
  const char* job_role;  // on the pod whose success decides the job (chief, else worker 0)
  const char* job_role_value;
  // Every object made for a job of this kind carries it: informers select exactly those.
  const char* owner_key;
  const char* owner_value;
};

struct JobKind {
  const char* group;
  const char* api_version;
  const char* kind;
  const char* plural;
  ChildLabels labels;
};

inline constexpr JobKind kDistributedTrainingKind = {
    "disttrain.io",
    "disttrain.io/v1",
    "DistributedTraining",
    "distributedtrainings",
    {"disttrain.io/job-name", "disttrain.io/replica-type", "disttrain.io/replica-index",
     "disttrain.io/job-role", "chief", "app.kubernetes.io/managed-by", "disttrain-operator"}};

inline constexpr JobKind kTfJobKind = {
    "kubeflow.org",
    "kubeflow.org/v1",
    "TFJob",
    "tfjobs",
    {"training.kubeflow.org/job-name", "training.kubeflow.org/replica-type",
     "training.kubeflow.org/replica-index", "training.kubeflow.org/job-role", "master",
     "training.kubeflow.org/operator-name", "tfjob-controller"}};

inline constexpr const JobKind* kJobKinds[] = {&kDistributedTrainingKind, &kTfJobKind};

}  // namespace disttrain::api

#endif  // DISTTRAIN_OPERATOR_API_JOB_KIND_H_
