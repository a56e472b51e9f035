#include "plugin/job_view.h"

#include <algorithm>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json_members.h"
#include "operator/api/codec.h"
#include "operator/api/labels.h"
#include "operator/api/result_display.h"
#include "operator/policy/tf_config_builder.h"

namespace disttrain::plugin {
namespace {

using nlohmann::json;

int RoleOrder(const std::string& role) {
  static const std::map<std::string, int> order = {
      {"chief", 0}, {"master", 0}, {"ps", 1}, {"worker", 2}, {"evaluator", 3}};
  auto it = order.find(role);
  return it == order.end() ? 4 : it->second;
}

std::optional<absl::Time> Time(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return std::nullopt;
  absl::StatusOr<absl::Time> t = api::ParseKubeTime(j[key].get<std::string>());
  return t.ok() ? std::optional<absl::Time>(*t) : std::nullopt;
}

std::string ContainerState(const json& status, bool* started) {
  const json& state = status.value("state", json::object());
  if (state.contains("running")) {
    *started = true;
    return "Running";
  }
  if (state.contains("terminated")) {
    *started = true;
    const json& t = state["terminated"];
    return absl::StrCat("Terminated (", t.value("reason", "exit"), ", code ",
                        t.value("exitCode", 0), ")");
  }
  if (state.contains("waiting")) {
    // A container waiting to restart has logs from its last run.
    *started = status.value("restartCount", 0) > 0;
    const std::string reason = state["waiting"].value("reason", "");
    return reason.empty() ? "Waiting" : absl::StrCat("Waiting (", reason, ")");
  }
  return "-";
}

// How a figure of status.result reads: a count (a step) whole, seconds to a tenth, a measure
// (a loss, an accuracy) to a few significant digits.
enum class Shown { kCount, kSeconds, kFigure };

std::string Number(const json& j, const char* key, Shown shown) {
  if (!j.contains(key) || !j[key].is_number()) return "";
  if (j[key].is_number_integer()) return absl::StrCat(j[key].get<int64_t>());
  const double v = j[key].get<double>();
  if (shown == Shown::kFigure) return api::FormatFigure(v);
  return absl::StrFormat("%.*f", shown == Shown::kSeconds ? 1 : 0, v);
}

std::string FormatResult(const json& status) {
  if (!status.contains("result") || !status["result"].is_object()) return "none yet";
  const json& r = status["result"];
  std::vector<std::string> parts;
  auto add = [&](const char* label, const char* key, Shown shown) {
    std::string v = Number(r, key, shown);
    if (!v.empty()) parts.push_back(absl::StrCat(label, " ", v));
  };
  add("step", "globalStep", Shown::kCount);
  add("loss", "loss", Shown::kFigure);
  add("train accuracy", "trainAccuracy", Shown::kFigure);
  add("test accuracy", "accuracy", Shown::kFigure);
  add("test loss", "evalLoss", Shown::kFigure);
  add("train AUC", "trainAuc", Shown::kFigure);
  add("test AUC", "auc", Shown::kFigure);
  add("test log loss", "logLoss", Shown::kFigure);
  add("evaluated at step", "evaluatedStep", Shown::kCount);
  add("training seconds", "trainSeconds", Shown::kSeconds);
  std::string out;
  for (const std::string& p : parts) absl::StrAppend(&out, out.empty() ? "" : ", ", p);
  return out.empty() ? "none yet" : out;
}

}  // namespace

std::vector<PodRow> ReadPods(const std::string& job, const std::vector<json>& pods,
                             const api::JobKind& kind) {
  std::vector<PodRow> rows;
  for (const json& pod : pods) {
    const json& meta = pod.value("metadata", json::object());
    const json& labels = meta.value("labels", json::object());
    const json& status = pod.value("status", json::object());
    PodRow row;
    row.name = meta.value("name", "");
    row.uid = meta.value("uid", "");
    row.role = labels.value(kind.labels.replica_type, "");
    if (!absl::SimpleAtoi(labels.value(kind.labels.replica_index, ""), &row.index)) row.index = -1;
    row.phase = status.value("phase", "Pending");
    row.node = pod.value("/spec/nodeName"_json_pointer, "");
    row.created = Time(meta, "creationTimestamp");
    row.terminating = meta.contains("deletionTimestamp");
    for (const json& c : status.value("conditions", json::array())) {
      if (c.value("type", "") == "Ready") row.ready = c.value("status", "") == "True";
    }
    if (int main = policy::MainContainerIndex(pod); main >= 0) {
      row.container = pod["spec"]["containers"][main].value("name", "");
    }
    row.state = "-";
    for (const json& cs : status.value("containerStatuses", json::array())) {
      if (cs.value("name", "") != row.container) continue;
      row.restarts = cs.value("restartCount", 0);
      row.state = ContainerState(cs, &row.container_started);
      const json& state = cs.value("state", json::object());
      row.previous_run = row.restarts > 0 &&
                         (state.contains("running") || state.contains("terminated")) &&
                         cs.value("lastState", json::object()).contains("terminated");
    }
    row.prefix = absl::StrCat(job, ".", row.role.empty() ? "pod" : row.role, ".",
                              row.index >= 0 ? absl::StrCat(row.index) : row.name);
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const PodRow& a, const PodRow& b) {
    return std::make_tuple(RoleOrder(a.role), a.role, a.index, a.name) <
           std::make_tuple(RoleOrder(b.role), b.role, b.index, b.name);
  });
  return rows;
}

std::string FormatAge(absl::Duration d) {
  const int64_t s = std::max<int64_t>(0, absl::ToInt64Seconds(d));
  if (s < 120) return absl::StrCat(s, "s");
  if (s < 2 * 3600) return absl::StrCat(s / 60, "m");
  if (s < 2 * 86400) return absl::StrCat(s / 3600, "h");
  return absl::StrCat(s / 86400, "d");
}

