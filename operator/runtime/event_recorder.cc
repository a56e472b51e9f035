#include "operator/runtime/event_recorder.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log.h"

namespace disttrain::runtime {

KubeEventRecorder::KubeEventRecorder(kube::KubeClient* client, std::string component, Clock* clock)
    : client_(client), component_(std::move(component)), clock_(clock) {}

void KubeEventRecorder::Record(const nlohmann::json& object, EventType type, const std::string& reason,
                               const std::string& message) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const nlohmann::json& meta = object.value("metadata", nlohmann::json::object());
  const std::string ns = meta.value("namespace", "default");
  const std::string name = meta.value("name", "");
  const std::string now = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", clock_->Now(), absl::UTCTimeZone());
  nlohmann::json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", absl::StrFormat("%s.%016x", name, rng())}, {"namespace", ns}}},
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
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1}};
  absl::StatusOr<nlohmann::json> r = client_->Create(kube::kEvents, ns, event);
  if (!r.ok()) LogWarning("could not record an event", {{"reason", reason}, {"error", r.status().ToString()}});
}

}  // namespace disttrain::runtime
