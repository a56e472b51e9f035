// `kubectl dtr convert`: a Kubeflow TFJob manifest rewritten as the DistributedTraining that
// runs the same way, for users who move off the TFJob API for good. Pure functions; thread-safe.
#ifndef DISTTRAIN_OPERATOR_CLI_CONVERT_H_
#define DISTTRAIN_OPERATOR_CLI_CONVERT_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace disttrain::cli {

struct Conversion {
  nlohmann::json job;                 // the DistributedTraining manifest
  std::vector<std::string> warnings;  // what runs differently, or must change around the job
};

// The DistributedTraining for one TFJob object: the same replicas (templates verbatim, keys
// canonical), runPolicy with TFJob's defaults made explicit where DistributedTraining's differ,
// successPolicy, enableDynamicWorker as tfConfig.sparseWorkers, MultiKueue's managedBy, and the
// metadata a user wrote (name, namespace, labels, annotations). A TFJob the operator would
// refuse is refused here with the same message, naming the TFJob's field.
absl::StatusOr<Conversion> ConvertTfJob(const nlohmann::json& tfjob);

// `args` are the arguments after "convert" (-f FILE, -o yaml|json). Writes the jobs to `out`,
// notes and errors to `err`; returns the exit code (0 ok, 2 invalid flags or job, 1 unreadable
// file).
int RunConvert(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace disttrain::cli

#endif  // DISTTRAIN_OPERATOR_CLI_CONVERT_H_
