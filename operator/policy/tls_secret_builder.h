// spec.tls: the Secret holding a job's mutual-TLS material, and where its pods mount it. The CA is
// made for the job alone; its key signs one certificate per task (subjectAltNames: the task's
// Service name in every form TF_CONFIG or a peer may use) and is then dropped, so no certificate
// of the job can be issued after the Secret is built. Pure functions apart from key generation;
// thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_TLS_SECRET_BUILDER_H_
#define DISTTRAIN_OPERATOR_POLICY_TLS_SECRET_BUILDER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "operator/api/types.h"
#include "operator/policy/build_options.h"

namespace disttrain::policy {

inline constexpr char kTlsVolume[] = "disttrain-tls";
inline constexpr char kTlsMountPath[] = "/etc/disttrain/tls";
inline constexpr char kTlsDirEnv[] = "DISTTRAIN_TLS_DIR";
// How long the certificates stay valid: past any job's life (rotation is not needed within it).
inline constexpr absl::Duration kTlsValidity = absl::Hours(24 * 365);

// "<job>-tls-<first 8 characters of the job's uid>" ("<job>-tls" before it has one, in `render`):
// no Secret of an earlier job of the same name, nor one a user made, is ever taken for its own.
std::string TlsSecretName(const api::DistributedTraining& job);
// The Secret's keys for task (type, index): "<role>-<index>.crt" and ".key"; the CA is "ca.crt".
std::string TlsTaskKey(const api::DistributedTraining& job, api::ReplicaType type, int index);

// The names a task's certificate carries: <pod>, then with the job's Service <pod>.<job>,
// <pod>.<job>.<ns>, <pod>.<job>.<ns>.svc and <pod>.<job>.<ns>.svc.<cluster domain>; with
// per-replica Services <pod>.<ns>, <pod>.<ns>.svc and <pod>.<ns>.svc.<cluster domain>
// (cluster.local unless --cluster-domain says otherwise).
std::vector<std::string> TaskNames(const api::DistributedTraining& job, api::ReplicaType type,
                                   int index, const BuildOptions& options);

// The Secret for a job with spec.tls: ca.crt plus a certificate and key per task, valid from an
// hour before `now` (clock skew between nodes) for kTlsValidity; labelled and owned like the
// job's other children.
absl::StatusOr<nlohmann::json> BuildTlsSecret(const api::DistributedTraining& job,
                                              const BuildOptions& options, absl::Time now);

// The volume a task's pod mounts: the Secret's ca.crt, and the task's own certificate and key as
// tls.crt and tls.key (no other task's key reaches the pod). Files are 0440 when the pod sets an
// fsGroup (readable by that group only), else 0444, so a non-root trainer can read them.
nlohmann::json TlsVolume(const api::DistributedTraining& job, api::ReplicaType type, int index,
                         const nlohmann::json& pod_spec);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_TLS_SECRET_BUILDER_H_
