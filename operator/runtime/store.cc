#include "operator/runtime/store.h"

#include "common/json_members.h"

namespace disttrain::runtime {

std::string ObjectKey(const nlohmann::json& object) {
  const nlohmann::json& meta = ObjectMember(object, "metadata");
  std::string ns = meta.value("namespace", "");
  std::string name = meta.value("name", "");
  return ns.empty() ? name : ns + "/" + name;
}

std::string ControllerUid(const nlohmann::json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end()) return "";
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return "";
  for (const auto& ref : *refs) {
    if (ref.value("controller", false)) return ref.value("uid", "");
  }
  return "";
}

void Store::IndexLocked(const std::string& key, const nlohmann::json& obj, bool add) {
  auto update = [&](std::map<std::string, std::set<std::string>>& index, const std::string& v) {
    if (v.empty()) return;
    if (add) {
      index[v].insert(key);
    } else if (auto it = index.find(v); it != index.end()) {
      it->second.erase(key);
      if (it->second.empty()) index.erase(it);
    }
  };
  update(by_namespace_, ObjectMember(obj, "metadata").value("namespace", ""));
  update(by_owner_, ControllerUid(obj));
}

Store::Entry Store::Encode(ObjectPtr obj) const {
  if (encoding_ == StoreEncoding::kTree) return {std::move(obj), {}};
  std::vector<uint8_t> cbor = nlohmann::json::to_cbor(*obj);
  return {nullptr, std::string(cbor.begin(), cbor.end())};  // exactly its size: no growth slack
}

ObjectPtr Store::Decode(const Entry& entry) {
  if (entry.tree != nullptr) return entry.tree;
  return std::make_shared<const nlohmann::json>(nlohmann::json::from_cbor(entry.cbor));
}

ObjectPtr Store::Upsert(ObjectPtr object) {
  const std::string key = ObjectKey(*object);
  Entry encoded = Encode(object);
  absl::MutexLock lock(&mu_);
  ObjectPtr old;
  if (auto it = items_.find(key); it != items_.end()) {
    old = Decode(it->second);
    IndexLocked(key, *old, false);
  }
  IndexLocked(key, *object, true);
  items_[key] = std::move(encoded);
  return old;
}

ObjectPtr Store::Remove(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  ObjectPtr old = Decode(it->second);
  IndexLocked(key, *old, false);
  items_.erase(it);
  return old;
}

void Store::Replace(std::vector<ObjectPtr> objects) {
  absl::MutexLock lock(&mu_);
  items_.clear();
  by_namespace_.clear();
  by_owner_.clear();
  for (const ObjectPtr& o : objects) {
    std::string key = ObjectKey(*o);
    IndexLocked(key, *o, true);
    items_[key] = Encode(o);
  }
}

ObjectPtr Store::Get(const std::string& key) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : Decode(it->second);
}

std::vector<ObjectPtr> Store::List() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [k, v] : items_) out.push_back(Decode(v));
  return out;
}

std::vector<ObjectPtr> Store::Lookup(const std::map<std::string, std::set<std::string>>& index,
                                     const std::string& value) const {
  std::vector<ObjectPtr> out;
  auto it = index.find(value);
  if (it == index.end()) return out;
  for (const std::string& key : it->second) out.push_back(Decode(items_.at(key)));
  return out;
}

std::vector<ObjectPtr> Store::ByNamespace(const std::string& ns) const {
  absl::ReaderMutexLock lock(&mu_);
  return Lookup(by_namespace_, ns);
}

std::vector<ObjectPtr> Store::ByControllerUid(const std::string& uid) const {
  absl::ReaderMutexLock lock(&mu_);
  return Lookup(by_owner_, uid);
}

std::vector<std::string> Store::KeysByControllerUid(const std::string& uid) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = by_owner_.find(uid);
  if (it == by_owner_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

std::vector<std::string> Store::Keys() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::string> out;
  for (const auto& [k, v] : items_) out.push_back(k);
  return out;
}

size_t Store::Size() const {
  absl::ReaderMutexLock lock(&mu_);
  return items_.size();
}

}  // namespace disttrain::runtime
