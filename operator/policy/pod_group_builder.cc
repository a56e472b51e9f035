#include "operator/policy/pod_group_builder.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "operator/api/labels.h"
#include "operator/api/quantity.h"
#include "operator/policy/child_meta.h"

namespace disttrain::policy {
namespace {

using nlohmann::json;

// Adds one pod's resource requests (limits where nothing is requested) to `sum`, in milli units.
absl::Status AddPodRequests(const json& pod_template, std::map<std::string, int64_t>* sum) {
  const json& containers = pod_template["spec"]["containers"];
  for (const json& c : containers) {
    std::map<std::string, int64_t> per_container;
    auto resources = c.find("resources");
    if (resources == c.end() || !resources->is_object()) continue;
    for (const char* kind : {"limits", "requests"}) {  // requests override limits
      auto r = resources->find(kind);
      if (r == resources->end() || !r->is_object()) continue;
      for (const auto& [name, value] : r->items()) {
        std::string text = value.is_string() ? value.get<std::string>() : value.dump();
        absl::StatusOr<int64_t> milli = api::ParseMilliQuantity(text);
        if (!milli.ok()) {
          return absl::InvalidArgumentError(absl::StrCat("container \"", c.value("name", ""),
                                                         "\" resources.", kind, ".", name, ": ",
                                                         milli.status().message()));
        }
        per_container[name] = *milli;
      }
    }
    for (const auto& [name, milli] : per_container) (*sum)[name] += milli;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<json>> BuildPodGroup(const api::DistributedTraining& job,
                                                  const BuildOptions& options) {
  const auto& sp = job.spec.run_policy.scheduling_policy;
  if (!sp) return std::optional<json>();

  // The pods the gang needs: all, or with an elasticPolicy only minReplicas of the workers (the
  // others are scheduled as they fit); minAvailable, when set, takes the first that many.
  auto needed = [&](api::ReplicaType type, int32_t replicas) {
    return type == api::ReplicaType::kWorker && job.spec.elastic_policy
               ? std::min(replicas, job.spec.elastic_policy->min_replicas)
               : replicas;
  };
  int32_t total = 0;
  for (const auto& [type, spec] : job.spec.replica_specs) total += needed(type, spec.replicas);
  const int32_t min_member = sp->min_available.value_or(total);

  std::map<std::string, int64_t> sum;
  int32_t counted = 0;
  for (api::ReplicaType type : api::kReplicaTypes) {  // Chief, PS, Worker, Evaluator
    auto it = job.spec.replica_specs.find(type);
    if (it == job.spec.replica_specs.end()) continue;
    const int32_t n = sp->min_available ? it->second.replicas : needed(type, it->second.replicas);
    for (int i = 0; i < n && counted < min_member; ++i, ++counted) {
      if (absl::Status s = AddPodRequests(it->second.pod_template, &sum); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "spec.replicaSpecs.", api::ReplicaTypeKey(type), ".template: ", s.message()));
      }
    }
  }
  json min_resources = json::object();
  for (const auto& [name, milli] : sum) min_resources[name] = api::FormatMilliQuantity(milli);

  json spec = {{"minMember", min_member}};
  if (!min_resources.empty()) spec["minResources"] = std::move(min_resources);
  json group = {{"kind", "PodGroup"}};
  if (options.gang_scheduler == GangScheduler::kKubernetes) {
    // kube-scheduler counts pods, not resources: minCount alone, from the Workload's template.
    group["apiVersion"] = "scheduling.k8s.io/v1alpha2";
    spec = {
        {"schedulingPolicy", {{"gang", {{"minCount", min_member}}}}},
        {"podGroupTemplateRef",
         {{"workload",
           {{"workloadName", job.metadata.name}, {"podGroupTemplateName", kGangTemplateName}}}}}};
  } else if (options.gang_scheduler == GangScheduler::kVolcano) {
    group["apiVersion"] = "scheduling.volcano.sh/v1beta1";
    if (!sp->queue.empty()) spec["queue"] = sp->queue;
    if (!sp->priority_class.empty()) spec["priorityClassName"] = sp->priority_class;
  } else {
    group["apiVersion"] = "scheduling.x-k8s.io/v1alpha1";
    if (sp->schedule_timeout_seconds)
      spec["scheduleTimeoutSeconds"] = *sp->schedule_timeout_seconds;
  }
  group["metadata"] = {{"name", job.metadata.name},
                       {"namespace", job.metadata.namespace_name},
                       {"labels",
                        {{job.kind->labels.job_name, job.metadata.name},
                         {job.kind->labels.owner_key, job.kind->labels.owner_value}}},
                       {"ownerReferences", json::array({OwnerReference(job)})}};
  group["spec"] = std::move(spec);
  return std::optional<json>(std::move(group));
}

std::optional<json> BuildGangWorkload(const api::DistributedTraining& job,
                                      const BuildOptions& options) {
  if (!job.spec.run_policy.scheduling_policy ||
      options.gang_scheduler != GangScheduler::kKubernetes) {
    return std::nullopt;
  }
  absl::StatusOr<std::optional<json>> group = BuildPodGroup(job, options);
  if (!group.ok() || !group->has_value()) return std::nullopt;
  json workload = {{"apiVersion", "scheduling.k8s.io/v1alpha2"}, {"kind", "Workload"}};
  workload["metadata"] = (**group)["metadata"];
  workload["spec"] = {
      {"controllerRef",
       {{"apiGroup", job.kind->group}, {"kind", job.kind->kind}, {"name", job.metadata.name}}},
      {"podGroupTemplates",
       json::array({{{"name", kGangTemplateName},
                     {"schedulingPolicy", (**group)["spec"]["schedulingPolicy"]}}})}};
  return workload;
}

}  // namespace disttrain::policy
