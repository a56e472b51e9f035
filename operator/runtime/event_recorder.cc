#include "operator/runtime/event_recorder.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json_members.h"
#include "common/log.h"
#include "operator/kube/errors.h"

namespace disttrain::runtime {

KubeEventRecorder::KubeEventRecorder(kube::KubeClient* client, std::string component, Clock* clock)
    : client_(client), component_(std::move(component)), clock_(clock) {}

namespace {

std::string KubeTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

}  // namespace

void KubeEventRecorder::Record(const nlohmann::json& object, EventType type,
                               const std::string& reason, const std::string& message) {
  const nlohmann::json& meta = ObjectMember(object, "metadata");
  const std::string key = absl::StrCat(
      meta.value("namespace", ""), "/", meta.value("name", ""), "/", meta.value("uid", ""), "/",
      type == EventType::kNormal ? "N" : "W", "/", reason, "/", message);
  const absl::Time now = clock_->Now();
  std::string name;
  int count = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = seen_.find(key);
    if (it != seen_.end() && now - it->second.last < kAggregationWindow) {
      it->second.last = now;
      count = ++it->second.count;
      name = it->second.name;
    }
  }
  if (count == 0) {
    Create(object, type, reason, message, key);
    return;
  }
  const std::string ns = meta.value("namespace", "default");
  absl::Status r = client_->Patch(kube::kEvents, ns, name, kube::PatchType::kMerge,
                                  {{"count", count}, {"lastTimestamp", KubeTime(now)}}, "");
  if (kube::IsNotFound(r)) {
    Create(object, type, reason, message, key);  // the API server expired it (events live an hour)
  } else if (!r.ok()) {
    LogWarning("could not update an event", {{"reason", reason}, {"error", r.ToString()}});
  }
}

void KubeEventRecorder::Create(const nlohmann::json& object, EventType type,
                               const std::string& reason, const std::string& message,
                               const std::string& key) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const nlohmann::json& meta = ObjectMember(object, "metadata");
  const std::string ns = meta.value("namespace", "default");
  const std::string name = meta.value("name", "");
  const absl::Time now = clock_->Now();
  const std::string event_name = absl::StrFormat("%s.%016x", name, rng());
  nlohmann::json event = {{"apiVersion", "v1"},
                          {"kind", "Event"},
                          {"metadata", {{"name", event_name}, {"namespace", ns}}},
                          {"involvedObject",
                           {{"apiVersion", object.value("apiVersion", "")},
                            {"kind", object.value("kind", "")},
                            {"name", name},
                            {"namespace", ns},
                            {"uid", meta.value("uid", "")},
                            {"resourceVersion", meta.value("resourceVersion", "")}}},
                          {"reason", reason},
                          {"message", message},
                          {"type", type == EventType::kNormal ? "Normal" : "Warning"},
                          {"source", {{"component", component_}}},
                          {"reportingComponent", component_},
                          {"firstTimestamp", KubeTime(now)},
                          {"lastTimestamp", KubeTime(now)},
                          {"count", 1}};
  absl::StatusOr<nlohmann::json> r = client_->Create(kube::kEvents, ns, event);
  if (!r.ok()) {
    LogWarning("could not record an event", {{"reason", reason}, {"error", r.status().ToString()}});
    return;
  }
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = seen_.insert_or_assign(key, Seen{event_name, 1, now});
  if (inserted) order_.push_back(key);
  while (seen_.size() > kMaxRemembered && !order_.empty()) {
    seen_.erase(order_.front());
    order_.pop_front();
  }
}

}  // namespace disttrain::runtime
