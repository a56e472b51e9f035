#include "common/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace disttrain {
namespace {

const char* Reason(int code) {
  switch (code) {
    case 200:
      return "OK";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    default:
      return code >= 500 ? "Service Unavailable" : "Error";
  }
}

}  // namespace

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Handle(const std::string& path, Handler handler) {
  handlers_[path] = std::move(handler);
}

absl::Status HttpServer::Start(const std::string& address) {
  if (address == "0" || address.empty()) return absl::OkStatus();
  auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("bind address \"", address, "\" is not host:port"));
  }
  std::string host = address.substr(0, colon);
  std::string port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &res);
      rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bind address ", address, ": ", gai_strerror(rc)));
  }
  int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 64) != 0) {
    std::string err = std::strerror(errno);
    freeaddrinfo(res);
    if (fd >= 0) close(fd);
    return absl::UnavailableError(absl::StrCat("listen on ", address, ": ", err));
  }
  freeaddrinfo(res);
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  listen_fd_ = fd;
  thread_ = std::thread([this] { Serve(); });
  return absl::OkStatus();
}

void HttpServer::Stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
  listen_fd_ = -1;
}

void HttpServer::Serve() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    HandleConnection(fd);
    close(fd);
  }
}

void HttpServer::HandleConnection(int fd) {
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string request;
  char buf[2048];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 16384) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return;
    request.append(buf, n);
  }
  std::string line = request.substr(0, request.find("\r\n"));
  std::string method = line.substr(0, line.find(' '));
  std::string path = line.size() > method.size() + 1 ? line.substr(method.size() + 1) : "";
  path = path.substr(0, path.find(' '));
  path = path.substr(0, path.find('?'));
  HttpResponse resp;
  if (method != "GET") {
    resp = {405, "text/plain; charset=utf-8", "method not allowed\n"};
  } else if (auto it = handlers_.find(path); it != handlers_.end()) {
    resp = it->second();
  } else {
    resp = {404, "text/plain; charset=utf-8", "not found\n"};
  }
  std::string out = absl::StrCat(
      "HTTP/1.1 ", resp.code, " ", Reason(resp.code), "\r\nContent-Type: ", resp.content_type,
      "\r\nContent-Length: ", resp.body.size(), "\r\nConnection: close\r\n\r\n", resp.body);
  size_t sent = 0;
  while (sent < out.size()) {
    ssize_t n = send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += n;
  }
}

}  // namespace disttrain
