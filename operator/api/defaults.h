// Defaults of a DistributedTraining that depend on other fields. Simple per-field defaults
// (replicas 1, restartPolicy Never, cleanPodPolicy Running, ...) are the initial values in
// types.h and the CRD schema's `default`s, so the API server and the C++ side agree.
// Pure function; thread-safe.
#ifndef DISTTRAIN_OPERATOR_API_DEFAULTS_H_
#define DISTTRAIN_OPERATOR_API_DEFAULTS_H_

#include <cstdint>
#include <limits>

#include "operator/api/types.h"

namespace disttrain::api {

// backoffLimit when the user gives none, as for a Kubernetes Job: restarts are never unbounded.
inline constexpr int32_t kDefaultBackoffLimit = 6;
// runPolicy.nodeLossTolerationSeconds of a DistributedTraining (Kubernetes' own is 300).
inline constexpr int64_t kDefaultNodeLossTolerationSeconds = 30;
// A TFJob's when it gives none: the training-operator checks the limit only when one is set, so
// restarts are unbounded there, and a migrated TFJob keeps that behaviour.
inline constexpr int32_t kTfJobDefaultBackoffLimit = std::numeric_limits<int32_t>::max() / 2;

// Fills run_policy.backoff_limit (by the job's kind) and, for gang scheduling,
// schedulingPolicy.minAvailable (every replica of the job).
void ApplyDefaults(DistributedTraining* job);

}  // namespace disttrain::api

#endif  // DISTTRAIN_OPERATOR_API_DEFAULTS_H_
