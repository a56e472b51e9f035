#include "operator/queueing/workload.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/json_members.h"
#include "operator/api/labels.h"

namespace disttrain::queueing {
namespace {

using nlohmann::json;

std::string Sha1Hex(const std::string& text) {
  // Fetched once: OpenSSL 3's SHA1() fetches the algorithm from its providers on every call,
  // most of its cost for a short text (once per pass of every queued job).
  static const EVP_MD* const kSha1 = EVP_MD_fetch(nullptr, "SHA1", nullptr);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(text.data(), text.size(), digest, &size, kSha1, nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(2 * size, '0');
  for (unsigned int i = 0; i < size; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 0xf];
  }
  return hex;
}

// The part of a pod's spec that Kueue reads to count and place it. Env (TF_CONFIG), commands
// and volumes stay out: they differ between replicas and Kueue does not read them.
json TemplateOf(const json& pod) {
  json spec = json::object();
  const json& from = pod.value("spec", json::object());
  auto containers = [](const json& list) {
    json out = json::array();
    for (const json& c : list) {
      json k = {{"name", c.value("name", "")}, {"image", c.value("image", "")}};
      if (c.contains("resources")) k["resources"] = c["resources"];
      out.push_back(std::move(k));
    }
    return out;
  };
  spec["containers"] = containers(from.value("containers", json::array()));
  if (from.contains("initContainers")) spec["initContainers"] = containers(from["initContainers"]);
  for (const char* key : {"nodeSelector", "affinity", "tolerations", "priorityClassName",
                          "overhead", "runtimeClassName", "schedulerName"}) {
    if (from.contains(key)) spec[key] = from[key];
  }
  return {{"spec", std::move(spec)}};
}

std::string Annotation(const json& obj, const char* key) {
  const json& a = obj.value("/metadata/annotations"_json_pointer, json::object());
  return a.value(key, "");
}

}  // namespace

std::string QueueName(const api::DistributedTraining& job) {
  auto it = job.metadata.labels.find(kQueueNameLabel);
  return it == job.metadata.labels.end() ? "" : it->second;
}

std::string PrebuiltWorkloadName(const api::DistributedTraining& job) {
  auto it = job.metadata.labels.find(kPrebuiltWorkloadLabel);
  return it == job.metadata.labels.end() ? "" : it->second;
}

std::string JobWorkloadName(const api::DistributedTraining& job) {
  std::string prebuilt = PrebuiltWorkloadName(job);
  return prebuilt.empty() ? WorkloadName(job) : prebuilt;
}

std::string WorkloadName(const api::DistributedTraining& job) {
  std::string prefix = absl::StrCat(absl::AsciiStrToLower(job.kind->kind), "-", job.metadata.name);
  if (prefix.size() > 247) prefix.resize(247);
  const std::string digest = Sha1Hex(absl::StrCat(job.kind->kind, "\n", job.kind->group, "\n",
                                                  job.metadata.name, "\n", job.metadata.uid));
  return absl::StrCat(prefix, "-", digest.substr(0, 5));
}

json BuildWorkload(const api::DistributedTraining& job, const std::vector<PodSetInput>& pod_sets,
                   const std::optional<Priority>& priority) {
  json sets = json::array();
  for (const PodSetInput& in : pod_sets) {
    if (in.count <= 0) continue;
    json set = {{"name", in.name}, {"count", in.count}, {"template", TemplateOf(in.pod)}};
    if (in.min_count > 0 && in.min_count < in.count) set["minCount"] = in.min_count;
    if (in.topology_request) set["topologyRequest"] = *in.topology_request;
    sets.push_back(std::move(set));
  }
  json labels = {{api::kLabelManagedBy, api::kManagedByValue},
                 {api::kLabelJobName, job.metadata.name},
                 {kJobUidLabel, job.metadata.uid},
                 {kJobKindLabel, job.kind->kind}};
  json spec = {{"queueName", QueueName(job)}, {"podSets", sets}};
  if (priority) {
    spec["priorityClassRef"] = {{"group", "kueue.x-k8s.io"},
                                {"kind", "WorkloadPriorityClass"},
                                {"name", priority->class_name}};
    spec["priority"] = priority->value;
  }
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "Workload"},
          {"metadata",
           {{"name", WorkloadName(job)},
            {"namespace", job.metadata.namespace_name},
            {"labels", labels},
            {"annotations",
             {{kPodSetsDigestAnnotation, Sha1Hex(sets.dump())},
              {kJobGenerationAnnotation, absl::StrCat(job.metadata.generation)}}},
            {"finalizers", {kResourceInUseFinalizer}},
            {"ownerReferences",
             {{{"apiVersion", job.kind->api_version},
               {"kind", job.kind->kind},
               {"name", job.metadata.name},
               {"uid", job.metadata.uid},
               {"controller", true},
               {"blockOwnerDeletion", true}}}}}},
          {"spec", spec}};
}

bool BuiltFrom(const json& existing, const api::DistributedTraining& job) {
  auto label = [&](const char* key) {
    auto it = job.metadata.labels.find(key);
    return it == job.metadata.labels.end() ? std::string() : it->second;
  };
  return Annotation(existing, kJobGenerationAnnotation) == absl::StrCat(job.metadata.generation) &&
         existing.value("/spec/queueName"_json_pointer, std::string()) == QueueName(job) &&
         existing.value("/spec/priorityClassRef/name"_json_pointer, std::string()) ==
             label(kPriorityClassLabel);
}

