#include "tests/unit/testing/fake_kube_client.h"

#include "absl/strings/str_cat.h"
#include "operator/kube/errors.h"

namespace disttrain::testing {

using nlohmann::json;

std::string FakeKubeClient::Key(const kube::Resource& r, const std::string& ns, const std::string& name) {
  return absl::StrCat(r.GroupVersion(), "/", r.plural, "/", ns, "/", name);
}

absl::Status FakeKubeClient::Injected(const std::string& verb) {
  auto it = failures_.find(verb);
  if (it == failures_.end() || it->second.empty()) return absl::OkStatus();
  absl::Status s = it->second.front();
  it->second.pop_front();
  return s;
}

void FakeKubeClient::Record(const std::string& verb, const kube::Resource& r, const std::string& ns,
                            const std::string& name) {
  calls_.push_back({verb, r.plural, ns, name});
}

absl::StatusOr<json> FakeKubeClient::Get(const kube::Resource& r, const std::string& ns, const std::string& name) {
  absl::MutexLock lock(&mu_);
  Record("get", r, ns, name);
  if (absl::Status s = Injected("get"); !s.ok()) return s;
  auto it = objects_.find(Key(r, ns, name));
  if (it == objects_.end()) return kube::StatusFromHttp(404, R"({"kind":"Status","reason":"NotFound","message":"not found"})", "get");
  return it->second;
}

absl::StatusOr<kube::ListResult> FakeKubeClient::List(const kube::Resource& r, const std::string& ns,
                                                      const kube::ListOptions&) {
  absl::MutexLock lock(&mu_);
  Record("list", r, ns, "");
  ++list_calls_;
  if (absl::Status s = Injected("list"); !s.ok()) return s;
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
  Record("create", r, ns, name);
  if (absl::Status s = Injected("create"); !s.ok()) return s;
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
  Record("update", r, ns, name);
  if (absl::Status s = Injected("update"); !s.ok()) return s;
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
  Record("patch", r, ns, name);
  if (absl::Status s = Injected("patch"); !s.ok()) return s;
  auto it = objects_.find(Key(r, ns, name));
  if (it == objects_.end()) return kube::StatusFromHttp(404, "{}", "patch");
  it->second.merge_patch(patch);
  it->second["metadata"]["resourceVersion"] = absl::StrCat(++rv_);
  return it->second;
}

absl::Status FakeKubeClient::Delete(const kube::Resource& r, const std::string& ns, const std::string& name,
                                    const kube::DeleteOptions&) {
  absl::MutexLock lock(&mu_);
  Record("delete", r, ns, name);
  if (absl::Status s = Injected("delete"); !s.ok()) return s;
  if (objects_.erase(Key(r, ns, name)) == 0) return kube::StatusFromHttp(404, "{}", "delete");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<kube::WatchStream>> FakeKubeClient::Watch(const kube::Resource& r,
                                                                         const std::string& ns,
                                                                         const kube::ListOptions&) {
  absl::MutexLock lock(&mu_);
  Record("watch", r, ns, "");
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

void FakeKubeClient::FailNext(const std::string& verb, absl::Status error) {
  absl::MutexLock lock(&mu_);
  failures_[verb].push_back(std::move(error));
}

void FakeKubeClient::Put(const kube::Resource& r, json object) {
  absl::MutexLock lock(&mu_);
  std::string ns = object.value("/metadata/namespace"_json_pointer, "");
  std::string name = object.value("/metadata/name"_json_pointer, "");
  object["metadata"]["resourceVersion"] = absl::StrCat(++rv_);
  objects_[Key(r, ns, name)] = std::move(object);
}

std::vector<FakeKubeClient::Call> FakeKubeClient::calls() const {
  absl::MutexLock lock(&mu_);
  return calls_;
}

std::vector<json> FakeKubeClient::Objects(const kube::Resource& r) const {
  absl::MutexLock lock(&mu_);
  std::vector<json> out;
  std::string prefix = absl::StrCat(r.GroupVersion(), "/", r.plural, "/");
  for (const auto& [k, v] : objects_) {
    if (k.rfind(prefix, 0) == 0) out.push_back(v);
  }
  return out;
}

int FakeKubeClient::list_calls() const {
  absl::MutexLock lock(&mu_);
  return list_calls_;
}

}  // namespace disttrain::testing
