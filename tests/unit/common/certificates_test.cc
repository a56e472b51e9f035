#include "common/certificates.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace disttrain {
namespace {

using ::testing::ElementsAre;

X509* Parse(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

// OpenSSL's own chain verification of `leaf` against `ca` alone: X509_V_OK or the error.
int Verify(const std::string& ca, const std::string& leaf) {
  X509* root = Parse(ca);
  X509* cert = Parse(leaf);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, root);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, cert, nullptr);
  const int ok = X509_verify_cert(ctx);
  const int err = ok == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(cert);
  X509_free(root);
  return err;
}

class CertificatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<KeyAndCertificate> ca =
        MakeCertificateAuthority("job-a", now_ - kHour, now_ + kDay);
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = *ca;
  }
  CertificateRequest Request(absl::Time from, absl::Time to) const {
    return {"job-a-ps-0", {"job-a-ps-0", "job-a-ps-0.team.svc", "127.0.0.1"}, from, to};
  }
  static constexpr absl::Duration kHour = absl::Hours(1);
  static constexpr absl::Duration kDay = absl::Hours(24);
  absl::Time now_ = absl::Now();
  KeyAndCertificate ca_;
};

TEST_F(CertificatesTest, AnIssuedCertificateVerifiesAgainstItsCaAndNamesItsTask) {
  absl::StatusOr<KeyAndCertificate> leaf =
      IssueCertificate(ca_, Request(now_ - kHour, now_ + kDay));
  ASSERT_TRUE(leaf.ok()) << leaf.status();
  EXPECT_EQ(Verify(ca_.certificate_pem, leaf->certificate_pem), X509_V_OK);
  EXPECT_THAT(*SubjectAltNames(leaf->certificate_pem),
              ElementsAre("DNS:job-a-ps-0", "DNS:job-a-ps-0.team.svc", "IP:127.0.0.1"));
  EXPECT_EQ(absl::ToUnixSeconds(*NotAfter(leaf->certificate_pem)),
            absl::ToUnixSeconds(now_ + kDay));
  EXPECT_NE(leaf->key_pem.find("BEGIN PRIVATE KEY"), std::string::npos);
}

TEST_F(CertificatesTest, AnotherJobsCaDoesNotVerifyIt) {
  absl::StatusOr<KeyAndCertificate> other =
      MakeCertificateAuthority("job-b", now_ - kHour, now_ + kDay);
  ASSERT_TRUE(other.ok());
  absl::StatusOr<KeyAndCertificate> leaf =
      IssueCertificate(*other, Request(now_ - kHour, now_ + kDay));
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ(Verify(ca_.certificate_pem, leaf->certificate_pem),
            X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

TEST_F(CertificatesTest, AnExpiredCertificateFailsVerification) {
  absl::StatusOr<KeyAndCertificate> leaf =
      IssueCertificate(ca_, Request(now_ - kDay, now_ - kHour));
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ(Verify(ca_.certificate_pem, leaf->certificate_pem), X509_V_ERR_CERT_HAS_EXPIRED);
}

TEST_F(CertificatesTest, ALeafCannotSignFurtherCertificates) {
  absl::StatusOr<KeyAndCertificate> leaf =
      IssueCertificate(ca_, Request(now_ - kHour, now_ + kDay));
  ASSERT_TRUE(leaf.ok());
  absl::StatusOr<KeyAndCertificate> grandchild =
      IssueCertificate(*leaf, Request(now_ - kHour, now_ + kDay));
  ASSERT_TRUE(grandchild.ok());  // OpenSSL signs it, but no verifier accepts the chain
  EXPECT_NE(Verify(ca_.certificate_pem, grandchild->certificate_pem), X509_V_OK);
}

TEST_F(CertificatesTest, BadInputIsRefused) {
  EXPECT_EQ(IssueCertificate({"junk", "junk"}, Request(now_, now_ + kDay)).status().code(),
            absl::StatusCode::kInvalidArgument);
  CertificateRequest nameless = Request(now_, now_ + kDay);
  nameless.names.clear();
  EXPECT_EQ(IssueCertificate(ca_, nameless).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(SubjectAltNames("not pem").ok());
}

}  // namespace
}  // namespace disttrain
