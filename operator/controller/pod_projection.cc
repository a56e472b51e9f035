#include "operator/controller/pod_projection.h"

namespace disttrain::controller {

using nlohmann::json;

namespace {

void Keep(json& from, json& to, const char* key) {
  auto it = from.find(key);
  if (it != from.end()) to[key] = std::move(*it);
}

// `message`: keep the termination message (the current state's only: the result of a run).
json Terminated(json& state, bool message) {
  json out = json::object();
  auto t = state.find("terminated");
  if (t == state.end())
    return state.contains("running") ? json{{"running", json::object()}} : json::object();
  json term = json::object();
  Keep(*t, term, "exitCode");
  Keep(*t, term, "reason");
  if (message) Keep(*t, term, "message");
  out["terminated"] = std::move(term);
  return out;
}

// apiVersion, kind and the metadata the reconciler reads.
json ProjectMetadata(json& object) {
  json out = json::object();
  Keep(object, out, "apiVersion");
  Keep(object, out, "kind");
  json meta = json::object();
  if (auto m = object.find("metadata"); m != object.end()) {
    for (const char* k : {"name", "namespace", "uid", "resourceVersion", "labels",
                          "ownerReferences", "deletionTimestamp"}) {
      Keep(*m, meta, k);
    }
  }
  out["metadata"] = std::move(meta);
  return out;
}

}  // namespace

json ProjectService(json service) { return ProjectMetadata(service); }

json ProjectPod(json pod) {
  json out = ProjectMetadata(pod);
  json containers = json::array();
  if (auto spec = pod.find("spec"); spec != pod.end() && spec->contains("containers")) {
    for (json& c : (*spec)["containers"]) containers.push_back({{"name", c.value("name", "")}});
  }
  out["spec"] = {{"containers", std::move(containers)}};
  json status = json::object();
  if (auto s = pod.find("status"); s != pod.end()) {
    Keep(*s, status, "phase");
    Keep(*s, status, "reason");
    if (s->contains("conditions")) {
      json ready = json::array();
      for (json& c : (*s)["conditions"]) {
        if (c.value("type", "") == "Ready")
          ready.push_back({{"type", "Ready"}, {"status", c.value("status", "")}});
      }
      status["conditions"] = std::move(ready);
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

}  // namespace disttrain::controller
