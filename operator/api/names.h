// Names of the objects the operator creates for a job, and the limit they put on job names.
// Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_API_NAMES_H_
#define DISTTRAIN_OPERATOR_API_NAMES_H_

#include <string>

#include "absl/strings/string_view.h"
#include "operator/api/types.h"

namespace disttrain::api {

// Kubernetes DNS labels (Service names, label values, hostnames) hold at most 63 characters.
inline constexpr int kMaxDnsLabel = 63;

// "<job>-<role>-<index>", the name of the Pod and of its headless Service.
std::string ReplicaName(absl::string_view job, ReplicaType type, int index);
// The same for one job (a TFJob's Master chief: "<job>-master-<index>").
std::string ReplicaName(const DistributedTraining& job, ReplicaType type, int index);

// Whether the job's pods resolve through one headless Service named like the job (hostname and
// subdomain set on each pod) rather than one Service per pod (job.addressing).
bool UsesJobService(const DistributedTraining& job);
// Whether that Service is made: a job of one task has no peers to resolve, so it gets none.
bool NeedsJobService(const DistributedTraining& job);

// A replica's DNS name up to the namespace, before ".svc": "<pod>.<job>.<ns>" with the job's
// Service, "<pod>.<ns>" with per-replica Services.
std::string ReplicaHost(const DistributedTraining& job, ReplicaType type, int index);

// The longest job name for which every generated name of `spec` fits in a DNS label:
// 63 - max over roles with replicas n > 0 of len("-<role>-") + digits(n - 1).
int MaxJobNameLength(const JobSpec& spec);

}  // namespace disttrain::api

#endif  // DISTTRAIN_OPERATOR_API_NAMES_H_
