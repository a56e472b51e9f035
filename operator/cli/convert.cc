#include "operator/cli/convert.h"

#include <ostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/flags.h"
#include "common/yaml_json.h"
#include "operator/api/codec.h"
#include "operator/api/defaults.h"
#include "operator/api/tfjob_codec.h"
#include "operator/api/validation.h"
#include "operator/cli/input.h"

namespace disttrain::cli {
namespace {

using nlohmann::json;

constexpr char kConvertUsage[] =
    "kubectl dtr convert -f TFJOB.yaml [-o yaml|json]\n"
    "\n"
    "Writes the DistributedTraining (disttrain.io/v1) that runs each Kubeflow TFJob in\n"
    "TFJOB.yaml (- for stdin) the same way; what runs differently is said on stderr.";

// The members of a metadata object a user writes; the API server's own are dropped.
json UserMetadata(const json& meta) {
  json out = json::object();
  for (const char* key : {"name", "namespace", "labels", "annotations"}) {
    if (meta.contains(key) && !meta[key].empty()) out[key] = meta[key];
  }
  if (out.contains("annotations")) {
    out["annotations"].erase("kubectl.kubernetes.io/last-applied-configuration");
    if (out["annotations"].empty()) out.erase("annotations");
  }
  return out;
}

}  // namespace

absl::StatusOr<Conversion> ConvertTfJob(const json& tfjob) {
  absl::StatusOr<api::DistributedTraining> decoded = api::DecodeTfJob(tfjob);
  if (!decoded.ok()) return decoded.status();
  api::DistributedTraining job = *std::move(decoded);
  if (job.metadata.namespace_name.empty()) job.metadata.namespace_name = "default";
  api::ApplyDefaults(&job);
  if (absl::Status valid = api::Validate(job); !valid.ok()) return valid;

  Conversion c;
  const json& spec = tfjob["spec"];
  json out_spec = json::object();
  json replicas = json::object();
  for (const auto& [key, value] : spec["tfReplicaSpecs"].items()) {
    for (api::ReplicaType t : api::kReplicaTypes) {
      if (absl::EqualsIgnoreCase(key, api::ReplicaTypeKey(t)) ||
          (t == api::ReplicaType::kChief && absl::EqualsIgnoreCase(key, "Master"))) {
        replicas[std::string(api::ReplicaTypeKey(t))] = value;
      }
    }
  }
  if (job.spec.chief_is_master) {
    c.warnings.push_back(
        "Master becomes Chief: its pods are named <job>-chief-0 and TF_CONFIG's task type is "
        "chief (TensorFlow 2's name), not master");
  }
  json run = spec.value("runPolicy", json::object());
  if (run.is_null()) run = json::object();
  run.erase("managedBy");
  if (!run.contains("cleanPodPolicy")) {
    run["cleanPodPolicy"] = "None";  // TFJob's default; DistributedTraining's is Running
    c.warnings.push_back(
        "runPolicy.cleanPodPolicy: None written out (TFJob's default; DistributedTraining's "
        "is Running, which deletes the parameter servers when the job ends)");
  }
  if (!run.contains("backoffLimit")) {
    c.warnings.push_back(
        "runPolicy.backoffLimit is unset: a TFJob restarts its replicas without limit, a "
        "DistributedTraining up to 6 times; set it to keep another bound");
  }
  out_spec["runPolicy"] = std::move(run);
  if (!job.spec.managed_by.empty()) out_spec["managedBy"] = job.spec.managed_by;
  if (job.spec.success_policy != api::SuccessPolicy::kDefault) {
    out_spec["successPolicy"] = api::SuccessPolicyName(job.spec.success_policy);
  }
  if (job.spec.tf_config.sparse_workers) out_spec["tfConfig"] = {{"sparseWorkers", true}};
  out_spec["replicaSpecs"] = std::move(replicas);
  c.warnings.push_back(
      "its pods and Services carry disttrain.io/* labels, not training.kubeflow.org/*: "
      "selectors on the old labels (NetworkPolicies, dashboards, the Kubeflow SDK) must change");
  c.job = {{"apiVersion", api::kDistributedTrainingKind.api_version},
           {"kind", api::kDistributedTrainingKind.kind},
           {"metadata", UserMetadata(tfjob.value("metadata", json::object()))},
           {"spec", std::move(out_spec)}};

  // What is written reads back as the same job.
  absl::StatusOr<api::DistributedTraining> back = api::DecodeJob(c.job);
  if (back.ok()) {
    if (back->metadata.namespace_name.empty()) back->metadata.namespace_name = "default";
    api::ApplyDefaults(&*back);
  }
  absl::Status same = back.ok() ? api::Validate(*back) : back.status();
  if (!same.ok()) {
    return absl::InternalError(absl::StrCat(
        "the converted job does not read back (a bug, please report): ", same.message()));
  }
  return c;
}

int RunConvert(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string file, output = "yaml";
  FlagSet flags(kConvertUsage);
  flags.String("f", &file, "The TFJob manifest (YAML or JSON; - reads stdin).");
  flags.String("filename", &file, "Same as -f.");
  flags.String("o", &output, "Output format: yaml (documents) or json (a v1 List).");
  absl::StatusOr<std::vector<std::string>> rest = flags.Parse(args);
  if (rest.ok() && !rest->empty()) {
    rest = absl::InvalidArgumentError(absl::StrCat("unexpected argument \"", rest->front(), "\""));
  }
  if (!rest.ok()) {
    err << "convert: " << rest.status().message() << "\n";
    return kExitUsage;
  }
  if (flags.help_requested()) {
    out << flags.Help();
    return kExitOk;
  }
  if (file.empty()) {
    err << "convert: -f TFJOB.yaml is required\n";
    return kExitUsage;
  }
  if (output != "yaml" && output != "json") {
    err << "convert: -o must be yaml or json, got \"" << output << "\"\n";
    return kExitUsage;
  }
  absl::StatusOr<std::string> text = ReadInput(file);
  if (!text.ok()) {
    err << "convert: " << text.status().message() << "\n";
    return kExitFailure;
  }
  absl::StatusOr<std::vector<json>> docs = ParseYamlDocuments(*text);
  if (!docs.ok()) {
    err << "convert: " << file << ": " << docs.status().message() << "\n";
    return kExitUsage;
  }
  std::vector<json> jobs;
  for (const json& doc : *docs) {
    const std::string name = doc.value("/metadata/name"_json_pointer, "");
    if (!doc.is_object() || doc.value("kind", "") != api::kTfJobKind.kind) {
      err << "convert: skipping "
          << (doc.is_object() ? doc.value("kind", "a document") : "a document")
          << (name.empty() ? "" : " ") << name << " (not a TFJob)\n";
      continue;
    }
    absl::StatusOr<Conversion> c = ConvertTfJob(doc);
    if (!c.ok()) {
      err << "convert: " << file << (name.empty() ? "" : absl::StrCat(": TFJob ", name)) << ": "
          << c.status().message() << "\n";
      return kExitUsage;
    }
    for (const std::string& w : c->warnings) err << "convert: " << name << ": " << w << "\n";
    jobs.push_back(std::move(c->job));
  }
  if (jobs.empty()) {
    err << "convert: " << file << ": no TFJob in it\n";
    return kExitUsage;
  }
  if (output == "json") {
    out << (jobs.size() == 1 ? jobs[0]
                             : json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", jobs}})
               .dump(2)
        << "\n";
  } else {
    for (const json& j : jobs) out << "---\n" << ToYaml(j);
  }
  return kExitOk;
}

}  // namespace disttrain::cli
