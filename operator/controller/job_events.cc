#include "operator/controller/job_events.h"

#include "absl/strings/str_cat.h"
#include "operator/api/labels.h"

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

}  // namespace

std::string OwnerKey(const runtime::ObjectPtr& obj) {
  const json& meta = obj->value("metadata", json::object());
  std::string job = meta.value("labels", json::object()).value(api::kLabelJobName, "");
  if (job.empty()) return "";
  return absl::StrCat(meta.value("namespace", ""), "/", job);
}

runtime::EventHandler EnqueueJobs(runtime::WorkQueue* queue) { return EnqueueBy(queue, JobKey); }

runtime::EventHandler EnqueueServiceOwners(runtime::WorkQueue* queue) {
  return EnqueueBy(queue, OwnerKey);
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
