// The operator's view of the Kubernetes API: typed by Resource, bodies as JSON.
// RestKubeClient talks to a real API server; tests use a fake. Implementations are thread-safe.
#ifndef DISTTRAIN_OPERATOR_KUBE_KUBE_CLIENT_H_
#define DISTTRAIN_OPERATOR_KUBE_KUBE_CLIENT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "operator/kube/resource.h"

namespace disttrain::kube {

// Turns one object's protobuf message (a Pod, a Service: the object without its envelope) into
// the JSON its user caches; see ListOptions::decoder.
using ObjectDecoder = std::function<absl::StatusOr<nlohmann::json>(std::string_view message)>;

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;
  int64_t limit = 0;
  std::string continue_token;
  // Watch only: ask for BOOKMARK events and end the watch after this many seconds.
  bool allow_bookmarks = true;
  int timeout_seconds = 0;
  // List and watch: when set, ask for Kubernetes' protobuf encoding (served for built-in types)
  // and return each object as this makes it, marked `decoded`. An answer in JSON (custom
  // resources, or a client that cannot ask) returns the whole objects as without it.
  ObjectDecoder decoder;
};

struct ListResult {
  std::vector<nlohmann::json> items;
  bool decoded = false;  // the items are ListOptions::decoder's output
  std::string resource_version;
  std::string continue_token;
};

enum class PatchType { kMerge, kStrategicMerge, kJson };

enum class Propagation { kBackground, kForeground, kOrphan };

struct DeleteOptions {
  Propagation propagation = Propagation::kBackground;
  std::optional<std::string> precondition_uid;
  std::optional<int64_t> grace_period_seconds;
};

// One request of a batch (KubeClient::CreateAll / DeleteAll).
struct CreateRequest {
  const Resource* resource = nullptr;
  std::string ns;
  nlohmann::json object;
};
struct DeleteRequest {
  const Resource* resource = nullptr;
  std::string ns, name;
  DeleteOptions options;
};

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type = Type::kAdded;
  nlohmann::json object;
  bool decoded = false;  // `object` is ListOptions::decoder's output
};

// The body of a streaming GET, one line at a time (pod logs with follow=true).
class LineStream {
 public:
  virtual ~LineStream() = default;
  // False when the stream ended (see status()); `line` has no trailing newline.
  virtual bool Next(std::string* line) = 0;
  // Ends the stream from another thread; a blocked Next() returns false.
  virtual void Cancel() = 0;
  virtual absl::Status status() const = 0;
};

// One streaming watch. Next() blocks until an event arrives or the stream ends.
class WatchStream {
 public:
  virtual ~WatchStream() = default;
  // False when the stream ended (normally or not: see status()).
  virtual bool Next(WatchEvent* event) = 0;
  // Ends the stream from another thread; a blocked Next() returns false.
  virtual void Cancel() = 0;
  virtual absl::Status status() const = 0;
};

class KubeClient {
 public:
  virtual ~KubeClient() = default;

  virtual absl::StatusOr<nlohmann::json> Get(const Resource& r, const std::string& ns,
                                             const std::string& name) = 0;
  virtual absl::StatusOr<ListResult> List(const Resource& r, const std::string& ns,
                                          const ListOptions& options) = 0;
  virtual absl::StatusOr<nlohmann::json> Create(const Resource& r, const std::string& ns,
                                                const nlohmann::json& object) = 0;
  virtual absl::StatusOr<nlohmann::json> Update(const Resource& r, const std::string& ns,
                                                const nlohmann::json& object) = 0;
  virtual absl::StatusOr<nlohmann::json> UpdateStatus(const Resource& r, const std::string& ns,
                                                      const nlohmann::json& object) = 0;
  // `subresource` is "" or e.g. "status". The patched object is not returned: the operator never
  // reads it, so the REST client asks the API server for its metadata only and drops even that.
  virtual absl::Status Patch(const Resource& r, const std::string& ns, const std::string& name,
                             PatchType type, const nlohmann::json& patch,
                             const std::string& subresource = "") = 0;
  virtual absl::Status Delete(const Resource& r, const std::string& ns, const std::string& name,
                              const DeleteOptions& options = {}) = 0;
  virtual absl::StatusOr<std::unique_ptr<WatchStream>> Watch(const Resource& r,
                                                             const std::string& ns,
                                                             const ListOptions& options) = 0;

  // Independent requests, at most `parallel` in flight at once where the client can (the REST
  // client sends them concurrently without a thread each; this default sends them one after
  // another). Statuses come back in the order of `requests`; created objects are not returned.
  virtual std::vector<absl::Status> CreateAll(const std::vector<CreateRequest>& requests,
                                              int parallel) {
    (void)parallel;
    std::vector<absl::Status> out;
    for (const CreateRequest& c : requests) {
      out.push_back(Create(*c.resource, c.ns, c.object).status());
    }
    return out;
  }
  virtual std::vector<absl::Status> DeleteAll(const std::vector<DeleteRequest>& requests,
                                              int parallel) {
    (void)parallel;
    std::vector<absl::Status> out;
    for (const DeleteRequest& d : requests) {
      out.push_back(Delete(*d.resource, d.ns, d.name, d.options));
    }
    return out;
  }
};

}  // namespace disttrain::kube

#endif  // DISTTRAIN_OPERATOR_KUBE_KUBE_CLIENT_H_
