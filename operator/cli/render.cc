#include "operator/cli/render.h"

#include <ostream>

#include "absl/strings/str_cat.h"
#include "common/flags.h"
#include "common/yaml_json.h"
#include "operator/api/codec.h"
#include "operator/api/defaults.h"
#include "operator/api/validation.h"
#include "operator/cli/input.h"
#include "operator/policy/desired_objects.h"

namespace disttrain::cli {
namespace {

constexpr char kRenderUsage[] =
    "disttrain-operator render -f JOB.yaml [-o yaml|json] [--cluster-domain D]\n"
    "\n"
    "Applies defaults and validation to the DistributedTraining jobs in JOB.yaml (- for stdin)\n"
    "and prints the PodGroup, NetworkPolicy, Services and Pods the operator would create for them.";

}  // namespace

int RunRender(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string file, output = "yaml", cluster_domain, gang = "volcano";
  bool network_policy = true;
  FlagSet flags(kRenderUsage);
  flags.String("f", &file, "The job manifest (YAML or JSON; - reads stdin).");
  flags.String("filename", &file, "Same as -f.");
  flags.String("o", &output, "Output format: yaml (documents) or json (a v1 List).");
  flags.String("cluster-domain", &cluster_domain,
               "Cluster DNS domain appended to TF_CONFIG hosts (e.g. cluster.local).");
  flags.String("gang-scheduler", &gang,
               "PodGroup flavour: volcano, scheduler-plugins or kubernetes (scheduling.k8s.io "
               "Workload and PodGroup).");
  flags.Bool("network-policy", &network_policy,
             "The operator's --network-policy: a NetworkPolicy for jobs that do not set "
             "spec.networkPolicy.enabled.");
  absl::StatusOr<std::vector<std::string>> rest = flags.Parse(args);
  if (rest.ok() && !rest->empty()) {
    rest = absl::InvalidArgumentError(absl::StrCat("unexpected argument \"", rest->front(), "\""));
  }
  if (!rest.ok()) {
    err << "render: " << rest.status().message() << "\n";
    return kExitUsage;
  }
  if (flags.help_requested()) {
    out << flags.Help();
    return kExitOk;
  }
  if (file.empty()) {
    err << "render: -f JOB.yaml is required\n";
    return kExitUsage;
  }
  if (output != "yaml" && output != "json") {
    err << "render: -o must be yaml or json, got \"" << output << "\"\n";
    return kExitUsage;
  }
  policy::BuildOptions options;
  options.cluster_domain = cluster_domain;
  options.network_policy = network_policy;
  if (gang == "volcano") {
    options.gang_scheduler = policy::GangScheduler::kVolcano;
  } else if (gang == "scheduler-plugins") {
    options.gang_scheduler = policy::GangScheduler::kSchedulerPlugins;
  } else if (gang == "kubernetes") {
    options.gang_scheduler = policy::GangScheduler::kKubernetes;
  } else {
    err << "render: --gang-scheduler must be volcano, scheduler-plugins or kubernetes, got \""
        << gang << "\"\n";
    return kExitUsage;
  }

  absl::StatusOr<std::string> text = ReadInput(file);
  if (!text.ok()) {
    err << "render: " << text.status().message() << "\n";
    return kExitFailure;
  }
  absl::StatusOr<std::vector<nlohmann::json>> docs = ParseYamlDocuments(*text);
  if (!docs.ok()) {
    err << "render: " << file << ": " << docs.status().message() << "\n";
    return kExitUsage;
  }
  if (docs->empty()) {
    err << "render: " << file << ": no DistributedTraining in it\n";
    return kExitUsage;
  }

  std::vector<nlohmann::json> items;
  int jobs = 0;
  for (const nlohmann::json& doc : *docs) {
    if (doc.is_object() && doc.value("kind", "") != api::kKind) {
      err << "render: skipping " << doc.value("kind", "a document without kind") << " "
          << doc.value("/metadata/name"_json_pointer, "") << " (not a DistributedTraining)\n";
      continue;
    }
    ++jobs;
    absl::StatusOr<api::DistributedTraining> job = api::DecodeJob(doc);
    absl::Status status = job.status();
    std::string name = job.ok() ? job->metadata.name : "";
    if (job.ok()) {
      if (job->metadata.namespace_name.empty()) job->metadata.namespace_name = "default";
      api::ApplyDefaults(&*job);
      status = api::Validate(*job);
    }
    absl::StatusOr<policy::DesiredObjects> objects =
        status.ok() ? policy::BuildDesiredObjects(*job, options)
                    : absl::StatusOr<policy::DesiredObjects>(status);
    if (!objects.ok()) {
      err << "render: " << file << (name.empty() ? "" : absl::StrCat(": job ", name)) << ": "
          << objects.status().message() << "\n";
      return kExitUsage;
    }
    for (const policy::BuildWarning& w : objects->warnings) {
      err << "render: warning: " << w.message << "\n";
    }
    if (objects->gang_workload) items.push_back(*objects->gang_workload);
    if (objects->pod_group) items.push_back(*objects->pod_group);
    if (objects->network_policy) items.push_back(*objects->network_policy);
    if (objects->job_service) items.push_back(*objects->job_service);
    for (const auto& r : objects->replicas) {
      if (!r.service.is_null()) items.push_back(r.service);
    }
    for (const auto& r : objects->replicas) items.push_back(r.pod);
  }

  if (jobs == 0) {
    err << "render: " << file << ": no DistributedTraining in it\n";
    return kExitUsage;
  }
  if (output == "json") {
    out << nlohmann::json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}}.dump(2) << "\n";
  } else {
    for (const nlohmann::json& item : items) out << "---\n" << ToYaml(item);
  }
  return kExitOk;
}

}  // namespace disttrain::cli
