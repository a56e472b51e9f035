#include "operator/queueing/admission.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/json_members.h"
#include "operator/api/types.h"
#include "operator/queueing/workload.h"

namespace disttrain::queueing {
namespace {

using nlohmann::json;

const json* Condition(const json& workload, const char* type) {
  for (const json& c : ArrayMember(ObjectMember(workload, "status"), "conditions")) {
    if (c.is_object() && c.value("type", "") == type) return &c;
  }
  return nullptr;
}

bool IsTrue(const json& workload, const char* type) {
  const json* c = Condition(workload, type);
  return c != nullptr && c->value("status", "") == "True";
}

// Adds key=value to `into`; a key already there with another value is a conflict.
absl::Status MergeInto(std::map<std::string, std::string>* into, const json& from,
                       const std::string& what) {
  if (!from.is_object()) return absl::OkStatus();
  for (const auto& [k, v] : from.items()) {
    if (!v.is_string()) continue;
    auto [it, inserted] = into->emplace(k, v.get<std::string>());
    if (!inserted && it->second != v.get<std::string>()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " ", k, " is both \"", it->second,
                                                     "\" and \"", v.get<std::string>(), "\""));
    }
  }
  return absl::OkStatus();
}

}  // namespace

WorkloadState ReadWorkload(const json& workload) {
  WorkloadState s;
  s.quota_reserved = IsTrue(workload, kQuotaReserved);
  s.admitted = IsTrue(workload, kAdmitted);
  s.evicted = IsTrue(workload, kEvicted);
  s.finished = IsTrue(workload, kFinished);
  s.pods_ready = IsTrue(workload, kPodsReady);
  // In place: json::value with a JSON pointer throws and catches an exception for every
  // missing member, and this runs several times in every pass of every queued job.
  const json& meta = ObjectMember(workload, "metadata");
  const json& status = ObjectMember(workload, "status");
  auto deleting = meta.find("deletionTimestamp");
  s.deleting = deleting != meta.end() && !deleting->is_null();
  const json& finalizers = ArrayMember(meta, "finalizers");
  s.has_finalizer =
      std::find(finalizers.begin(), finalizers.end(), kResourceInUseFinalizer) != finalizers.end();
  const json& admission = ObjectMember(status, "admission");
  if (auto cq = admission.find("clusterQueue"); cq != admission.end() && cq->is_string()) {
    s.cluster_queue = cq->get<std::string>();
  }
  for (const char* type : {kQuotaReserved, kAdmitted}) {
    const json* c = Condition(workload, type);
    if (c != nullptr && c->value("status", "") == "False") {
      s.waiting_reason = c->value("reason", "");
      s.waiting_message = c->value("message", "");
      break;
    }
  }
  if (const json* c = Condition(workload, kEvicted); c != nullptr && s.evicted) {
    s.evicted_reason = c->value("reason", "");
    s.evicted_message = c->value("message", "");
  }
  for (const json& r : ArrayMember(status, "reclaimablePods")) {
    if (r.is_object() && r.contains("name"))
      s.reclaimable[r.value("name", "")] = r.value("count", 0);
  }
  return s;
}

absl::StatusOr<std::map<std::string, PodSetInfo>> PodSetInfos(const json& workload,
                                                              const FlavorLookup& flavor) {
  std::map<std::string, PodSetInfo> out;
  // In place, nothing copied: this runs in every pass of an admitted job.
  const json& admission = ObjectMember(ObjectMember(workload, "status"), "admission");
  const std::string queue(StringMember(ObjectMember(workload, "spec"), "queueName"));
  const std::string cluster_queue(StringMember(admission, "clusterQueue"));
  for (const json& a : ArrayMember(admission, "podSetAssignments")) {
    if (!a.is_object()) continue;
    const std::string name = a.value("name", "");
    PodSetInfo& info = out[name];
    if (const auto c = a.find("count"); c != a.end() && c->is_number_integer()) {
      info.count = c->get<int32_t>();
    }
    info.labels["kueue.x-k8s.io/podset"] = name;
    // Placed by topology: Kueue's TopologyUngater finds the pods by their Workload and PodSet,
    // then lifts the gate and pins each to its domain (docs/notes/kueue-topology.md).
    if (a.contains("topologyAssignment")) {
      info.scheduling_gates.push_back(kTopologyGate);
      info.annotations[kWorkloadAnnotation] =
          ObjectMember(workload, "metadata").value("name", std::string());
      info.topology = true;
    }
    if (!queue.empty()) info.labels["kueue.x-k8s.io/local-queue-name"] = queue;
    if (!cluster_queue.empty()) info.labels["kueue.x-k8s.io/cluster-queue-name"] = cluster_queue;
    std::set<std::string> seen;
    for (const auto& [resource, flavor_name] : ObjectMember(a, "flavors").items()) {
      if (!flavor_name.is_string() || !seen.insert(flavor_name.get<std::string>()).second) continue;
      const json* rf = flavor(flavor_name.get<std::string>());
      if (rf == nullptr) {
        return absl::FailedPreconditionError(absl::StrCat("ResourceFlavor ",
                                                          flavor_name.get<std::string>(),
                                                          " of pod set ", name, " does not exist"));
      }
      const json& rf_spec = ObjectMember(*rf, "spec");
      if (absl::Status s =
              MergeInto(&info.node_selector, ObjectMember(rf_spec, "nodeLabels"), "node label");
          !s.ok()) {
        return s;
      }
      for (const json& t : ArrayMember(rf_spec, "tolerations")) {
        info.tolerations.push_back(t);
      }
    }
  }
  for (const json& check : ArrayMember(ObjectMember(workload, "status"), "admissionChecks")) {
    if (!check.is_object()) continue;
    for (const json& u : ArrayMember(check, "podSetUpdates")) {
      if (!u.is_object()) continue;
      auto it = out.find(u.value("name", ""));
      if (it == out.end()) continue;
      PodSetInfo& info = it->second;
      for (auto [field, into] :
           {std::pair{"labels", &info.labels}, std::pair{"annotations", &info.annotations},
            std::pair{"nodeSelector", &info.node_selector}}) {
        if (absl::Status s = MergeInto(into, ObjectMember(u, field), field); !s.ok()) return s;
      }
      for (const json& t : ArrayMember(u, "tolerations")) info.tolerations.push_back(t);
    }
  }
  return out;
}

