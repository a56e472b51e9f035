// Conversion between DistributedTraining objects and their JSON form (API server bodies, YAML
// files after yaml_json). Decoding checks types and enums and names the field at fault
// ("spec.replicaSpecs.Worker.replicas: must be an integer"); cross-field rules live in
// validation.h. Stateless; thread-safe.
#ifndef DISTTRAIN_OPERATOR_API_CODEC_H_
#define DISTTRAIN_OPERATOR_API_CODEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "operator/api/types.h"

namespace disttrain::api {

// Decodes a whole object. Fields the API leaves out keep the defaults of types.h.
absl::StatusOr<DistributedTraining> DecodeJob(const nlohmann::json& object);

// The status subresource body, as the CRD schema defines it.
nlohmann::json EncodeStatus(const JobStatus& status);
absl::StatusOr<JobStatus> DecodeStatus(const nlohmann::json& status);
// status.result: the keys the trainer writes in its termination message (camelCase), and on
// encoding `display`, those figures as people read them (result_display.h); decoding ignores it.
nlohmann::json EncodeResult(const JobResult& result);
absl::StatusOr<JobResult> DecodeResult(const nlohmann::json& result);
// status.progress, with its display (written, never read back).
nlohmann::json EncodeProgress(const JobProgress& progress);
absl::StatusOr<JobProgress> DecodeProgress(const nlohmann::json& progress);

// RFC 3339 in UTC with second precision, as Kubernetes writes metav1.Time.
std::string FormatKubeTime(absl::Time t);
absl::StatusOr<absl::Time> ParseKubeTime(absl::string_view text);

}  // namespace disttrain::api

#endif  // DISTTRAIN_OPERATOR_API_CODEC_H_
