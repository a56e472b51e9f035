// Memory after an OOM kill (spec.runPolicy.oomPolicy). Pure functions; thread-safe.
//
// A replica whose main container the kernel killed for memory (reason OOMKilled: a Failed pod,
// or one the kubelet restarted in place) is recreated with the memory of its main container
// times memoryFactor, rounded up to a whole MiB and at most maxMemory: its limit, and its request
// in the same proportion. The kill is not counted against backoffLimit; the new size is kept in
// status.replicaStatuses.<Role>.resized, from which every later pod of that replica is built.
// A replica already at maxMemory, or whose template sets no memory, fails as before.
#ifndef DISTTRAIN_OPERATOR_POLICY_OOM_POLICY_H_
#define DISTTRAIN_OPERATOR_POLICY_OOM_POLICY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "operator/api/types.h"
#include "operator/policy/pod_state.h"

namespace disttrain::policy {

// The main container's memory limit in the role's template (else its request), in millibytes;
// nullopt when it sets neither.
std::optional<int64_t> TemplateMemory(const api::ReplicaSpec& spec);

// The replica's memory now: its resized entry's, else the template's.
std::optional<int64_t> ReplicaMemory(const api::DistributedTraining& job,
                                     const api::JobStatus& status, api::ReplicaType type,
                                     int index);

struct MemoryGrowth {
  api::ReplicaType type = api::ReplicaType::kWorker;
  api::ResizedReplica entry;  // the replica's resized entry after this kill
  std::string message;        // for the event and the Restarting condition
};

// Whether the OOM kill of `pod` (replica `index` of `type`) grows it: nullopt without an
// oomPolicy, when the pod was not OOMKilled, when its memory is unknown or already at maxMemory.
std::optional<MemoryGrowth> GrowAfterOomKill(const api::DistributedTraining& job,
                                             const api::JobStatus& status, api::ReplicaType type,
                                             int index, const PodState& pod);

// Gives the main container of a built `pod` of the replica its resized memory, when it has
// been resized: the limit, and the request scaled as the limit was (at most the limit).
absl::Status ApplyResizedMemory(const api::JobStatus& status, api::ReplicaType type, int index,
                                nlohmann::json* pod);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_OOM_POLICY_H_
