#include "operator/api/tfjob_codec.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "operator/api/codec.h"
#include "operator/api/fields.h"

namespace disttrain::api {
namespace {

using internal::Fields;
using json = nlohmann::json;

constexpr char kReplicaSpecsPath[] = "spec.tfReplicaSpecs";

// TFJob's keys are the internal ones, and Master (the chief's legacy name); the training-operator
// also accepts them in any case ("worker"), and so does this front.
absl::StatusOr<ReplicaType> ParseTfReplicaType(const std::string& key) {
  if (absl::EqualsIgnoreCase(key, "Master")) return ReplicaType::kChief;
  for (ReplicaType t : kReplicaTypes) {
    if (absl::EqualsIgnoreCase(key, ReplicaTypeKey(t))) return t;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown replica type \"", key, "\": want Chief (or Master), PS, Worker or Evaluator"));
}

absl::Status DecodeTfSpec(const json& j, JobSpec* spec) {
  Fields f(j, "spec");
  if (j.is_null()) return internal::FieldError("spec", "is required");
  // TFJob's defaults where they differ from DistributedTraining's.
  spec->run_policy.clean_pod_policy = CleanPodPolicy::kNone;
  const json* replicas = f.Find("tfReplicaSpecs");
  if (replicas == nullptr) {
    f.Fail("tfReplicaSpecs", "is required");
  } else if (!replicas->is_object()) {
    f.Fail("tfReplicaSpecs", "must be a map keyed Chief (or Master), PS, Worker or Evaluator");
  } else {
    for (const auto& [key, value] : replicas->items()) {
      absl::StatusOr<ReplicaType> type = ParseTfReplicaType(key);
      if (!type.ok()) {
        f.Fail("tfReplicaSpecs", type.status().message());
        break;
      }
      if (spec->replica_specs.contains(*type)) {
        f.Fail("tfReplicaSpecs",
               *type == ReplicaType::kChief
                   ? std::string("more than one Chief or Master: a job has one chief")
                   : absl::StrCat("replica type ", ReplicaTypeKey(*type),
                                  " is given twice (keys differ only in case)"));
        break;
      }
      if (absl::EqualsIgnoreCase(key, "Master")) spec->chief_is_master = true;
      f.Merge(internal::DecodeReplicaSpec(value, absl::StrCat(kReplicaSpecsPath, ".", key),
                                          &spec->replica_specs[*type]));
    }
  }
  if (const json* run = f.Find("runPolicy")) {
    f.Merge(internal::DecodeRunPolicy(*run, &spec->run_policy));
    Fields r(*run, "spec.runPolicy");
    r.ReadString("managedBy", &spec->managed_by);
    f.Merge(r.status());
    if (spec->managed_by == kTrainingOperatorManager) spec->managed_by.clear();
  }
  f.ReadEnum("successPolicy", internal::kSuccessPolicies, &spec->success_policy);
  f.ReadBool("enableDynamicWorker", &spec->tf_config.sparse_workers);
  return f.status();
}

// TFJob's order and pruning: the condition of the current state comes last (the CRD's State
// column reads conditions[-1]), and Running and Restarting exclude each other.
json TfJobConditions(const JobStatus& status, json encoded) {
  auto drop = [&](const char* type) {
    json kept = json::array();
    for (json& c : encoded) {
      if (c.value("type", "") != type) kept.push_back(std::move(c));
    }
    encoded = std::move(kept);
  };
  auto is_true = [&](const char* type) {
    for (const Condition& c : status.conditions) {
      if (c.type == type) return c.status;
    }
    return false;
  };
  if (is_true("Restarting")) drop("Running");
  if (is_true("Running")) drop("Restarting");
  json last = json::array(), rest = json::array();
  for (json& c : encoded) {
    (c.value("type", "") == status.state ? last : rest).push_back(std::move(c));
  }
  for (json& c : last) rest.push_back(std::move(c));
  return rest;
}

}  // namespace

std::string TfJobReason(const Condition& condition) {
  for (absl::string_view type : kConditionTypes) {
    if (condition.type != type) continue;
    if (type == "Suspended" && !condition.status) return "TFJobResumed";
    return absl::StrCat("TFJob", type);
  }
  return condition.reason;
}

