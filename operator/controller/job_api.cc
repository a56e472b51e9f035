#include "operator/controller/job_api.h"

#include "operator/api/codec.h"
#include "operator/api/tfjob_codec.h"

namespace disttrain::controller {

const JobApi& DistributedTrainingApi() {
  static const JobApi api = {
      &api::kDistributedTrainingKind,
      &kube::kDistributedTrainings,
      api::DecodeJob,
      api::DecodeStatus,
      [](const api::JobStatus& status, const api::JobSpec&) { return api::EncodeStatus(status); },
      nullptr};
  return api;
}

const JobApi& TfJobApi() {
  static const JobApi api = {&api::kTfJobKind,       &kube::kTfJobs,         api::DecodeTfJob,
                             api::DecodeTfJobStatus, api::EncodeTfJobStatus, "lastReconcileTime"};
  return api;
}

}  // namespace disttrain::controller
