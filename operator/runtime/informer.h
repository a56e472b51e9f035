// An informer keeps a Store in step with the API server: list, then watch from the list's
// resourceVersion (with bookmarks); on a closed stream it re-watches from the last version,
// with jittered backoff after errors that resets after a healthy watch; on 410 Gone it lists
// again. Watches are short (20-30 s server-side timeout) so a half-open connection is noticed
// by the client's idle limit within about half a minute. Handlers see every change in order on
// the informer's thread and must only enqueue keys. Thread-safe.
#ifndef DISTTRAIN_OPERATOR_RUNTIME_INFORMER_H_
#define DISTTRAIN_OPERATOR_RUNTIME_INFORMER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "operator/kube/kube_client.h"
#include "operator/runtime/store.h"

namespace disttrain::runtime {

struct EventHandler {
  std::function<void(const ObjectPtr&)> on_add;
  std::function<void(const ObjectPtr& old_obj, const ObjectPtr& new_obj)> on_update;
  std::function<void(const ObjectPtr&)> on_delete;
};

struct InformerOptions {
  kube::Resource resource;
  std::string namespace_name;  // "" watches all namespaces
  std::string label_selector;
  int64_t page_size = 500;
  // Drops what the operator never reads (managedFields, last-applied annotations) to save memory.
  bool strip_metadata = true;
  // Applied to every object before it is cached (e.g. keep only the fields a reconciler reads).
  std::function<nlohmann::json(nlohmann::json)> transform;
  // When set, lists and watches ask for the protobuf encoding (built-in types) and cache what
  // this makes of each object; it must equal `transform` of the object's JSON, which is still
  // used when the server answers in JSON.
  kube::ObjectDecoder decode_protobuf;
  // How the cache keeps the objects (runtime/store.h).
  StoreEncoding store_encoding = StoreEncoding::kTree;
};

// What an informer drops from an object before caching it when `strip_metadata` is set: the
// managedFields and the last-applied-configuration annotation, which the operator never reads.
nlohmann::json StripMetadata(nlohmann::json object);

class Informer {
 public:
  // Server-side watch timeout: 20-30 s (see WatchFrom).
  static constexpr int kWatchTimeoutSeconds = 20;
  static constexpr int kWatchTimeoutSpreadSeconds = 10;
  // Backoff between failed lists or watches: doubling from 100 ms to 10 s, back to the start
  // after a healthy watch (events delivered, or open for kHealthyWatch).
  static constexpr absl::Duration kInitialBackoff = absl::Milliseconds(100);
  static constexpr absl::Duration kMaxBackoff = absl::Seconds(10);
  static constexpr absl::Duration kHealthyWatch = absl::Seconds(10);

  Informer(kube::KubeClient* client, InformerOptions options);
  ~Informer();

  // Before Start().
  void AddHandler(EventHandler handler);
  void Start();
  void Stop();

  bool HasSynced() const { return synced_.load(); }
  // Blocks until synced or `timeout` passes; returns HasSynced().
  bool WaitForSync(absl::Duration timeout);
  const Store& store() const { return store_; }
  const std::string& name() const { return name_; }
  const InformerOptions& options() const { return options_; }
  // Lists done since Start (the first one plus relists after 410 Gone).
  int list_count() const { return list_count_.load(); }

 private:
  void Run();
  absl::Status ListAndReplace(std::string* resource_version);
  // Returns OK when the stream ended normally, the error otherwise.
  // `events` counts the events (bookmarks included) the watch delivered.
  absl::Status WatchFrom(std::string* resource_version, int* events);
  // The object as cached: decoded ones are cached as they are, JSON ones stripped/transformed.
  ObjectPtr Prepare(nlohmann::json object, bool decoded) const;
  bool SleepUnlessStopped(absl::Duration d);

  kube::KubeClient* const client_;
  const InformerOptions options_;
  const std::string name_;
  Store store_;
  std::vector<EventHandler> handlers_;
  std::atomic<bool> synced_{false};
  std::atomic<int> list_count_{0};
  std::thread thread_;

  absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  kube::WatchStream* current_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace disttrain::runtime

#endif  // DISTTRAIN_OPERATOR_RUNTIME_INFORMER_H_
