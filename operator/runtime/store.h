// The informer's cache: read-only objects by key ("namespace/name", or "name" when cluster
// scoped), with indexes by namespace and by controller owner UID. Thread-safe.
//
// Objects are handed out as pointers to const. A kCbor store keeps them CBOR-encoded instead of
// as nlohmann trees (a tree spends ~100 bytes of map node per member: a pod's projection takes
// 0.5 KB instead of 3.4 KB) and decodes a fresh copy for every read (~7 us a pod); the operator
// uses it for its pods, Services and jobs (a 7-replica job: ~13 KB of tree, ~1.5 KB encoded,
// ~30 us to decode once per pass; bench/cache_memory_bench.cc measures each cache).
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

enum class StoreEncoding { kTree, kCbor };

class Store {
 public:
  explicit Store(StoreEncoding encoding = StoreEncoding::kTree) : encoding_(encoding) {}

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
  // The keys of the objects ByControllerUid returns, without decoding them.
  std::vector<std::string> KeysByControllerUid(const std::string& uid) const;
  std::vector<std::string> Keys() const;
  size_t Size() const;

 private:
  void IndexLocked(const std::string& key, const nlohmann::json& obj, bool add)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One cached object: the tree (kTree) or its CBOR encoding (kCbor).
  struct Entry {
    ObjectPtr tree;
    std::string cbor;
  };
  Entry Encode(ObjectPtr obj) const;
  static ObjectPtr Decode(const Entry& entry);
  std::vector<ObjectPtr> Lookup(const std::map<std::string, std::set<std::string>>& index,
                                const std::string& value) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  const StoreEncoding encoding_;
  std::map<std::string, Entry> items_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> by_namespace_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> by_owner_ ABSL_GUARDED_BY(mu_);
};

}  // namespace disttrain::runtime

#endif  // DISTTRAIN_OPERATOR_RUNTIME_STORE_H_
