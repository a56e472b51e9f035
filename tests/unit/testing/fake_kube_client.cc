#include "tests/unit/testing/fake_kube_client.h"

#include "absl/strings/str_cat.h"
#include "operator/kube/errors.h"

namespace disttrain::testing {

using nlohmann::json;

std::string FakeKubeClient::Key(const kube::Resource& r, const std::string& ns,
                                const std::string& name) {
  return absl::StrCat(r.GroupVersion(), "/", r.plural, "/", ns, "/", name);
}

absl::Status FakeKubeClient::Begin(std::string verb, const kube::Resource& r, const std::string& ns,
                                   const std::string& name, const std::string& subresource) {
  actions_.push_back({verb, r.plural, ns, name, subresource});
  for (auto it = failures_.begin(); it != failures_.end(); ++it) {
    if (it->verb != verb || (!it->resource.empty() && it->resource != r.plural)) continue;
    absl::Status error = it->error;
    if (--it->times == 0) failures_.erase(it);
    return error;
  }
  return absl::OkStatus();
}

void FakeKubeClient::FailNext(std::string verb, std::string resource, absl::Status error,
                              int times) {
  absl::MutexLock lock(&mu_);
  failures_.push_back({std::move(verb), std::move(resource), std::move(error), times});
}

std::vector<FakeKubeClient::Action> FakeKubeClient::actions() const {
  absl::MutexLock lock(&mu_);
  return actions_;
}

void FakeKubeClient::ClearActions() {
  absl::MutexLock lock(&mu_);
  actions_.clear();
}

std::vector<json> FakeKubeClient::Objects(const kube::Resource& r) const {
  absl::MutexLock lock(&mu_);
  std::vector<json> out;
  const std::string prefix = absl::StrCat(r.GroupVersion(), "/", r.plural, "/");
  for (const auto& [k, v] : objects_) {
    if (k.rfind(prefix, 0) == 0) out.push_back(v);
  }
  return out;
}

absl::StatusOr<json> FakeKubeClient::Get(const kube::Resource& r, const std::string& ns,
                                         const std::string& name) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Begin("get", r, ns, name); !s.ok()) return s;
  auto it = objects_.find(Key(r, ns, name));
  if (it == objects_.end())
    return kube::StatusFromHttp(
        404, R"({"kind":"Status","reason":"NotFound","message":"not found"})", "get");
  return it->second;
}

absl::StatusOr<kube::ListResult> FakeKubeClient::List(const kube::Resource& r,
                                                      const std::string& ns,
                                                      const kube::ListOptions&) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Begin("list", r, ns, ""); !s.ok()) return s;
  kube::ListResult out;
  std::string prefix = Key(r, ns, "");
  if (ns.empty()) prefix = absl::StrCat(r.GroupVersion(), "/", r.plural, "/");
  for (const auto& [k, v] : objects_) {
    if (k.rfind(prefix, 0) == 0) out.items.push_back(v);
  }
  out.resource_version = absl::StrCat(rv_);
  return out;
}

absl::StatusOr<json> FakeKubeClient::Create(const kube::Resource& r, const std::string& ns,
                                            const json& object) {
  absl::MutexLock lock(&mu_);
  std::string name = object.value("/metadata/name"_json_pointer, "");
  if (absl::Status s = Begin("create", r, ns, name); !s.ok()) return s;
  std::string key = Key(r, ns, name);
  if (objects_.count(key)) {
    return kube::StatusFromHttp(
        409, R"({"kind":"Status","reason":"AlreadyExists","message":"exists"})", "create");
  }
  json stored = object;
  stored["metadata"]["namespace"] = ns;
  stored["metadata"]["resourceVersion"] = absl::StrCat(++rv_);
  const int n = ++created_[key];
  stored["metadata"]["uid"] =
      n == 1 ? absl::StrCat("uid-", name) : absl::StrCat("uid-", name, "-", n);
  objects_[key] = stored;
  return stored;
}

absl::StatusOr<json> FakeKubeClient::Update(const kube::Resource& r, const std::string& ns,
                                            const json& object) {
  absl::MutexLock lock(&mu_);
  std::string name = object.value("/metadata/name"_json_pointer, "");
  if (absl::Status s = Begin("update", r, ns, name); !s.ok()) return s;
  auto it = objects_.find(Key(r, ns, name));
  if (it == objects_.end()) return kube::StatusFromHttp(404, "{}", "update");
  if (object.value("/metadata/resourceVersion"_json_pointer, "") !=
      it->second.value("/metadata/resourceVersion"_json_pointer, "")) {
    return kube::StatusFromHttp(
        409, R"({"kind":"Status","reason":"Conflict","message":"conflict"})", "update");
  }
  json stored = object;
  stored["metadata"]["resourceVersion"] = absl::StrCat(++rv_);
  it->second = stored;
  return stored;
}

