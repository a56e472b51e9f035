// Kubeflow's TFJob (kubeflow.org/v1, as the training-operator v1.9 serves it) as the internal job
// (types.h), and the job's status back in TFJob's shape, so TFJob manifests, the Kubeflow
// training SDK and pipelines run on this operator unchanged.
//
// Decoding: spec.tfReplicaSpecs (Chief or Master, PS, Worker, Evaluator; TFJob's defaults: one
// replica, restartPolicy Never), spec.runPolicy (cleanPodPolicy defaults to None,
// runPolicy.managedBy), spec.successPolicy, spec.enableDynamicWorker. Errors name the TFJob field
// at fault. Encoding: conditions with TFJob's reasons (TFJobCreated, TFJobRunning, ...) in TFJob's
// order, replicaStatuses with active (running pods)/succeeded/failed, startTime and completionTime;
// the engine's own bookkeeping (restarts, restartingPods, the training result) rides along and is
// kept where the CRD keeps unknown status fields (crds/kubeflow.org_tfjobs.yaml).
// Stateless; thread-safe.
#ifndef DISTTRAIN_OPERATOR_API_TFJOB_CODEC_H_
#define DISTTRAIN_OPERATOR_API_TFJOB_CODEC_H_

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "operator/api/types.h"

namespace disttrain::api {

// runPolicy.managedBy values that mean "the training-operator's semantics": this operator's.
inline constexpr char kTrainingOperatorManager[] = "kubeflow.org/training-operator";

absl::StatusOr<DistributedTraining> DecodeTfJob(const nlohmann::json& object);

// The TFJob status subresource body (`spec` names the chief's replicaStatuses key: Master or
// Chief).
nlohmann::json EncodeTfJobStatus(const JobStatus& status, const JobSpec& spec = {});
absl::StatusOr<JobStatus> DecodeTfJobStatus(const nlohmann::json& status);

// The reason TFJob writes for a condition type: "TFJob" + type ("TFJobRunning"); other types
// (Queued, Evaluated, ReplicaFailure) keep the engine's reason.
std::string TfJobReason(const Condition& condition);

}  // namespace disttrain::api

#endif  // DISTTRAIN_OPERATOR_API_TFJOB_CODEC_H_
