#include "operator/policy/pod_projection.h"

#include "operator/api/job_kind.h"
#include "operator/policy/pod_state.h"

namespace disttrain::policy {

using nlohmann::json;

namespace {

void Keep(json& from, json& to, const char* key) {
  auto it = from.find(key);
  if (it != from.end()) to[key] = std::move(*it);
}

// `message`: keep the termination message (the current state's only: the result of a run).
// A waiting container's reason and message too (ErrImagePull, CreateContainerConfigError: why a
// pod does not start), in the current state only.
json Terminated(json& state, bool message) {
  json out = json::object();
  auto t = state.find("terminated");
  if (t == state.end()) {
    if (state.contains("running")) return json{{"running", json::object()}};
    auto w = state.find("waiting");
    if (!message || w == state.end() || !w->is_object()) return out;
    json waiting = json::object();
    Keep(*w, waiting, "reason");
    Keep(*w, waiting, "message");
    out["waiting"] = std::move(waiting);
    return out;
  }
  json term = json::object();
  Keep(*t, term, "exitCode");
  Keep(*t, term, "reason");
  if (message) Keep(*t, term, "message");
  out["terminated"] = std::move(term);
  return out;
}

// apiVersion, kind and the metadata the reconciler reads: of the labels, the `pod`'s or the
// Service's kept labels (ProjectedLabel); of the owner references, the controller's uid.
json ProjectMetadata(json& object, bool pod) {
  json out = json::object();
  Keep(object, out, "apiVersion");
  Keep(object, out, "kind");
  json meta = json::object();
  if (auto m = object.find("metadata"); m != object.end()) {
    for (const char* k : {"name", "namespace", "uid", "resourceVersion", "deletionTimestamp"}) {
      Keep(*m, meta, k);
    }
    if (auto labels = m->find("labels"); labels != m->end() && labels->is_object()) {
      json kept = json::object();
      for (auto& [k, v] : labels->items()) {
        if (ProjectedLabel(k, pod)) kept[k] = std::move(v);
      }
      if (!kept.empty()) meta["labels"] = std::move(kept);
    }
    if (auto refs = m->find("ownerReferences"); refs != m->end() && refs->is_array()) {
      for (const json& ref : *refs) {
        std::string uid = ref.value("uid", "");
        if (ref.value("controller", false) && !uid.empty()) {
          meta["ownerReferences"] = json::array({ControllerRef(std::move(uid))});
          break;
        }
      }
    }
  }
  out["metadata"] = std::move(meta);
  return out;
}

}  // namespace

bool ProjectedLabel(std::string_view key, bool pod) {
  for (const api::JobKind* kind : api::kJobKinds) {
    const api::ChildLabels& l = kind->labels;
    if (key == l.job_name) return true;
    if (pod && (key == l.replica_type || key == l.replica_index)) return true;
  }
  return false;
}

json ControllerRef(std::string uid) { return {{"controller", true}, {"uid", std::move(uid)}}; }

json ProjectService(json service) { return ProjectMetadata(service, false); }

json ProjectPod(json pod) {
  json out = ProjectMetadata(pod, true);
  json containers = json::array();
  if (auto spec = pod.find("spec"); spec != pod.end() && spec->contains("containers")) {
    for (json& c : (*spec)["containers"]) containers.push_back({{"name", c.value("name", "")}});
  }
  out["spec"] = {{"containers", std::move(containers)}};
  json status = json::object();
  if (auto s = pod.find("status"); s != pod.end()) {
    Keep(*s, status, "phase");
    Keep(*s, status, "reason");
    Keep(*s, status, "podIP");
    if (s->contains("conditions")) {
      json kept = json::array();
      for (json& c : (*s)["conditions"]) {
        const std::string type = c.value("type", "");
        if (type == "Ready") {
          kept.push_back({{"type", "Ready"}, {"status", c.value("status", "")}});
        } else if (type == kDisruptionTarget) {
          kept.push_back({{"type", type},
                          {"status", c.value("status", "")},
                          {"reason", c.value("reason", "")}});
        } else if (type == kPodScheduled && c.value("status", "") == "False") {
          kept.push_back({{"type", type},
                          {"status", "False"},
                          {"reason", c.value("reason", "")},
                          {"message", c.value("message", "")}});
        }
      }
      status["conditions"] = std::move(kept);
    }
    if (s->contains("containerStatuses")) {
      json statuses = json::array();
      for (json& cs : (*s)["containerStatuses"]) {
        json small = {{"name", cs.value("name", "")},
                      {"restartCount", cs.value("restartCount", 0)}};
        if (cs.contains("state")) small["state"] = Terminated(cs["state"], true);
        if (cs.contains("lastState")) small["lastState"] = Terminated(cs["lastState"], false);
        statuses.push_back(std::move(small));
      }
      status["containerStatuses"] = std::move(statuses);
    }
  }
  out["status"] = std::move(status);
  return out;
}

}  // namespace disttrain::policy
