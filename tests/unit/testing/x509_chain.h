// OpenSSL's own chain verification, for tests of the certificates the project issues: checked by
// the library every TLS peer uses, not by the project's code.
#ifndef DISTTRAIN_TESTS_UNIT_TESTING_X509_CHAIN_H_
#define DISTTRAIN_TESTS_UNIT_TESTING_X509_CHAIN_H_

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <string>

namespace disttrain::testing {

// X509_V_OK when PEM `leaf` verifies against PEM `ca` alone (as of now), else OpenSSL's error.
inline int VerifyChain(const std::string& ca, const std::string& leaf) {
  auto parse = [](const std::string& pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    return cert;
  };
  X509* root = parse(ca);
  X509* cert = parse(leaf);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, root);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, cert, nullptr);
  const int err = X509_verify_cert(ctx) == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(cert);
  X509_free(root);
  return err;
}

}  // namespace disttrain::testing

#endif  // DISTTRAIN_TESTS_UNIT_TESTING_X509_CHAIN_H_