absl::StatusOr<json> FakeKubeClient::UpdateStatus(const kube::Resource& r, const std::string& ns,
                                                  const json& object) {
  return Update(r, ns, object);
}

absl::Status FakeKubeClient::Patch(const kube::Resource& r, const std::string& ns,
                                   const std::string& name, kube::PatchType type, const json& patch,
                                   const std::string& subresource) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Begin("patch", r, ns, name, subresource); !s.ok()) return s;
  auto it = objects_.find(Key(r, ns, name));
  if (it == objects_.end()) return kube::StatusFromHttp(404, "{}", "patch");
  if (type == kube::PatchType::kJson) {  // RFC 6902, its "test" operations included
    try {
      it->second = it->second.patch(patch);
    } catch (const json::exception& e) {
      const json status = {{"kind", "Status"}, {"reason", "Invalid"}, {"message", e.what()}};
      return kube::StatusFromHttp(422, status.dump(), "patch");
    }
  } else {
    const std::string want = patch.value("/metadata/resourceVersion"_json_pointer, "");
    if (!want.empty() && want != it->second.value("/metadata/resourceVersion"_json_pointer, "")) {
      return kube::StatusFromHttp(
          409, R"({"kind":"Status","reason":"Conflict","message":"the object has been modified"})",
          "patch");
    }
    if (subresource == "status") {
      if (patch.contains("status")) it->second["status"].merge_patch(patch["status"]);
    } else {
      json body = patch;
      if (body.contains("metadata")) body["metadata"].erase("resourceVersion");
      it->second.merge_patch(body);
    }
  }
  it->second["metadata"]["resourceVersion"] = absl::StrCat(++rv_);
  // As the API server: an object being deleted goes once its last finalizer is removed.
  const json& meta = it->second["metadata"];
  if (meta.contains("deletionTimestamp") &&
      (!meta.contains("finalizers") || meta["finalizers"].empty())) {
    objects_.erase(it);
  }
  return absl::OkStatus();
}

absl::Status FakeKubeClient::Delete(const kube::Resource& r, const std::string& ns,
                                    const std::string& name, const kube::DeleteOptions& options) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Begin("delete", r, ns, name); !s.ok()) return s;
  actions_.back().grace_period_seconds = options.grace_period_seconds;
  auto it = objects_.find(Key(r, ns, name));
  if (it == objects_.end()) return kube::StatusFromHttp(404, "{}", "delete");
  if (options.precondition_uid &&
      *options.precondition_uid != it->second.value("/metadata/uid"_json_pointer, "")) {
    return kube::StatusFromHttp(
        409, R"({"kind":"Status","reason":"Conflict","message":"UID precondition"})", "delete");
  }
  json& meta = it->second["metadata"];
  const bool finalizers = meta.contains("finalizers") && !meta["finalizers"].empty();
  const bool force = options.grace_period_seconds == 0;
  if (finalizers || (graceful_ && !force && r.plural == "pods")) {
    // Kept, marked deleting: until its finalizers are removed, or (a pod with a grace period)
    // until the test deletes it again as the kubelet would once its containers stopped.
    if (!meta.contains("deletionTimestamp")) {
      meta["deletionTimestamp"] = "2026-01-01T00:00:00Z";
      meta["resourceVersion"] = absl::StrCat(++rv_);
      return absl::OkStatus();
    }
    if (finalizers) return absl::OkStatus();
  }
  objects_.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<kube::WatchStream>> FakeKubeClient::Watch(const kube::Resource& r,
                                                                         const std::string& ns,
                                                                         const kube::ListOptions&) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = Begin("watch", r, ns, ""); !s.ok()) return s;
  if (watches_.empty()) {
    // Nothing scripted: a stream that fails at once, so the informer backs off and tries again.
    return std::unique_ptr<kube::WatchStream>(
        new FakeWatchStream({}, absl::UnavailableError("no scripted watch")));
  }
  auto next = watches_.front();
  watches_.pop_front();
  if (!next.ok()) return next.status();
  return std::unique_ptr<kube::WatchStream>(new FakeWatchStream(next->first, next->second));
}

void FakeKubeClient::QueueWatch(
    absl::StatusOr<std::pair<std::vector<kube::WatchEvent>, absl::Status>> next) {
  absl::MutexLock lock(&mu_);
  watches_.push_back(std::move(next));
}

void FakeKubeClient::Put(const kube::Resource& r, json object) {
  absl::MutexLock lock(&mu_);
  std::string ns = object.value("/metadata/namespace"_json_pointer, "");
  std::string name = object.value("/metadata/name"_json_pointer, "");
  object["metadata"]["resourceVersion"] = absl::StrCat(++rv_);
  objects_[Key(r, ns, name)] = std::move(object);
}

}  // namespace disttrain::testing
