#include "tests/unit/testing/fake_api_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/certificates.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace disttrain::testing {
namespace {

// The TLS identity of the server: a CA of its own and a certificate for 127.0.0.1 it signed.
bool UseIdentity(SSL_CTX* ctx, const KeyAndCertificate& leaf) {
  BIO* cert_bio =
      BIO_new_mem_buf(leaf.certificate_pem.data(), static_cast<int>(leaf.certificate_pem.size()));
  X509* cert = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
  BIO_free(cert_bio);
  BIO* key_bio = BIO_new_mem_buf(leaf.key_pem.data(), static_cast<int>(leaf.key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  const bool ok = cert != nullptr && key != nullptr && SSL_CTX_use_certificate(ctx, cert) == 1 &&
                  SSL_CTX_use_PrivateKey(ctx, key) == 1;
  X509_free(cert);
  EVP_PKEY_free(key);
  return ok;
}

const char* ReasonPhrase(int code) {
  switch (code) {
    case 200:
      return "OK";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    default:
      return "Error";
  }
}

}  // namespace

FakeApiServer::FakeApiServer() {
  const absl::Time now = absl::Now();
  absl::StatusOr<KeyAndCertificate> ca =
      MakeCertificateAuthority("fake-api-server-ca", now - absl::Hours(1), now + absl::Hours(1));
  absl::StatusOr<KeyAndCertificate> leaf =
      ca.ok()
          ? IssueCertificate(
                *ca, {"fake-api-server", {"127.0.0.1"}, now - absl::Hours(1), now + absl::Hours(1)})
          : ca;
  ctx_ = SSL_CTX_new(TLS_server_method());
  if (!leaf.ok() || !UseIdentity(ctx_, *leaf)) {
    ADD_FAILURE() << "the fake API server has no TLS identity: " << leaf.status();
    return;
  }
  ca_pem_ = ca->certificate_pem;
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listen_fd_, 16) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ADD_FAILURE() << "the fake API server cannot listen on 127.0.0.1";
    return;
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Serve(); });
}

FakeApiServer::~FakeApiServer() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
  SSL_CTX_free(ctx_);
}

void FakeApiServer::Answer(const std::string& target, Response response) {
  absl::MutexLock lock(&mu_);
  answers_[target] = std::move(response);
}

FakeApiServer::Response FakeApiServer::Error(int code, const std::string& reason,
                                             const std::string& message) {
  const nlohmann::json status = {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                                 {"reason", reason}, {"message", message}, {"code", code}};
  return {code, status.dump()};
}

kube::RestConfig FakeApiServer::config() const {
  kube::RestConfig config;
  config.server = absl::StrCat("https://127.0.0.1:", port_);
  config.ca_pem = ca_pem_;
  config.request_timeout = absl::Seconds(10);
  config.attempt_timeout = absl::Seconds(5);
  return config;
}

std::vector<std::string> FakeApiServer::requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

FakeApiServer::Response FakeApiServer::Lookup(const std::string& target) {
  absl::MutexLock lock(&mu_);
  requests_.push_back(target);
  auto it = answers_.find(target);
  if (it == answers_.end()) it = answers_.find(target.substr(0, target.find('?')));
  if (it != answers_.end()) return it->second;
  return Error(404, "NotFound", absl::StrCat(target, " not found"));
}

void FakeApiServer::Serve() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    HandleConnection(fd);
    close(fd);
  }
}

void FakeApiServer::HandleConnection(int fd) {
  // A client that stalls ends its connection instead of the server.
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  SSL* ssl = SSL_new(ctx_);
  SSL_set_fd(ssl, fd);
  std::string request;
  if (SSL_accept(ssl) == 1) {
    char buf[4096];
    while (request.find("\r\n\r\n") == std::string::npos && request.size() < 65536) {
      const int n = SSL_read(ssl, buf, sizeof(buf));
      if (n <= 0) break;
      request.append(buf, n);
    }
  }
  if (request.find("\r\n\r\n") != std::string::npos) {
    // "GET /api/v1/namespaces/ns/pods?labelSelector=... HTTP/1.1"
    const std::string line = request.substr(0, request.find("\r\n"));
    const size_t start = line.find(' ') + 1;
    const Response r = Lookup(line.substr(start, line.rfind(' ') - start));
    const std::string out = absl::StrCat(
        "HTTP/1.1 ", r.code, " ", ReasonPhrase(r.code), "\r\nContent-Type: ", r.content_type,
        "\r\nContent-Length: ", r.body.size(), "\r\nConnection: close\r\n\r\n", r.body);
    SSL_write(ssl, out.data(), static_cast<int>(out.size()));
    SSL_shutdown(ssl);
  }
  SSL_free(ssl);
}

}  // namespace disttrain::testing
