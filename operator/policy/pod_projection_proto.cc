// The projections of pod_projection.cc, decoded from the protobuf encoding (field numbers from
// k8s.io/api core/v1 and k8s.io/apimachinery meta/v1 generated.proto). The output matches
// ProjectPod/ProjectService of the JSON the API server sends for the same object: a string
// that JSON omits when empty (omitempty) is left out when empty here too.
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/proto_reader.h"
#include "operator/policy/pod_projection.h"
#include "operator/policy/pod_state.h"

namespace disttrain::policy {

using nlohmann::json;

namespace {

void SetIfNotEmpty(json& to, const char* key, std::string_view value) {
  if (!value.empty()) to[key] = std::string(value);
}

// meta/v1 Time, as its JSON form (RFC 3339, whole seconds, UTC).
std::string Rfc3339(std::string_view time, bool* ok) {
  int64_t seconds = 0;
  ProtoReader r(time);
  while (r.Next()) {
    if (r.field() == 1) seconds = r.int64();
  }
  *ok = *ok && r.ok();
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(seconds),
                          absl::UTCTimeZone());
}

// An OwnerReference's uid when it is the controller's (field 6), else "".
std::string ControllerUid(std::string_view ref, bool* ok) {
  std::string uid;
  bool controller = false;
  ProtoReader r(ref);
  while (r.Next()) {
    if (r.field() == 4) uid = r.bytes();
    if (r.field() == 6) controller = r.boolean();
  }
  *ok = *ok && r.ok();
  return controller ? uid : "";
}

// ObjectMeta: the keys ProjectMetadata keeps.
json Metadata(std::string_view meta, bool pod, bool* ok) {
  json out = json::object();
  json labels = json::object();
  std::optional<std::string> controller;
  ProtoReader r(meta);
  while (r.Next()) {
    switch (r.field()) {
      case 1:
        SetIfNotEmpty(out, "name", r.bytes());
        break;
      case 3:
        SetIfNotEmpty(out, "namespace", r.bytes());
        break;
      case 5:
        SetIfNotEmpty(out, "uid", r.bytes());
        break;
      case 6:
        SetIfNotEmpty(out, "resourceVersion", r.bytes());
        break;
      case 9:
        out["deletionTimestamp"] = Rfc3339(r.bytes(), ok);
        break;
      case 11: {  // map entry: key 1, value 2
        std::string key, value;
        ProtoReader entry(r.bytes());
        while (entry.Next()) {
          if (entry.field() == 1) key = entry.bytes();
          if (entry.field() == 2) value = entry.bytes();
        }
        *ok = *ok && entry.ok();
        if (ProjectedLabel(key, pod)) labels[key] = value;
        break;
      }
      case 13:
        if (!controller) {
          std::string uid = ControllerUid(r.bytes(), ok);
          if (!uid.empty()) controller = std::move(uid);
        }
        break;
      default:
        break;
    }
  }
  *ok = *ok && r.ok();
  if (!labels.empty()) out["labels"] = std::move(labels);
  if (controller) out["ownerReferences"] = json::array({ControllerRef(*std::move(controller))});
  return out;
}

// ContainerState, as Terminated() of pod_projection.cc keeps it.
json State(std::string_view state, bool message, bool* ok) {
  json terminated, waiting;
  bool running = false;
  ProtoReader r(state);
  while (r.Next()) {
    if (r.field() == 1 && message) {
      waiting = json::object();
      ProtoReader w(r.bytes());
      while (w.Next()) {
        if (w.field() == 1) SetIfNotEmpty(waiting, "reason", w.bytes());
        if (w.field() == 2) SetIfNotEmpty(waiting, "message", w.bytes());
      }
      *ok = *ok && w.ok();
    } else if (r.field() == 2) {
      r.bytes();
      running = true;
    } else if (r.field() == 3) {
      terminated = {{"exitCode", 0}};
      ProtoReader t(r.bytes());
      while (t.Next()) {
        if (t.field() == 1) terminated["exitCode"] = t.int32();
        if (t.field() == 3) SetIfNotEmpty(terminated, "reason", t.bytes());
        if (t.field() == 4 && message) SetIfNotEmpty(terminated, "message", t.bytes());
      }
      *ok = *ok && t.ok();
    }
  }
  *ok = *ok && r.ok();
  if (!terminated.is_null()) return {{"terminated", std::move(terminated)}};
  if (running) return {{"running", json::object()}};
  return waiting.is_null() ? json::object() : json{{"waiting", std::move(waiting)}};
}

json ContainerStatus(std::string_view status, bool* ok) {
  json out = {
      {"name", ""}, {"restartCount", 0}, {"state", json::object()}, {"lastState", json::object()}};
  ProtoReader r(status);
  while (r.Next()) {
    switch (r.field()) {
      case 1:
        out["name"] = std::string(r.bytes());
        break;
      case 2:
        out["state"] = State(r.bytes(), /*message=*/true, ok);
        break;
      case 3:
        out["lastState"] = State(r.bytes(), /*message=*/false, ok);
        break;
      case 5:
        out["restartCount"] = r.int32();
        break;
      default:
        break;
    }
  }
  *ok = *ok && r.ok();
  return out;
}

json Status(std::string_view status, bool* ok) {
  json out = json::object();
  json ready = json::array();
  json containers = json::array();
  bool any_condition = false;
  ProtoReader r(status);
  while (r.Next()) {
    switch (r.field()) {
      case 1:
        SetIfNotEmpty(out, "phase", r.bytes());
        break;
      case 2: {
        any_condition = true;
        std::string type, value, reason, message;
        ProtoReader c(r.bytes());
        while (c.Next()) {
          if (c.field() == 1) type = c.bytes();
          if (c.field() == 2) value = c.bytes();
          if (c.field() == 5) reason = c.bytes();
          if (c.field() == 6) message = c.bytes();
        }
        *ok = *ok && c.ok();
        if (type == "Ready") ready.push_back({{"type", "Ready"}, {"status", value}});
        if (type == kDisruptionTarget)
          ready.push_back({{"type", type}, {"status", value}, {"reason", reason}});
        if (type == kPodScheduled && value == "False") {
          ready.push_back(
              {{"type", type}, {"status", value}, {"reason", reason}, {"message", message}});
        }
        break;
      }
      case 4:
        SetIfNotEmpty(out, "reason", r.bytes());
        break;
      case 6:
        SetIfNotEmpty(out, "podIP", r.bytes());
        break;
      case 8:
        containers.push_back(ContainerStatus(r.bytes(), ok));
        break;
      default:
        break;
    }
  }
  *ok = *ok && r.ok();
  if (any_condition) out["conditions"] = std::move(ready);
  if (!containers.empty()) out["containerStatuses"] = std::move(containers);
  return out;
}

json ContainerNames(std::string_view spec, bool* ok) {
  json out = json::array();
  ProtoReader r(spec);
  while (r.Next()) {
    if (r.field() != 2) continue;  // containers
    std::string name;
    ProtoReader c(r.bytes());
    while (c.Next()) {
      if (c.field() == 1) name = c.bytes();
    }
    *ok = *ok && c.ok();
    out.push_back({{"name", name}});
  }
  *ok = *ok && r.ok();
  return out;
}

}  // namespace

absl::StatusOr<json> DecodePodProjection(std::string_view pod) {
  bool ok = true;
  json out = {{"metadata", json::object()},
              {"spec", {{"containers", json::array()}}},
              {"status", json::object()}};
  ProtoReader r(pod);
  while (r.Next()) {
    if (r.field() == 1) out["metadata"] = Metadata(r.bytes(), /*pod=*/true, &ok);
    if (r.field() == 2) out["spec"]["containers"] = ContainerNames(r.bytes(), &ok);
    if (r.field() == 3) out["status"] = Status(r.bytes(), &ok);
  }
  if (!ok || !r.ok()) return absl::DataLossError("malformed protobuf Pod");
  return out;
}

absl::StatusOr<json> DecodeServiceProjection(std::string_view service) {
  bool ok = true;
  json out = {{"metadata", json::object()}};
  ProtoReader r(service);
  while (r.Next()) {
    if (r.field() == 1) out["metadata"] = Metadata(r.bytes(), /*pod=*/false, &ok);
  }
  if (!ok || !r.ok()) return absl::DataLossError("malformed protobuf Service");
  return out;
}

}  // namespace disttrain::policy
