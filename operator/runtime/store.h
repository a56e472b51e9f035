// The informer's cache: read-only objects by key ("namespace/name", or "name" when cluster
// scoped), with indexes by namespace and by controller owner UID. Objects are handed out as
// pointers to const: callers copy before they change anything. Thread-safe.
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
  std::vector<ObjectPtr> Lookup(const std::map<std::string, std::set<std::string>>& index,
                                const std::string& value) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, ObjectPtr> items_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> by_namespace_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> by_owner_ ABSL_GUARDED_BY(mu_);
};

}  // namespace disttrain::runtime

#endif  // DISTTRAIN_OPERATOR_RUNTIME_STORE_H_
