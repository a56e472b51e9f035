// `kubectl dtr status` and `kubectl dtr top`, and the errors every subcommand shares.
#include "plugin/commands.h"

#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "operator/api/labels.h"
#include "operator/kube/errors.h"
#include "plugin/job_view.h"
#include "plugin/usage.h"

namespace disttrain::plugin {

namespace {

kube::Resource JobResource(const api::JobKind& kind) {
  const std::string prefix = absl::StrCat(kind.group, "/");
  return {kind.group, std::string(absl::StripPrefix(kind.api_version, prefix)), kind.plural};
}

std::string Lower(const char* s) { return absl::AsciiStrToLower(s); }

}  // namespace

absl::Status ParseJobRef(const std::string& ref, Target* t) {
  const size_t slash = ref.find('/');
  t->job = slash == std::string::npos ? ref : ref.substr(slash + 1);
  t->kind = &api::kDistributedTrainingKind;
  if (slash != std::string::npos) {
    const std::string type = absl::AsciiStrToLower(ref.substr(0, slash));
    t->kind = nullptr;
    for (const api::JobKind* kind : api::kJobKinds) {
      const std::string singular = Lower(kind->kind), plural = kind->plural;
      for (const std::string& name : {singular, plural, absl::StrCat(singular, ".", kind->group),
                                      absl::StrCat(plural, ".", kind->group)}) {
        if (type == name) t->kind = kind;
      }
    }
    if (type == "dtr") t->kind = &api::kDistributedTrainingKind;
    if (t->kind == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown job type \"", ref.substr(0, slash),
                                                     "\": want NAME, dtr/NAME or tfjob/NAME"));
    }
  }
  if (t->job.empty())
    return absl::InvalidArgumentError(absl::StrCat("no job name in \"", ref, "\""));
  return absl::OkStatus();
}

std::string ExplainError(const absl::Status& s, const Target& t) {
  switch (s.code()) {
    case absl::StatusCode::kPermissionDenied:
      return absl::StrCat("Error: the API server refused: ", s.message(),
                          "\nkubectl dtr needs get on ", t.kind->plural,
                          ", list on pods, get on "
                          "pods/log (logs) and nodes/proxy (top) in namespace \"",
                          t.ns, "\"; check with `kubectl auth can-i get ", t.kind->plural, " -n ",
                          t.ns, "`.\n");
    case absl::StatusCode::kUnauthenticated:
      return absl::StrCat("Error: the API server does not accept these credentials: ", s.message(),
                          "\n");
    default:
      return absl::StrCat("Error: ", s.message(), "\n");
  }
}

bool ReadJob(const Target& t, nlohmann::json* job, std::vector<nlohmann::json>* pods,
             std::ostream& err) {
  absl::StatusOr<nlohmann::json> j = t.client->Get(JobResource(*t.kind), t.ns, t.job);
  if (!j.ok()) {
    if (kube::IsNotFound(j.status())) {
      err << "Error: " << Lower(t.kind->kind) << " \"" << t.job << "\" not found in namespace \""
          << t.ns << "\" (kubectl get "
          << (t.kind == &api::kDistributedTrainingKind ? "dtr" : t.kind->plural) << " -n " << t.ns
          << " lists the jobs there)\n";
    } else {
      err << ExplainError(j.status(), t);
    }
    return false;
  }
  *job = *std::move(j);
  kube::ListOptions options;
  options.label_selector = absl::StrCat(t.kind->labels.job_name, "=", t.job);
  absl::StatusOr<kube::ListResult> list = t.client->List(kube::kPods, t.ns, options);
  if (!list.ok()) {
    err << ExplainError(list.status(), t);
    return false;
  }
  *pods = std::move(list->items);
  return true;
}

int RunStatus(const Target& t, std::ostream& out, std::ostream& err) {
  nlohmann::json job;
  std::vector<nlohmann::json> pods;
  if (!ReadJob(t, &job, &pods, err)) return 1;
  out << FormatStatus(job, ReadPods(t.job, pods, *t.kind), absl::Now());
  return 0;
}

int RunTop(const Target& t, std::ostream& out, std::ostream& err) {
  nlohmann::json job;
  std::vector<nlohmann::json> pods;
  if (!ReadJob(t, &job, &pods, err)) return 1;
  const std::vector<PodRow> rows = ReadPods(t.job, pods, *t.kind);
  std::map<std::string, PodUsage> usage;
  std::map<std::string, std::string> node_errors;
  std::map<std::string, bool> nodes;
  for (const PodRow& r : rows) {
    if (!r.node.empty()) nodes[r.node] = true;
  }
  for (const auto& [node, unused] : nodes) {
    absl::StatusOr<std::string> text =
        t.client->GetText(absl::StrCat("/api/v1/nodes/", node, "/proxy/stats/summary"),
                          absl::StrCat("read the kubelet summary of node ", node));
    nlohmann::json summary = text.ok()
                                 ? nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false)
                                 : nlohmann::json();
    if (!text.ok()) {
      if (text.status().code() == absl::StatusCode::kPermissionDenied) {
        err << ExplainError(text.status(), t);
        return 1;
      }
      node_errors[node] = std::string(text.status().message());
    } else if (!summary.is_object()) {
      node_errors[node] = "the kubelet's summary is not JSON";
    } else {
      usage.merge(ReadSummary(summary));
    }
  }
  const std::string progress =
      FormatProgressLine(job.value("status", nlohmann::json::object()), absl::Now());
  if (!progress.empty()) out << "Progress:   " << progress << "\n\n";
  out << FormatTop(rows, usage, node_errors);
  return 0;
}

}  // namespace disttrain::plugin
