#include "operator/controller/job_events.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "operator/api/job_kind.h"
#include "operator/queueing/workload.h"

namespace disttrain::controller {
namespace {

using nlohmann::json;

bool Exited(const runtime::ObjectPtr& pod) {
  const std::string phase = pod->value("/status/phase"_json_pointer, "");
  return phase == "Succeeded" || phase == "Failed";
}

runtime::EventHandler EnqueueBy(runtime::WorkQueue* queue,
                                std::string (*key)(const runtime::ObjectPtr&)) {
  auto add = [queue, key](const runtime::ObjectPtr& o) {
    if (std::string k = key(o); !k.empty()) queue->Add(k);
  };
  return {add, [add](const runtime::ObjectPtr&, const runtime::ObjectPtr& now) { add(now); }, add};
}

std::string JobKey(const runtime::ObjectPtr& job) { return runtime::ObjectKey(*job); }

// Whether `a` and `b` hold the same members, ignoring those named in `skip`.
bool SameExcept(const json& a, const json& b, std::initializer_list<std::string_view> skip) {
  if (!a.is_object() || !b.is_object()) return a == b;
  auto skipped = [&](const std::string& k) {
    return std::find(skip.begin(), skip.end(), k) != skip.end();
  };
  size_t compared = 0;
  for (const auto& [k, v] : a.items()) {
    if (skipped(k)) continue;
    auto it = b.find(k);
    if (it == b.end() || *it != v) return false;
    ++compared;
  }
  for (const auto& [k, v] : b.items()) {
    if (!skipped(k)) --compared;
  }
  return compared == 0;
}

}  // namespace

bool StatusOnlyChange(const runtime::ObjectPtr& old_job, const runtime::ObjectPtr& new_job) {
  const json& a = *old_job;
  const json& b = *new_job;
  const std::string rv = a.value("/metadata/resourceVersion"_json_pointer, "");
  // The same version again is a relist re-delivering the job: a resync, reconciled as ever.
  if (rv.empty() || rv == b.value("/metadata/resourceVersion"_json_pointer, "")) return false;
  const json empty = json::object();
  auto metadata = [&](const json& o) -> const json& {
    auto it = o.find("metadata");
    return it == o.end() ? empty : *it;
  };
  return SameExcept(a, b, {"status", "metadata"}) &&
         SameExcept(metadata(a), metadata(b), {"resourceVersion", "managedFields"});
}

std::string OwnerKey(const runtime::ObjectPtr& obj) {
  // Looked up in place: value("metadata", {}) would copy the metadata for every pod event.
  auto meta = obj->find("metadata");
  if (meta == obj->end() || !meta->is_object()) return "";
  auto labels = meta->find("labels");
  if (labels == meta->end() || !labels->is_object()) return "";
  auto job = labels->end();
  for (const api::JobKind* kind : api::kJobKinds) {
    if (job == labels->end()) job = labels->find(kind->labels.job_name);
  }
  if (job == labels->end() || !job->is_string() || job->get_ref<const std::string&>().empty())
    return "";
  return absl::StrCat(meta->value("namespace", ""), "/", job->get_ref<const std::string&>());
}

runtime::EventHandler EnqueueJobs(runtime::WorkQueue* queue) {
  runtime::EventHandler handler = EnqueueBy(queue, JobKey);
  handler.on_update = [queue](const runtime::ObjectPtr& old, const runtime::ObjectPtr& now) {
    if (!StatusOnlyChange(old, now)) queue->Add(JobKey(now));
  };
  return handler;
}

runtime::EventHandler EnqueueServiceOwners(runtime::WorkQueue* queue) {
  return EnqueueBy(queue, OwnerKey);
}

runtime::EventHandler EnqueueNamespaceJobs(runtime::WorkQueue* queue, const runtime::Store* jobs) {
  auto add = [queue, jobs](const runtime::ObjectPtr& ns) {
    for (const runtime::ObjectPtr& job :
         jobs->ByNamespace(ns->value("/metadata/name"_json_pointer, ""))) {
      queue->Add(JobKey(job));
    }
  };
  return {add, [add](const runtime::ObjectPtr&, const runtime::ObjectPtr& now) { add(now); }, add};
}

runtime::EventHandler EnqueueWorkloadOwners(runtime::WorkQueue* queue) {
  runtime::EventHandler handler = EnqueueBy(queue, OwnerKey);
  handler.on_add = nullptr;
  handler.on_update = [queue](const runtime::ObjectPtr& old, const runtime::ObjectPtr& now) {
    if (!queueing::DecisionChanged(*old, *now)) return;
    if (std::string k = OwnerKey(now); !k.empty()) queue->Add(k);
  };
  return handler;
}

runtime::EventHandler EnqueuePodOwners(runtime::WorkQueue* queue, absl::Duration batch) {
  runtime::EventHandler handler = EnqueueBy(queue, OwnerKey);
  handler.on_add = [queue, batch](const runtime::ObjectPtr& pod) {
    if (std::string k = OwnerKey(pod); !k.empty()) queue->AddAfter(k, batch);
  };
  handler.on_update = [queue, batch](const runtime::ObjectPtr& old, const runtime::ObjectPtr& now) {
    std::string k = OwnerKey(now);
    if (k.empty()) return;
    if (Exited(now) && !Exited(old)) {
      queue->AddUrgent(k);
    } else {
      queue->AddAfter(k, batch);
    }
  };
  return handler;
}

}  // namespace disttrain::controller
