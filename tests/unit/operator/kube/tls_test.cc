#include "operator/kube/tls.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain::kube {
namespace {

using ::testing::HasSubstr;

std::string ToPem(int (*write)(BIO*, void*), void* object) {
  BIO* bio = BIO_new(BIO_s_mem());
  write(bio, object);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, n);
  BIO_free(bio);
  return pem;
}

// A fresh EC key and a self-signed certificate for it, as PEM.
struct Identity {
  std::string cert, key;
};

Identity MakeIdentity(const char* common_name) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509_sign(cert, key, EVP_sha256());
  Identity id{
      ToPem([](BIO* b, void* c) { return PEM_write_bio_X509(b, static_cast<X509*>(c)); }, cert),
      ToPem(
          [](BIO* b, void* k) {
            return PEM_write_bio_PrivateKey(b, static_cast<EVP_PKEY*>(k), nullptr, nullptr, 0,
                                            nullptr, nullptr);
          },
          key)};
  X509_free(cert);
  EVP_PKEY_free(key);
  return id;
}

TEST(TlsMaterialTest, TrustsEveryCaOfABundleAndPresentsTheClientIdentity) {
  Identity ca1 = MakeIdentity("ca-1"), ca2 = MakeIdentity("ca-2"), client = MakeIdentity("me");
  auto tls = TlsMaterial::Parse(ca1.cert + ca2.cert, client.cert, client.key);
  ASSERT_TRUE(tls.ok()) << tls.status();
  EXPECT_TRUE((*tls)->has_ca());

  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  (*tls)->ApplyTo(ctx);
  (*tls)->ApplyTo(ctx);  // every connection's context gets the same objects; the store dedups
  EXPECT_EQ(sk_X509_OBJECT_num(X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx))), 2);
  ASSERT_NE(SSL_CTX_get0_certificate(ctx), nullptr);
  X509_NAME* subject = X509_get_subject_name(SSL_CTX_get0_certificate(ctx));
  char cn[16] = {0};
  X509_NAME_get_text_by_NID(subject, NID_commonName, cn, sizeof(cn));
  EXPECT_STREQ(cn, "me");
  EXPECT_EQ(SSL_CTX_check_private_key(ctx), 1) << "the key must match the certificate";
  SSL_CTX_free(ctx);
}

// X509_verify_cert of `cert` (no intermediates) against the context's trust store: 1 if trusted.
int Verify(SSL_CTX* ctx, X509* cert) {
  X509_STORE_CTX* verify = X509_STORE_CTX_new();
  X509_STORE_CTX_init(verify, SSL_CTX_get_cert_store(ctx), cert, nullptr);
  int ok = X509_verify_cert(verify);
  X509_STORE_CTX_free(verify);
  return ok;
}

X509* ParseCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

TEST(TlsMaterialTest, TheKubeconfigsCaReplacesTheSystemRoots) {
  // cpprestsdk loads the system's CA bundle into every connection's context before it calls the
  // context callback; with a kubeconfig CA only that CA may be trusted (as client-go).
  SSL_CTX* system = SSL_CTX_new(TLS_client_method());
  ASSERT_EQ(SSL_CTX_set_default_verify_paths(system), 1);
  X509* public_root = nullptr;  // a root of the system bundle that the system store trusts
  BIO* bundle = BIO_new_file("/etc/ssl/certs/ca-certificates.crt", "r");
  ASSERT_NE(bundle, nullptr) << "the ca-certificates package (scripts/install-deps.sh) is missing";
  while (X509* cert = PEM_read_bio_X509(bundle, nullptr, nullptr, nullptr)) {
    if (public_root == nullptr && Verify(system, cert) == 1) {
      public_root = cert;
    } else {
      X509_free(cert);
    }
  }
  BIO_free(bundle);
  ERR_clear_error();
  SSL_CTX_free(system);
  ASSERT_NE(public_root, nullptr);

  Identity ca = MakeIdentity("cluster-ca");
  auto tls = TlsMaterial::Parse(ca.cert, "", "");
  ASSERT_TRUE(tls.ok()) << tls.status();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  ASSERT_EQ(SSL_CTX_set_default_verify_paths(ctx), 1);  // what cpprestsdk does first
  (*tls)->ApplyTo(ctx);
  EXPECT_EQ(Verify(ctx, public_root), 0) << "a public root stayed trusted";
  X509* cluster_ca = ParseCert(ca.cert);
  EXPECT_EQ(Verify(ctx, cluster_ca), 1) << "the kubeconfig's CA is not trusted";

  // Without a CA in the kubeconfig the system roots stay (client-go does the same).
  auto no_ca = TlsMaterial::Parse("", "", "");
  ASSERT_TRUE(no_ca.ok());
  SSL_CTX* plain = SSL_CTX_new(TLS_client_method());
  ASSERT_EQ(SSL_CTX_set_default_verify_paths(plain), 1);
  (*no_ca)->ApplyTo(plain);
  EXPECT_EQ(Verify(plain, public_root), 1);

  X509_free(cluster_ca);
  X509_free(public_root);
  SSL_CTX_free(ctx);
  SSL_CTX_free(plain);
}

TEST(TlsMaterialTest, EveryPartIsOptionalButWhatIsGivenMustParse) {
  auto none = TlsMaterial::Parse("", "", "");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE((*none)->has_ca());

  Identity id = MakeIdentity("x");
  EXPECT_THAT(std::string(TlsMaterial::Parse("garbage", "", "").status().message()),
              HasSubstr("the CA is not a valid PEM certificate"));
  EXPECT_THAT(std::string(TlsMaterial::Parse(id.cert, id.key, "").status().message()),
              HasSubstr("the client certificate is not a valid PEM certificate"));
  EXPECT_THAT(std::string(TlsMaterial::Parse(id.cert, id.cert, id.cert).status().message()),
              HasSubstr("the client key is not a valid PEM key"));
}

}  // namespace
}  // namespace disttrain::kube