json ProjectWorkload(json workload) {
  json out = json::object();
  for (const char* k : {"apiVersion", "kind", "metadata", "status"}) {
    if (workload.contains(k)) out[k] = std::move(workload[k]);
  }
  json spec = json::object();
  if (auto s = workload.find("spec"); s != workload.end() && s->is_object()) {
    for (const char* k : {"queueName", "active", "priorityClassRef", "priority"}) {
      if (s->contains(k)) spec[k] = std::move((*s)[k]);
    }
  }
  out["spec"] = std::move(spec);
  return out;
}

bool DecisionChanged(const json& old_workload, const json& new_workload) {
  // Read in place, nothing copied: this runs for every Workload event.
  static const json kNull;
  auto member = [](const json& object, const char* name) -> const json& {
    auto it = object.find(name);
    return it == object.end() ? kNull : *it;
  };
  // The conditions that tell Kueue's decision: (type, status, reason, message), sorted by type.
  using Condition = std::array<std::string_view, 4>;
  auto conditions = [](const json& status) {
    const bool dispatched = status.contains("clusterName");  // by MultiKueue
    std::vector<Condition> out;
    for (const json& c : ArrayMember(status, "conditions")) {
      const std::string_view type = StringMember(c, "type"), reason = StringMember(c, "reason");
      if (type == "PodsReady") continue;
      // The job side's end, as JobSideStatusPatch writes it: the pass that wrote it also
      // removed the finalizer.
      if (type == "Finished" && !dispatched && (reason == "Succeeded" || reason == "Failed")) {
        continue;
      }
      out.push_back({type, StringMember(c, "status"), reason, StringMember(c, "message")});
    }
    // Unique by type (a list-map in Kueue's CRD): sorted, two lists compare as maps would.
    std::sort(out.begin(), out.end());
    return out;
  };
  const json& old_status = ObjectMember(old_workload, "status");
  const json& new_status = ObjectMember(new_workload, "status");
  return member(old_status, "admission") != member(new_status, "admission") ||
         member(old_status, "admissionChecks") != member(new_status, "admissionChecks") ||
         member(ObjectMember(old_workload, "spec"), "active") !=
             member(ObjectMember(new_workload, "spec"), "active") ||
         member(ObjectMember(old_workload, "metadata"), "deletionTimestamp") !=
             member(ObjectMember(new_workload, "metadata"), "deletionTimestamp") ||
         conditions(old_status) != conditions(new_status);
}

bool SamePodSets(const json& existing, const json& wanted) {
  return Annotation(existing, kPodSetsDigestAnnotation) ==
         Annotation(wanted, kPodSetsDigestAnnotation);
}

bool Matches(const json& existing, const json& wanted) {
  auto priority = [](const json& w) {
    return w.value("/spec/priorityClassRef/name"_json_pointer, std::string());
  };
  return SamePodSets(existing, wanted) &&
         existing.value("/spec/queueName"_json_pointer, std::string()) ==
             wanted.value("/spec/queueName"_json_pointer, std::string()) &&
         priority(existing) == priority(wanted);
}

std::string PodSetsDiffer(const json& prebuilt, const json& wanted) {
  auto sets = [](const json& w) {
    std::vector<std::string> out;
    for (const json& ps : w.value("/spec/podSets"_json_pointer, json::array())) {
      std::string one = absl::StrCat(ps.value("name", ""), " ", ps.value("count", 0));
      if (ps.contains("minCount")) absl::StrAppend(&one, " (min ", ps.value("minCount", 0), ")");
      out.push_back(std::move(one));
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::vector<std::string> have = sets(prebuilt), want = sets(wanted);
  if (have == want) return "";
  return absl::StrCat("its podSets are [", absl::StrJoin(have, ", "), "], the job's [",
                      absl::StrJoin(want, ", "), "]");
}

absl::StatusOr<json> AdoptPatch(const json& prebuilt, const json& wanted) {
  const json& ours = wanted["metadata"]["ownerReferences"][0];
  // An earlier object of the job's group, kind and name: a copy MultiKueue deleted and made again
  // while its Workload stayed. Replaced, as Kueue's own controllers do (SetControllerReference).
  auto group = [](const json& ref) {
    const std::string api_version = ref.value("apiVersion", "");
    const size_t slash = api_version.find('/');
    return slash == std::string::npos ? std::string() : api_version.substr(0, slash);
  };
  auto same_object = [&](const json& ref) {
    return group(ref) == group(ours) && StringMember(ref, "kind") == StringMember(ours, "kind") &&
           StringMember(ref, "name") == StringMember(ours, "name");
  };
  json owners = json::array();
  for (const json& o : prebuilt.value("/metadata/ownerReferences"_json_pointer, json::array())) {
    if (o.value("uid", "") == ours.value("uid", "") || same_object(o)) continue;
    if (o.value("controller", false)) {
      return absl::FailedPreconditionError(
          absl::StrCat("Workload ", prebuilt.value("/metadata/name"_json_pointer, std::string()),
                       " is controlled by ", o.value("kind", ""), " ", o.value("name", "")));
    }
    owners.push_back(o);
  }
  owners.push_back(ours);
  json finalizers = prebuilt.value("/metadata/finalizers"_json_pointer, json::array());
  if (std::find(finalizers.begin(), finalizers.end(), kResourceInUseFinalizer) == finalizers.end())
    finalizers.push_back(kResourceInUseFinalizer);
  return json{{"metadata",
               {{"labels", wanted["metadata"]["labels"]},
                {"annotations", wanted["metadata"]["annotations"]},
                {"ownerReferences", std::move(owners)},
                {"finalizers", std::move(finalizers)}}}};
}

}  // namespace disttrain::queueing
