// The job's result (status.result) from the termination messages of its pods: the chief's (or
// worker 0's when there is no chief) once it succeeded, and the evaluator's once it ended. A
// message that is not a JSON object of the trainer's keys is ignored, so any trainer may write
// anything there. What was learned is kept when the pods are gone (cleanup, TTL). Pure.
#ifndef DISTTRAIN_OPERATOR_POLICY_RESULT_POLICY_H_
#define DISTTRAIN_OPERATOR_POLICY_RESULT_POLICY_H_

#include <optional>
#include <string>
#include <vector>

#include "operator/api/types.h"
#include "operator/policy/pod_state.h"

namespace disttrain::policy {

std::optional<api::JobResult> UpdateResult(const std::vector<PodState>& pods, bool has_chief,
                                           std::optional<api::JobResult> previous);

// "global step 1500, loss 0.3741, test accuracy 0.8456 at step 1500": the event a new result gets.
std::string DescribeResult(const api::JobResult& result);

}  // namespace disttrain::policy

#endif  // DISTTRAIN_OPERATOR_POLICY_RESULT_POLICY_H_
