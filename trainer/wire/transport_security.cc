#include "trainer/wire/transport_security.h"

#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/certificates.h"

namespace disttrain::trainer {
namespace {

absl::Mutex g_mu;
std::optional<TlsMaterial> g_tls ABSL_GUARDED_BY(g_mu);

absl::StatusOr<std::string> ReadPem(const std::string& dir, const char* name, const char* marker) {
  const std::string path = absl::StrCat(dir, "/", name);
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("--tls-dir: cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().find(marker) == std::string::npos)
    return absl::InvalidArgumentError(absl::StrCat("--tls-dir: ", path, " holds no ", marker));
  return text.str();
}

}  // namespace

absl::StatusOr<TlsMaterial> LoadTlsDir(const std::string& dir) {
  TlsMaterial m;
  for (auto [out, name, marker] : {std::tuple{&m.ca_pem, "ca.crt", "BEGIN CERTIFICATE"},
                                   std::tuple{&m.certificate_pem, "tls.crt", "BEGIN CERTIFICATE"},
                                   std::tuple{&m.key_pem, "tls.key", "PRIVATE KEY"}}) {
    absl::StatusOr<std::string> pem = ReadPem(dir, name, marker);
    if (!pem.ok()) return pem.status();
    *out = *std::move(pem);
  }
  // An expired certificate of our own would make every peer refuse us, with a vaguer message.
  absl::StatusOr<absl::Time> not_after = NotAfter(m.certificate_pem);
  if (!not_after.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-dir: ", dir, "/tls.crt: ", not_after.status().message()));
  if (*not_after < absl::Now()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-dir: ", dir, "/tls.crt expired at ", absl::FormatTime(*not_after)));
  }
  return m;
}

void UseTls(TlsMaterial material) {
  absl::MutexLock lock(&g_mu);
  g_tls = std::move(material);
}

void UsePlaintext() {
  absl::MutexLock lock(&g_mu);
  g_tls.reset();
}

std::shared_ptr<grpc::ServerCredentials> ServerCredentials() {
  absl::MutexLock lock(&g_mu);
  if (!g_tls) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = g_tls->ca_pem;
  options.pem_key_cert_pairs.push_back({g_tls->key_pem, g_tls->certificate_pem});
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials() {
  absl::MutexLock lock(&g_mu);
  if (!g_tls) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = g_tls->ca_pem;
  options.pem_private_key = g_tls->key_pem;
  options.pem_cert_chain = g_tls->certificate_pem;
  return grpc::SslCredentials(options);
}

}  // namespace disttrain::trainer
