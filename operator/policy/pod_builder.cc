#include "operator/policy/pod_builder.h"

#include "absl/strings/str_cat.h"
#include "operator/api/labels.h"
#include "operator/api/names.h"
#include "operator/policy/child_meta.h"
#include "operator/policy/tf_config_builder.h"
#include "operator/policy/tls_secret_builder.h"

namespace disttrain::policy {
namespace {

using nlohmann::json;

bool RequestsGpu(const json& container) {
  auto resources = container.find("resources");
  if (resources == container.end() || !resources->is_object()) return false;
  for (const char* kind : {"limits", "requests"}) {
    auto r = resources->find(kind);
    if (r == resources->end() || !r->is_object()) continue;
    auto gpu = r->find("nvidia.com/gpu");
    if (gpu == r->end()) continue;
    if (gpu->is_number() && gpu->get<double>() > 0) return true;
    if (gpu->is_string() && gpu->get<std::string>() != "0") return true;
  }
  return false;
}

// Sets env var `name` in `container`. Returns false when it was already set and `replace` is false.
bool SetEnv(json& container, const std::string& name, const std::string& value, bool replace,
            bool* replaced) {
  json& env = container["env"];
  if (!env.is_array()) env = json::array();
  for (json& e : env) {
    if (e.value("name", "") == name) {
      if (!replace) return false;
      *replaced = true;
      e = {{"name", name}, {"value", value}};
      return true;
    }
  }
  env.push_back({{"name", name}, {"value", value}});
  return true;
}

// Whether `tolerations` already has one that tolerates `key`'s NoExecute taint (also one for every
// key, or for every effect).
bool Tolerates(const json& tolerations, const std::string& key) {
  for (const json& t : tolerations) {
    if (!t.is_object()) continue;
    const std::string k = t.value("key", ""), effect = t.value("effect", "");
    if ((k == key || (k.empty() && t.value("operator", "") == "Exists")) &&
        (effect.empty() || effect == "NoExecute"))
      return true;
  }
  return false;
}

}  // namespace

void AddNodeLossTolerations(json& pod_spec, int64_t seconds) {
  json& tolerations = pod_spec["tolerations"];
  if (!tolerations.is_array()) tolerations = json::array();
  for (const char* key : {kUnreachableTaint, kNotReadyTaint}) {
    if (Tolerates(tolerations, key)) continue;
    tolerations.push_back({{"key", key},
                           {"operator", "Exists"},
                           {"effect", "NoExecute"},
                           {"tolerationSeconds", seconds}});
  }
}

absl::StatusOr<BuiltPod> BuildPod(const api::DistributedTraining& job, api::ReplicaType type,
                                  int index, const BuildOptions& options) {
  auto it = job.spec.replica_specs.find(type);
  if (it == job.spec.replica_specs.end()) {
    return absl::InvalidArgumentError(absl::StrCat("job ", job.metadata.name, " has no ",
                                                   api::ReplicaTypeKey(type), " replicas"));
  }
  const api::ReplicaSpec& spec = it->second;
  const int main = MainContainerIndex(spec.pod_template);
  const std::string pod_name = api::ReplicaName(job, type, index);
  if (main < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("pod ", pod_name, ": the template has no containers"));
  }

  BuiltPod out;
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  json meta = spec.pod_template.value("metadata", json::object());
  json ours = ReplicaMeta(job, type, index);
  meta.erase("generateName");
  meta["name"] = ours["name"];
  meta["namespace"] = ours["namespace"];
  meta["ownerReferences"] = ours["ownerReferences"];
  if (!meta["labels"].is_object()) meta["labels"] = json::object();
  meta["labels"].update(ours["labels"]);

  json pod_spec = spec.pod_template["spec"];
  pod_spec["restartPolicy"] = spec.restart_policy == api::RestartPolicy::kExitCode
                                  ? "Never"
                                  : std::string(api::RestartPolicyName(spec.restart_policy));

  if (api::UsesJobService(job)) {
    // <pod>.<job>.<ns>.svc resolves through the job's headless Service: the endpoints
    // controllers publish a pod's hostname when its subdomain names the Service.
    if ((pod_spec.contains("hostname") && pod_spec["hostname"] != pod_name) ||
        (pod_spec.contains("subdomain") && pod_spec["subdomain"] != job.metadata.name)) {
      out.warnings.push_back(
          {"HostnameReplaced",
           absl::StrCat("pod ", pod_name, ": replaced the template's hostname and subdomain with ",
                        pod_name, " and ", job.metadata.name, ", the names its peers resolve")});
    }
    pod_spec["hostname"] = pod_name;
    pod_spec["subdomain"] = job.metadata.name;
  }

  json& container = pod_spec["containers"][main];
  const std::string container_name = container.value("name", "");
  if (std::optional<std::string> tf = TfConfigText(job, type, index, options)) {
    bool replaced = false;
    SetEnv(container, "TF_CONFIG", *tf, /*replace=*/true, &replaced);
    if (replaced) {
      out.warnings.push_back(
          {"TFConfigReplaced",
           absl::StrCat("pod ", pod_name, ": replaced the TF_CONFIG set in container \"",
                        container_name, "\" with the one the operator generates")});
    }
  }
  if (!RequestsGpu(container)) {
    // Both masks: CUDA_VISIBLE_DEVICES hides GPUs from the CUDA runtime; the NVIDIA container
    // runtime reads NVIDIA_VISIBLE_DEVICES and, on a node whose default runtime is nvidia, would
    // otherwise mount every GPU of the node into a pod that asked for none.
    bool replaced = false;
    SetEnv(container, "CUDA_VISIBLE_DEVICES", "", /*replace=*/false, &replaced);
    SetEnv(container, "NVIDIA_VISIBLE_DEVICES", "void", /*replace=*/false, &replaced);
  }

  if (job.spec.tls.enabled) {
    // Only this task's key, read-only, where the trainer looks (DISTTRAIN_TLS_DIR).
    json& volumes = pod_spec["volumes"];
    if (!volumes.is_array()) volumes = json::array();
    volumes.push_back(TlsVolume(job, type, index, pod_spec));
    json& mounts = container["volumeMounts"];
    if (!mounts.is_array()) mounts = json::array();
    mounts.push_back({{"name", kTlsVolume}, {"mountPath", kTlsMountPath}, {"readOnly", true}});
    bool replaced = false;
    SetEnv(container, kTlsDirEnv, kTlsMountPath, /*replace=*/true, &replaced);
  }

  if (const std::optional<int64_t> seconds = job.spec.run_policy.node_loss_toleration_seconds) {
    AddNodeLossTolerations(pod_spec, *seconds);
  }

  if (const auto& sp = job.spec.run_policy.scheduling_policy) {
    if (!meta["annotations"].is_object()) meta["annotations"] = json::object();
    meta["annotations"][api::kVolcanoGroupAnnotation] = job.metadata.name;
    meta["labels"][api::kCoschedulingGroupLabel] = job.metadata.name;
    if (!sp->priority_class.empty() && !pod_spec.contains("priorityClassName")) {
      pod_spec["priorityClassName"] = sp->priority_class;
    }
    // kube-scheduler's own gang: the pod names its PodGroup (immutable; an API server without
    // the GenericWorkload gate drops the field).
    if (options.gang_scheduler == GangScheduler::kKubernetes) {
      pod_spec["schedulingGroup"] = {{"podGroupName", job.metadata.name}};
    }
  }

  pod["metadata"] = std::move(meta);
  pod["spec"] = std::move(pod_spec);
  out.pod = std::move(pod);
  return out;
}

}  // namespace disttrain::policy
