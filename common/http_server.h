// A minimal HTTP/1.1 server for /healthz, /readyz and /metrics: GET only, one short response
// per connection. Binding port 0 picks a free port (see port()). Thread-safe.
#ifndef DISTTRAIN_COMMON_HTTP_SERVER_H_
#define DISTTRAIN_COMMON_HTTP_SERVER_H_

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "absl/status/status.h"

namespace disttrain {

struct HttpResponse {
  int code = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse()>;
  ~HttpServer();

  // Before Start().
  void Handle(const std::string& path, Handler handler);
  // `address` is "host:port" or ":port" (all interfaces); "0" disables the server.
  absl::Status Start(const std::string& address);
  void Stop();
  int port() const { return port_; }

 private:
  void Serve();
  void HandleConnection(int fd);

  std::map<std::string, Handler> handlers_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace disttrain

#endif  // DISTTRAIN_COMMON_HTTP_SERVER_H_
