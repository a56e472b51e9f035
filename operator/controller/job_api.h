// The API front a reconciler serves, one descriptor each: its kind (api/job_kind.h: names, the
// labels of its children), where its jobs live, how their objects convert to the internal job
// (api/types.h) and back, and the status fields only it writes. One engine, two fronts:
// DistributedTraining and Kubeflow's TFJob (api/tfjob_codec.h); front.h wires one. Plain
// values; thread-safe.
#ifndef DISTTRAIN_OPERATOR_CONTROLLER_JOB_API_H_
#define DISTTRAIN_OPERATOR_CONTROLLER_JOB_API_H_

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "operator/api/job_kind.h"
#include "operator/api/types.h"
#include "operator/kube/resource.h"

namespace disttrain::controller {

struct JobApi {
  const api::JobKind* kind;
  const kube::Resource* resource;
  absl::StatusOr<api::DistributedTraining> (*decode_job)(const nlohmann::json& object);
  absl::StatusOr<api::JobStatus> (*decode_status)(const nlohmann::json& status);
  // The status subresource body (for the job's spec). A write happens only when this changes.
  nlohmann::json (*encode_status)(const api::JobStatus& status, const api::JobSpec& spec);
  // Set to the time of each status write when not null (TFJob's lastReconcileTime).
  const char* write_time_field;
};

// DistributedTraining (disttrain.io/v1).
const JobApi& DistributedTrainingApi();
// Kubeflow's TFJob (kubeflow.org/v1).
const JobApi& TfJobApi();

}  // namespace disttrain::controller

#endif  // DISTTRAIN_OPERATOR_CONTROLLER_JOB_API_H_
