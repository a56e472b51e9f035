// A local HTTPS server that answers GETs as the API server would, from canned responses: for
// tests of code that holds a RestKubeClient (the kubectl plugin's commands). It listens on
// 127.0.0.1, port 0, with a certificate from its own CA, which config() trusts. Connections are
// served one at a time, each closed after its response. Thread-safe.
#ifndef DISTTRAIN_TESTS_UNIT_TESTING_FAKE_API_SERVER_H_
#define DISTTRAIN_TESTS_UNIT_TESTING_FAKE_API_SERVER_H_

#include <openssl/ssl.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "operator/kube/config.h"

namespace disttrain::testing {

class FakeApiServer {
 public:
  struct Response {
    int code = 200;
    std::string body;
    std::string content_type = "application/json";
  };

  FakeApiServer();  // serving once constructed
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  // The answer to a GET of `target`: a path with a query matches that exact target first; a
  // path alone matches it with any query. Anything else is 404 NotFound, worded as the API
  // server words it.
  void Answer(const std::string& target, Response response);
  // An API server's error: a Status with this code, reason and message.
  static Response Error(int code, const std::string& reason, const std::string& message);

  // A client config for this server: its address and CA.
  kube::RestConfig config() const;
  // The targets (path and query) of the requests served so far, in order.
  std::vector<std::string> requests() const;

 private:
  void Serve();
  void HandleConnection(int fd);
  Response Lookup(const std::string& target);

  SSL_CTX* ctx_ = nullptr;
  std::string ca_pem_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  mutable absl::Mutex mu_;
  std::map<std::string, Response> answers_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> requests_ ABSL_GUARDED_BY(mu_);
};

}  // namespace disttrain::testing

#endif  // DISTTRAIN_TESTS_UNIT_TESTING_FAKE_API_SERVER_H_
