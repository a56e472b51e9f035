#include "tests/unit/testing/fake_kube_client.h"

#include "absl/strings/str_cat.h"
#include "operator/kube/errors.h"

namespace disttrain::testing {

using nlohmann::json;

std::string FakeKubeClient::Key(const kube::Resource& r, const std::string& ns, const std::string& name) {
  return absl::StrCat(r.GroupVersion(), "/", r.plural, "/", ns, "/", name);
}

absl::StatusOr<json> FakeKubeClient::Get(const kube::Resource& r, const std::string& ns, const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(Key(r, ns, name));
  if (it == objects_.end()) return kube::StatusFromHttp(404, R"({"kind":"Status","reason":"NotFound","message":"not found"})", "get");
  return it->second;
}

absl::StatusOr<kube::ListResult> FakeKubeClient::List(const kube::Resource& r, const std::string& ns,
                                                      const kube::ListOptions&) {
  absl::MutexLock lock(&mu_);
  kube::ListResult out;
  std::string prefix = Key(r, ns, "");
  if (ns.empty()) prefix = absl::StrCat(r.GroupVersion(), "/", r.plural, "/");
  for (const auto& [k, v] : objects_) {
    if (k.rfind(prefix, 0) == 0) out.items.push_back(v);
  }
  out.resource_version = absl::StrCat(rv_);
  return out;
}

absl::StatusOr<json> FakeKubeClient::Create(const kube::Resource& r, const std::string& ns, const json& object) {
  absl::MutexLock lock(&mu_);
  std::string name = object.value("/metadata/name"_json_pointer, "");
  std::string key = Key(r, ns, name);
  if (objects_.count(key)) {
    return kube::StatusFromHttp(409, R"({"kind":"Status","reason":"AlreadyExists","message":"exists"})", "create");
  }
  json stored = object;
  stored["metadata"]["namespace"] = ns;
  stored["metadata"]["resourceVersion"] = absl::StrCat(++rv_);
  stored["metadata"]["uid"] = absl::StrCat("uid-", name);
  objects_[key] = stored;
  return stored;
}

absl::StatusOr<json> FakeKubeClient::Update(const kube::Resource& r, const std::string& ns, const json& object) {
  absl::MutexLock lock(&mu_);
  std::string name = object.value("/metadata/name"_json_pointer, "");
  auto it = objects_.find(Key(r, ns, name));
  if (it == objects_.end()) return kube::StatusFromHttp(404, "{}", "update");
  if (object.value("/metadata/resourceVersion"_json_pointer, "") !=
      it->second.value("/metadata/resourceVersion"_json_pointer, "")) {
    return kube::StatusFromHttp(409, R"({"kind":"Status","reason":"Conflict","message":"conflict"})", "update");
  }
  json stored = object;
  stored["metadata"]["resourceVersion"] = absl::StrCat(++rv_);
  it->second = stored;
  return stored;
}

absl::StatusOr<json> FakeKubeClient::UpdateStatus(const kube::Resource& r, const std::string& ns, const json& object) {
  return Update(r, ns, object);
}

absl::StatusOr<json> FakeKubeClient::Patch(const kube::Resource& r, const std::string& ns, const std::string& name,
                                           kube::PatchType, const json& patch, const std::string&) {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find(Key(r, ns, name));
  if (it == objects_.end()) return kube::StatusFromHttp(404, "{}", "patch");
  it->second.merge_patch(patch);
  it->second["metadata"]["resourceVersion"] = absl::StrCat(++rv_);
  return it->second;
}

absl::Status FakeKubeClient::Delete(const kube::Resource& r, const std::string& ns, const std::string& name,
                                    const kube::DeleteOptions&) {
  absl::MutexLock lock(&mu_);
  if (objects_.erase(Key(r, ns, name)) == 0) return kube::StatusFromHttp(404, "{}", "delete");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<kube::WatchStream>> FakeKubeClient::Watch(const kube::Resource& r,
                                                                         const std::string& ns,
                                                                         const kube::ListOptions&) {
  absl::MutexLock lock(&mu_);
  if (watches_.empty()) {
    // Nothing scripted: a stream that fails at once, so the informer backs off and tries again.
    return std::unique_ptr<kube::WatchStream>(new FakeWatchStream({}, absl::UnavailableError("no scripted watch")));
  }
  auto next = watches_.front();
  watches_.pop_front();
  if (!next.ok()) return next.status();
  return std::unique_ptr<kube::WatchStream>(new FakeWatchStream(next->first, next->second));
}

void FakeKubeClient::QueueWatch(absl::StatusOr<std::pair<std::vector<kube::WatchEvent>, absl::Status>> next) {
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
