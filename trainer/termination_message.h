// The final result a task leaves behind for Kubernetes: its container's termination message
// (terminationMessagePath, /dev/termination-log by default), which the kubelet keeps in the pod's
// status and the operator copies into the job's status.result.
#ifndef DISTTRAIN_TRAINER_TERMINATION_MESSAGE_H_
#define DISTTRAIN_TRAINER_TERMINATION_MESSAGE_H_

#include <string>

#include "nlohmann/json.hpp"

namespace disttrain::trainer {

// Writes `result` as one line of JSON to `path` when that file exists (the kubelet creates it;
// outside Kubernetes nothing is written). A failure is logged, never fatal.
void WriteTerminationMessage(const std::string& path, const nlohmann::json& result);

}  // namespace disttrain::trainer

#endif  // DISTTRAIN_TRAINER_TERMINATION_MESSAGE_H_
