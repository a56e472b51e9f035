// The kubeconfig's TLS material, parsed once: CA certificates, the client certificate chain and
// key. cpprestsdk builds a new SSL context for every connection; applying parsed objects to it is
// cheap, where parsing the PEM again (OpenSSL 3's decoders) cost milliseconds per connection.
// Immutable after Parse; thread-safe.
#ifndef DISTTRAIN_OPERATOR_KUBE_TLS_H_
#define DISTTRAIN_OPERATOR_KUBE_TLS_H_

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace disttrain::kube {

class TlsMaterial {
 public:
  // Empty strings leave that part out. Every PEM given must parse: the CA (one or more
  // certificates), the client certificate (leaf first, then its chain), the client key.
  static absl::StatusOr<std::shared_ptr<const TlsMaterial>> Parse(const std::string& ca_pem,
                                                                  const std::string& cert_pem,
                                                                  const std::string& key_pem);
  ~TlsMaterial();
  TlsMaterial(const TlsMaterial&) = delete;
  TlsMaterial& operator=(const TlsMaterial&) = delete;

  bool has_ca() const { return store_ != nullptr; }
  // Presents the client certificate and key and, when a CA was given, trusts that CA alone (as
  // client-go): the context's store, which cpprestsdk has just filled from OpenSSL's default
  // locations, is replaced by one store that every connection shares. Without a CA the system's
  // roots stay trusted.
  void ApplyTo(SSL_CTX* ctx) const;

 private:
  TlsMaterial() = default;
  X509_STORE* store_ = nullptr;  // the CA certificates; null without a CA
  std::vector<X509*> chain_;     // leaf first
  EVP_PKEY* key_ = nullptr;
};

}  // namespace disttrain::kube

#endif  // DISTTRAIN_OPERATOR_KUBE_TLS_H_