std::string FormatTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i >= width.size()) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 3, ' ');
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

std::string FormatProgressLine(const json& status, absl::Time now) {
  if (!status.contains("progress")) return "";
  absl::StatusOr<api::JobProgress> p = api::DecodeProgress(status["progress"]);
  if (!p.ok()) return "";
  std::string out = api::FormatProgress(*p);
  if (p->steps_per_second) {
    absl::StrAppend(&out, ", ", api::FormatFigure(*p->steps_per_second), " steps/s");
  }
  if (p->examples_per_second) {
    absl::StrAppend(&out, ", ", api::FormatFigure(*p->examples_per_second), " examples/s");
  }
  if (p->estimated_completion_time) {
    absl::StrAppend(&out, ", about ", api::FormatRemaining(*p->estimated_completion_time - now),
                    " left");
  }
  if (p->observe_time != absl::Time()) {
    absl::StrAppend(&out, "; read ", FormatAge(now - p->observe_time), " ago");
  }
  return out;
}

std::string FormatStatus(const json& job, const std::vector<PodRow>& pods, absl::Time now) {
  const json& meta = job.value("metadata", json::object());
  const json& status = job.value("status", json::object());
  std::string out;
  absl::StrAppend(&out, "Job:        ", meta.value("namespace", ""), "/", meta.value("name", ""),
                  "\n");
  std::string state = status.value("state", "");
  if (state.empty()) {  // a TFJob: its state is its last condition (kubectl's State column)
    const json& conditions = status.value("conditions", json::array());
    if (conditions.is_array() && !conditions.empty()) state = conditions.back().value("type", "");
  }
  if (state.empty()) state = "Pending (not seen by the operator yet)";
  absl::StrAppend(&out, "State:      ", state);
  if (std::optional<absl::Time> created = Time(meta, "creationTimestamp"))
    absl::StrAppend(&out, ", created ", FormatAge(now - *created), " ago");
  absl::StrAppend(&out, "\n");
  std::string replicas;
  for (const char* role : {"Chief", "PS", "Worker", "Evaluator"}) {
    const json& rs = status.value("replicaStatuses", json::object()).value(role, json::object());
    if (rs.contains("progress")) {
      absl::StrAppend(&replicas, replicas.empty() ? "" : "   ", role, " ", rs.value("progress", ""),
                      " running");
    } else if (rs.contains("active") || rs.contains("succeeded") || rs.contains("failed")) {
      // A TFJob's counts: active (running), succeeded, failed.
      absl::StrAppend(&replicas, replicas.empty() ? "" : "   ", role, " ", rs.value("active", 0),
                      " active");
    } else {
      continue;
    }
    if (rs.value("succeeded", 0) > 0)
      absl::StrAppend(&replicas, ", ", rs.value("succeeded", 0), " succeeded");
    if (rs.value("failed", 0) > 0)
      absl::StrAppend(&replicas, ", ", rs.value("failed", 0), " failed");
    if (rs.value("restarts", 0) > 0)
      absl::StrAppend(&replicas, ", ", rs.value("restarts", 0), " restarts");
  }
  if (!replicas.empty()) absl::StrAppend(&out, "Replicas:   ", replicas, "\n");
  // Why it is not running (the operator's Waiting condition), with how long it has waited.
  for (const json& c : ArrayMember(status, "conditions")) {
    if (c.value("type", "") != "Waiting" || c.value("status", "") != "True") continue;
    absl::StrAppend(&out, "Waiting:    ", c.value("reason", ""));
    if (std::optional<absl::Time> since = Time(c, "lastTransitionTime"))
      absl::StrAppend(&out, " for ", FormatAge(now - *since));
    if (std::string message = c.value("message", ""); !message.empty())
      absl::StrAppend(&out, ": ", message);
    absl::StrAppend(&out, "\n");
  }
  if (std::string progress = FormatProgressLine(status, now); !progress.empty()) {
    absl::StrAppend(&out, "Progress:   ", progress, "\n");
  }
  absl::StrAppend(&out, "Result:     ", FormatResult(status), "\n\n");

  if (pods.empty()) {
    absl::StrAppend(&out, "No pods.\n");
  } else {
    std::vector<std::vector<std::string>> table = {
        {"POD", "ROLE", "PHASE", "CONTAINER", "READY", "RESTARTS", "NODE", "AGE"}};
    for (const PodRow& p : pods) {
      table.push_back({p.name, p.index >= 0 ? absl::StrCat(p.role, " ", p.index) : p.role,
                       p.terminating ? p.phase + " (terminating)" : p.phase, p.state,
                       p.ready ? "yes" : "no", absl::StrCat(p.restarts),
                       p.node.empty() ? "<none>" : p.node,
                       p.created ? FormatAge(now - *p.created) : "-"});
    }
    absl::StrAppend(&out, FormatTable(table));
  }

  const json& conditions = status.value("conditions", json::array());
  if (!conditions.empty()) {
    std::vector<std::vector<std::string>> table = {
        {"CONDITION", "STATUS", "REASON", "AGE", "MESSAGE"}};
    for (const json& c : conditions) {
      std::optional<absl::Time> t = Time(c, "lastTransitionTime");
      table.push_back({c.value("type", ""), c.value("status", ""), c.value("reason", ""),
                       t ? FormatAge(now - *t) : "-", c.value("message", "")});
    }
    absl::StrAppend(&out, "\n", FormatTable(table));
  }
  return out;
}

}  // namespace disttrain::plugin
