// The subcommands of `kubectl dtr` that read the cluster. Each writes its report to `out` and
// its errors to `err`, and returns the process exit code (0 ok, 1 the cluster said no, e.g. the
// job does not exist or RBAC refuses).
#ifndef DISTTRAIN_PLUGIN_COMMANDS_H_
#define DISTTRAIN_PLUGIN_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "operator/api/job_kind.h"
#include "operator/kube/rest_kube_client.h"

namespace disttrain::plugin {

struct Target {
  kube::RestKubeClient* client;
  std::string ns;
  std::string job;
  const api::JobKind* kind = &api::kDistributedTrainingKind;
};

// The job a command names: NAME (a DistributedTraining), or TYPE/NAME with TYPE as kubectl
// spells it (dtr, distributedtraining[s][.disttrain.io], tfjob[s][.kubeflow.org]).
absl::Status ParseJobRef(const std::string& ref, Target* t);

struct LogsOptions {
  bool follow = false;
  bool timestamps = false;
  std::string role;  // only this role's pods when set
};

int RunLogs(const Target& t, const LogsOptions& options, std::ostream& out, std::ostream& err);
int RunStatus(const Target& t, std::ostream& out, std::ostream& err);
int RunTop(const Target& t, std::ostream& out, std::ostream& err);

// Reads the job and its pods; false, with the error written to `err`, when they cannot be read.
bool ReadJob(const Target& t, nlohmann::json* job, std::vector<nlohmann::json>* pods,
             std::ostream& err);

// "Error: ..." for a failed request, with a hint when RBAC refused it or the job is missing.
std::string ExplainError(const absl::Status& s, const Target& t);

}  // namespace disttrain::plugin

#endif  // DISTTRAIN_PLUGIN_COMMANDS_H_
