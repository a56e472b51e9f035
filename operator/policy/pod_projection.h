// What the operator keeps of a pod in its cache: only the fields the reconciler reads (names,
// the operator's own labels, the controller's uid, deletion, main-container names, phase,
// readiness, a taint-manager eviction, exit codes and restart counts, the pod's IP: where the
// operator reads a job's progress). Everything else (specs,
// volumes, env, other labels, the rest of the owner reference, ...) is dropped on arrival, which
// keeps the cache small with thousands of pods. Pure function; thread-safe.
#ifndef DISTTRAIN_OPERATOR_POLICY_POD_PROJECTION_H_
#define DISTTRAIN_OPERATOR_POLICY_POD_PROJECTION_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace disttrain::policy {

nlohmann::json ProjectPod(nlohmann::json pod);

// A Service keeps only its metadata (its job-name label of the operator's labels): the
// reconciler reads its name and owner, never its spec.
nlohmann::json ProjectService(nlohmann::json service);

// Whether a projection keeps the label `key`: the operator's labels that the reconciler and its
// event handlers read (a pod's job, role and index; a Service's job).
bool ProjectedLabel(std::string_view key, bool pod);
// The one owner reference a projection keeps: the controller's, as {controller: true, uid}.
nlohmann::json ControllerRef(std::string uid);

// The same projections read straight from the protobuf encoding of a Pod or a Service (the
// object's message, without its envelope; pod_projection_proto.cc): only these fields are
// decoded, the rest of the message is skipped, so no whole-object tree is ever built. Equal to
// ProjectPod/ProjectService of the object's JSON, apart from apiVersion and kind (from the
// envelope). DataLoss on malformed input.
absl::StatusOr<nlohmann::json> DecodePodProjection(std::string_view pod);
absl::StatusOr<nlohmann::json> DecodeServiceProjection(std::string_view service);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_POD_PROJECTION_H_