absl::Status ApplyPodSetInfo(const PodSetInfo& info, json* pod) {
  json& meta = (*pod)["metadata"];
  for (const auto& [k, v] : info.labels) meta["labels"][k] = v;
  for (const auto& [k, v] : info.annotations) meta["annotations"][k] = v;
  json& spec = (*pod)["spec"];
  for (const auto& [k, v] : info.node_selector) {
    json& selector = spec["nodeSelector"];
    if (selector.contains(k) && selector[k] != v) {
      return absl::InvalidArgumentError(
          absl::StrCat("the pod template's nodeSelector ", k, "=", selector[k].dump(),
                       " contradicts the admitted flavor's node label ", k, "=", v));
    }
    selector[k] = v;
  }
  for (const json& t : info.tolerations) {
    json& list = spec["tolerations"];
    if (!list.is_array()) list = json::array();
    if (std::find(list.begin(), list.end(), t) == list.end()) list.push_back(t);
  }
  for (const std::string& g : info.scheduling_gates) {
    spec["schedulingGates"].push_back({{"name", g}});
  }
  // A pod Kueue places by topology that asked for none (every flavour of its ClusterQueue has a
  // topology) says so: Kueue counts the capacity of pods without a topology annotation twice.
  if (info.topology) {
    const json& annotations = meta["annotations"];
    if (!annotations.contains(kRequiredTopology) && !annotations.contains(kPreferredTopology) &&
        !annotations.contains(kUnconstrainedTopology)) {
      meta["annotations"][kUnconstrainedTopology] = "true";
    }
  }
  return absl::OkStatus();
}

Waiting WhyWaiting(const WorkloadState& st, const std::string& workload_name,
                   const std::string& queue) {
  if (st.evicted) {
    return {st.evicted_reason == "Preempted" ? QueueReason::kPreempted : QueueReason::kEvicted,
            absl::StrCat("evicted by Kueue (", st.evicted_reason, "): ", st.evicted_message,
                         "; queued again")};
  }
  if (st.quota_reserved) {
    return {QueueReason::kWaitingForAdmissionChecks,
            st.waiting_message.empty() ? "quota reserved; waiting for admission checks"
                                       : st.waiting_message};
  }
  if (st.waiting_reason == "Inadmissible") return {QueueReason::kInadmissible, st.waiting_message};
  if (!st.waiting_reason.empty()) {
    return {QueueReason::kKueueSays, st.waiting_message, st.waiting_reason};
  }
  return {QueueReason::kWaitingForAdmission,
          absl::StrCat("waiting for Kueue to admit Workload ", workload_name, " from LocalQueue ",
                       queue)};
}

AdmissionStep DecideAdmission(const AdmissionFacts& f) {
  if (!f.has_workload) {
    if (f.replacing) return AdmissionStep::kWaitForReplacement;
    return f.prebuilt ? AdmissionStep::kAdopt : AdmissionStep::kCreate;
  }
  if (f.workload.finished) return AdmissionStep::kFailFinished;
  if (!f.stands) return AdmissionStep::kStop;
  // MultiKueue's: never replaced here, as Kueue's own controllers do.
  if (!*f.stands) return f.prebuilt ? AdmissionStep::kFailOutOfSync : AdmissionStep::kReplace;
  if (f.workload.admitted && !f.workload.evicted) return AdmissionStep::kRun;
  return AdmissionStep::kWait;
}

std::optional<int32_t> PartialWorkers(const std::map<std::string, PodSetInfo>& admission,
                                      int32_t wanted) {
  auto it = admission.find(std::string(api::ReplicaTypeRole(api::ReplicaType::kWorker)));
  if (it == admission.end() || it->second.count <= 0 || it->second.count >= wanted) {
    return std::nullopt;
  }
  return it->second.count;
}

}  // namespace disttrain::queueing
