#include "operator/kube/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "absl/strings/str_cat.h"

namespace disttrain::kube {
namespace {

// Every certificate in `pem`; an error when there is none or one does not parse.
absl::Status ReadCertificates(const std::string& pem, const char* what, std::vector<X509*>* out) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) out->push_back(cert);
  BIO_free(bio);
  ERR_clear_error();  // the read that ends the loop leaves "no start line" on the thread's queue
  if (out->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not a valid PEM certificate"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<const TlsMaterial>> TlsMaterial::Parse(const std::string& ca_pem,
                                                                      const std::string& cert_pem,
                                                                      const std::string& key_pem) {
  std::shared_ptr<TlsMaterial> m(new TlsMaterial());
  if (!ca_pem.empty()) {
    std::vector<X509*> cas;
    absl::Status s = ReadCertificates(ca_pem, "the CA", &cas);
    if (s.ok()) {
      m->store_ = X509_STORE_new();
      for (X509* ca : cas) X509_STORE_add_cert(m->store_, ca);  // takes its own reference
    }
    for (X509* ca : cas) X509_free(ca);
    if (!s.ok()) return s;
  }
  if (!cert_pem.empty()) {
    if (absl::Status s = ReadCertificates(cert_pem, "the client certificate", &m->chain_); !s.ok())
      return s;
  }
  if (!key_pem.empty()) {
    BIO* bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
    m->key_ = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    ERR_clear_error();
    if (m->key_ == nullptr) {
      return absl::InvalidArgumentError("the client key is not a valid PEM key");
    }
  }
  return std::shared_ptr<const TlsMaterial>(std::move(m));
}

TlsMaterial::~TlsMaterial() {
  X509_STORE_free(store_);
  for (X509* c : chain_) X509_free(c);
  EVP_PKEY_free(key_);
}

void TlsMaterial::ApplyTo(SSL_CTX* ctx) const {
  // One store for every connection (X509_STORE is safe to share across threads).
  if (store_ != nullptr) SSL_CTX_set1_cert_store(ctx, store_);  // frees the context's own store
  if (!chain_.empty() && key_ != nullptr) {
    SSL_CTX_use_certificate(ctx, chain_[0]);
    for (size_t i = 1; i < chain_.size(); ++i) SSL_CTX_add1_chain_cert(ctx, chain_[i]);
    SSL_CTX_use_PrivateKey(ctx, key_);
  }
}

}  // namespace disttrain::kube
