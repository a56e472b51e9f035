// What `kubectl dtr` shows of a job and its pods, read from their JSON: one row per pod and the
// `status` report. Pure functions; thread-safe.
#ifndef DISTTRAIN_PLUGIN_JOB_VIEW_H_
#define DISTTRAIN_PLUGIN_JOB_VIEW_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "operator/api/job_kind.h"

namespace disttrain::plugin {

struct PodRow {
  std::string name;
  std::string uid;
  std::string role;  // the replica-type label: chief, ps, worker, evaluator
  int index = -1;
  std::string phase;
  std::string state;  // the main container's: Running, Waiting (reason), Terminated (reason, code)
  bool ready = false;
  int restarts = 0;  // the main container's
  std::string node;
  std::optional<absl::Time> created;
  std::string container;           // the main container's name (the one logs follow)
  bool container_started = false;  // running or terminated: it has logs
  // The run before the current one, which the kubelet keeps after a restart (its log is read with
  // previous=true). Not while the container waits to restart: its log is then that same run.
  bool previous_run = false;
  bool terminating = false;
  std::string prefix;  // "job.role.index", the prefix of its log lines
};

// The job's pods as rows, in role order (chief, ps, worker, evaluator, others) then index.
std::vector<PodRow> ReadPods(const std::string& job, const std::vector<nlohmann::json>& pods,
                             const api::JobKind& kind = api::kDistributedTrainingKind);

// kubectl's age format: 42s, 5m, 3h, 2d.
std::string FormatAge(absl::Duration d);

// status.progress in one line ("" without one), the time left counted from `now`: "60%
// (1200/2000), 41.3 steps/s, 1322 examples/s, about 4m10s left; read 12s ago".
std::string FormatProgressLine(const nlohmann::json& status, absl::Time now);

// The report of `kubectl dtr status`: the job's state, replica counts, result, its pods and its
// conditions.
std::string FormatStatus(const nlohmann::json& job, const std::vector<PodRow>& pods,
                         absl::Time now);

// Left-aligned columns separated by three spaces, as kubectl prints tables.
std::string FormatTable(const std::vector<std::vector<std::string>>& rows);

}  // namespace disttrain::plugin

#endif  // DISTTRAIN_PLUGIN_JOB_VIEW_H_
