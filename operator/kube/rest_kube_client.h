// KubeClient over HTTPS with cpprestsdk: JSON bodies, TLS always verified against the
// configured CA, client certificates or bearer tokens, client-side QPS/burst, and retries of
// 429/5xx/transport failures with exponential backoff that honours Retry-After.
// Thread-safe: requests may be issued from any thread.
#ifndef DISTTRAIN_OPERATOR_KUBE_REST_KUBE_CLIENT_H_
#define DISTTRAIN_OPERATOR_KUBE_REST_KUBE_CLIENT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "operator/kube/config.h"
#include "operator/kube/in_flight_limit.h"
#include "operator/kube/kube_client.h"
#include "operator/kube/rate_limiter.h"
#include "operator/kube/tls.h"

namespace web::http::client {
class http_client;
}  // namespace web::http::client

namespace disttrain::kube {

class RestKubeClient : public KubeClient {
 public:
  // Told of every HTTP attempt: its method and status code (0 when no response came back).
  using RequestObserver = std::function<void(const std::string& method, int code)>;

  // Fails when the CA or client certificate/key cannot be parsed.
  static absl::StatusOr<std::unique_ptr<RestKubeClient>> Create(const RestConfig& config);
  ~RestKubeClient() override;
  // Before the first request (not synchronised with requests in flight).
  void SetRequestObserver(RequestObserver observer) { observer_ = std::move(observer); }

  absl::StatusOr<nlohmann::json> Get(const Resource& r, const std::string& ns,
                                     const std::string& name) override;
  absl::StatusOr<ListResult> List(const Resource& r, const std::string& ns,
                                  const ListOptions& options) override;
  absl::StatusOr<nlohmann::json> Create(const Resource& r, const std::string& ns,
                                        const nlohmann::json& object) override;
  absl::StatusOr<nlohmann::json> Update(const Resource& r, const std::string& ns,
                                        const nlohmann::json& object) override;
  absl::StatusOr<nlohmann::json> UpdateStatus(const Resource& r, const std::string& ns,
                                              const nlohmann::json& object) override;
  absl::Status Patch(const Resource& r, const std::string& ns, const std::string& name,
                     PatchType type, const nlohmann::json& patch,
                     const std::string& subresource) override;
  absl::Status Delete(const Resource& r, const std::string& ns, const std::string& name,
                      const DeleteOptions& options) override;
  absl::StatusOr<std::unique_ptr<WatchStream>> Watch(const Resource& r, const std::string& ns,
                                                     const ListOptions& options) override;
  std::vector<absl::Status> CreateAll(const std::vector<CreateRequest>& requests,
                                      int parallel) override;
  std::vector<absl::Status> DeleteAll(const std::vector<DeleteRequest>& requests,
                                      int parallel) override;

  // Endpoints that answer text, not objects (pod logs, the kubelet's endpoints through the node
  // proxy), for the kubectl plugin. `context` names the request in errors.
  absl::StatusOr<std::string> GetText(const std::string& path_and_query,
                                      const std::string& context);
  // A GET whose body streams until the server ends it; given up after `idle_timeout` without a
  // byte.
  absl::StatusOr<std::unique_ptr<LineStream>> StreamLines(const std::string& path_and_query,
                                                          const std::string& context,
                                                          absl::Duration idle_timeout);

 private:
  RestKubeClient(RestConfig config, std::shared_ptr<const TlsMaterial> tls);

  // One request, ready to send: its body already serialised.
  struct Prepared {
    std::string method, path_and_query;
    std::optional<std::string> body;
    std::string content_type, context;
    const char* accept = "application/json";
  };

  // Sends one request (with rate limiting and retries) and returns the body as text;
  // `protobuf`, when given, tells whether the server answered in protobuf.
  absl::StatusOr<std::string> DoText(const Prepared& request, bool* protobuf = nullptr);
  // A list response in JSON, or in protobuf with each item decoded.
  static absl::StatusOr<ListResult> ParseList(absl::StatusOr<std::string> text,
                                              const std::string& context);
  static absl::StatusOr<ListResult> DecodeList(const std::string& body,
                                               const ObjectDecoder& decoder,
                                               const std::string& context);
  // Sends the requests `parallel` at a time on the HTTP client's I/O threads (first attempts
  // concurrently; a request whose attempt failed retryably goes through DoText's retries).
  std::vector<absl::Status> DoAll(const std::vector<Prepared>& requests, int parallel);
  // DoText, with the body decoded as JSON.
  absl::StatusOr<nlohmann::json> Do(const std::string& method, const std::string& path_and_query,
                                    const std::optional<nlohmann::json>& body,
                                    const std::string& content_type, const std::string& context);
  std::shared_ptr<web::http::client::http_client> client();
  void ResetClient();

  void Observe(const std::string& method, int code) const {
    if (observer_) observer_(method, code);
  }

  const RestConfig config_;
  const std::shared_ptr<const TlsMaterial> tls_;
  RateLimiter limiter_;
  InFlightLimit in_flight_;
  RequestObserver observer_;
  absl::Mutex mu_;
  std::shared_ptr<web::http::client::http_client> client_ ABSL_GUARDED_BY(mu_);
};

// "?labelSelector=...&..." for `options` (watch adds watch=true itself).
std::string ListQuery(const ListOptions& options, bool watch);

}  // namespace disttrain::kube

#endif  // DISTTRAIN_OPERATOR_KUBE_REST_KUBE_CLIENT_H_
