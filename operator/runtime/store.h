// The informer's cache: read-only objects by key ("namespace/name", or "name" when cluster
// scoped), with indexes by namespace and by controller owner UID. Thread-safe.
//
// Objects are kept CBOR-encoded, not as nlohmann trees: a cached job takes 1.7 KB instead of
// 17 KB, a pod's projection 0.5 KB instead of 3.4 KB (a tree spends ~100 bytes of map node per
// member). Every read decodes a fresh copy (a pod in ~7 us, a job in ~28 us), handed out as a
// pointer to const that the caller owns.
#ifndef DISTTRAIN_OPERATOR_RUNTIME_STORE_H_
#define DISTTRAIN_OPERATOR_RUNTIME_STORE_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"

namespace disttrain::runtime {

using ObjectPtr = std::shared_ptr<const nlohmann::json>;

// "namespace/name" or "name".
std::string ObjectKey(const nlohmann::json& object);
// The uid of the object's controller ownerReference, or "".
std::string ControllerUid(const nlohmann::json& object);

class Store {
 public:
  // Inserts or replaces; returns the previous object (null when new).
  ObjectPtr Upsert(ObjectPtr object);
  // Removes by key; returns the removed object (null when absent).
  ObjectPtr Remove(const std::string& key);
  // Replaces the whole content (after a relist).
  void Replace(std::vector<ObjectPtr> objects);

  ObjectPtr Get(const std::string& key) const;
  std::vector<ObjectPtr> List() const;
  std::vector<ObjectPtr> ByNamespace(const std::string& ns) const;
  std::vector<ObjectPtr> ByControllerUid(const std::string& uid) const;
  std::vector<std::string> Keys() const;
  size_t Size() const;

 private:
  void IndexLocked(const std::string& key, const nlohmann::json& obj, bool add)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static std::string Encode(const nlohmann::json& obj);
  static ObjectPtr Decode(const std::string& encoded);
  std::vector<ObjectPtr> Lookup(const std::map<std::string, std::set<std::string>>& index,
                                const std::string& value) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, std::string> items_ ABSL_GUARDED_BY(mu_);  // key -> CBOR
  std::map<std::string, std::set<std::string>> by_namespace_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> by_owner_ ABSL_GUARDED_BY(mu_);
};

}  // namespace disttrain::runtime

#endif  // DISTTRAIN_OPERATOR_RUNTIME_STORE_H_