absl::StatusOr<DistributedTraining> DecodeTfJob(const json& object) {
  if (!object.is_object()) return absl::InvalidArgumentError("a TFJob must be an object");
  Fields top(object, "");
  std::string api_version, kind;
  top.ReadString("apiVersion", &api_version);
  top.ReadString("kind", &kind);
  if (!top.status().ok()) return top.status();
  if (kind != kTfJobKind.kind || api_version != kTfJobKind.api_version) {
    return absl::InvalidArgumentError(absl::StrCat("want apiVersion ", kTfJobKind.api_version,
                                                   " kind ", kTfJobKind.kind, ", got apiVersion \"",
                                                   api_version, "\" kind \"", kind, "\""));
  }
  DistributedTraining job;
  job.kind = &kTfJobKind;
  job.addressing = Addressing::kReplicaServices;
  if (const json* meta = top.Find("metadata")) {
    if (absl::Status s = internal::DecodeMetadata(*meta, &job.metadata); !s.ok()) return s;
  }
  const json* spec = top.Find("spec");
  if (absl::Status s = DecodeTfSpec(spec ? *spec : json(), &job.spec); !s.ok()) return s;
  if (const json* status = top.Find("status")) {
    absl::StatusOr<JobStatus> st = DecodeTfJobStatus(*status);
    if (!st.ok()) return st.status();
    job.status = *std::move(st);
  }
  return job;
}

json EncodeTfJobStatus(const JobStatus& status, const JobSpec& spec) {
  // The engine's encoding holds every field; TFJob's differ in the reasons, the replicas'
  // selectors, lastUpdateTime and what is left out when empty.
  json out = EncodeStatus(status);
  out.erase("workerSelector");  // the scale subresource is DistributedTraining's
  for (size_t i = 0; i < status.conditions.size(); ++i) {
    json& c = out["conditions"][i];
    c["reason"] = TfJobReason(status.conditions[i]);
    if (c.contains("lastTransitionTime")) c["lastUpdateTime"] = c["lastTransitionTime"];
  }
  out["conditions"] = TfJobConditions(status, std::move(out["conditions"]));
  // TFJob's active counts running pods only; pending ones are in neither count.
  for (const auto& [type, rs] : status.replica_statuses) {
    out["replicaStatuses"][std::string(ReplicaTypeKey(type))]["active"] = rs.running;
  }
  if (spec.chief_is_master && out.contains("replicaStatuses") &&
      out["replicaStatuses"].contains("Chief")) {
    out["replicaStatuses"]["Master"] = std::move(out["replicaStatuses"]["Chief"]);
    out["replicaStatuses"].erase("Chief");
  }
  // A merge patch clears the list with null; an empty list would be written on every job.
  if (status.restarting_pods.empty()) out["restartingPods"] = nullptr;
  if (status.observed_generation == 0) out.erase("observedGeneration");
  return out;
}

absl::StatusOr<JobStatus> DecodeTfJobStatus(const json& status) {
  json engine = status;
  if (engine.is_object()) {
    engine.erase("lastReconcileTime");
    if (auto rs = engine.find("replicaStatuses"); rs != engine.end() && rs->is_object()) {
      json normalized = json::object();
      for (auto& [key, value] : rs->items()) {
        absl::StatusOr<ReplicaType> type = ParseTfReplicaType(key);
        if (!type.ok()) continue;  // another kind's: not this engine's
        json v = value;
        if (v.is_object()) {
          v.erase("labelSelector");
          v.erase("selector");
          if (v.contains("active")) v["running"] = v["active"];
        }
        normalized[std::string(ReplicaTypeKey(*type))] = std::move(v);
      }
      *rs = std::move(normalized);
    }
  }
  absl::StatusOr<JobStatus> decoded = DecodeStatus(engine);
  if (!decoded.ok()) return decoded;
  // TFJob's active is the running count (EncodeTfJobStatus).
  if (engine.is_object() && engine.contains("replicaStatuses")) {
    for (auto& [type, rs] : decoded->replica_statuses) {
      const json& r = engine["replicaStatuses"][std::string(ReplicaTypeKey(type))];
      if (r.is_object() && r.contains("running") && r["running"].is_number_integer())
        rs.running = r["running"].get<int32_t>();
    }
  }
  return decoded;
}

}  // namespace disttrain::api
